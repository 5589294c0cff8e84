"""Student episodes for teacher tests, and an OpenAI-style server's replies that fit them.

Every episode's first observation names its task (``Goal: craft item-<index>.``), so a reply
function can tell from the prompt alone — whatever the template says around it — which
episode it is asked about, and answer with as many steps as that episode has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from agentcli.records import Episode, Step

ACTIONS = ["get 1 oak log", "craft 4 oak planks using 1 oak log", "inventory"]
_TASK = re.compile(r"Goal: craft item-([0-9]+)\.")


def student_episodes(count: int, *, start: int = 0) -> list[Episode]:
    """Failed textcraft-like episodes of 2-4 steps; odd steps list their valid actions."""
    episodes = []
    for index in range(start, start + count):
        steps = [
            Step(
                observation=f"Goal: craft item-{index}." if t == 0 else f"Nothing happened ({t}).",
                reason=f"student reason {t}",
                action="inventory",
                candidate_actions=ACTIONS if t % 2 else None,
            )
            for t in range(2 + index % 3)
        ]
        episodes.append(
            Episode(
                item_id=f"textcraft_{index}",
                env="textcraft",
                split="train",
                instruction="Craft the goal item. Answer with Thought and Action.",
                steps=steps,
                reward=0.0,
                success=False,
            )
        )
    return episodes


def episode_asked_about(
    messages: Sequence[dict[str, str]], episodes: dict[int, Episode]
) -> Episode:
    for message in messages:
        found = _TASK.search(message["content"])
        if found:
            return episodes[int(found[1])]
    raise AssertionError("the prompt names no task")


def corrections_reply(episodes: Sequence[Episode]):
    """A teacher that corrects every step to the first valid action (or ``get 1 oak log``)."""
    by_index = {episode.index: episode for episode in episodes}

    def reply(messages: list[dict[str, str]]) -> str:
        episode = episode_asked_about(messages, by_index)
        steps = [
            {
                "t": t,
                "reason": f"I still need an oak log for item-{episode.index}.",
                "action": (step.candidate_actions or ACTIONS)[0],
            }
            for t, step in enumerate(episode.steps)
        ]
        return json.dumps({"steps": steps, "summary": "Get the log before crafting."})

    return reply
