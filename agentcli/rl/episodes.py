"""Episodes for ``agentgym train grpo``: a trainer's model plays our envs, as rollouts play them.

``EnvEpisodes`` is the episode player the GRPO trainer is handed (``agentcli.train.grpo``
imports no env code): given item ids and the model as it is at the current step, it plays one
episode per id through the rollout engine (``agentcli.rollout.play_items``: the same episode
loop, conversation and reply parsing as ``rollout`` and ``eval``), the model sampling as a
local policy does, and returns the Episodes in the order of the ids. The envs run on the
servers given, or on built-in servers started at the first call and stopped by ``close``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from agentcli.conversation import StudentView
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.launcher import env_servers
from agentcli.errors import UsageError
from agentcli.items import ItemSelection
from agentcli.records import Episode, item_id, parse_item_id


class EnvEpisodes:
    """Plays items of ``envs`` with whatever model it is given (see the module)."""

    def __init__(
        self,
        envs: Sequence[str],
        *,
        items: ItemSelection,
        env_server: Sequence[str],
        view: StudentView,
        max_turns: int | None,
        max_new_tokens: int,
        temperature: float,
        seed: int,
    ) -> None:
        if env_server and len(envs) > 1:
            raise UsageError(
                "--env-server serves one env: with several --env, let agentgym start their"
                " built-in servers"
            )
        self._specs = {env: get_spec(env) for env in envs}
        self._selection = items
        self._given = list(env_server)
        self._view = view
        self._max_turns = max_turns
        self._max_new_tokens = max_new_tokens
        self._temperature = temperature
        self._seed = seed
        self._servers = ExitStack()
        self._urls: dict[str, list[str]] | None = None

    def item_ids(self) -> list[str]:
        """The training items of every env, env after env (starts the servers)."""
        urls = self._start()

        async def select() -> list[str]:
            from agentcli.rollout import select_items

            chosen = []
            for env in self._specs:
                indices = await select_items(self._selection, env, urls[env][0])
                chosen += [item_id(env, index) for index in indices]
            return chosen

        return asyncio.run(select())

    def __call__(
        self, item_ids: Sequence[str], model: Any, tokenizer: Any, *, step: int
    ) -> list[Episode]:
        """One episode per id (ids may repeat: a group plays its item several times), played
        by ``model`` at once (all episodes in one batch per turn)."""
        from agentcli.policy.local import LocalModelPolicy
        from agentcli.rollout import play_items

        urls = self._start()
        positions: dict[str, list[int]] = {env: [] for env in self._specs}
        indices: dict[str, list[int]] = {env: [] for env in self._specs}
        for position, text in enumerate(item_ids):
            env, index = parse_item_id(text)
            if env not in self._specs:
                raise UsageError(f"{text} is not an item of {', '.join(self._specs)}")
            positions[env].append(position)
            indices[env].append(index)
        episodes: list[Episode | None] = [None] * len(item_ids)
        policy = LocalModelPolicy.of_loaded(
            model,
            tokenizer,
            max_new_tokens=self._max_new_tokens,
            temperature=self._temperature,
            seed=self._seed + step,  # each step samples afresh, a rerun of it the same
            batch_size=len(item_ids),
        )

        async def play() -> None:
            try:
                await asyncio.gather(
                    *(
                        play_items(
                            spec,
                            urls[env],
                            policy,
                            indices[env],
                            split=self._selection.split_name,
                            concurrency=len(indices[env]),
                            max_rounds=self._max_turns,
                            view=self._view,
                            meta={"step": step},
                            on_episode=lambda at, episode, env=env: episodes.__setitem__(
                                positions[env][at], episode
                            ),
                        )
                        for env, spec in self._specs.items()
                        if indices[env]
                    )
                )
            finally:
                await policy.aclose()

        training = model.training
        model.eval()  # no dropout while sampling; the trainer's mode is restored after
        try:
            asyncio.run(play())
        finally:
            model.train(training)
        assert all(episode is not None for episode in episodes)  # play_items plays each id
        return [episode for episode in episodes if episode is not None]

    def close(self) -> None:
        """Stop the servers this player started."""
        self._servers.close()
        self._urls = None

    def _start(self) -> dict[str, list[str]]:
        if self._urls is None:
            self._urls = {
                env: self._servers.enter_context(env_servers(spec, self._given))
                for env, spec in self._specs.items()
            }
        return self._urls
