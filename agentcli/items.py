"""Which items a stage runs: a split (less its first ``skip``, at most ``limit``), or the item
ids of an AgentGym JSON file, of some task types or all. ``ItemSelection`` is the settings
every such stage shares.

A file may name an item by its goal (``textcraft/dark_oak_sign``) where the env's spec has a
``goal_index``, and an item's task type is the env spec's ``categories``: the stage hands them
in, so this module loads no environment."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path

from pydantic import Field

from agentcli.config import CommandConfig
from agentcli.errors import UsageError
from agentcli.records import parse_item_id

GoalIndex = Callable[[str], int]  # a goal's name -> our index of the item that plays it
Categorise = Callable[[int], str]  # our index of an item -> its task type


class ItemSelection(CommandConfig):
    """The items of one split, or of a file."""

    split: str = Field("train", description="Which split's items to run.")
    limit: int | None = Field(None, ge=1, description="Run only the first N items.")
    skip: int = Field(
        0, ge=0, description="Skip the split's first N items (e.g. the ones the demos played)."
    )
    data: Path | None = Field(
        None, description="An AgentGym JSON file (e.g. an eval set): run its item ids instead."
    )
    task_types: list[str] = Field(
        [],
        description="Run only items of these task types (an env whose items have types, as"
        " eval's rows per type name them: alfworld's six, sciworld's); skip and limit count"
        " the items of these types. None given: every type.",
    )

    @property
    def split_name(self) -> str:
        """What the records say they came from: the split, or ``custom`` for a file's items."""
        return "custom" if self.data is not None else self.split

    def require_split(self, env: str, splits: Collection[str]) -> None:
        """Refuse a split the env does not have, naming those it has."""
        if self.data is None and self.split not in splits:
            raise UsageError(f"{env} has no split {self.split!r}; it has {', '.join(splits)}")

    def chosen(
        self,
        env: str,
        splits: Mapping[str, Sequence[int]],
        goal_index: GoalIndex | None = None,
        categorise: Categorise | None = None,
    ) -> list[int]:
        """The selected items: of the ``data`` file when there is one (``goal_index``, the
        env's, reads the ids that name a goal), else of ``splits`` (the env's item indices per
        split); of ``task_types`` only, by ``categorise`` (the env's task type of an item)."""
        if self.data is not None:
            return self.window(env, items_from_file(self.data, env, goal_index), categorise)
        self.require_split(env, splits)
        return self.window(env, splits[self.split], categorise)

    def window(
        self, env: str, items: Sequence[int], categorise: Categorise | None = None
    ) -> list[int]:
        """``items`` of ``task_types`` less the first ``skip``, at most ``limit``; refused when
        none are left (a run of nothing would pass for a run)."""
        typed = self._of_task_types(env, items, categorise)
        end = self.skip + self.limit if self.limit else None
        chosen = list(islice(typed, self.skip, end))  # lazy: a split may hold 10,000 items
        if chosen:
            return chosen
        if self.task_types:
            raise UsageError(
                f"{env}'s {self.split_name} items hold no item of task type"
                f" {', '.join(self.task_types)} after the first {self.skip}: check the names"
                " (eval's metrics.json has a row per type) or lower --skip"
            )
        if self.data is not None:
            raise UsageError(f"{self.data} lists no {env} item: give a file of item ids")
        raise UsageError(
            f"{env}'s {self.split} split has {len(items)} items and --skip {self.skip} leaves"
            " none: lower --skip or choose another split"
        )

    def _of_task_types(
        self, env: str, items: Sequence[int], categorise: Categorise | None
    ) -> Iterator[int]:
        if not self.task_types:
            return iter(items)
        if categorise is None:
            raise UsageError(f"{env}'s items have no task types: drop task_types (--task-types)")
        wanted = set(self.task_types)
        return (item for item in items if categorise(item) in wanted)


class HeldOutItems(ItemSelection):
    """The items an evaluation runs: the test split unless told otherwise."""

    split: str = Field("test", description="Which split's items to run.")


def items_from_file(path: Path, env: str, goal_index: GoalIndex | None = None) -> list[int]:
    """The indices of ``env`` items an AgentGym JSON file lists, in order, once each; with
    ``goal_index`` (the env's), ids may name a goal, as ``<env>/<goal>``."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        ids = [entry["item_id"] for entry in entries]
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(
            f"{path}: expected AgentGym JSON, a list of objects with an item_id ({exc})"
        ) from None
    indices = []
    for text in ids:
        index: int | None
        if "/" in str(text):  # a goal id, <env>/<goal>: looked up once its env is ours
            named_env, index = str(text).partition("/")[0], None
        else:
            named_env, index = parse_item_id(text)
        if named_env != env:
            raise UsageError(f"{path} holds {text!r}, not a {env} item; pass --env {named_env}")
        indices.append(parse_goal_id(text, goal_index)[1] if index is None else index)
    return list(dict.fromkeys(indices))


def parse_goal_id(text: str, goal_index: GoalIndex | None) -> tuple[str, int]:
    """``textcraft/dark_oak_sign`` → (``textcraft``, our index of that goal, by the env's
    ``goal_index``): an id that means the same goal on every machine, where AgentGym's numbers
    follow a directory listing. Without ``goal_index``, the env's items have no goal ids."""
    env, _, goal = text.partition("/")
    if goal_index is None or not goal:
        raise UsageError(
            f"item id {text!r}: {env} items cannot be named by goal; name them '{env}_<index>'"
        )
    return env, goal_index(goal)
