"""ALFWorld's items: which game each item index plays, per split.

- ``0``-``2619``: AgentGym's ``game`` indices (``0``-``2419`` its train list, ``2420``-``2619``
  its test list, both from ``agentgym_items.json``). With ``ALFWORLD_DATA`` they are ALFWorld's
  real games (splits ``train``, ``test``); without it, generated stand-ins with the same task
  type, object, receptacle and floor plan (splits ``agentgym_train``, ``agentgym_test``).
- from ``2620`` on, with ``ALFWORLD_DATA`` only: ALFWorld's ``valid_seen`` then
  ``valid_unseen`` games, each in sorted order.
- ``10000``-``10002``: the hand-written games shipped in ``envs/data/alfworld/`` (``builtin``).
- ``100000``-``109999``: generated games on ALFRED's train floor plans; ``200000``-``200999``:
  on its test floor plans, which no train item uses. They are the splits ``train`` and ``test``
  without ``ALFWORLD_DATA``, ``generated_train`` and ``generated_test`` with it.

Generated games are flagged ``generated`` in records: their numbers are not comparable with
published ALFWorld results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agentcli.envs.alfworld import generation
from agentcli.errors import EnvUnavailableError, TaskNotFoundError

DATA_ENV_VAR = "ALFWORLD_DATA"
BUILTIN_FIRST_INDEX = 10_000
SHIPPED_DIR = Path(__file__).parent.parent / "data" / "alfworld"
# Our split name -> folder under json_2.1.1. train/test follow AgentGym's lists; the ALFWorld
# evaluation splits follow, each in sorted order.
AGENTGYM_FOLDERS = {"train": "train", "test": "valid_train"}
EVAL_SPLITS = ("valid_seen", "valid_unseen")
# Generated splits: name -> (first index, size, ALFRED's scene split they draw floor plans from).
GENERATED_SPLITS = {
    "generated_train": (100_000, 10_000, "TRAIN_SCENE_NUMBERS"),
    "generated_test": (200_000, 1_000, "TEST_SCENE_NUMBERS"),
}
DOWNLOAD_HINT = (
    "download ALFWorld's data (run `alfworld-download`, which fills ~/.cache/alfworld) "
    "and set ALFWORLD_DATA to that folder"
)


@dataclass(frozen=True)
class Game:
    """One ALFWorld game. ``name`` is ``<task folder>/<trial>``, AgentGym's ``task_type``."""

    name: str
    split: str
    file: Path | None = None  # game.tw-pddl under ALFWORLD_DATA
    problem: Path | None = None  # the PDDL problem of a shipped game
    task: str = ""  # goal sentence of a shipped game (real games carry it in their grammar)
    generated: bool = False  # written by generation.py from the signature in ``name``

    @property
    def signature(self) -> generation.Signature:
        return generation.Signature.from_name(self.name)

    @property
    def task_type(self) -> str:
        return self.name.split("-", 1)[0]


class GameCatalog:
    """Item index -> game, from the shipped files, the generator and (when configured)
    ALFWORLD_DATA."""

    def __init__(self, data_dir: Path | None) -> None:
        self.data_dir = data_dir
        manifest = json.loads((SHIPPED_DIR / "games.json").read_text())
        self.builtin = [
            Game(
                entry["name"], "builtin", problem=SHIPPED_DIR / entry["problem"], task=entry["task"]
            )
            for entry in manifest
        ]
        # AgentGym's lists name their games, so their signatures are known without the data.
        agentgym = json.loads((SHIPPED_DIR / "agentgym_items.json").read_text())
        self.data_games = [
            Game(name, split, file=self._file(folder, name), generated=data_dir is None)
            for split, folder in AGENTGYM_FOLDERS.items()
            for name in _flatten(agentgym[split])
        ]
        for split in EVAL_SPLITS if data_dir else ():
            root = data_dir / "json_2.1.1" / split
            names = sorted(
                path.parent.relative_to(root).as_posix() for path in root.glob("*/*/game.tw-pddl")
            )
            self.data_games += [Game(name, split, file=self._file(split, name)) for name in names]

    def _file(self, folder: str, name: str) -> Path | None:
        if self.data_dir is None:
            return None
        return self.data_dir / "json_2.1.1" / folder / name / "game.tw-pddl"

    def game(self, index: int) -> Game:
        if 0 <= index - BUILTIN_FIRST_INDEX < len(self.builtin):
            return self.builtin[index - BUILTIN_FIRST_INDEX]
        if 0 <= index < len(self.data_games):
            return self.data_games[index]
        for split, (first, size, _) in GENERATED_SPLITS.items():
            if first <= index < first + size:
                return _generated_game(split, index - first)
        last_builtin = BUILTIN_FIRST_INDEX + len(self.builtin) - 1
        ranges = [f"0-{len(self.data_games) - 1}", f"{BUILTIN_FIRST_INDEX}-{last_builtin}"]
        ranges += [f"{first}-{first + size - 1}" for first, size, _ in GENERATED_SPLITS.values()]
        raise TaskNotFoundError(f"alfworld has no item {index}: its items are {', '.join(ranges)}")

    def is_generated(self, index: int) -> bool:
        """Whether ``index`` plays a generated game (without building it)."""
        if 0 <= index < len(self.data_games):
            return self.data_games[index].generated
        return any(first <= index < first + size for first, size, _ in GENERATED_SPLITS.values())

    def splits(self) -> dict[str, list[int]]:
        """With ALFWorld's data, ``train``/``test`` are AgentGym's lists of real games; without
        it they are the generated splits (their first items mix every task type, where
        AgentGym's lists run one task type after another) and AgentGym's ids, generated, are
        ``agentgym_train``/``agentgym_test``."""
        prefix = "" if self.data_dir else "agentgym_"
        found: dict[str, list[int]] = {}
        for index, game in enumerate(self.data_games):
            split = game.split if game.split in EVAL_SPLITS else prefix + game.split
            found.setdefault(split, []).append(index)
        for split, (first, size, _) in GENERATED_SPLITS.items():
            name = split if self.data_dir else split.removeprefix("generated_")
            found[name] = list(range(first, first + size))
        found["builtin"] = [BUILTIN_FIRST_INDEX + i for i in range(len(self.builtin))]
        return found

    def game_data(self, game: Game) -> str | dict[str, Any]:
        """What TextWorld's PDDL engine loads: a game.tw-pddl path, or a problem packed with
        the wheel's domain and grammar (the grammar's task line filled in, as ALFWorld's own
        game generation does)."""
        if game.generated:
            problem = generation.generate(game.signature, seed=game.name)
            return _packed(problem.pddl, problem.task)
        if game.problem is not None:
            return _packed(game.problem.read_text(), game.task)
        if game.file is None or not game.file.is_file():
            raise EnvUnavailableError(
                f"{game.file} is missing: {DATA_ENV_VAR} must hold ALFWorld's json_2.1.1 data "
                "(run `alfworld-download`)"
            )
        return str(game.file)


@cache
def _generated_game(split: str, offset: int) -> Game:
    scenes = getattr(generation.constants(), GENERATED_SPLITS[split][2])
    seed = f"{split}/{offset}"
    signature = generation.sample_signature(seed, scenes)
    return Game(f"{signature.folder}/{split}_{offset}", split, generated=True)


def _packed(problem: str, task: str) -> dict[str, str]:
    domain, grammar = _wheel_logic()
    return {
        "pddl_domain": domain,
        "grammar": grammar.replace("UNKNOWN GOAL", task),
        "pddl_problem": problem,
    }


def _flatten(groups: list[list[Any]]) -> list[str]:
    """``[[task folder, [trial, ...]], ...]`` -> ``["task folder/trial", ...]``, order kept."""
    return [f"{folder}/{trial}" for folder, trials in groups for trial in trials]


@cache
def _wheel_logic() -> tuple[str, str]:
    from importlib.resources import files

    data = files(generation.import_alfworld("alfworld")) / "data"
    return (data / "alfred.pddl").read_text(), (data / "alfred.twl2").read_text()
