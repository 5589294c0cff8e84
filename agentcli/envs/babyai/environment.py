"""BabyAI's per-process environment: its splits, its privileged state, and sessions worded
in our text (``session``) or in AgentGym's server's (``agentgym_session``).

Above both kinds of session, so that neither needs to reach back for it.
"""

from __future__ import annotations

from agentcli.envs.babyai.agentgym_session import AgentGymSession
from agentcli.envs.babyai.levels import AGENTGYM_LEVELS, Variant, generate, new_level
from agentcli.envs.babyai.session import BabyAISession
from agentcli.envs.babyai.text import describe_layout
from agentcli.envs.base import PromptStyle


class BabyAIEnvironment:
    def __init__(self, variant: Variant) -> None:
        self._variant = variant

    def splits(self) -> dict[str, list[int]]:
        return {name: list(items) for name, items in self._variant.splits.items()}

    def open_session(self, style: PromptStyle = "agentgym") -> BabyAISession:
        """A session worded as ``style`` says: AgentGym's levels in AgentGym's server's words
        (``agentgym_session``) or ours; the PutNext room has only ours."""
        if style == "agentgym" and self._variant is AGENTGYM_LEVELS:
            return AgentGymSession(self._variant)
        return BabyAISession(self._variant)

    def privileged_state(self, index: int) -> str:
        level, seed = self._variant.level_of(index)
        env = new_level(level)
        generate(env, seed)
        return describe_layout(env, f"{level}, seed {seed}")
