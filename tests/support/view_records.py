"""Episodes and corrections made up for the view's tests and bench: babyai item ids (so they
have categories), a goal line in the first observation, actions as given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agentcli.records import Correction, CorrectionStep, Episode, Step


def episode(
    index: int,
    *,
    success: bool = False,
    actions: Sequence[str] = ("turn left", "move forward"),
    end_reason: str | None = None,
    env: str = "babyai",
) -> Episode:
    steps = [
        Step(
            observation=(f"Your goal: go to the ball {index}\n" if t == 0 else "")
            + f"You see a wall {t} steps ahead.",
            reason=f"I try step {t}.",
            action=action,
        )
        for t, action in enumerate(actions)
    ]
    ended = end_reason or ("done" if success else "max_rounds")
    return Episode(
        item_id=f"{env}_{index}", env=env, split="test", instruction="Reach the goal.",
        steps=steps, reward=1.0 if success else 0.0, success=success,
        meta={"policy": "local", "end_reason": ended},
    )  # fmt: skip


def played(index: int, moves: Sequence[tuple[str, str]], end_reason: str = "max_rounds") -> Episode:
    """An episode of these (observation, action) steps: a state that recurs makes a loop."""
    made = episode(index, actions=[action for _, action in moves], end_reason=end_reason)
    steps = [step.model_copy(update={"observation": seen})
             for step, (seen, _) in zip(made.steps, moves, strict=True)]  # fmt: skip
    return made.model_copy(update={"steps": steps})


def correction(of: Episode, changes: Mapping[int, str]) -> Correction:
    """The teacher's verdict on every step of ``of``: ``changes`` {step: its action}."""
    steps = [
        CorrectionStep(
            t=t, observation=step.observation, original_reason=step.reason,
            original_action=step.action, corrected_reason=f"The teacher at step {t}.",
            corrected_action=changes.get(t, step.action), is_corrected=t in changes,
        )
        for t, step in enumerate(of.steps)
    ]  # fmt: skip
    return Correction(item_id=of.item_id, summary=f"{len(changes)} steps changed", steps=steps)


def write_many_episodes(path: Path, count: int) -> int:
    """``count`` episodes of five steps, one in three won, as one JSONL file; its size in bytes.
    Written line by line from one template: a bench's 100,000 take seconds, not minutes."""
    template = episode(0, actions=["turn left", "move forward", "pick up ball", "drop", "done"])
    ended = {"policy": "local", "end_reason": "done"}
    won = template.model_copy(update={"success": True, "reward": 1.0, "meta": ended})
    lines = [template.model_dump_json(), won.model_dump_json()]
    with path.open("w", encoding="utf-8") as file:
        for index in range(count):
            line = lines[index % 3 == 0].replace("babyai_0", f"babyai_{index}")
            file.write(line.replace("the ball 0", f"the ball {index}") + "\n")
    return path.stat().st_size
