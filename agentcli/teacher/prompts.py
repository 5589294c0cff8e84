"""The teacher's prompts: Jinja templates in ``agentcli/prompts/<env>/<stage>.jinja``, with
``agentcli/prompts/default/`` for environments that have none of their own (an env's template
usually extends the default one and adds notes in its ``env_notes`` block)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@cache
def _templates() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS_DIR),
        undefined=jinja2.StrictUndefined,  # a variable a template misses is an error, not ""
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # plain text for a model, not HTML
        keep_trailing_newline=False,
    )


def render(stage: str, env: str, **values: Any) -> str:
    """The ``stage`` prompt (annotate, extract_state, correct) for ``env``, filled in."""
    template = _templates().select_template([f"{env}/{stage}.jinja", f"default/{stage}.jinja"])
    return template.render(env=env, **values).strip()
