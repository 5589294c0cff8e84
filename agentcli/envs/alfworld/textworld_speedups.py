"""Costs TextWorld's PDDL engine pays on every step and load, removed without changing a
character of its output.

TextWorld words each step (the feedback and the text of every admissible command) by deriving
grammar strings. Per step, on a generated kitchen, it spent ~60 % of its time re-parsing the
same few template and query strings with tatsu, and most of the rest deep-copying each
derivation context's variable bindings, whose values are the game's shared entity records
(``copy_context`` already shares the state, the facts and the entity records themselves).
Memoizing the parses and copying the bindings' dicts instead of their values made a step
~20x faster (110 ms -> 6 ms median) with byte-identical text, which the tests check against
TextWorld's own functions over whole episodes.

Each load parsed the game's grammar and action templates with tatsu again (~0.27 s, half of
a reset whose translation is stored): games share them, so the parse is memoized too (a copy
takes ~6 ms).

A command that is not admissible changes nothing ("Nothing happens."), yet TextWorld derives
the unchanged state's infos again (~35 ms on a generated kitchen): they are the previous
state's, so they are taken from it. A student that has not learned the game sends such
commands most turns, for 30 rounds.

TextWorld calls the parse and text functions by module attribute and ``_gather_infos`` as a
method, so replacing the attributes is enough; ``install`` does it once per process, and fails
loudly if TextWorld's names move.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

# Distinct strings are bounded by the grammar and the domain (a few hundred); the bound only
# guards against a game that writes unusual templates.
PARSES_KEPT = 4096
# Generated games share one grammar; ALFWorld's real ones a few versions of it.
GRAMMARS_KEPT = 16
# What PddlEnv._gather_infos writes into a state, all of it a function of the game's state.
GATHERED_INFOS = (
    "command_templates", "won", "lost", "_entity_infos", "_facts", "facts", "last_action",
    "_last_action", "_valid_actions", "_valid_commands", "admissible_commands", "moves",
    "policy_commands",
)  # fmt: skip


def install() -> None:
    from textworld.envs.pddl import PddlEnv, textgen
    from textworld.envs.pddl import logic as pddl_logic
    from textworld.logic import Rule

    if getattr(textgen, "_agentgym_speedups", False):
        return
    textgen._parse_and_convert = _memoized(textgen._parse_and_convert, PARSES_KEPT)
    pddl_logic._parse_and_convert = _memoized(pddl_logic._parse_and_convert, GRAMMARS_KEPT)
    textgen.copy_context = copy_context
    # a query is parsed into a Rule that matching only reads
    Rule.parse_conjunctive_query = classmethod(
        lru_cache(maxsize=PARSES_KEPT)(Rule.parse_conjunctive_query.__func__)
    )
    PddlEnv._gather_infos = _infos_kept_when_nothing_happened(PddlEnv._gather_infos)
    textgen._agentgym_speedups = True


def _memoized(parse: Any, kept: int) -> Any:
    """``parse`` memoized, each caller given its own copy of the result: a derivation mutates
    its symbols (their contexts), and a game's logic adds to the grammar it was given."""
    remembered = lru_cache(maxsize=kept)(parse)

    def parse_and_convert(text: str, rule_name: str, trace: bool = False) -> Any:
        return copy.deepcopy(remembered(text, rule_name=rule_name, trace=trace))

    return parse_and_convert


def copy_context(context: dict[str, Any]) -> dict[str, Any]:
    """TextWorld's ``copy_context`` with the bindings' dicts copied and their values shared: a
    derivation adds and replaces bindings, and never changes the entity records bound."""
    return {
        "state": context["state"],
        "facts": context["facts"],
        "variables": dict(context["variables"]),
        "mapping": dict(context["mapping"]),
        "entity_infos": context["entity_infos"],
    }


def _infos_kept_when_nothing_happened(gather_infos: Any) -> Any:
    def gather_or_keep(env: Any) -> None:
        # step() found no action for the command: the state is the previous state
        if env._last_action is None and env.prev_state is not None:
            for key in GATHERED_INFOS:
                if key in env.prev_state:
                    env.state[key] = copy.copy(env.prev_state[key])
            return
        gather_infos(env)

    return gather_or_keep
