"""The shipped prompt templates: each renders for every env, picks the env's own when there is
one, and shows the teacher only what the stage allows."""

from __future__ import annotations

import pytest

from agentcli.envs.registry import SPECS
from agentcli.records import Episode, Step
from agentcli.teacher.llm import AnnotationReply, CorrectionReply, StateReply, stage_prompt
from agentcli.teacher.prompts import PROMPTS_DIR, render

STAGES = {
    "annotate": (AnnotationReply, {"final_observation": "You crafted it."}),
    "extract_state": (StateReply, {"final_observation": "You crafted it.", "success": True}),
    "correct": (CorrectionReply, {"state": "PRIVILEGED", "reward": 0.0, "success": False}),
}


def episode(env: str, *, candidates: list[str] | None = None) -> Episode:
    steps = [
        Step(
            observation=f"observation {t}",
            reason=f"demo-reason-{t}",
            action=f"action {t}",
            candidate_actions=candidates,
        )  # fmt: skip
        for t in range(3)
    ]
    return Episode(item_id=f"{env}_4", env=env, instruction="INSTRUCTION", steps=steps)


@pytest.mark.parametrize("env", sorted(SPECS))
@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_stage_renders_for_every_env(env, stage):
    reply_model, values = STAGES[stage]
    [message] = stage_prompt(stage, episode(env), reply_model, **values)
    text = message["content"]
    assert message["role"] == "user"
    assert "INSTRUCTION" in text and "action 2" in text and "observation 0" in text
    assert f'"title": "{reply_model.__name__}"' in text  # the reply's JSON schema
    assert "{{" not in text and "{%" not in text


def test_an_env_template_extends_the_default_and_others_get_the_default():
    textcraft = render("correct", "textcraft", **_correct_values())
    webshop = render("correct", "webshop", **_correct_values())
    assert "crafting tree" in textcraft and "crafting tree" not in webshop
    # Every paragraph of the default is in textcraft's, which only adds its notes.
    default = webshop.replace('"webshop"', '"textcraft"')
    assert set(default.split("\n\n")) < set(textcraft.split("\n\n"))
    assert (PROMPTS_DIR / "default" / "correct.jinja").is_file()
    assert not (PROMPTS_DIR / "webshop").exists()


def _correct_values() -> dict:
    return {
        "instruction": "I",
        "steps": episode("textcraft").steps,
        "state": None,
        "reward": 0.0,
        "success": False,
        "schema": "{}",
    }


def test_a_missing_variable_is_an_error_not_an_empty_string():
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render("correct", "textcraft", instruction="I", steps=[], schema="{}")


def test_annotate_and_extract_state_never_show_the_demos_own_reasons():
    for stage in ("annotate", "extract_state"):
        reply_model, values = STAGES[stage]
        [message] = stage_prompt(stage, episode("textcraft"), reply_model, **values)
        assert "demo-reason" not in message["content"]


def test_correct_shows_the_student_reasons_the_state_and_valid_actions_only_when_listed():
    reply_model, values = STAGES["correct"]
    listed_episode = episode("alfworld", candidates=["go to desk 1"])
    [listed] = stage_prompt("correct", listed_episode, reply_model, **values)
    [unlisted] = stage_prompt("correct", episode("alfworld"), reply_model, **values)
    assert "demo-reason-1" in listed["content"] and "PRIVILEGED" in listed["content"]
    assert "Valid actions here: go to desk 1" in listed["content"]
    assert "must be one of them" in listed["content"]
    assert "must be one of them" not in unlisted["content"]
    no_state = {**values, "state": None}
    [without] = stage_prompt("correct", episode("alfworld"), reply_model, **no_state)
    assert "None is available for this task" in without["content"]
