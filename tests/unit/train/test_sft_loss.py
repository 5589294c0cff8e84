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


def test_positions_after_the_last_trained_prediction_are_not_run(tiny_model):
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    lengths = []
    model.register_forward_pre_hook(
        lambda module, args, kwargs: lengths.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(5, model.config.vocab_size, (2, 20), generator=generator)
    labels = torch.full_like(input_ids, -100)
    labels[0, 8:12] = input_ids[0, 8:12]  # an untrained final observation after each
    labels[1, 5:14] = input_ids[1, 5:14]
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}

    ours = trained_positions_loss(model, {**inputs, "labels": labels}, None)
    ours.backward()
    ours_gradients = [parameter.grad.clone() for parameter in model.parameters()]
    model.zero_grad()
    reference = model(**inputs, labels=labels).loss
    reference.backward()

    assert lengths == [13, 20]  # position 12 predicts token 13, the last trained one
    torch.testing.assert_close(ours, reference)
    for gradient, parameter in zip(ours_gradients, model.parameters(), strict=True):
        torch.testing.assert_close(gradient, parameter.grad)
