"""Play one textcraft item on an agentgym env server with OpenEnv's own client.

    agentgym env serve textcraft --port 36018 &
    python examples/openenv_client.py http://127.0.0.1:36018

No agentgym import: this is what any OpenEnv program (a trainer, an eval harness) does. It
needs ``pip install openenv`` (``make install`` puts it in agentgym's dev environment).
"""

from __future__ import annotations

import sys

from openenv.core import GenericEnvClient

# textcraft_3: craft birch planks. The actions are what the env's expert plays.
ACTIONS = ["get 1 birch logs", "craft 4 birch planks using 1 birch logs"]


def main() -> None:
    with GenericEnvClient(base_url=sys.argv[1]).sync() as env:  # one WebSocket, one session
        result = env.reset(item_id="textcraft_3")  # or seed=3, the item's index
        print(result.observation["text"])
        for action in ACTIONS:
            result = env.step({"action": action})
            print(f"> {action}\n{result.observation['text']}  (reward {result.reward})")
        state = env.state()
        print(f"done {result.done}, success {result.observation['success']},"
              f" {state['step_count']} steps on {state['item_id']}")  # fmt: skip


if __name__ == "__main__":
    main()
