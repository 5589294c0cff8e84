"""alfworld's problem generator, read as text (no engine): sampling, placement, determinism."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter

import pytest

from agentcli.envs.alfworld import generation
from agentcli.envs.alfworld.games import GENERATED_SPLITS, GameCatalog
from agentcli.envs.alfworld.generation import GenerationError, Signature, generate

pytestmark = [
    pytest.mark.alfworld,
    pytest.mark.skipif(
        importlib.util.find_spec("alfworld") is None,
        reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
    ),
]

FACT = re.compile(r"^\s*\((\w+) ([^()]*)\)$", re.MULTILINE)


@pytest.fixture(scope="module")
def catalog() -> GameCatalog:
    return GameCatalog(None)


def _facts(pddl: str, name: str) -> list[list[str]]:
    init = pddl.split("(:init", 1)[1].split("(:goal", 1)[0]
    return [args.split() for predicate, args in FACT.findall(init) if predicate == name]


def _kind(spelled: str) -> str:
    return spelled.split("_bar_", 1)[0]


def _receptacle_kind(spelled: str) -> str:
    """``Sink_bar_..._bar_SinkBasin`` -> ``SinkBasin``; ``Cabinet_bar_...`` -> ``Cabinet``."""
    return spelled.rsplit("_bar_", 1)[-1] if spelled.endswith("Basin") else _kind(spelled)


def _counts(pddl: str) -> Counter:
    return Counter(kind.removesuffix("Type") for _, kind in _facts(pddl, "objectType"))


def test_a_seed_gives_the_same_problem_and_another_seed_another():
    signature = Signature("pick_clean_then_place_in_recep", "SoapBar", "Cabinet", 402)
    first, again = generate(signature, "a"), generate(signature, "a")
    assert first == again
    assert generate(signature, "b").pddl != first.pddl
    assert first.task in (
        "put a clean soapbar in cabinet",
        "clean some soapbar and put it in cabinet",
    )


@pytest.mark.parametrize("task_type", generation.TASK_TYPES)
def test_counts_follow_alfred_sampling(task_type):
    """Targets 1-4 (2-4 for two), every other type that can be picked up 1-3, over seeds."""
    signature = next(
        s for room in generation.floor_plans() for s in generation.valid_signatures(task_type, room)
    )
    low = 2 if task_type == "pick_two_obj_and_place" else 1
    targets, others = set(), set()
    for seed in range(40):
        counts = _counts(generate(signature, str(seed)).pddl)
        targets.add(counts.pop(signature.object))
        counts.pop(signature.receptacle, None)  # the lamp of a look task
        others |= set(counts.values())
    assert targets == set(range(low, 5))
    assert others == {1, 2, 3}


def test_placement_fits_and_the_goal_is_not_met_at_the_start(catalog):
    constants = generation.constants()
    for game in catalog.data_games[::25]:
        signature = game.signature
        pddl = generate(signature, game.name).pddl
        emptied = generation.EMPTY_AT_START.get(signature.task_type, set())
        for thing, place in _facts(pddl, "inReceptacle"):
            kind, where = _kind(thing), _receptacle_kind(place)
            assert where not in emptied, (game.name, thing, place)
            if kind in generation.LAMPS:
                assert where in generation.LAMP_STANDS
                continue
            assert kind in constants.VAL_RECEPTACLE_OBJECTS[where], (game.name, kind, where)
            if kind == signature.object and signature.task_type != "look_at_obj_in_light":
                assert where != signature.receptacle, game.name
        assert not _facts(pddl, "isOn") and not _facts(pddl, "holds")


def test_every_agentgym_id_generates_a_sample(catalog):
    for game in catalog.data_games[::10]:
        problem = generate(game.signature, game.name)
        assert problem.signature.folder == game.name.split("/")[0]


@pytest.mark.slow
def test_every_agentgym_id_generates(catalog):
    kinds = Counter()
    for game in catalog.data_games:
        kinds[generate(game.signature, game.name).signature.task_type] += 1
    assert sum(kinds.values()) == 2620 and set(kinds) == set(generation.TASK_TYPES)


def test_generated_splits_cover_every_task_type_and_test_scenes_are_unseen(catalog):
    constants = generation.constants()
    plans = {}
    for split, (first, _, _) in GENERATED_SPLITS.items():
        games = [catalog.game(first + offset) for offset in range(120)]
        assert {game.task_type for game in games} == set(generation.TASK_TYPES)
        assert all(game.generated and game.split == split for game in games)
        plans[split] = {game.signature.floor_plan for game in games}
    assert plans["generated_test"] <= set(constants.TEST_SCENE_NUMBERS)
    assert plans["generated_train"] <= set(constants.TRAIN_SCENE_NUMBERS)


def test_a_signature_that_does_not_fit_is_one_line():
    with pytest.raises(GenerationError, match="FloorPlan402 lacks") as error:
        generate(Signature("pick_heat_then_place_in_recep", "Apple", "Fridge", 402), "x")
    assert "\n" not in str(error.value)
    with pytest.raises(GenerationError, match="no floor plan 99"):
        generate(Signature("pick_and_place_simple", "Apple", "Fridge", 99), "x")
