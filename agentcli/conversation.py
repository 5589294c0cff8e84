"""What the student sees, and reading back what it says: the one rendering of a conversation.

Rollout (and so collect, eval and the in-training eval), build-data and the oracle teacher all
call these functions, so a model is trained on exactly the conversations it is later shown:

- ``observation_text``: what the agent reads after a reset or a step (the env's wire text plus
  what its env adds: sciworld's task description first, alfworld's available actions);
- ``student_messages``: everything the student is shown before acting at a step (the opening,
  its own earlier turns, the current observation), as its ``StudentView`` says;
- ``turn_text``: one assistant turn (``Thought: …`` then ``Action: …``);
- ``parse_reply`` / ``cut_after_action`` / ``invalid_reply_observation``: reading a reply back.

AgentGym's shape: the env's instruction, the assistant's acknowledgement, then observation /
reply turns. ``StudentView`` changes what is kept of it (a history window, no instruction, no
reasons) or puts the whole history in one user message (``single-prompt``, LEAP's way).

Its ``prompt`` picks the wording. ``agentgym``: AgentGym's, byte for byte, for the envs AgentGym
has (its clients' conversation start, ``agentcli.agentgym_prompts``; its observation framing;
its ``Thought:\n…\n\nAction:\n…`` turns), what a model trained on AgentGym's data has read;
``native``: ours (each ``EnvSpec``'s instruction). An env AgentGym lacks (babyai-putnext) has
only ours, under either style (``env_style``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict

from pydantic import Field

from agentcli.agentgym_prompts import AGENTGYM_OPENINGS, PromptStyle
from agentcli.config import CommandConfig
from agentcli.errors import UsageError
from agentcli.records import ChatMessage, Episode, Step

# AgentGym's exact text: all its env clients but webshop's ("Ok.") open with it; so do we.
ACKNOWLEDGEMENT = "OK. I'll follow your instructions and try my best to solve the task."
FORMAT_HINT = "Answer as 'Thought: <your reasoning>' then 'Action: <one action>'."
# Opens the observation that answers a reply with no usable action (the env was not stepped).
INVALID_REPLY = "Invalid reply: "

HistoryFormat = Literal["multi-turn", "single-prompt"]


class Message(TypedDict):
    """A message as chat templates and OpenAI-compatible endpoints take it (``chat_dicts``)."""

    role: Literal["system", "user", "assistant"]
    content: str


class StudentView(CommandConfig):
    """How the student is shown its episode: in its rollouts, evals and training data alike."""

    history_steps: int | None = Field(
        None,
        ge=0,
        description="Earlier turns shown at most (default: all): the instruction, the last N"
        " turns and the observation; for envs whose every observation states the task.",
    )
    instruction: bool = Field(
        True,
        description="Open with the env's instruction and its acknowledgement (AgentGym's way);"
        " false: start at the observations, for a student trained from scratch.",
    )
    reasons: bool = Field(
        True,
        description="Turns hold the reason before the action; false: the action line alone"
        " (a small student trained from scratch).",
    )
    format: HistoryFormat = Field(
        "multi-turn",
        description="How the student is shown its history. multi-turn: AgentGym conversations;"
        " single-prompt: the history in one user message per step (LEAP's way).",
    )
    prompt: PromptStyle = Field(
        "agentgym",
        description="The wording the student is shown. agentgym: AgentGym's, byte for byte,"
        " where it has the env (what models trained on its data read); native: ours.",
    )

    @property
    def whole_conversation(self) -> bool:
        """Every turn of the episode in one conversation (AgentGym's shape), not a window."""
        return self.why_not_whole is None

    @property
    def why_not_whole(self) -> str | None:
        """What keeps the view from showing the whole conversation, for a message that refuses
        it (None: it shows it)."""
        if self.format != "multi-turn":
            return "a single-prompt view puts the history in one user message per step"
        if self.history_steps is not None:
            return f"a history window (history_steps={self.history_steps}) shows the last turns"
        return None


DEFAULT_VIEW = StudentView()


# --- how an episode opens --------------------------------------------------------------------


@dataclass(frozen=True)
class Opening:
    """How an episode's conversation opens, and the prompt style its turns are worded in."""

    instruction: str
    acknowledgement: str = ACKNOWLEDGEMENT
    style: PromptStyle = "native"


def env_style(env: str, style: PromptStyle) -> PromptStyle:
    """The style ``env``'s episodes are worded in: ours for an env AgentGym lacks."""
    return style if env in AGENTGYM_OPENINGS else "native"


def env_opening(env: str, native_instruction: str, view: StudentView) -> Opening:
    """How ``env``'s episodes open under the view's prompt style (``native_instruction``: its
    ``EnvSpec``'s)."""
    if env_style(env, view.prompt) == "agentgym":
        instruction, acknowledgement = AGENTGYM_OPENINGS[env]
        return Opening(instruction, acknowledgement, "agentgym")
    return Opening(native_instruction)


def episode_style(episode: Episode, view: StudentView = DEFAULT_VIEW) -> PromptStyle:
    """The style ``episode`` was played in: what its rollout recorded (``meta["prompt"]``), the
    view's for an episode that records none (an imported one)."""
    return env_style(episode.env, episode.meta.get("prompt", view.prompt))


def episode_opening(episode: Episode, view: StudentView = DEFAULT_VIEW) -> Opening:
    """How ``episode``'s conversation opened: its recorded instruction, the acknowledgement and
    turns of its style."""
    style = episode_style(episode, view)
    acknowledgement = AGENTGYM_OPENINGS[episode.env][1] if style == "agentgym" else ACKNOWLEDGEMENT
    return Opening(episode.instruction, acknowledgement, style)


def check_style(episodes: Sequence[Episode], view: StudentView) -> None:
    """Refuse episodes played in another prompt style than ``view``'s: their instruction and
    observations were fixed when they were played, and training on them under another
    style's turns would teach a mix no rollout shows."""
    for episode in episodes:
        played = episode_style(episode, view)
        if played != env_style(episode.env, view.prompt):
            raise UsageError(
                f"{episode.item_id} was played with prompt {played!r}, not {view.prompt!r}:"
                f" pass --prompt {played} (or view.prompt={played}), or play it again"
            )


# --- what the agent reads --------------------------------------------------------------------


class Observed(Protocol):
    """What an env answered (``agentcli.envs.base.Transition``), as far as the agent reads it."""

    observation: str
    available_actions: list[str] | None
    extra: dict[str, Any]


def observation_text(transition: Observed, *, first: bool, style: PromptStyle) -> str:
    """The wire observation plus what its env adds on the first turn (sciworld's task
    description) and the available actions (alfworld's): every turn in our style; in
    AgentGym's, as its client words them, on the first turn only (its later turns are the
    step's observation alone) and joined by bare commas."""
    text = transition.observation
    description = transition.extra.get("task_description")
    if first and description:
        text = f"{description}\n{text}"
    actions = transition.available_actions
    if actions and style == "native":
        text = f"{text}\nAVAILABLE ACTIONS: {', '.join(actions)}"
    elif actions and first:
        text = f"{text}\nAVAILABLE ACTIONS: {','.join(actions)}"
    return text


def invalid_reply_observation(error: str) -> str:
    """The observation answering a reply with no usable action (the env is not stepped)."""
    return f"{INVALID_REPLY}{error}. {FORMAT_HINT}"


def is_invalid_reply(observation: str | None) -> bool:
    """Whether ``observation`` answered a reply with no usable action."""
    return (observation or "").startswith(INVALID_REPLY)


# --- what the agent is shown -----------------------------------------------------------------


def turn_text(
    reason: str, action: str, view: StudentView = DEFAULT_VIEW, style: PromptStyle = "native"
) -> str:
    """The assistant's turn for one step, as agents are prompted to write it (without a
    reason, or when the view shows none: the action line alone); AgentGym's style puts each
    part on its own line, as its prompts ask and its trajectories are written."""
    if style == "agentgym":
        if reason and view.reasons:
            return f"Thought:\n{reason}\n\nAction:\n{action}"
        return f"Action:\n{action}"
    if reason and view.reasons:
        return f"Thought: {reason}\nAction: {action}"
    return f"Action: {action}"


def opening_messages(opening: Opening) -> list[ChatMessage]:
    """AgentGym's conversation start: the instruction and the acknowledgement."""
    return [
        ChatMessage(role="user", content=opening.instruction),
        ChatMessage(role="assistant", content=opening.acknowledgement, loss=False),
    ]


def student_messages(
    opening: Opening, history: Sequence[Step], observation: str, view: StudentView
) -> list[ChatMessage]:
    """What the student is shown before acting on ``observation``, after ``history`` (its own
    earlier steps, shown but not learned: loss false)."""
    if view.format == "single-prompt":
        shown = opening.instruction if view.instruction else ""
        prompt = single_prompt(shown, history, observation, view, opening.style)
        return [ChatMessage(role="user", content=prompt)]
    messages = opening_messages(opening)
    for step in history:
        messages.append(ChatMessage(role="user", content=step.observation))
        own = turn_text(step.reason, step.action, view, opening.style)
        messages.append(ChatMessage(role="assistant", content=own, loss=False))
    messages.append(ChatMessage(role="user", content=observation))
    return window(messages, view)


def shown_at(episode: Episode, t: int, view: StudentView) -> list[ChatMessage]:
    """What the student was shown before acting at step ``t`` of ``episode``: its rollout's
    ``student_messages`` for that step, the same rendering build-data and grpo train on."""
    opening = episode_opening(episode, view)
    return student_messages(opening, episode.steps[:t], episode.steps[t].observation, view)


def window(conversation: Sequence[ChatMessage], view: StudentView) -> list[ChatMessage]:
    """What is kept of a conversation that ends in an observation: the opening (unless the
    view drops the instruction), then the last ``history_steps`` turns (observation and
    reply) and the current observation; every turn when ``history_steps`` is None.

    A window is only sensible for envs whose every observation states the task
    (babyai-putnext): it drops the first observation with the rest.
    """
    opening_part = list(conversation[:2]) if view.instruction else []
    turns = list(conversation[2:])
    if view.history_steps is not None:
        turns = turns[-(2 * view.history_steps + 1) :]
    return [*opening_part, *turns]


def single_prompt(
    instruction: str,
    history: Sequence[Step],
    observation: str,
    view: StudentView,
    style: PromptStyle,
) -> str:
    """The student's situation at a step as one user message (LEAP's prompting): the
    instruction (when not empty), the first observation (it states the task), the last
    ``history_steps`` earlier turns, then the current observation."""
    steps = view.history_steps
    shown = history if steps is None else history[len(history) - steps :]
    lines = [instruction, ""] if instruction else []
    omitted = len(history) - len(shown)
    if omitted:
        lines += [f"Observation: {history[0].observation}", f"(earlier steps not shown: {omitted})"]
    for step in shown:
        turn = turn_text(step.reason, step.action, view, style)
        lines += [f"Observation: {step.observation}", turn]
    lines.append(f"Observation: {observation}")
    return "\n".join(lines)


def episode_conversation(episode: Episode, view: StudentView = DEFAULT_VIEW) -> list[ChatMessage]:
    """The whole episode as AgentGym's conversation, loss on the agent's steps only.

    user: instruction, assistant: the acknowledgement (loss false), then per step user:
    observation, assistant: its ``Thought`` and ``Action`` (loss true); then the final
    observation when there is one. User messages carry loss None, as AgentGym writes them. The
    view's ``instruction`` and ``reasons`` apply (a whole episode has no history window); the
    wording is the style the episode was played in (``episode_opening``).
    """
    opening = episode_opening(episode, view)
    messages = opening_messages(opening)
    for step in episode.steps:
        messages.append(ChatMessage(role="user", content=step.observation))
        learned = turn_text(step.reason, step.action, view, opening.style)
        messages.append(ChatMessage(role="assistant", content=learned, loss=True))
    if episode.final_observation is not None:
        messages.append(ChatMessage(role="user", content=episode.final_observation))
    return messages if view.instruction else messages[2:]


def chat_dicts(messages: Sequence[ChatMessage]) -> list[Message]:
    """Messages as chat templates and OpenAI-compatible endpoints take them."""
    return [{"role": message.role, "content": message.content} for message in messages]


# --- reading a reply back --------------------------------------------------------------------

_ACTION = re.compile(r"^\s*\**\s*action\s*\**\s*:\s*\**\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(
    r"thought\s*\**\s*:\s*(.*?)(?=^\s*\**\s*action\s*\**\s*:|\Z)", re.I | re.M | re.S
)
_WRAPPING = " \t\"'`*."
# WebArena's prompt (AgentGym's webarena opening) asks for "… In summary, the next action I
# will perform is ```click [3]```"; its server acts on the first such span.
_FENCED = re.compile(r"```(.*?)```", re.S)
# A turn ends with its action line: "Action: <action>" and a newline (the action may start on
# the next line; an empty "Action:" line does not end the turn).
_ACTION_LINE = re.compile(r"Action:\s*\S[^\n]*\n")


@dataclass(frozen=True)
class ParsedReply:
    thought: str
    action: str
    error: str | None = None  # why the text holds no usable action


def parse_reply(text: str) -> ParsedReply:
    """Split ``Thought: ...\\nAction: ...`` text into a reason and one action. Never raises:
    model output is arbitrary.

    The action is the rest of the line after the last ``Action:`` (or, when that line is
    empty, the next non-empty line); a reply without ``Action:`` that holds text between
    triple backticks acts on the first such text (WebArena's answer format), the reasoning
    before it; a reply without either whose text is a single line is taken as the action
    itself, as AgentGym's clients do.
    """
    text = text.replace("</s>", "").strip()
    thought_match = _THOUGHT.search(text)
    thought = thought_match.group(1).strip() if thought_match else ""
    matches = list(_ACTION.finditer(text))
    fenced = _FENCED.search(text)
    if matches:
        last = matches[-1]
        candidate = last.group(1).strip() or _first_line(text[last.end() :])
    elif fenced:
        thought = thought or text[: fenced.start()].strip()
        candidate = fenced.group(1)
    elif "\n" not in text:
        candidate = text
    else:
        return ParsedReply(thought, "", "no 'Action:' line in the reply")
    action = " ".join(candidate.strip(_WRAPPING).split())
    if not action:
        return ParsedReply(thought, "", "the 'Action:' line is empty")
    return ParsedReply(thought, action)


def cut_after_action(text: str) -> str:
    """The turn up to the end of its action line (a token may carry text past the newline)."""
    match = _ACTION_LINE.search(text)
    if match:
        text = text[: match.end()]
    return text.strip()


def holds_action_line(text: str) -> bool:
    """Whether ``text`` holds a whole action line, so that a turn can stop there."""
    return _ACTION_LINE.search(text) is not None


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")
