"""The student view a model learned under, kept beside its training data and its weights.

A model is only as good as the view it is shown: the quickstart's student wins 60 % of its
items under the view it was trained with and none under the default one. So build-data writes
the view its records were rendered with beside them (``sft.view.json`` next to
``sft.jsonl``), training copies it into every model it saves (``student_view.json``), and
rollout, eval, the in-training eval and grpo show a model its own view: a view setting given
explicitly that differs from it is refused, unless the caller says it means it
(``--other-view``).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from agentcli.common import write_atomic
from agentcli.conversation import StudentView
from agentcli.errors import UsageError

MODEL_VIEW_NAME = "student_view.json"


def data_view_path(data: Path) -> Path:
    """Where the view of the training records in ``data`` is kept: ``<stem>.view.json``."""
    return data.with_name(f"{data.stem}.view.json")


def model_view_path(model: Path) -> Path:
    return model / MODEL_VIEW_NAME


def write_view(path: Path, view: StudentView) -> None:
    write_atomic(path, json.dumps(view.model_dump(mode="json"), indent=2) + "\n")


def read_view(path: Path) -> StudentView | None:
    """The view kept at ``path``; None where none is (data or a model made elsewhere)."""
    if not path.is_file():
        return None
    try:
        return StudentView.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        raise UsageError(
            f"{path} is not a student view ({error.errors()[0]['msg']}): delete it, or"
            " rebuild what wrote it"
        ) from None


def view_for(
    given: StudentView, learned: StudentView | None, *, of: str, other_view: bool = False
) -> StudentView:
    """The view to show a model that learned under ``learned`` (``of`` names it): that view,
    with what ``given`` sets explicitly over it; a setting that differs from the learned one
    is refused unless ``other_view``. None learned (a model made elsewhere): ``given``."""
    if learned is None:
        return given
    explicit = {name: getattr(given, name) for name in given.model_fields_set}
    differing = [name for name, value in explicit.items() if value != getattr(learned, name)]
    if differing and not other_view:
        name = differing[0]
        raise ValueError(
            f"view.{name}: {of} was trained with {name}={getattr(learned, name)!r}, not"
            f" {explicit[name]!r}: leave view.{name} unset to show it its own view, or pass"
            " --other-view to show it this one"
        )
    return learned.model_copy(update=explicit)
