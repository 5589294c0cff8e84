"""AgentGym's JSON files ⇄ Episodes: a JSON list of ``{"item_id", "conversations": [{"from",
"loss", "value"}]}``, read and written back byte for byte (see ``lossless``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentcli.conversation import episode_conversation, parse_reply
from agentcli.data.foreign import as_score, build_episode, full_score, read_json
from agentcli.data.lossless import JsonLayout, detect_layout, keep, layout_of, restore
from agentcli.data.records import ChatRecord, Episode, Step, item_id, parse_item_id
from agentcli.errors import UsageError

# What AgentGym's data scripts write: `json.dump(..., indent=4, ensure_ascii=False)`.
AGENTGYM_LAYOUT = JsonLayout(indent=4, ensure_ascii=False)

_SPEAKER = {"user": "human", "assistant": "gpt"}
GoalIndex = Callable[[str], int]  # a textcraft goal's name -> our index of it


# The goal line that ends a textcraft task's first observation.
_TEXTCRAFT_GOAL = re.compile(r"^Goal: craft (.+?)\.?\s*$", re.MULTILINE)


def read_agentgym(path: Path, goal_index: GoalIndex | None = None) -> list[Episode]:
    """The episodes of an AgentGym file. With ``goal_index`` (textcraft's, handed in by the
    caller: data/ does not load envs), a textcraft record whose first observation states its
    goal gets our item id for that goal: AgentGym's own number for it depends on the machine
    that wrote the file (its goal order follows ``os.listdir``). Its id is kept for writing
    the file back."""
    text, data = read_json(path)
    if not isinstance(data, list):
        raise UsageError(f"{path}: an AgentGym file is a JSON list of records — check the file")
    layout = detect_layout(text, data, AGENTGYM_LAYOUT, path)
    episodes = []
    for position, record in enumerate(data):
        episode = _episode_from_agentgym(record, f"{path} record {position}")
        if goal_index is not None:
            episode = _by_goal(episode, goal_index)
        kept = keep(record, _agentgym_record(episode), "record", layout, AGENTGYM_LAYOUT)
        if kept:
            episode.meta["agentgym"] = kept
        episodes.append(episode)
    return episodes


def agentgym_text(episodes: Sequence[Episode]) -> str:
    records = [
        restore(_agentgym_record(episode), episode.meta.get("agentgym", {}).get("record"))
        for episode in episodes
    ]
    return layout_of(episodes, "agentgym", AGENTGYM_LAYOUT).dump(records)


def agentgym_training_text(records: Sequence[ChatRecord]) -> str:
    """Training conversations as an AgentGym JSON file (AgentTraj's shape: ``item_id`` and
    ``conversations``, human/gpt turns with their loss flags), for AgentGym's trainers."""
    return AGENTGYM_LAYOUT.dump(
        [
            {
                "item_id": record.item_id,
                "conversations": [
                    {"from": _SPEAKER[message.role], "loss": message.loss, "value": message.content}
                    for message in record.messages
                ],
            }
            for record in records
        ]
    )


def _by_goal(episode: Episode, goal_index: GoalIndex) -> Episode:
    """``episode`` under our id of the textcraft goal its first observation states."""
    first = episode.steps[0].observation if episode.steps else episode.final_observation
    found = _TEXTCRAFT_GOAL.search(first or "") if episode.env == "textcraft" else None
    if found is None:
        return episode
    return episode.model_copy(update={"item_id": item_id("textcraft", goal_index(found[1]))})


def _agentgym_record(episode: Episode) -> dict[str, Any]:
    """The record AgentGym's evaluator writes for an episode."""
    blank = not episode.instruction and not episode.steps and episode.final_observation is None
    conversation = [
        {"from": _SPEAKER[message.role], "loss": message.loss, "value": message.content}
        for message in ([] if blank else episode_conversation(episode))
    ]  # an item with nothing played is written with no conversation, as in AgentGym's item lists
    return {
        "item_id": episode.item_id,
        "conversations": conversation,
        "reward": episode.reward,
        "success": int(episode.success),  # AgentGym writes 1 / 0
    }


def _episode_from_agentgym(record: Any, where: str) -> Episode:
    if not isinstance(record, dict) or not isinstance(record.get("item_id"), str):
        raise UsageError(f"{where}: expected an object with an 'item_id' — check the file")
    name = record["item_id"]
    try:
        env, _ = parse_item_id(name)
    except UsageError as error:
        raise UsageError(f"{where}: {error}") from None
    turns = record.get("conversations", [])
    if not isinstance(turns, list):
        raise UsageError(f"{where} ({name}): 'conversations' must be a list — check the file")
    for number, turn in enumerate(turns):
        speaker = "human" if number % 2 == 0 else "gpt"
        if not (
            isinstance(turn, dict)
            and turn.get("from") == speaker
            and isinstance(turn.get("value"), str)
        ):
            raise UsageError(
                f"{where} ({name}) turn {number}: expected a {speaker!r} turn with a text"
                " 'value' (conversations alternate human and gpt, starting with human)"
                " — fix the record"
            )
    values = [turn["value"] for turn in turns]
    # values: instruction, acknowledgement, then observation / reply pairs, then maybe the
    # observation that answered the last reply.
    steps = []
    for observation, reply in zip(values[2::2], values[3::2], strict=False):
        parsed = parse_reply(reply)
        steps.append(Step(observation=observation, reason=parsed.thought, action=parsed.action))
    final_observation = values[-1] if len(values) > 2 and len(values) % 2 == 1 else None
    reward = as_score(record.get("reward"))
    success = record.get("success")
    success = reward >= full_score(env) if success is None else bool(success)
    if steps:  # AgentGym's reward is the last step's; an episode that succeeded is done
        steps[-1].reward = reward
        steps[-1].done = success
    return build_episode(
        where,
        item_id=name,
        env=env,
        instruction=values[0] if values else "",
        steps=steps,
        final_observation=final_observation,
        reward=reward,
        success=success,
    )
