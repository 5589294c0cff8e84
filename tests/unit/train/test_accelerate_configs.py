"""Every shipped accelerate config loads in accelerate and opens with the command that uses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelerate.commands.config.config_args import ClusterConfig

CONFIGS = sorted((Path(__file__).parents[3] / "configs" / "accelerate").glob("*.yaml"))


def test_the_three_configs_ship():
    assert [path.stem for path in CONFIGS] == ["ddp", "fsdp", "zero3"]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.stem)
def test_config_loads_and_names_its_command(path):
    config = ClusterConfig.from_yaml_file(str(path))
    assert config.num_machines == 1 and not config.use_cpu
    first_line = path.read_text().splitlines()[0]
    assert first_line.startswith("# agentgym train ")
    assert f"--accelerate-config configs/accelerate/{path.name}" in first_line
