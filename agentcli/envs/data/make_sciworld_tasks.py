"""Write ``sciworld_tasks.json``: AgentGym's ScienceWorld item list and the package's splits.

Run after upgrading ``scienceworld`` (needs Java; about 5 s):

    .venv/bin/python agentcli/envs/data/make_sciworld_tasks.py

AgentGym's server numbers items by walking the package's tasks in their numbering order
(1-1 boil, 1-2 melt, ...) and every variation of each, skipping the tasks below. Storing
that list, with each task's train/dev/test variation ranges, lets agentgym list items and
splits without starting a JVM; a test checks the file against the installed package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scienceworld import ScienceWorldEnv

TASKS_FILE = Path(__file__).with_name("sciworld_tasks.json")
# AgentGym leaves out growing plants (5-x), inclined planes (9-x) and Mendelian genetics (10-x).
EXCLUDED_TASK_IDS = ("5-1", "5-2", "9-1", "9-2", "9-3", "10-1", "10-2")
SPLITS = ("train", "dev", "test")


def _as_range(variations: list[int], what: str) -> list[int]:
    """``[start, stop)`` of a contiguous, sorted variation list (all of them are, in 1.2.3)."""
    start, stop = variations[0], variations[-1] + 1
    if variations != list(range(start, stop)):
        raise ValueError(f"{what}: variations are not one contiguous range; store them as lists")
    return [start, stop]


def task_table_from_simulator(simulator: ScienceWorldEnv) -> list[dict[str, Any]]:
    """One entry per task AgentGym keeps, in item order, read from a running simulator."""
    variation_lists = {
        "train": simulator.get_variations_train,
        "dev": simulator.get_variations_dev,
        "test": simulator.get_variations_test,
    }
    tasks = []
    for task_id, task_name in simulator.tasks.items():
        if task_id in EXCLUDED_TASK_IDS:
            continue
        simulator.load(task_name, 0, "")  # the split getters answer for the loaded task
        entry: dict[str, Any] = {
            "task_id": task_id,
            "task_name": task_name,
            "variations": simulator.get_max_variations(task_name),
        }
        for split in SPLITS:
            variations = sorted(variation_lists[split]())
            entry[split] = _as_range(variations, f"{task_id} {split}")
        covered = sorted(v for split in SPLITS for v in range(*entry[split]))
        if covered != list(range(entry["variations"])):
            raise ValueError(f"{task_id}: the splits do not cover its variations exactly once")
        tasks.append(entry)
    return tasks


def render(tasks: list[dict[str, Any]], version: str) -> str:
    """The file's text: one task per line, so that a package upgrade shows as a short diff."""
    lines = ",\n".join(f"    {json.dumps(task)}" for task in tasks)
    return (
        "{\n"
        f'  "source": "scienceworld {version}",\n'
        f'  "excluded_task_ids": {json.dumps(list(EXCLUDED_TASK_IDS))},\n'
        '  "variation_ranges": "[start, stop)",\n'
        f'  "tasks": [\n{lines}\n  ]\n'
        "}\n"
    )


def main() -> None:
    import scienceworld
    from scienceworld import ScienceWorldEnv

    simulator = ScienceWorldEnv()
    try:
        text = render(task_table_from_simulator(simulator), scienceworld.__version__)
    finally:
        simulator.close()
    TASKS_FILE.write_text(text)


if __name__ == "__main__":
    main()
