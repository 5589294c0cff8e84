"""Online RL on our environments: each env as an environment TRL's trainers play."""
