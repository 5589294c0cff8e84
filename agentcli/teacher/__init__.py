"""Privileged teachers: annotate demos, extract privileged state, correct student episodes."""
