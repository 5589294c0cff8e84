"""Real TRL training on the tiny model: bc, sft with LoRA, dpo, resume, two CPU processes."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from transformers import AutoModelForCausalLM, TrainerCallback

from agentcli import train_eval
from agentcli.common import free_port
from agentcli.config import resolve_config
from agentcli.conversation import ACKNOWLEDGEMENT
from agentcli.errors import ModelUnavailableError, UsageError
from agentcli.records import ChatMessage
from agentcli.train.config import TrainConfig
from agentcli.train.launch import train
from agentcli.train.run import run_training

ROOT = Path(__file__).parents[2]
INSTRUCTION = "Craft the goal item. Answer as 'Thought: ...' then 'Action: ...'."
PLANS = [
    ["get 1 oak log", "craft 4 oak planks using 1 oak log"],
    ["get 2 oak log", "craft 8 oak planks using 2 oak log", "craft 4 stick using 2 oak planks"],
    ["inventory", "get 6 blackstone", "craft 6 blackstone wall using 6 blackstone"],
    ["get 3 cobblestone", "craft 4 stone stairs using 6 cobblestone"],
]


def agentgym_conversation(index: int) -> dict:
    """AgentGym's shape: instruction, acknowledgement (not trained), observation/action turns."""
    plan = PLANS[index % len(PLANS)]
    turns = [
        {"from": "human", "loss": None, "value": INSTRUCTION},
        {"from": "gpt", "loss": False, "value": ACKNOWLEDGEMENT},
    ]
    observation = f"Goal {index}: craft with these commands."
    for action in plan:
        turns.append({"from": "human", "loss": None, "value": observation})
        turns.append(
            {"from": "gpt", "loss": True, "value": f"Thought: next step.\nAction: {action}"}
        )
        observation = f"Done: {action}."
    return {"item_id": f"textcraft_{index}", "conversations": turns}


@pytest.fixture
def bc_data(tmp_path: Path) -> Path:
    path = tmp_path / "bc.json"
    path.write_text(json.dumps([agentgym_conversation(index) for index in range(16)]))
    return path


def config_for(method: str, data: Path, model: Path, out: Path, *overrides: str) -> TrainConfig:
    fast = [
        "hyperparameters.learning_rate=0.003",
        "hyperparameters.per_device_train_batch_size=4",
        "hyperparameters.logging_steps=1",
        "hyperparameters.seed=0",
    ]
    return resolve_config(
        TrainConfig,
        cli={"method": method, "data": data, "model": model, "out": out},
        overrides=[*fast, *overrides],
        dotenv=None,
    )


def losses(summary) -> list[float]:
    return [entry["loss"] for entry in summary.log_history if "loss" in entry]


def test_bc_lowers_the_loss_and_saves_a_model_rollout_loads(tiny_model, bc_data, tmp_path):
    from agentcli.policy.local import LocalModelPolicy

    out = tmp_path / "bc"
    summary = train(
        config_for("bc", bc_data, tiny_model, out, "hyperparameters.num_train_epochs=3")
    )

    assert summary.global_step == 12  # 16 conversations / batch 4 × 3 epochs
    assert summary.tokens > 0 and summary.final_loss is not None
    trained = losses(summary)
    assert trained[-1] < trained[0] - 0.5
    # TRL's metrics, as its own loss logs them: the model grows surer and more often right
    logged = [entry for entry in summary.log_history if "loss" in entry]
    assert logged[-1]["mean_token_accuracy"] > logged[0]["mean_token_accuracy"]
    assert logged[-1]["entropy"] < logged[0]["entropy"]
    assert logged[-1]["num_tokens"] == summary.tokens
    written = json.loads((out / "train_summary.json").read_text())
    assert written["global_step"] == 12
    assert "learning_rate: 0.003" in (out / "train_config.yaml").read_text()

    async def one_turn():
        policy = LocalModelPolicy(out, max_new_tokens=4)
        try:
            return await policy.act([ChatMessage(role="user", content=INSTRUCTION)])
        finally:
            await policy.aclose()

    assert asyncio.run(one_turn()).completion_tokens >= 1
    assert list((out / "checkpoints").iterdir())  # resumable


def test_padding_free_batches_give_the_loss_of_separate_sequences(tiny_model, bc_data, tmp_path):
    # Concatenated conversations must not attend to each other: the padding-free loss of the
    # first batch equals the padded one.
    first_losses = {}
    for batching in ("padding_free", "padded"):
        config = config_for(
            "bc",
            bc_data,
            tiny_model,
            tmp_path / batching,
            f"rendering.batching={batching}",
            "hyperparameters.num_train_epochs=1",
        )
        config.hyperparameters.learning_rate = 1e-12  # steps change nothing measurable
        first_losses[batching] = losses(run_training(config))[0]
    assert first_losses["padding_free"] == pytest.approx(first_losses["padded"], rel=1e-4)


class ForwardRecorder(TrainerCallback):
    """Whether each forward of the trained model ran with a cache (the shared prefix's)."""

    def __init__(self) -> None:
        self.with_cache: list[bool] = []

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        def record(module, positional, keywords):
            self.with_cache.append(keywords.get("cache") is not None)

        model.register_forward_pre_hook(record, with_kwargs=True)


def test_shared_prefix_training_follows_the_unshared_losses_down(
    tiny_model, bc_data, tmp_path, caplog
):
    # Every conversation opens with the instruction and the acknowledgement (80 tokens with
    # the tiny tokenizer), so every batch computes it once; the run must be the unshared one.
    caplog.set_level("INFO", logger="agentgym.train")
    runs, forwards = {}, {}
    for share in ("true", "false"):
        config = config_for(
            "bc",
            bc_data,
            tiny_model,
            tmp_path / share,
            f"rendering.share_prefix={share}",
            "hyperparameters.num_train_epochs=2",
        )
        recorder = ForwardRecorder()
        runs[share] = losses(run_training(config, callbacks=[recorder]))
        forwards[share] = recorder.with_cache
    assert "shared prefix: on" in caplog.text and "shared prefix: off" in caplog.text
    # 8 steps of 4 conversations: the prefix, then each row after it
    assert forwards["true"] == [True] * 8 * (1 + 4)
    assert forwards["false"] == [False] * 8
    assert runs["true"] == pytest.approx(runs["false"], rel=1e-4)
    assert runs["true"][-1] < runs["true"][0] - 0.5


def test_sft_with_lora_saves_a_merged_plain_model(tiny_model, tmp_path):
    data = tmp_path / "sft.jsonl"
    pairs = [
        {"prompt": f"Goal {i}: what first?", "response": "Action: get 1 oak log"} for i in range(8)
    ]
    data.write_text("".join(json.dumps(pair) + "\n" for pair in pairs))
    out = tmp_path / "sft"

    train(
        config_for(
            "sft",
            data,
            tiny_model,
            out,
            "adapters.lora=r=8,alpha=16",
            "hyperparameters.num_train_epochs=2",
        )
    )

    assert (out / "config.json").is_file()
    assert not list(out.glob("adapter*"))
    merged = AutoModelForCausalLM.from_pretrained(out)
    base = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert type(merged) is type(base)
    changed = [
        name
        for name, weight in merged.state_dict().items()
        if not torch.equal(weight, base.state_dict()[name])
    ]
    assert changed and all("proj" in name for name in changed)  # the adapted linear layers


def preference_pairs(data: Path) -> Path:
    """Eight textcraft prompts, each preferring getting a log to looking at the inventory."""
    rows = []
    for index in range(8):
        prompt = [
            {"role": "user", "content": INSTRUCTION},
            {"role": "assistant", "content": ACKNOWLEDGEMENT},
            {"role": "user", "content": f"Goal {index}: craft oak planks."},
        ]
        rows.append(
            {
                "prompt": prompt,
                "chosen": [{"role": "assistant", "content": "Action: get 1 oak log"}],
                "rejected": [{"role": "assistant", "content": "Action: inventory"}],
            }
        )
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return data


def test_dpo_raises_the_reward_margin_of_its_pairs(tiny_model, tmp_path):
    data = preference_pairs(tmp_path / "dpo.jsonl")
    summary = train(
        config_for("dpo", data, tiny_model, tmp_path / "dpo", "hyperparameters.num_train_epochs=4")
    )

    margins = [
        entry["rewards/margins"] for entry in summary.log_history if "rewards/margins" in entry
    ]
    assert margins[0] == pytest.approx(0.0, abs=1e-4)  # the policy starts as the reference
    assert margins[-1] > 0.05
    assert (tmp_path / "dpo" / "config.json").is_file()


def test_dpo_with_an_sft_weight_makes_the_chosen_replies_likelier(tiny_model, tmp_path):
    """DPO alone may widen its margin by making both replies unlikely (a student that then
    writes neither); the SFT term on the chosen replies raises their own log-probability."""
    data = preference_pairs(tmp_path / "dpo.jsonl")
    settings = ("hyperparameters.num_train_epochs=4", "hyperparameters.learning_rate=1e-3")
    summaries = {
        name: train(config_for("dpo", data, tiny_model, tmp_path / name, *settings, *extra))
        for name, extra in (("alone", ()), ("with-sft", ("hyperparameters.sft_weight=1",)))
    }
    chosen = {
        name: [entry["logps/chosen"] for entry in summary.log_history if "logps/chosen" in entry]
        for name, summary in summaries.items()
    }
    assert chosen["alone"][0] == pytest.approx(chosen["with-sft"][0])  # the same start
    assert chosen["with-sft"][-1] > chosen["with-sft"][0]
    assert chosen["with-sft"][-1] > chosen["alone"][-1]


class StopAt(TrainerCallback):
    """Ends training after ``step`` steps, as a killed run would (after its checkpoint)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.step:
            control.should_training_stop = True


def test_resume_continues_from_the_last_checkpoint(tiny_model, bc_data, tmp_path):
    out = tmp_path / "bc"
    config = config_for(
        "bc",
        bc_data,
        tiny_model,
        out,
        "hyperparameters.num_train_epochs=3",
        "hyperparameters.save_steps=2",
    )
    config.config_path.parent.mkdir(parents=True)
    first = run_training(config, callbacks=[StopAt(6)])
    assert first.global_step == 6

    with pytest.raises(UsageError, match="--resume"):
        train(config)
    resumed = train(config.model_copy(update={"resume": True}))

    assert resumed.global_step == 12
    assert resumed.steps == 6  # only the steps after checkpoint-6


def test_a_missing_model_directory_is_one_line(bc_data, tmp_path):
    with pytest.raises(ModelUnavailableError, match="not a model directory") as error:
        train(config_for("bc", bc_data, tmp_path / "nope", tmp_path / "out"))
    assert "\n" not in str(error.value)


@pytest.mark.slow
def test_two_processes_of_the_ddp_config_train_save_and_resume(
    tiny_model, bc_data, tmp_path, monkeypatch
):
    """The shipped configs/accelerate/ddp.yaml, as on GPUs but on CPU (gloo): 2 ranks, each
    its own shard of every batch, in fp32 whatever the config file says; stopped after step 3,
    then resumed from checkpoint-2 to the end."""
    out = tmp_path / "ddp"
    config = config_for(
        "bc",
        bc_data,
        tiny_model,
        out,
        "hyperparameters.num_train_epochs=3",
        "hyperparameters.save_steps=2",
        "launch.num_processes=2",
        f"launch.accelerate_config={ROOT / 'configs' / 'accelerate' / 'ddp.yaml'}",
    )
    monkeypatch.setenv("PROBE_STOP_AT", "3")
    stopped = train(config, worker="tests.support.train_rank_probe")
    assert stopped.global_step == 3
    assert sorted(path.name for path in config.checkpoints.glob("checkpoint-*")) == ["checkpoint-2"]

    monkeypatch.delenv("PROBE_STOP_AT")
    resumed = train(
        config.model_copy(update={"resume": True}), worker="tests.support.train_rank_probe"
    )

    assert (resumed.global_step, resumed.steps) == (6, 4)  # 16 conversations / (2 ranks × 4)
    ranks = [json.loads((out / f"inputs_rank{rank}.json").read_text()) for rank in (0, 1)]
    assert [(rank["world_size"], rank["mixed_precision"]) for rank in ranks] == [(2, "no")] * 2
    assert len(ranks[0]["batches"]) == len(ranks[1]["batches"]) == 4  # the resumed steps
    for step in zip(ranks[0]["batches"], ranks[1]["batches"], strict=True):
        assert not set(map(tuple, step[0])) & set(map(tuple, step[1]))  # a shard each
    assert (out / "config.json").is_file()


def test_accelerate_runs_ddp_where_fsdp_is_asked_on_cpu():
    """Why train refuses an FSDP config without a GPU: accelerate 1.15, given the FSDP plugin
    on CPU, keeps MULTI_CPU and wraps the model in DistributedDataParallel, saying nothing.
    When this fails, accelerate runs FSDP on CPU: lift the refusal (agentcli/train/launch.py)."""
    probe = (
        "import torch\n"
        "from accelerate import Accelerator\n"
        "from accelerate.utils import FullyShardedDataParallelPlugin\n"
        "plugin = FullyShardedDataParallelPlugin(fsdp_version=2)\n"
        "accelerator = Accelerator(cpu=True, fsdp_plugin=plugin)\n"
        "model = accelerator.prepare(torch.nn.Linear(2, 2))\n"
        "print(accelerator.distributed_type, type(model).__name__)\n"
    )
    one_rank = {"LOCAL_RANK": "0", "RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
                "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
                "ACCELERATE_USE_FSDP": "true"}  # fmt: skip
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, **one_rank}, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["DistributedType.MULTI_CPU", "DistributedDataParallel"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without a GPU")
@pytest.mark.parametrize(("name", "engine"), [("fsdp", "FSDP"), ("zero3", "DeepSpeed")])
def test_fsdp_and_zero3_are_refused_without_a_gpu_in_one_line(
    tiny_model, bc_data, tmp_path, name, engine
):
    config = config_for(
        "bc", bc_data, tiny_model, tmp_path / "out",
        f"launch.accelerate_config={ROOT / 'configs' / 'accelerate' / f'{name}.yaml'}",
    )  # fmt: skip
    with pytest.raises(UsageError, match=f"asks for {engine}, which accelerate runs on GPUs only"):
        train(config)
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_eval_every_epoch_rolls_out_the_saved_epoch_model(tiny_model, bc_data, tmp_path):
    items = tmp_path / "test.json"
    items.write_text(json.dumps([{"item_id": "textcraft_0"}, {"item_id": "textcraft_1"}]))
    out = tmp_path / "bc"
    config = config_for(
        "bc", bc_data, tiny_model, out, "env=textcraft", f"eval.items={items}", "eval.every=1",
        "saving.every=1", "eval.max_rounds=2", "hyperparameters.num_train_epochs=1",
        "eval.view.history_steps=1", "eval.view.instruction=false",
    )  # fmt: skip

    summary = train_eval.train(config)  # what `agentgym train` runs: training with its eval

    assert (out / "train_epoch_1" / "config.json").is_file()
    # The model is shown its eval episodes as its training data was built.
    shown = yaml.safe_load((out / "eval" / "epoch_1" / "config.yaml").read_text())
    assert shown["view"]["history_steps"] == 1 and shown["view"]["instruction"] is False
    episodes = (out / "eval" / "epoch_1" / "episodes.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["item_id"] for line in episodes) == [
        "textcraft_0",
        "textcraft_1",
    ]
    evaluations = [entry for entry in summary.log_history if "eval_success" in entry]
    assert len(evaluations) == 1 and 0.0 <= evaluations[0]["eval_success"] <= 1.0
    assert "eval_score" in evaluations[0]


def test_lora_without_merge_saves_the_adapters(tiny_model, bc_data, tmp_path):
    out = tmp_path / "lora"
    train(
        config_for(
            "bc",
            bc_data,
            tiny_model,
            out,
            "adapters.lora=r=4",
            "adapters.merge=false",
            "hyperparameters.num_train_epochs=1",
        )
    )
    assert (out / "adapter_config.json").is_file()
    assert not (out / "model.safetensors").exists()


@pytest.mark.parametrize("tracker", ["wandb", "tensorboard", "trackio"])
def test_a_tracker_that_is_not_installed_is_one_line(tracker, tiny_model, bc_data, tmp_path):
    if importlib.util.find_spec(tracker) is not None:
        pytest.skip(f"{tracker} is installed here")
    out = tmp_path / "out"
    chosen = f"hyperparameters.report_to={tracker}"
    with pytest.raises(UsageError, match=f"--report-to {tracker} needs .* `pip install {tracker}`"):
        train(config_for("bc", bc_data, tiny_model, out, chosen))
