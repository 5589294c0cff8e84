"""AgentGym's JSON files ⇄ Episodes: a JSON list of ``{"item_id", "conversations": [{"from",
"loss", "value"}]}``, read and written back byte for byte (see ``lossless``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentcli.conversation import episode_conversation, parse_reply
from agentcli.data.foreign import EnvLookup, as_score, build_episode, full_score, read_json
from agentcli.data.lossless import JsonLayout, detect_layout, keep, layout_of, restore
from agentcli.errors import UsageError
from agentcli.records import ChatRecord, Episode, Step, item_id, parse_item_id

# What AgentGym's data scripts write: `json.dump(..., indent=4, ensure_ascii=False)`.
AGENTGYM_LAYOUT = JsonLayout(indent=4, ensure_ascii=False)

_SPEAKER = {"user": "human", "assistant": "gpt"}


def read_agentgym(path: Path, env_facts: EnvLookup | None = None) -> list[Episode]:
    """The episodes of an AgentGym file. With ``env_facts`` (handed in by the caller: data/
    does not load envs), a record whose env reads our item index off the task's first
    observation gets that id (textcraft's goal: AgentGym's own number for it depends on the
    machine that wrote the file, whose goal order follows ``os.listdir``), and a record with no
    success flag succeeds at the env's full score. Its id is kept for writing the file back."""
    text, data = read_json(path)
    if not isinstance(data, list):
        raise UsageError(f"{path}: an AgentGym file is a JSON list of records — check the file")
    layout = detect_layout(text, data, AGENTGYM_LAYOUT, path)
    episodes = []
    for position, record in enumerate(data):
        episode = _episode_from_agentgym(record, f"{path} record {position}", env_facts)
        facts = env_facts(episode.env) if env_facts is not None else None
        if facts is not None and facts.index_of_task is not None:
            episode = _by_task(episode, facts.index_of_task)
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


def _by_task(episode: Episode, index_of_task: Callable[[str], int | None]) -> Episode:
    """``episode`` under our id of the task its first observation states, if it states one."""
    first = episode.steps[0].observation if episode.steps else episode.final_observation
    index = index_of_task(first or "")
    if index is None:
        return episode
    return episode.model_copy(update={"item_id": item_id(episode.env, index)})


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


def _episode_from_agentgym(record: Any, where: str, env_facts: EnvLookup | None) -> Episode:
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
    success = reward >= full_score(env, env_facts) if success is None else bool(success)
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
