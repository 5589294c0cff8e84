"""Reasons for expert actions, shared by the envs' experts."""

from __future__ import annotations


def explain_by_verb(action: str, reasons: dict[str, str]) -> str:
    """A reason for ``action`` from the first entry of ``reasons`` whose verb starts it; the
    entry is a template over ``{rest}``, the action without its verb ("go to " + "sink 1")."""
    for verb, template in reasons.items():
        if action.lower().startswith(verb):
            return template.format(rest=action[len(verb) :].strip())
    return f"Next, I {action}."
