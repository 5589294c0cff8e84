"""Reading an action out of model text. Never raises: model output is arbitrary."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ACTION = re.compile(r"^\s*\**\s*action\s*\**\s*:\s*\**\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(
    r"thought\s*\**\s*:\s*(.*?)(?=^\s*\**\s*action\s*\**\s*:|\Z)", re.I | re.M | re.S
)
_WRAPPING = " \t\"'`*."


@dataclass(frozen=True)
class ParsedAction:
    thought: str
    action: str
    error: str | None = None  # why the text holds no usable action


def parse_action(text: str) -> ParsedAction:
    """Split ``Thought: ...\\nAction: ...`` text into a reason and one action.

    The action is the rest of the line after the last ``Action:`` (or, when that line is
    empty, the next non-empty line); a reply without ``Action:`` whose text is a single line
    is taken as the action itself, as AgentGym's clients do.
    """
    text = text.replace("</s>", "").strip()
    thought_match = _THOUGHT.search(text)
    thought = thought_match.group(1).strip() if thought_match else ""
    matches = list(_ACTION.finditer(text))
    if matches:
        last = matches[-1]
        candidate = last.group(1).strip() or _first_line(text[last.end() :])
    elif "\n" not in text:
        candidate = text
    else:
        return ParsedAction(thought, "", "no 'Action:' line in the reply")
    action = " ".join(candidate.strip(_WRAPPING).split())
    if not action:
        return ParsedAction(thought, "", "the 'Action:' line is empty")
    return ParsedAction(thought, action)


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def explain_by_verb(action: str, reasons: dict[str, str]) -> str:
    """A reason for ``action`` from the first entry of ``reasons`` whose verb starts it; the
    entry is a template over ``{rest}``, the action without its verb ("go to " + "sink 1")."""
    for verb, template in reasons.items():
        if action.lower().startswith(verb):
            return template.format(rest=action[len(verb) :].strip())
    return f"Next, I {action}."
