"""Which BabyAI task an item is: AgentGym's 40 minigrid levels, the variants that serve them,
and the generation of a level's layout.

Item ``i`` is level ``LEVELS[i % 40]`` generated with seed ``i // 40``: the task AgentGym's server
builds for ``babyai_<i>``. Any non-negative index is a task.

minigrid prints "Sampling rejected: ..." on stdout while it retries a layout; stdout carries our
results, so level generation runs with stdout captured, under a lock (swapping ``sys.stdout`` from
two threads at once could leave it captured for good).
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentcli.errors import TaskNotFoundError

# AgentGym's level list (agentenv-babyai), in its order. AgentGym names "BabyAI-GoToObjS6-v0",
# which minigrid 3.x registers only as "-v1" (the same GoToObj level with a 6x6 room).
LEVELS = (
    "BabyAI-GoToRedBallGrey-v0",
    "BabyAI-GoToRedBall-v0",
    "BabyAI-GoToRedBallNoDists-v0",
    "BabyAI-GoToObjS6-v1",
    "BabyAI-GoToLocalS8N7-v0",
    "BabyAI-GoToObjMazeS7-v0",
    "BabyAI-GoToImpUnlock-v0",
    "BabyAI-GoToSeqS5R2-v0",
    "BabyAI-GoToRedBlueBall-v0",
    "BabyAI-GoToDoor-v0",
    "BabyAI-GoToObjDoor-v0",
    "BabyAI-Open-v0",
    "BabyAI-OpenRedDoor-v0",
    "BabyAI-OpenDoorLoc-v0",
    "BabyAI-OpenRedBlueDoorsDebug-v0",
    "BabyAI-OpenDoorsOrderN4Debug-v0",
    "BabyAI-Pickup-v0",
    "BabyAI-UnblockPickup-v0",
    "BabyAI-PickupLoc-v0",
    "BabyAI-PickupDistDebug-v0",
    "BabyAI-PickupAbove-v0",
    "BabyAI-PutNextLocalS6N4-v0",
    "BabyAI-PutNextS7N4Carrying-v0",
    "BabyAI-Unlock-v0",
    "BabyAI-UnlockLocalDist-v0",
    "BabyAI-KeyInBox-v0",
    "BabyAI-UnlockPickupDist-v0",
    "BabyAI-BlockedUnlockPickup-v0",
    "BabyAI-UnlockToUnlock-v0",
    "BabyAI-ActionObjDoor-v0",
    "BabyAI-FindObjS7-v0",
    "BabyAI-KeyCorridorS6R3-v0",
    "BabyAI-OneRoomS20-v0",
    "BabyAI-MoveTwoAcrossS8N9-v0",
    "BabyAI-SynthS5R2-v0",
    "BabyAI-SynthLoc-v0",
    "BabyAI-SynthSeq-v0",
    "BabyAI-MiniBossLevel-v0",
    "BabyAI-BossLevel-v0",
    "BabyAI-BossLevelNoUnlock-v0",
)

PUT_NEXT = "BabyAI-PutNextLocalS6N4-v0"

_GENERATION_LOCK = threading.Lock()


@dataclass(frozen=True)
class Variant:
    """What a BabyAI env serves: the level and seed of each item, its splits, and whether the
    agent sees the whole room (``room_view``).

    Item ``i`` is level ``levels[i % len(levels)]`` with seed ``i // len(levels)``. With
    ``room_view`` the observation also lists every object out of sight and the expert plans
    from the whole grid, not from its memory of what it explored: its advice is then a
    function of what the agent reads, so a student can learn it (the bot's own memory is
    invisible to the student, which makes its corrections noise to a student of a
    partially observed level).
    """

    name: str
    levels: tuple[str, ...]
    splits: Mapping[str, range]
    room_view: bool = False

    def level_of(self, index: int) -> tuple[str, int]:
        """The minigrid level id and seed of item ``index``."""
        if index < 0:
            raise TaskNotFoundError(f"{self.name} item {index} does not exist: indices start at 0.")
        return self.levels[index % len(self.levels)], index // len(self.levels)

    def category(self, index: int) -> str:
        """``GoToRedBall``: the level's name without the ``BabyAI-`` prefix and version."""
        return self.level_of(index)[0].removeprefix("BabyAI-").rsplit("-", 1)[0]


# AgentGym's babyai: its 40 levels in turn, seeds 0-1 of each as test, 2-21 as train.
AGENTGYM_LEVELS = Variant(
    "babyai",
    LEVELS,
    {"train": range(2 * len(LEVELS), 22 * len(LEVELS)), "test": range(0, 2 * len(LEVELS))},
)
# One room, "put the X next to the Y", fully observed: item i is seed i. Test seeds are few
# and fixed (the first 500); training seeds start at 1000, enough for many iterations.
PUT_NEXT_ROOM = Variant(
    "babyai-putnext",
    (PUT_NEXT,),
    {"train": range(1000, 21000), "test": range(0, 500)},
    room_view=True,
)


def new_level(level: str) -> Any:
    """A minigrid env of ``level``, to lay out with ``generate``; imports minigrid."""
    import gymnasium
    import minigrid  # noqa: F401  (importing minigrid registers the BabyAI levels)

    return gymnasium.make(level).unwrapped


def generate(env: Any, seed: int) -> None:
    """Lay out ``env``'s level for ``seed``, with minigrid's retry messages kept off stdout."""
    with _GENERATION_LOCK, contextlib.redirect_stdout(io.StringIO()):
        env.reset(seed=seed)
