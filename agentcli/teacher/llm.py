"""The LLM teacher: each stage is one prompt and one JSON reply per record, checked before use.

Replies are pydantic models whose JSON schema goes into the request (and the prompt); what a
schema cannot say (one entry per step, steps in order, actions the env offers) is checked
here, and a reply that fails is sent back to the model with the reason (``TeacherClient``).
A correction's ``original_*`` fields and observations always come from the student's episode.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from agentcli.conversation import Message
from agentcli.errors import UsageError
from agentcli.records import (
    Correction,
    CorrectionStep,
    Episode,
    PrivilegedState,
    Step,
    item_id,
)
from agentcli.teacher.llm_client import TeacherClient
from agentcli.teacher.prompts import render


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a model may add fields; only ours are read


class StepReason(_Reply):
    t: int = Field(description="The step number, from 0.")
    reason: str = Field(min_length=1, description="Why the agent takes this step's action.")


class AnnotationReply(_Reply):
    steps: list[StepReason]


class StateReply(_Reply):
    goal: str = Field(min_length=1, description="The task's goal in one sentence.")
    objects: list[str] = Field(
        description="Each object that matters, with where it is or how it is obtained."
    )
    plan: list[str] = Field(min_length=1, description="The shortest action sequence, in order.")

    def text(self) -> str:
        objects = "".join(f"\n- {entry}" for entry in self.objects) or " (none)"
        plan = "".join(f"\n{number}. {action}" for number, action in enumerate(self.plan, 1))
        return f"Goal: {self.goal}\nObjects:{objects}\nPlan:{plan}"


class StepCorrection(_Reply):
    t: int = Field(description="The step number, from 0.")
    reason: str = Field(min_length=1, description="Why this action, from what the agent knew.")
    action: str = Field(min_length=1, description="The best action in the student's state.")


class CorrectionReply(_Reply):
    steps: list[StepCorrection]
    summary: str = Field(min_length=1, description="What went wrong and what to do instead.")


class LLMTeacher:
    def __init__(self, client: TeacherClient) -> None:
        self.client = client
        self.name = f"openai:{client.model_name}"

    async def annotate(self, demo: Episode) -> Episode:
        reply = await self.client.ask(
            stage_prompt(
                "annotate",
                demo,
                AnnotationReply,
                final_observation=demo.final_observation,
            ),
            AnnotationReply,
            stage="annotate",
            item_id=demo.item_id,
            check=lambda reply: _check_numbering(reply.steps, demo.steps),
        )
        steps = [
            step.model_copy(update={"reason": said.reason.strip()})
            for step, said in zip(demo.steps, reply.steps, strict=True)
        ]
        return demo.model_copy(
            update={"steps": steps, "meta": {**demo.meta, "annotated_by": self.name}}
        )

    async def extract_state(self, index: int, demo: Episode | None) -> PrivilegedState:
        if demo is None:  # ExtractStateConfig refuses this; a caller of the API may not
            raise UsageError("an LLM teacher reads the privileged state out of a demo: pass one")
        reply = await self.client.ask(
            stage_prompt(
                "extract_state",
                demo,
                StateReply,
                final_observation=demo.final_observation,
                success=demo.success,
            ),
            StateReply,
            stage="extract_state",
            item_id=demo.item_id,
        )
        return PrivilegedState(item_id=item_id(demo.env, index), text=reply.text())

    async def correct(self, episode: Episode, state: PrivilegedState | None) -> Correction:
        reply = await self.client.ask(
            stage_prompt(
                "correct",
                episode,
                CorrectionReply,
                state=state.text if state else None,
                reward=episode.reward,
                success=episode.success,
            ),
            CorrectionReply,
            stage="correct",
            item_id=episode.item_id,
            check=lambda reply: _check_corrections(reply, episode.steps),
        )
        return Correction(
            item_id=episode.item_id,
            summary=reply.summary.strip(),
            steps=[
                CorrectionStep(
                    t=t,
                    observation=step.observation,
                    original_reason=step.reason,
                    original_action=step.action,
                    corrected_reason=said.reason.strip(),
                    corrected_action=said.action.strip(),
                    is_corrected=said.action.strip() != step.action.strip(),
                )
                for t, (step, said) in enumerate(zip(episode.steps, reply.steps, strict=True))
            ],
        )

    async def aclose(self) -> None:
        await self.client.aclose()


def stage_prompt(
    stage: str, episode: Episode, reply_model: type[BaseModel], **values: object
) -> list[Message]:
    """The request's messages: the stage's template for the episode's env, with the JSON
    schema the reply must follow."""
    schema = json.dumps(reply_model.model_json_schema(), ensure_ascii=False)
    text = render(
        stage,
        episode.env,
        instruction=episode.instruction,
        steps=episode.steps,
        schema=schema,
        **values,
    )
    return [{"role": "user", "content": text}]


def _check_numbering(said: Sequence[StepReason | StepCorrection], steps: Sequence[Step]) -> None:
    if len(said) != len(steps):
        raise ValueError(f"steps has {len(said)} entries; the episode has {len(steps)} steps")
    numbers = [entry.t for entry in said]
    if numbers != list(range(len(steps))):
        raise ValueError(f"steps must be numbered 0 to {len(steps) - 1} in order, got {numbers}")


def _check_corrections(reply: CorrectionReply, steps: Sequence[Step]) -> None:
    _check_numbering(reply.steps, steps)
    for said, step in zip(reply.steps, steps, strict=True):
        offered = step.candidate_actions
        if offered and said.action.strip() not in {action.strip() for action in offered}:
            raise ValueError(
                f"step {said.t}: action {said.action!r} is not one of that step's valid actions"
            )
