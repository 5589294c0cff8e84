"""Resuming picks the newest whole checkpoint, passing over one a kill left half-written."""

from __future__ import annotations

from agentcli.train.config import TrainConfig
from agentcli.train.run import last_checkpoint


def test_a_half_written_checkpoint_is_passed_over(tmp_path):
    config = TrainConfig(method="sft", data=tmp_path / "d.jsonl", model=tmp_path, out=tmp_path)
    assert last_checkpoint(config) is None
    for step, whole in ((2, True), (10, True), (12, False)):
        folder = config.checkpoints / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"")
        if whole:
            (folder / "trainer_state.json").write_text("{}")
    assert last_checkpoint(config) == str(config.checkpoints / "checkpoint-10")
