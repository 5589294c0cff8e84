"""A BabyAI episode as AgentGym's server plays it (the ``agentgym`` style of ``babyai``).

Its rules, read from agentenv-babyai's ``environment.py`` and ``server.py`` (AgentGym 3ef9235):
the goal is minigrid's mission with "then" and "after you" rewritten to "and"; every
observation ends with its available actions; an action runs its primitive steps until one
leaves the agent's view unchanged; a step that ends minigrid's episode adds "The task is
completed." but is done only when its reward is above 0.5 (a failure, or a success that came
late, goes on); minigrid's step limit does not end it; the score adds up each step's reward.
The expert is ours (minigrid's bot, ``BotExpert``), answered in AgentGym's action names.
"""

from __future__ import annotations

import copy
from typing import Any

from agentcli.envs.babyai.agentgym_text import AgentGymView, read_agentgym_view
from agentcli.envs.babyai.expert import BotExpert
from agentcli.envs.babyai.session import BabyAISession
from agentcli.envs.babyai.text import WAIT, read_view
from agentcli.envs.base import Transition

COMPLETED = "\n The task is completed."


def agentgym_goal(mission: str) -> str:
    """The goal as AgentGym's server states it."""
    return mission.replace("then", "and").replace("after you", "and")


class AgentGymSession(BabyAISession):
    """One episode at a time, worded and scored as AgentGym's server does; our session's
    levels, expert and reasons (``explain``) underneath."""

    def reset(self, index: int) -> Transition:
        self._begin(index)
        self._reward = 0.0
        self._shown: AgentGymView = read_agentgym_view(self._env)
        self._image = self._env.gen_obs()["image"]
        goal = f"Your goal: {agentgym_goal(self._env.mission)}\n"
        return self._transition(goal + self._shown.description)

    def step(self, action: str) -> Transition:
        if self._view is None:
            return Transition(observation="No episode is running: reset first.")
        if self._outcome is not None:
            return Transition(observation="The task has finished: reset to start another.")
        command = action.lower().strip()
        self._actions.append(command)
        shown = self._shown
        if "check" in command:
            return self._transition("You can take the following actions: " + ", ".join(shown.plans))
        if not command:
            return self._transition("No change in state.")
        plan = shown.plans.get(command)
        if plan is None:
            why = shown.refusals.get(
                command, "The action is not recognized. Please check valid actions."
            )
            return self._transition(why)
        if not plan:
            return self._transition("No change in state.")
        reward, terminated = self._execute_agentgym(plan)
        self._reward = reward
        self._view = read_view(self._env)
        self._expert.recover(self._view)
        self._shown = read_agentgym_view(self._env)
        state = self._shown.description + (COMPLETED if terminated else "")
        if terminated and reward > 0.5:
            self._outcome, self._success = "done", True
        return self._transition(state)

    def expert_action(self) -> str | None:
        """Our expert's action in AgentGym's actions: where ours completes the mission, an
        action that completes it by AgentGym's rule (on its last step); else the action doing
        the most of our action's steps, from the first (the bot must see its own steps); else
        a turn, which the bot undoes (AgentGym has no "done"). None where AgentGym has no
        way (opening a box)."""
        if self._expert is None or self._outcome is not None:
            return None
        command = self._expert.action(self._view)
        if command is None:
            return None
        ours = tuple(self._view.plans[command])
        if self._expert.completes(ours):
            finishing = [
                (len(plan), name)
                for name, plan in self._shown.plans.items()
                if plan and self._agentgym_completes(plan)
            ]
            if finishing:
                return min(finishing)[1]
        doing = [
            (len(plan), name)
            for name, plan in self._shown.plans.items()
            if plan and tuple(plan) == ours[: len(plan)] and not self._wastes(plan)
        ]
        if doing:
            return max(doing)[1]
        return "turn left" if ours == (WAIT,) else None

    def _execute_agentgym(self, plan: list[int]) -> tuple[float, bool]:
        """Run the steps until one changes nothing the agent sees: the last step's reward and
        whether it ended minigrid's episode."""
        reward, terminated, self._image = _run(self._env, plan, self._image, self._expert)
        return reward, terminated

    def _agentgym_completes(self, plan: list[int]) -> bool:
        """Whether ``plan`` is done by AgentGym's rule here (tried on a copy of the env)."""
        reward, terminated, _ = _run(copy.deepcopy(self._env), plan, self._image)
        return terminated and reward > 0.5

    def _wastes(self, plan: list[int]) -> bool:
        """Whether ``plan`` ends minigrid's episode before its last step, which AgentGym
        never sees ("toggle and go through" the door an "open" mission names)."""
        return len(plan) > 1 and self._expert.completes(tuple(plan[:-1]))

    def _transition(self, state: str) -> Transition:
        self._score += self._reward
        return Transition(
            observation=state + self._shown.actions_text(),
            reward=self._reward,
            score=self._score,
            done=self._outcome is not None,
            success=self._success,
            available_actions=[] if self._outcome else list(self._shown.plans),
        )


def _run(env: Any, plan: list[int], image: Any, expert: BotExpert | None = None):
    """AgentGym's run of an action's steps: each until one leaves the view unchanged; the
    last step's reward, whether it ended minigrid's episode, and the view's image."""
    reward, terminated = 0.0, False
    for primitive in plan:
        obs, reward, terminated, _, _ = env.step(primitive)
        if expert is not None:
            expert.observe(primitive)
        unchanged = (obs["image"] == image).all()
        image = obs["image"]
        if unchanged:
            break
    return float(reward), bool(terminated), image
