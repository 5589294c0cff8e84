"""The trained-positions loss is the model's own causal-LM loss, computed on fewer positions."""

from __future__ import annotations

import torch
from transformers import AutoModelForCausalLM

from agentcli.train.sft import trained_positions_loss


def test_equals_the_full_vocabulary_loss_over_the_same_labels(tiny_model):
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(5, model.config.vocab_size, (3, 20), generator=generator)
    labels = input_ids.clone()
    labels[0, :12] = -100  # rows trained at different places, one with a gap
    labels[1, 5:15] = -100
    labels[2, :-3] = -100
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}

    ours = trained_positions_loss(model, {**inputs, "labels": labels}, None)
    reference = model(**inputs, labels=labels).loss

    assert torch.allclose(ours, reference, atol=1e-5)
    trained = int((labels[:, 1:] != -100).sum())
    halved = trained_positions_loss(model, {**inputs, "labels": labels}, 2 * trained)
    assert torch.allclose(halved, reference / 2, atol=1e-5)
