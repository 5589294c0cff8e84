"""Every iterate config shipped in configs/ (and the tests' reduced one) validates for the
iterations it is meant for and opens with the command that runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.iterate.config import iteration_numbers
from agentcli.iterate.loop import resolve_iterations

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
