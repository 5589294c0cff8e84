"""Reading a model's reply: the JSON in it, what is wrong with it, and how long to wait."""

from __future__ import annotations

import httpx
import openai
import pytest
from pydantic import ValidationError

from agentcli.records import Step
from agentcli.teacher.llm import CorrectionReply, _check_corrections
from agentcli.teacher.llm_client import BACKOFF_CAP_S, _backoff, describe_problem, parse_reply

REPLY = '{"steps": [{"t": 0, "reason": "r", "action": "go"}], "summary": "s"}'


@pytest.mark.parametrize(
    "text", [REPLY, f"```json\n{REPLY}\n```", f"Here it is:\n{REPLY}\nHope this helps."]
)
def test_the_json_object_is_found_inside_prose_and_code_fences(text):
    assert parse_reply(text, CorrectionReply).steps[0].action == "go"


def test_problems_name_the_fields_for_the_model_to_fix():
    with pytest.raises(ValidationError) as caught:
        parse_reply('{"steps": [{"t": 0}, {"t": "x", "reason": ""}]}', CorrectionReply)
    problem = describe_problem(caught.value)
    assert problem.startswith("steps.0.reason: Field required; steps.0.action: Field required;")
    assert problem.endswith("; and 3 more")  # steps.1.reason, steps.1.action, summary
    with pytest.raises(ValueError, match="no JSON object"):
        parse_reply("no", CorrectionReply)


def test_corrections_must_cover_every_step_in_order_with_offered_actions():
    steps = [Step(observation="o", action="a"), Step(observation="o", action="a",
                                                     candidate_actions=["go", "stay"])]  # fmt: skip

    def reply(*entries):
        return CorrectionReply(
            steps=[{"t": t, "reason": "r", "action": action} for t, action in entries], summary="s"
        )

    _check_corrections(reply((0, "anything"), (1, " go ")), steps)
    with pytest.raises(ValueError, match="steps has 1 entries; the episode has 2 steps"):
        _check_corrections(reply((0, "a")), steps)
    with pytest.raises(ValueError, match=r"numbered 0 to 1 in order, got \[1, 0\]"):
        _check_corrections(reply((1, "go"), (0, "go")), steps)
    with pytest.raises(ValueError, match="step 1: action 'fly' is not one of"):
        _check_corrections(reply((0, "a"), (1, "fly")), steps)


def rate_limited(headers: dict[str, str]) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("slow down", response=response, body=None)


def test_the_wait_is_what_the_server_asks_else_exponential_with_jitter():
    assert _backoff(rate_limited({"retry-after-ms": "250"}), 1) == 0.25
    assert _backoff(rate_limited({"retry-after": "3"}), 1) == 3.0
    assert _backoff(rate_limited({"retry-after": "86400"}), 1) == 60.0
    waits = [_backoff(rate_limited({}), retry) for retry in (1, 2, 3, 10)]
    assert 0.25 <= waits[0] <= 0.5 and 0.5 <= waits[1] <= 1.0 and 1.0 <= waits[2] <= 2.0
    assert BACKOFF_CAP_S / 2 <= waits[3] <= BACKOFF_CAP_S
