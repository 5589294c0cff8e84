"""`agentgym train grpo` on the tiny model and babyai-putnext's built-in server: killed with
SIGKILL after a checkpoint and resumed to the end, it plays what an uninterrupted run plays (the
same items in the same order, each step's episodes once); its model is loaded by `agentgym
eval`; and what it trains on: the conversation a real rollout shows, the replies alone trained."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from agentcli.conversation import StudentView, chat_dicts, env_opening, student_messages
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import get_spec
from agentcli.policy import PolicyConfig
from agentcli.records import Episode
from agentcli.rollout import RolloutConfig, execute
from agentcli.train.grpo import episode_tokens, trained_conversation
from tests.support.cli import agentgym

ENV = "babyai-putnext"
STEPS, GROUP = 6, 2  # 2 items, one a step: 3 epochs, whose orders TRL's sampler draws


def grpo_command(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "agentcli.cli.main", "train", "grpo", "--model", str(model),
        "--env", ENV, "--limit", "2", "--group", str(GROUP), "--max-turns", "2",
        "--max-new-tokens", "8", "--max-steps", str(STEPS), "--save-steps", "1",
        "--logging-steps", "1", "--lr", "1e-4", "--out", str(out), *extra,
    ]  # fmt: skip


def kill_after_the_step_after_checkpoint(process: subprocess.Popen, out: Path, at: int) -> None:
    """SIGKILL once checkpoint ``at`` is saved and the next step's episodes are written: the
    resumed run plays that step again."""
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        saved = (out / "checkpoints" / f"checkpoint-{at}" / "trainer_state.json").exists()
        if saved and episodes.exists() and len(episodes.read_bytes().splitlines()) > at * GROUP:
            os.killpg(process.pid, signal.SIGKILL)  # the env server it started goes too
            process.wait()
            return
        time.sleep(0.02)
    _, stderr = process.communicate()
    pytest.fail(f"the run was not caught after checkpoint {at}:\n{stderr[-3000:]}")


def played(out: Path) -> list[tuple[int, str]]:
    """(step, item) of each episode kept, in the file's order."""
    return [(e.meta["step"], e.item_id) for e in read_records(out / "episodes.jsonl", Episode)]


@pytest.mark.slow
def test_grpo_resumed_after_sigkill_plays_what_an_uninterrupted_run_plays(tiny_model, tmp_path):
    uninterrupted = agentgym(*grpo_command(tiny_model, tmp_path / "whole")[3:], timeout=300)
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
    out = tmp_path / "grpo"
    first = subprocess.Popen(
        grpo_command(tiny_model, out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        start_new_session=True,
    )
    kill_after_the_step_after_checkpoint(first, out, at=2)  # an epoch's end: the next draws anew
    assert not (out / "train_summary.json").exists()

    resumed = agentgym(*grpo_command(tiny_model, out, "--resume")[3:], timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"→ {out}" in resumed.stdout and "final reward" in resumed.stdout
    whole = played(tmp_path / "whole")
    assert len(whole) == STEPS * GROUP and played(out) == whole
    order = [item for _, item in whole[::GROUP]]  # an item a step, two steps an epoch
    assert order[2:4] != order[0:2]  # what a resumed sampler drawing epoch 0 again would play
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == STEPS and summary["steps"] in (STEPS - 3, STEPS - 2)
    logged = [entry for entry in summary["log_history"] if "reward" in entry]
    assert logged and all("frac_reward_zero_std" in entry for entry in logged)
    episodes = read_records(out / "episodes.jsonl", Episode)
    assert {episode.item_id for episode in episodes} == {f"{ENV}_1000", f"{ENV}_1001"}  # train
    assert all(1 <= episode.n_steps <= 2 for episode in episodes)

    evaluated = agentgym(
        "eval", "--model", str(out), "--env", ENV, "--limit", "1", "--max-rounds", "1",
        "--out", str(tmp_path / "eval"), timeout=300,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    assert len(read_records(tmp_path / "eval" / "episodes.jsonl", Episode)) == 1


def test_the_tokens_trained_are_the_rollouts_conversation_and_only_replies_train(
    tiny_model, tmp_path
):
    """A real rollout (the expert on textcraft, AgentGym's wording, Thought and Action on
    their lines) through a built-in server: each turn's prompt as the rollout showed it,
    rendered by the chat template, leads the episode's tokens, followed by the reply; the
    tokens env_mask keeps are exactly the replies and their end of turn."""
    out = tmp_path / "oracle"
    config = RolloutConfig(
        env="textcraft", split="train", limit=2, policy=PolicyConfig(kind="oracle"), out=out
    )
    execute(config)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    view = StudentView()
    opening = env_opening("textcraft", get_spec("textcraft").instruction, view)
    for episode in read_records(out / "episodes.jsonl", Episode):
        assert episode.n_steps >= 2
        tokens = episode_tokens(tokenizer, episode, view)
        assert len(tokens.completion_ids) == len(tokens.env_mask)
        text = tokenizer.decode(tokens.prompt_ids + tokens.completion_ids)
        replies = [m.content for m in trained_conversation(episode, view) if m.loss]
        for at, step in enumerate(episode.steps):
            shown = student_messages(opening, episode.steps[:at], step.observation, view)
            prompt = tokenizer.apply_chat_template(
                chat_dicts(shown), tokenize=False, add_generation_prompt=True
            )
            assert text.startswith(prompt + replies[at] + "<|im_end|>")
        assert text.endswith(replies[-1] + "<|im_end|>")
        assert tokenizer.decode(tokens.prompt_ids) == tokenizer.apply_chat_template(
            chat_dicts(student_messages(opening, [], episode.steps[0].observation, view)),
            tokenize=False,
            add_generation_prompt=True,
        )
        kept = [token for token, m in zip(tokens.completion_ids, tokens.env_mask, strict=True) if m]
        assert tokenizer.decode(kept) == "".join(reply + "<|im_end|>" for reply in replies)
        assert "Thought:\n" in replies[0] and "\n\nAction:\n" in replies[0]  # AgentGym's
