"""Every shipped accelerate config loads in accelerate and opens with the command that uses it;
the launch command takes the precision from ``launch.dtype`` and a config's own port."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelerate.commands.config.config_args import ClusterConfig

from agentcli.train.config import TrainConfig
from agentcli.train.launch import accelerate_command

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


def launch_command(tmp_path, **launch) -> list[str]:
    config = TrainConfig(method="bc", data="d.json", model="m", out=tmp_path, launch=launch)
    return accelerate_command(config, "agentcli.train.worker", port=29123)


def test_the_launch_passes_the_precision_that_dtype_gives_over_the_files():
    import torch

    if torch.cuda.is_available():
        pytest.skip("on a GPU the precision is the GPU's")
    for launch in ({"num_processes": 2}, {"accelerate_config": CONFIGS[0]}):  # ddp.yaml: bf16
        command = launch_command(Path("out"), **launch)
        assert command[command.index("--mixed_precision") + 1] == "no"


def test_a_config_that_names_its_port_keeps_it_for_every_machine(tmp_path):
    for launch in ({"num_processes": 2}, {"accelerate_config": CONFIGS[0]}):
        command = launch_command(tmp_path, **launch)
        assert command[command.index("--main_process_port") + 1] == "29123"  # a free one
    node = tmp_path / "node1.yaml"
    node.write_text(
        CONFIGS[0].read_text() + "main_process_ip: 10.0.0.1\nmain_process_port: 29555\n"
    )
    assert "--main_process_port" not in launch_command(tmp_path, accelerate_config=node)
