"""``train grpo --unit step``: policy optimisation of the student's steps, each step a sample.

TRL's GRPO trains an episode as one sequence, so the model is shown its whole history, which a
student trained on a window (``history_steps: 0``) never saw. Here each step is one sample, as
verl-agent trains: its prompt is what the student was shown at that step (``shown_at``: the
rollout's rendering in the run's view), its completion the reply taken there, rendered as sft
trains it (``turn_text``; a reply with no usable action is not trained). A training step:

1. Each item of the batch is played ``num_generations`` times by the model as it is now,
   sampling at the run's temperature (the ``EpisodePlayer``: the rollout's episode loop).
2. Each episode's reward (the env's score, or the shaping hook's) becomes advantages
   (``agentcli.train.advantages``): GRPO's, the episode's reward against its group's, for each
   of its steps; with GiGPO, plus ``step_weight`` times the step's discounted return against
   the other steps of its group taken from the same observation.
3. One update of −A · log π(reply | prompt) (π at the sampling temperature, the distribution
   the replies were drawn from), summed over the reply's tokens and averaged over
   the trained tokens of the step's samples (with ``weighting: episodes``, A first shared
   among its episode's samples: ``episode_weighted``), plus β times the k3 estimate of the KL
   to the start model. The update is on-policy and single (PPO's ratio is 1: nothing to clip).

The loop is transformers' ``Trainer`` (accelerate underneath), as for the other methods: the
dataset is the items and a batch the items of a step; checkpoints, resume, LoRA, logging and
the launch are the Trainer's. A resumed run plays the items in the order an uninterrupted one
does (the sampler's order is a function of the seed and the epoch) with the same sampling (the
player seeds each step by its number). Samples whose advantage is zero (a group with no signal)
are left out of the loss with ``zero_variance: drop`` and counted in its average with ``keep``;
with ``negatives: drop`` so are those whose advantage is negative (the update then imitates
the samples that did better than their group).
"""

from __future__ import annotations

import copy
import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from transformers import Trainer

from agentcli.conversation import StudentView, episode_opening, shown_at, turn_text
from agentcli.records import ChatMessage, Episode
from agentcli.train.advantages import discounted_return, flat_groups, group_relative
from agentcli.train.arguments import trainer_arguments
from agentcli.train.config import GrpoSettings, TrainConfig
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
class StepSample:
    """One step of one of a training step's episodes, tokenized as it is trained."""

    episode: int  # the episode's position among the step's episodes
    anchor: tuple[int, str]  # its group and the observation the step was taken from
    steps_to_end: int  # steps after this one in its episode
    input_ids: list[int]
    completion_mask: list[int]  # 1 on the reply's tokens


def step_messages(episode: Episode, t: int, view: StudentView) -> list[ChatMessage]:
    """Step ``t`` as trained: what the student was shown, then its reply (loss true)."""
    step = episode.steps[t]
    style = episode_opening(episode, view).style
    reply = turn_text(step.reason, step.action, view, style)
    return [*shown_at(episode, t, view), ChatMessage(role="assistant", content=reply, loss=True)]


def step_samples(
    tokenizer: Any, episodes: Sequence[Episode], group_size: int, view: StudentView
) -> list[StepSample]:
    """Every step with a usable action of ``episodes``, whose groups are ``group_size``
    consecutive episodes."""
    samples = []
    for position, episode in enumerate(episodes):
        for t, step in enumerate(episode.steps):
            if not step.action:  # its recorded turn is not what the model wrote
                continue
            example = tokenize_conversation(tokenizer, step_messages(episode, t, view))
            assert example is not None  # without max_length nothing is dropped
            samples.append(
                StepSample(
                    episode=position,
                    anchor=(position // group_size, step.observation),
                    steps_to_end=len(episode.steps) - 1 - t,
                    input_ids=example.input_ids,
                    completion_mask=example.completion_mask,
                )
            )
    return samples


def sample_advantages(
    samples: Sequence[StepSample], rewards: Sequence[float | None], settings: GrpoSettings
) -> list[float]:
    """Each sample's advantage (see the module); ``rewards`` are the episodes'."""
    groups = [position // settings.num_generations for position in range(len(rewards))]
    per_episode = group_relative(rewards, groups, settings.normalize)
    advantages = [per_episode[sample.episode] for sample in samples]
    if settings.advantage == "gigpo":
        returns = [
            discounted_return(rewards[sample.episode], sample.steps_to_end, settings.gamma)
            for sample in samples
        ]
        anchors = [sample.anchor for sample in samples]
        per_step = group_relative(returns, anchors, settings.normalize)
        advantages = [
            episode + settings.step_weight * step
            for episode, step in zip(advantages, per_step, strict=True)
        ]
    return advantages


def trained_samples(
    samples: Sequence[StepSample], advantages: Sequence[float], settings: GrpoSettings
) -> list[tuple[StepSample, float]]:
    """The samples the update trains, with their advantages: those of zero advantage only with
    ``zero_variance: keep``, those of negative advantage only with ``negatives: keep``."""
    kept = []
    for sample, advantage in zip(samples, advantages, strict=True):
        if advantage < 0 and settings.negatives == "drop":
            continue
        if advantage or settings.zero_variance == "keep":
            kept.append((sample, advantage))
    return kept


def episode_weighted(trained: Sequence[tuple[StepSample, float]]) -> list[tuple[StepSample, float]]:
    """``weighting: episodes``: each sample's advantage divided by its episode's number of
    trained samples, so that every episode's steps weigh as one episode, and multiplied by the
    trained samples per trained episode, so that the update's mean weight stays that of
    ``tokens``. Without it, a group's lost episodes, which run to the turn limit, push down the
    moves they share with the won ones many times over."""
    if not trained:
        return []
    counts = Counter(sample.episode for sample, _ in trained)
    per_episode = len(trained) / len(counts)
    return [
        (sample, advantage * per_episode / counts[sample.episode]) for sample, advantage in trained
    ]


def _padded(samples: Sequence[StepSample], pad_id: int, device: Any) -> tuple[Any, Any, Any]:
    """Input ids, attention mask and completion mask, right-padded to the longest sample."""
    width = max(len(sample.input_ids) for sample in samples)

    def rows(values: Sequence[list[int]], pad: int) -> Any:
        return torch.tensor([row + [pad] * (width - len(row)) for row in values], device=device)

    ids = rows([sample.input_ids for sample in samples], pad_id)
    attention = rows([[1] * len(sample.input_ids) for sample in samples], 0)
    completion = rows([sample.completion_mask for sample in samples], 0)
    return ids, attention, completion


def token_log_probs(model: Any, ids: Any, attention: Any, temperature: float) -> Any:
    """log π of each token after the first, given the tokens before it, π being the model's
    distribution at the ``temperature`` the episodes were sampled at."""
    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1].float()
    return torch.log_softmax(logits / temperature, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)


def _items(rows: list[dict[str, str]]) -> dict[str, list[str]]:
    """The data collator: a batch is the item ids of a step."""
    return {"items": [row["item"] for row in rows]}


class StepwiseTrainer(Trainer):
    """The Trainer whose training step plays, scores and updates (see the module)."""

    def __init__(
        self,
        *,
        config: TrainConfig,
        play: EpisodePlayer,
        reference: Any | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.settings = config.grpo
        self.beta = config.hyperparameters.beta or 0.0
        self.forward_batch = config.hyperparameters.per_device_train_batch_size
        self.play = play
        self.reference = reference
        self.hook = load_reward_hook(self.settings.reward)
        self.episodes_log = episodes_path(config.out, self.accelerator.process_index)
        self.first_step = True  # this process's first: where a resumed run picks up
        self.metrics: dict[str, list[float]] = defaultdict(list)

    def training_step(self, model: Any, inputs: dict[str, Any], num_items_in_batch: Any = None):
        settings, step = self.settings, self.state.global_step
        if self.first_step:
            self.first_step = False
            drop_episodes_from(self.episodes_log, step)
        items = [item for item in inputs["items"] for _ in range(settings.num_generations)]
        player = self.accelerator.unwrap_model(model)
        episodes = self.play(items, player, self.processing_class, step=step)
        rewards = group_rewards(episodes, self.hook)
        keep_episodes(self.episodes_log, episodes, rewards)
        samples = step_samples(
            self.processing_class, episodes, settings.num_generations, settings.view
        )
        advantages = sample_advantages(samples, rewards, settings)
        trained = trained_samples(samples, advantages, settings)
        if settings.weighting == "episodes":
            trained = episode_weighted(trained)
        self._record(episodes, rewards, trained)
        model.train()
        return self._update(model, trained)

    def _update(self, model: Any, trained: Sequence[tuple[StepSample, float]]) -> Any:
        """Back-propagate the step's loss, a forward batch at a time (one gradient sync)."""
        total = torch.zeros((), device=self.args.device)
        if not trained:  # nothing to learn; a distributed run still syncs once per rank
            if self.accelerator.num_processes > 1:
                self.accelerator.backward(sum(p.sum() for p in model.parameters()) * 0.0)
            return total
        # the mean over the step's trained tokens, whatever the gradient accumulation
        scale = sum(sum(sample.completion_mask) for sample, _ in trained)
        scale *= self.current_gradient_accumulation_steps
        size = self.forward_batch
        chunks = [trained[start : start + size] for start in range(0, len(trained), size)]
        for index, chunk in enumerate(chunks):
            last = index == len(chunks) - 1
            with nullcontext() if last else self.accelerator.no_sync(model):
                with self.compute_loss_context_manager():
                    loss = self._loss(model, chunk) / scale
                self.accelerator.backward(loss)
            total += loss.detach()
        self.state.num_input_tokens_seen += sum(len(sample.input_ids) for sample, _ in trained)
        return total

    def _loss(self, model: Any, chunk: Sequence[tuple[StepSample, float]]) -> Any:
        """The chunk's summed policy-gradient loss (and KL term) over its reply tokens."""
        samples = [sample for sample, _ in chunk]
        pad = self.processing_class.pad_token_id
        ids, attention, completion = _padded(samples, pad, self.args.device)
        log_probs = token_log_probs(model, ids, attention, self.settings.temperature)
        mask = completion[:, 1:]
        weights = torch.tensor([advantage for _, advantage in chunk], device=ids.device)
        loss = -(weights[:, None] * log_probs * mask).sum()
        if self.beta:
            with torch.no_grad():
                reference = self._reference_log_probs(model, ids, attention)
            gap = reference - log_probs
            loss = loss + self.beta * ((gap.exp() - gap - 1) * mask).sum()
        return loss

    def _reference_log_probs(self, model: Any, ids: Any, attention: Any) -> Any:
        """The start model's log-probabilities: the LoRA model without its adapters, else the
        copy kept when training began."""
        if self.reference is not None:
            return token_log_probs(self.reference, ids, attention, self.settings.temperature)
        with self.accelerator.unwrap_model(model).disable_adapter():
            return token_log_probs(model, ids, attention, self.settings.temperature)

    def _record(
        self,
        episodes: Sequence[Episode],
        rewards: Sequence[float | None],
        trained: Sequence[tuple[StepSample, float]],
    ) -> None:
        """The step's figures, logged as means over the steps since the last log."""
        size = self.settings.num_generations
        flat = flat_groups(rewards, [position // size for position in range(len(rewards))])
        scored = [reward for reward in rewards if reward is not None]
        figures = {
            "reward": sum(scored) / len(scored) if scored else 0.0,
            "episodes/success": sum(episode.success for episode in episodes) / len(episodes),
            "episodes/turns": sum(episode.n_steps for episode in episodes) / len(episodes),
            "groups/zero_variance": sum(flat.values()) / len(flat),
            "steps/trained": float(len(trained)),
        }
        for name, value in figures.items():
            self.metrics[name].append(value)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs:  # a training log: with the means of the steps since the last one
            logs.update({name: sum(values) / len(values) for name, values in self.metrics.items()})
            self.metrics.clear()
        super().log(logs, start_time)


def build_stepwise_trainer(
    config: TrainConfig, model: Any, tokenizer: Any, play: EpisodePlayer
) -> StepwiseTrainer:
    from datasets import Dataset
    from transformers import TrainingArguments

    settings, hyperparameters = config.grpo, config.hyperparameters
    items = play.item_ids()
    per_step = items_per_step(config, len(items))
    log.info(
        "grpo (steps as samples, %s advantages): %d items, %d per step, groups of %d episodes",
        settings.advantage, len(items), per_step, settings.num_generations,
    )  # fmt: skip
    arguments = {
        **trainer_arguments(config),
        "per_device_train_batch_size": (
            hyperparameters.per_device_train_batch_size // settings.num_generations
        ),
        "include_num_input_tokens_seen": "no",  # the training step counts its own tokens
        "remove_unused_columns": False,  # a batch is item ids, no model inputs
    }
    arguments.pop("beta", None)  # the trainer's own setting, not transformers'
    lora = config.adapters.lora
    if lora:
        from peft import get_peft_model

        model = get_peft_model(model, lora_config(lora))
    beta = hyperparameters.beta or 0.0
    reference = copy.deepcopy(model).eval().requires_grad_(False) if beta and not lora else None
    return StepwiseTrainer(
        model=model,
        args=TrainingArguments(**arguments),
        train_dataset=Dataset.from_dict({"item": items}),
        data_collator=_items,
        processing_class=tokenizer,
        config=config,
        play=play,
        reference=reference,
    )
