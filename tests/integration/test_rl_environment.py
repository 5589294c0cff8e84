"""Our environments as TRL environments: a TRL rollout shows the student the text a rollout
shows it, steps the env as a rollout does, and is scored with the Episode's reward; in process
and over a server alike."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from transformers.utils import get_json_schema

from agentcli.conversation import StudentView, chat_dicts
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.launcher import env_servers
from agentcli.errors import UsageError
from agentcli.records import Episode
from agentcli.rl.environment import (
    EPISODE_OVER,
    NO_TURNS_LEFT,
    AgentGymEnvironment,
    environment_factory,
    prompt_rows,
)
from agentcli.rollout import run_rollout
from tests.support.random_policy import RecordingPolicy

PLAN_3 = ["get 1 birch logs", "craft 4 birch planks using 1 birch logs"]  # textcraft_3
VIEWS = [StudentView(), StudentView(prompt="native"), StudentView(instruction=False)]


def play(factory, row: dict, actions: list[str]) -> tuple[list[dict], list[str], float]:
    """A TRL rollout as GRPOTrainer runs one: reset appended to the row's last message, then
    one ``act`` call per action."""
    environment = factory()
    observation = environment.reset(**row)
    prompt = [*row["prompt"][:-1], {**row["prompt"][-1], "content": row["prompt"][-1]["content"]
                                     + observation}]  # fmt: skip
    results = [environment.act(action) for action in actions]
    return prompt, results, environment.get_reward()


@pytest.mark.parametrize("env", ["textcraft", "babyai"])
def test_a_trl_rollout_shows_what_a_rollout_shows_and_scores_its_reward(env, tmp_path):
    spec = get_spec(env)
    with env_servers(spec, []) as urls:
        for view in VIEWS:
            policy = RecordingPolicy(seed=5, invalid_rate=0.0)
            out = tmp_path / f"{env}-{id(view)}.jsonl"
            asyncio.run(run_rollout(spec, urls, policy, [0], out, split="train",
                                    concurrency=1, max_rounds=4, view=view))  # fmt: skip
            (episode,) = read_records(out, Episode)
            actions = [step.action for step in episode.steps]
            # what the rollout showed at its last step: the opening and every observation
            last_shown = chat_dicts(policy.shown[-1])
            observations = [m["content"] for m in last_shown if m["role"] == "user"]
            (row,) = prompt_rows(env, [0], view)
            for factory in (environment_factory(env, view=view),
                            environment_factory(env, server=urls[0], view=view)):  # fmt: skip
                prompt, results, reward = play(factory, row, actions)
                assert prompt == chat_dicts(policy.shown[0])
                # the instruction (when shown), the first observation, then what act returned
                assert results[:-1] == observations[int(view.instruction) + 1 :]
                assert reward == episode.reward


def test_the_expert_plan_wins_and_the_episode_then_takes_no_action():
    factory = environment_factory("textcraft")
    (row,) = prompt_rows("textcraft", [3])
    _, results, reward = play(factory, row, [*PLAN_3, "inventory"])
    assert reward == 1.0
    assert results[-1] == EPISODE_OVER


def test_turns_are_capped_and_a_reply_without_action_is_not_stepped():
    factory = environment_factory("textcraft", max_turns=2)
    (row,) = prompt_rows("textcraft", [3])
    _, results, reward = play(factory, row, ["", PLAN_3[0], PLAN_3[1]])
    assert results[0].startswith("Invalid reply: ")
    assert results[2] == NO_TURNS_LEFT
    assert reward == 0.0


def test_an_instance_is_reused_across_rollouts_as_trl_pools_them():
    environment = environment_factory("textcraft")()
    (three, four) = prompt_rows("textcraft", [3, 4])
    environment.reset(**three)
    for action in PLAN_3:
        environment.act(action)
    assert environment.get_reward() == 1.0
    environment.reset(**four)
    assert environment.get_reward() == 0.0
    assert environment.act("inventory") != EPISODE_OVER


def test_trl_sees_one_tool_act_with_one_string_argument():
    """TRL offers the model every public method but reset and get_reward as a tool, typed
    from its signature and docstring."""
    public = {name for name, _ in inspect.getmembers(AgentGymEnvironment, inspect.isfunction)
              if not name.startswith("_")}  # fmt: skip
    assert public == {"reset", "act", "get_reward"}
    schema = get_json_schema(environment_factory("textcraft")().act)["function"]
    assert schema["name"] == "act"
    assert schema["parameters"]["properties"]["action"]["type"] == "string"
    assert schema["parameters"]["required"] == ["action"]


@pytest.mark.parametrize(
    ("view", "said"),
    [
        (StudentView(format="single-prompt"), "multi-turn"),
        (StudentView(history_steps=2), "history window"),
    ],
)
def test_views_a_trl_rollout_cannot_show_are_refused(view, said):
    with pytest.raises(UsageError, match=said):
        environment_factory("textcraft", view=view)
    with pytest.raises(UsageError, match=said):
        prompt_rows("textcraft", [0], view)


def test_a_row_of_another_env_is_refused():
    environment = environment_factory("textcraft")()
    (row,) = prompt_rows("babyai", [0])
    with pytest.raises(UsageError, match="babyai_0"):
        environment.reset(**row)


def test_an_env_with_only_a_client_needs_a_server():
    with pytest.raises(UsageError, match="server="):
        environment_factory("webarena")
