"""Every iterate config shipped in configs/ (and the tests' reduced one) validates for the
iterations it is meant for and opens with the command that runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.iterate.config import iteration_numbers
from agentcli.iterate.loop import resolve_iterations
from agentcli.iterate.stages import iteration_stages

ROOT = Path(__file__).parents[2]
CONFIGS = sorted(ROOT.glob("configs/*.yaml")) + [ROOT / "tests" / "fixtures" / "iterate-tiny.yaml"]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.name)
def test_a_shipped_config_opens_with_its_command_and_validates(path):
    command = path.read_text().splitlines()[0].split()
    relative = str(path.relative_to(ROOT))
    assert command[:5] == ["#", "agentgym", "iterate", "--config", relative]
    option, value = command[5:7]
    numbers = iteration_numbers(
        int(value) if option == "--iter" else None, value if option == "--iters" else None
    )
    for config in resolve_iterations(path, numbers, []):
        assert config.iter in numbers and config.envs


def test_the_rl_configs_shared_iterations_are_the_quickstarts_own():
    """configs/quickstart-rl.yaml trains, for a seed, the quickstart's own models 0 and 1 and
    control (the same stages and settings but for the run directory), then its variants."""
    quickstart, rl = ROOT / "configs" / "quickstart.yaml", ROOT / "configs" / "quickstart-rl.yaml"
    for k in (0, 1):
        [ours], [theirs] = resolve_iterations(quickstart, [k], []), resolve_iterations(rl, [k], [])
        shared = {stage.key: stage.config for stage in iteration_stages(ours, lambda *_: None)}
        stages = {stage.key: stage.config for stage in iteration_stages(theirs, lambda *_: None)}
        renamed = json.loads(json.dumps(shared).replace(str(ours.run), str(theirs.run)))
        assert {key: stages[key] for key in shared} == renamed
        variants = tuple(f"{name}-" for name in theirs.variants)
        assert all(key.split("/")[1].startswith(variants) for key in stages.keys() - shared.keys())
