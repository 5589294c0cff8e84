"""Adding a built-in environment touches its own package and the registry, nothing else in
agentcli/: a toy environment defined here (its spec, the default wire format), registered as
the built-in ones are (its spec in ``registry.SPECS``), is served by the real server on
loopback, driven by our client, and played by a rollout with the oracle policy."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from agentcli.data.jsonl import read_records
from agentcli.envs import registry
from agentcli.envs.base import EnvSpec, PromptStyle, Transition
from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.format import DEFAULT_WIRE
from agentcli.envs.wire.server import create_app
from agentcli.policy import PolicyConfig
from agentcli.records import Episode
from agentcli.rollout import RolloutConfig, execute
from tests.support.servers import app_in_thread


class CountingSession:
    """Item i: say ``up`` until the count reaches i + 1."""

    def __init__(self) -> None:
        self.target = self.count = 0

    def reset(self, index: int) -> Transition:
        self.target, self.count = index + 1, 0
        return Transition(observation=f"Count to {self.target}. The count is 0.")

    def step(self, action: str) -> Transition:
        if action == "up":
            self.count += 1
        done = self.count == self.target
        return Transition(
            observation=f"The count is {self.count}.",
            reward=1.0 if done else 0.0,
            score=1.0 if done else 0.0,
            done=done,
            success=done,
        )

    def expert_action(self) -> str | None:
        return "up" if self.count < self.target else None

    def explain(self, action: str) -> str:
        return "The count is below the target, so I count up."

    def close(self) -> None:
        pass


class CountingEnvironment:
    def splits(self) -> dict[str, list[int]]:
        return {"train": [0, 1, 2], "test": [3, 4]}

    def open_session(self, style: PromptStyle = "agentgym") -> CountingSession:
        return CountingSession()

    def privileged_state(self, index: int) -> str:
        return f"The target is {index + 1}."


SPEC = EnvSpec(
    name="counting",
    summary="Count up to a target (a toy environment of a test).",
    requires="nothing",
    instruction="Say up until the count reaches the target.\nAction: up",
    max_rounds=10,
    wire=DEFAULT_WIRE,
    default_port=36099,
    load=CountingEnvironment,
    probe_action="up",
)


@pytest.fixture
def counting_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setitem(registry.SPECS, SPEC.name, SPEC)  # what BUILT_IN's entry does
    with app_in_thread(create_app(registry.get_spec("counting"))) as url:
        yield url


def test_our_client_plays_a_registered_toy_env_on_the_real_server(counting_server):
    async def play() -> tuple[dict[str, int], list[str], Transition]:
        async with EnvClient(counting_server, "counting") as client:
            await client.wait_until_ready(timeout_s=30)
            splits = await client.splits()
            await client.require_expert()
            session = await client.open()
            try:
                first = await session.reset(2)
                seen = [first.observation]
                while (action := await session.expert_action()) is not None:
                    last = await session.step(action)
                    seen.append(last.observation)
            finally:
                await session.close()
            return splits, seen, last

    splits, seen, last = asyncio.run(play())
    assert splits == {"train": 3, "test": 2}
    assert seen == ["Count to 3. The count is 0.", *(f"The count is {n}." for n in (1, 2, 3))]
    assert last.done and last.success and last.reward == 1.0


def test_a_rollout_plays_the_toy_env_with_the_oracle(counting_server, tmp_path):
    config = RolloutConfig(
        env="counting",
        env_server=[counting_server],
        out=tmp_path / "demos.jsonl",
        policy=PolicyConfig(kind="oracle"),
        split="train",
    )
    stats = execute(config)
    episodes = read_records(tmp_path / "demos.jsonl", Episode)
    assert stats.finished == 3 and stats.success_rate == 1.0
    assert sorted((e.item_id, e.n_steps) for e in episodes) == [
        ("counting_0", 1),
        ("counting_1", 2),
        ("counting_2", 3),
    ]
