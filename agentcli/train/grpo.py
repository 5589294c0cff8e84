"""grpo: TRL's ``GRPOTrainer`` whose rollouts are whole episodes in our envs.

TRL's ``rollout_func`` hook (TRL 1.16) hands us each step's prompts and wants token ids back:
the dataset's prompts are item ids, repeated ``num_generations`` times by TRL's sampler (one
group per item), and the rollout function has the ``EpisodePlayer`` play one episode of each
with the trainer's model as it is now (``agentcli.rl.episodes``: the rollout engine's episode
loop, conversation and reply parsing). Each episode then becomes the conversation bc/sft train
on (``episode_conversation``, tokenized by ``tokenize_conversation`` with the chat template):
``prompt_ids`` up to the first reply, ``completion_ids`` from the first reply to the last (the
observations between them included), ``env_mask`` 1 exactly on the replies' tokens (what
``tokenize`` trains in sft), so the loss and the KL term see only the model's own tokens. The
model thus writes ``Action: …`` lines as our students do: no tool-calling template.

The reward is the episode's (the env's score, or the shaping hook's value of the Episode); an
episode that ended in an env error is unscorable (None: TRL leaves it out of its group's
baseline). A group whose scored episodes all earned the same reward has zero advantage everywhere:
``zero_variance=drop`` masks its tokens out, so that it does not dilute the loss of the groups
that carry signal; TRL's ``frac_reward_zero_std`` reports how many there were either way.

Two choices TRL leaves to us. The trained tokens are the re-rendered conversation, not the
tokens sampled (a reply is cut after its action line and re-rendered as its Thought and Action,
with the template's end of turn): that is the text the student was trained on and is shown.
``logprobs`` is returned as None: TRL reads sampling log-probabilities only to correct for an
inference engine (vLLM) whose model differs from the trainer's, and here the trainer's own
model samples, so TRL's own log-probabilities of the trained tokens are the right ones. A reply
with no usable action is not trained (its recorded turn is not what the model wrote).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentcli.conversation import StudentView, episode_conversation
from agentcli.records import ChatMessage, Episode
from agentcli.train.advantages import flat_groups
from agentcli.train.arguments import trainer_arguments
from agentcli.train.config import TrainConfig
from agentcli.train.model import lora_config
from agentcli.train.played import (
    drop_episodes_from,
    episodes_path,
    group_rewards,
    items_per_step,
    keep_episodes,
    load_reward_hook,
)
from agentcli.train.protocols import EpisodePlayer
from agentcli.train.tokenize import tokenize_conversation

log = logging.getLogger("agentgym.train")


@dataclass(frozen=True)
class EpisodeTokens:
    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]  # 1 on the model's reply tokens, 0 on the observations between them


def trained_conversation(episode: Episode, view: StudentView) -> list[ChatMessage]:
    """The episode as bc/sft train on it, up to its last reply (the final observation trains
    nothing); a reply with no usable action is not trained."""
    messages = episode_conversation(episode.model_copy(update={"final_observation": None}), view)
    first_reply = 3 if view.instruction else 1  # after the opening and the first observation
    for step, at in zip(episode.steps, range(first_reply, len(messages), 2), strict=True):
        if not step.action:
            messages[at] = messages[at].model_copy(update={"loss": False})
    return messages


def episode_tokens(tokenizer: Any, episode: Episode, view: StudentView) -> EpisodeTokens:
    """The episode's tokens as TRL takes them (see the module)."""
    example = tokenize_conversation(tokenizer, trained_conversation(episode, view))
    assert example is not None  # without max_length nothing is dropped
    ids, mask = example.input_ids, example.completion_mask
    if 1 not in mask:  # no reply to train: one untrained token, so that TRL has a completion
        return EpisodeTokens(ids, [tokenizer.eos_token_id], [0])
    start, end = mask.index(1), len(mask) - mask[::-1].index(1)
    return EpisodeTokens(ids[:start], ids[start:end], mask[start:end])


def zero_variance_groups(
    item_ids: Sequence[str], rewards: Sequence[float | None], size: int
) -> list[bool]:
    """Per episode, whether its group (``size`` consecutive episodes of one item, as TRL's
    sampler lays them out) carries no signal: its scored episodes all earned one reward (TRL
    leaves unscorable ones, None, out of the group's baseline, so their advantage is 0 too). A
    slice that does not hold whole groups (a group split across processes) is never flagged."""
    if len(item_ids) % size:
        return [False] * len(item_ids)
    groups = [position // size for position in range(len(item_ids))]
    flat = flat_groups(rewards, groups)
    items = {
        group: {item_ids[p] for p in range(group * size, (group + 1) * size)} for group in flat
    }
    return [flat[group] and len(items[group]) == 1 for group in groups]


def episode_reward(completions: list[Any], episode_reward: list[float | None], **kwargs: Any):
    """TRL's reward function: the reward the rollout function computed for each episode."""
    log_metric = kwargs.get("log_metric")
    if log_metric is not None:
        dropped = kwargs["zero_variance"]
        log_metric("episodes/success", sum(kwargs["episode_success"]) / len(completions))
        log_metric("episodes/turns", sum(kwargs["episode_turns"]) / len(completions))
        log_metric("groups/zero_variance", sum(dropped) / len(completions))
    return list(episode_reward)


def rollout_function(config: TrainConfig, play: EpisodePlayer, tokenizer: Any) -> Callable:
    """TRL's ``rollout_func``: plays the prompts' items, returns their tokens (the module)."""
    grpo = config.grpo
    hook = load_reward_hook(grpo.reward)
    first = True  # this process's first step: where a resumed run picks up its episodes

    def rollout(prompts: list[str], trainer: Any) -> dict[str, Any]:
        nonlocal first
        model = trainer.accelerator.unwrap_model(trainer.model)
        step = trainer.state.global_step
        episodes = play(prompts, model, tokenizer, step=step)
        rewards = group_rewards(episodes, hook)
        flat = zero_variance_groups(prompts, rewards, grpo.num_generations)
        tokens = [episode_tokens(tokenizer, episode, grpo.view) for episode in episodes]
        drop = grpo.zero_variance == "drop"
        path = episodes_path(config.out, trainer.accelerator.process_index)
        if first:
            drop_episodes_from(path, step)
            first = False
        keep_episodes(path, episodes, rewards)
        return {
            "prompt_ids": [t.prompt_ids for t in tokens],
            "completion_ids": [t.completion_ids for t in tokens],
            "env_mask": [
                [0] * len(t.env_mask) if drop and zero else t.env_mask
                for t, zero in zip(tokens, flat, strict=True)
            ],
            "logprobs": None,  # see the module
            "episode_reward": rewards,
            "episode_success": [episode.success for episode in episodes],
            "episode_turns": [episode.n_steps for episode in episodes],
            "zero_variance": flat,
        }

    return rollout


def build_grpo_trainer(config: TrainConfig, model: Any, tokenizer: Any, play: EpisodePlayer):
    from datasets import Dataset
    from trl import GRPOConfig

    from agentcli.train.grpo_trainer import ResumableGRPOTrainer

    grpo = config.grpo
    items = play.item_ids()
    per_step = items_per_step(config, len(items))
    log.info(
        "grpo: %d items, %d per step, groups of %d episodes",
        len(items), per_step, grpo.num_generations,
    )  # fmt: skip
    arguments = GRPOConfig(
        **{
            **trainer_arguments(config),
            "include_num_input_tokens_seen": "no",  # GRPO counts its tokens itself
        },
        num_generations=grpo.num_generations,
        temperature=grpo.temperature,
        scale_rewards="group" if grpo.normalize == "std" else "none",
    )
    with warnings.catch_warnings():
        # what TRL calls experimental is what this module is built on (and tested against)
        warnings.filterwarnings("ignore", "You are using 'rollout_func'", UserWarning)
        return ResumableGRPOTrainer(
            model=model,
            reward_funcs=episode_reward,
            args=arguments,
            train_dataset=Dataset.from_dict({"prompt": items}),
            processing_class=tokenizer,
            rollout_func=rollout_function(config, play, tokenizer),
            peft_config=lora_config(config.adapters.lora) if config.adapters.lora else None,
        )
