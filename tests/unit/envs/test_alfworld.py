"""alfworld over the real engine (TextWorld's PDDL backend with ALFWorld's wrappers), in-process."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

from agentcli.envs import alfworld
from agentcli.envs.alfworld import BUILTIN_FIRST_INDEX, SPEC, AlfworldSession, GameCatalog
from agentcli.envs.alfworld.games import GENERATED_SPLITS
from agentcli.envs.alfworld.generation import TASK_TYPES
from agentcli.errors import EnvUnavailableError, TaskNotFoundError, UsageError

pytestmark = [
    pytest.mark.alfworld,
    pytest.mark.skipif(
        importlib.util.find_spec("alfworld") is None,
        reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
    ),
]

BUILTIN = [BUILTIN_FIRST_INDEX + i for i in range(3)]


@pytest.fixture(autouse=True)
def no_alfworld_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(alfworld.DATA_ENV_VAR, raising=False)


@pytest.fixture(scope="module")
def environment():
    return alfworld.AlfworldEnvironment(GameCatalog(None), max_plan=SPEC.max_rounds)


@contextmanager
def session_of(environment) -> Iterator[AlfworldSession]:
    session = environment.open_session()
    try:
        yield session
    finally:
        session.close()


def _play_expert(
    session: AlfworldSession, transition, rounds: int = SPEC.max_rounds
) -> tuple[object, list[str]]:
    actions = []
    while not transition.done and len(actions) < rounds:
        action = session.expert_action()
        assert action in transition.available_actions
        actions.append(action)
        transition = session.step(action)
    return transition, actions


@pytest.mark.parametrize("index", BUILTIN)
def test_expert_wins_every_shipped_game(environment, index):
    with session_of(environment) as session:
        start = session.reset(index)
        assert "Your task is to: " in start.observation
        assert not start.observation.startswith("-=")  # the banner is cut, as AgentGym does
        assert set(SPEC.wire.reset_fields) <= {
            "id",
            "observation",
            "available_actions",
            *start.extra,
        }
        end, actions = _play_expert(session, start)
        assert end.success and end.done and end.reward == 1.0 and end.score == 1.0
        assert 3 <= len(actions) <= SPEC.max_rounds
        assert session.expert_action() is None


def test_shipped_games_cover_three_task_types(environment):
    types = [SPEC.categories(index) for index in BUILTIN]
    assert types == [
        "pick_and_place_simple",
        "pick_clean_then_place_in_recep",
        "look_at_obj_in_light",
    ]
    with session_of(environment) as session:
        assert session.reset(BUILTIN[1]).extra["task_type"].startswith(types[1] + "-SoapBar-")


def test_item_ids_follow_agentgym_game_indices(environment):
    """Spot checks of the shipped copy of AgentGym's mappings_train/test.json (see the docs)."""
    names = [game.name for game in environment.catalog.data_games]
    assert len(names) == 2620 and len(set(names)) == 2620
    assert (
        names[0]
        == "look_at_obj_in_light-AlarmClock-None-DeskLamp-301/trial_T20190907_174127_043461"
    )
    assert (
        names[2419]
        == "pick_two_obj_and_place-WineBottle-None-Cabinet-17/trial_T20190909_014040_145528"
    )
    assert (
        names[2420]
        == "pick_cool_then_place_in_recep-Mug-None-CoffeeMachine-23/trial_T20190908_143209_571893"
    )
    assert (
        names[2619]
        == "pick_two_obj_and_place-RemoteControl-None-Ottoman-210/trial_T20190906_202114_729948"
    )
    assert SPEC.categories(2427) == "look_at_obj_in_light"


def test_expert_replans_from_the_current_state(environment):
    with session_of(environment) as session:
        session.reset(BUILTIN[0])
        for detour in ("go to fridge 1", "open fridge 1", "take egg 1 from fridge 1"):
            assert not session.step(detour).observation.startswith("Nothing happens")
        # Holding the egg, the plan must first put it down somewhere.
        assert session.expert_action().startswith(("go to", "move egg 1"))
        end, _ = _play_expert(session, session.step("look"))
        assert end.success


def test_invalid_actions_change_nothing(environment):
    with session_of(environment) as session:
        start = session.reset(BUILTIN[0])
        for action in ("", "fly to the moon", "take peppershaker 1 from cabinet 1", "🙂" * 50):
            transition = session.step(action)
            assert transition.observation == "Nothing happens."
            assert not transition.done and transition.reward == 0.0
            assert transition.available_actions == start.available_actions


def test_step_before_reset_is_a_usage_error(environment):
    with session_of(environment) as session, pytest.raises(UsageError):
        session.step("look")


def _privileged_plan(environment, index: int) -> list[str]:
    return environment.privileged_state(index).split(" actions):\n", 1)[1].splitlines()


def test_privileged_state_holds_locations_and_the_plan_of_one_who_knows_them(environment):
    text = environment.privileged_state(BUILTIN[0])
    assert "Task: put a peppershaker in drawer." in text
    assert "- cabinet 1 (closed): peppershaker 1" in text
    plan = _privileged_plan(environment, BUILTIN[0])
    assert plan[:3] == ["go to cabinet 1", "open cabinet 1", "take peppershaker 1 from cabinet 1"]
    with session_of(environment) as session:
        _, searched = _play_expert(session, session.reset(BUILTIN[0]))
        session.reset(BUILTIN[0])
        transitions = [session.step(action) for action in plan]
    assert transitions[-1].success  # the plan wins, shorter than the expert's search
    assert len(plan) < len(searched)


def test_without_data_agentgym_ids_are_generated_stand_ins(environment):
    splits = environment.splits()
    assert splits["agentgym_train"] == list(range(2420))
    assert splits["agentgym_test"] == list(range(2420, 2620))
    assert splits["train"] == list(range(100_000, 110_000))
    assert splits["test"] == list(range(200_000, 201_000))
    assert set(splits) == {"train", "test", "agentgym_train", "agentgym_test", "builtin"}
    assert SPEC.item_meta(100_000) == {"generated": True}
    assert SPEC.item_meta(0) == {"generated": True}
    assert SPEC.item_meta(BUILTIN[0]) == {"generated": False}
    assert "generated" in SPEC.note()
    with session_of(environment) as session:
        start = session.reset(2420)
        assert start.extra["task_type"] == environment.catalog.data_games[2420].name
        assert "Your task is to: " in start.observation and not start.done
        with pytest.raises(TaskNotFoundError, match="its items are 0-2619"):
            session.reset(2620)


def test_missing_names_the_extra_and_a_bad_data_dir(monkeypatch, tmp_path):
    assert SPEC.missing() is None
    monkeypatch.setenv(alfworld.DATA_ENV_VAR, str(tmp_path))
    assert "json_2.1.1" in SPEC.missing()
    monkeypatch.setattr(alfworld.importlib.util, "find_spec", lambda name: None)
    assert "pip install 'agentgym[alfworld]'" in SPEC.missing()


def test_data_dir_games_follow_agentgym_lists_then_sorted_eval_splits(tmp_path, environment):
    """A stand-in ALFWORLD_DATA whose valid_seen games are the shipped ones, packed as
    game.tw-pddl files the way ALFWorld's data ships them."""
    catalog = environment.catalog
    folders = [f"{game.name.split('/')[0]}/trial_1" for game in catalog.builtin]
    for folder, game in zip(folders, catalog.builtin, strict=True):
        path = tmp_path / "json_2.1.1" / "valid_seen" / folder / "game.tw-pddl"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(catalog.game_data(game)))
    data = GameCatalog(tmp_path)
    agentgym_count = len(catalog.data_games)
    splits = data.splits()
    assert splits["valid_seen"] == [agentgym_count + i for i in range(3)]
    assert "valid_unseen" not in splits and splits["builtin"] == BUILTIN
    assert splits["generated_train"][0] == 100_000 and splits["generated_test"][0] == 200_000
    assert set(splits["train"]).isdisjoint(splits["test"])
    assert [data.game(i).name for i in splits["valid_seen"]] == sorted(folders)
    with session_of(alfworld.AlfworldEnvironment(data, max_plan=SPEC.max_rounds)) as session:
        # sorted(folders)[1] is "pick_and_place_simple-...", which holds the first shipped game.
        start = session.reset(splits["valid_seen"][1])
        assert start.extra["task_type"] == folders[0]
        end, _ = _play_expert(session, start)
        assert end.success
        with pytest.raises(EnvUnavailableError, match="is missing"):
            session.reset(splits["train"][0])
    assert SPEC.item_meta is not None and not data.is_generated(0)


def test_concurrent_sessions_play_as_sequential_ones(environment):
    """The server steps sessions from worker threads; the engine's shared state must not leak."""

    def transcript(index: int) -> list[str]:
        with session_of(environment) as session:
            transition = session.reset(index)
            lines = [transition.observation]
            while not transition.done:
                transition = session.step(session.expert_action())
                lines.append(transition.observation)
            return lines

    alone = [transcript(index) for index in BUILTIN]
    with ThreadPoolExecutor(max_workers=len(BUILTIN)) as pool:
        together = list(pool.map(transcript, BUILTIN))
    assert together == alone


def test_reasons_state_the_task_and_what_the_action_does(environment):
    with session_of(environment) as session:
        transition = session.reset(BUILTIN_FIRST_INDEX)
        reasons = {}
        while not transition.done:
            action = session.expert_action()
            reasons[action] = session.explain(action)
            transition = session.step(action)
    assert all(
        r.startswith("My task is to put a peppershaker in drawer. ") for r in reasons.values()
    )
    assert reasons["take peppershaker 1 from cabinet 1"].endswith(
        "I take the peppershaker 1 from cabinet 1: my task needs it."
    )
    assert reasons["go to drawer 1"].endswith("I go to the drawer 1, the next place my plan needs.")


def _first_of_each_type(catalog: GameCatalog, split: str, per_type: int) -> list[int]:
    first, size, _ = GENERATED_SPLITS[split]
    found: dict[str, list[int]] = {task_type: [] for task_type in TASK_TYPES}
    for index in range(first, first + size):
        picked = found[catalog.game(index).task_type]
        if len(picked) < per_type:
            picked.append(index)
        if all(len(picked) == per_type for picked in found.values()):
            return [index for picked in found.values() for index in picked]
    raise AssertionError(f"{split} lacks {per_type} games of some task type")


def _expert_wins(environment, index: int, rounds: int = SPEC.max_rounds) -> list[str]:
    with session_of(environment) as session:
        start = session.reset(index)
        assert not start.done  # the goal is never true at the start
        end, actions = _play_expert(session, start, rounds)
    assert end.success, (environment.catalog.game(index).name, actions)
    return actions


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_expert_wins_a_generated_game_of_every_task_type(environment, task_type):
    indices = _first_of_each_type(environment.catalog, "generated_train", 1)
    [index] = [i for i in indices if environment.catalog.game(i).task_type == task_type]
    _expert_wins(environment, index)


@pytest.mark.slow
def test_expert_wins_unseen_scene_games_of_every_task_type(environment):
    """Each game won, though a search of a large kitchen's closed receptacles for a single
    target may take more than the 30 rounds (one of these 18: 35 actions)."""
    lengths = [
        len(_expert_wins(environment, index, rounds=3 * SPEC.max_rounds))
        for index in _first_of_each_type(environment.catalog, "generated_test", 3)
    ]
    assert sum(length <= SPEC.max_rounds for length in lengths) >= 17, lengths


@pytest.mark.parametrize(
    "index",  # cool, clean, two objects
    [2420, pytest.param(900, marks=pytest.mark.slow), pytest.param(2200, marks=pytest.mark.slow)],
)
def test_expert_recovers_from_random_detours(environment, index):
    """Random admissible actions first (things taken, moved, opened, closed), then the expert
    wins from wherever they left the game: it decides from the current facts alone."""
    import random

    rng = random.Random(index)
    with session_of(environment) as session:
        transition = session.reset(index)
        for _ in range(10):
            transition = session.step(rng.choice(transition.available_actions))
            if transition.done:
                return
        end, _ = _play_expert(session, transition)
    assert end.success


@pytest.mark.slow
def test_planner_and_expert_agree_on_plan_length_on_capped_games(environment):
    """TextWorld's planner, kept as a cross-check: on the smallest floor plans (at most 13
    receptacles, where it plans in seconds) its plan is as long as the privileged plan."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
    from textworld.envs import PddlEnv

    from agentcli.envs.alfworld.generation import scene

    catalog = environment.catalog
    capped: dict[str, list[int]] = {task_type: [] for task_type in TASK_TYPES}
    for index, game in enumerate(catalog.data_games):
        picked = capped[game.task_type]
        if len(picked) < 2 and len(scene(game.signature.floor_plan).receptacles) <= 13:
            picked.append(index)
    assert all(len(picked) == 2 for picked in capped.values())
    infos = textworld.EnvInfos(policy_commands=True)
    planner = AlfredInfos(AlfredDemangler()(PddlEnv(infos)))
    for index in [index for picked in capped.values() for index in picked]:
        planner.load(catalog.game_data(catalog.game(index)))
        plan = planner.reset()["policy_commands"]
        # the privileged plan: the expert's, knowing where everything is
        assert len(_privileged_plan(environment, index)) == len(plan), catalog.game(index).name


class _SwappedCatalog:
    """``catalog``'s games with the contents of two receptacles of one type exchanged: the
    same room, the same first observation, the objects elsewhere."""

    def __init__(self, catalog: GameCatalog, first: str, second: str) -> None:
        self._catalog, self._swap = catalog, {first: second, second: first}

    def game(self, index: int):
        return self._catalog.game(index)

    def game_data(self, game) -> dict:
        data = dict(self._catalog.game_data(game))
        problem, goal = _initial_state(data["pddl_problem"])
        inside = dict(re.findall(r"\(inReceptacle (\S+) (\S+)\)", problem))
        moved = {thing: self._swap.get(where, where) for thing, where in inside.items()}
        where = dict(re.findall(r"\(receptacleAtLocation (\S+) (\S+)\)", problem))
        problem = re.sub(
            r"\(inReceptacle (\S+) \S+\)", lambda m: f"(inReceptacle {m[1]} {moved[m[1]]})", problem
        )
        data["pddl_problem"] = (
            re.sub(
                r"\(objectAtLocation (\S+) \S+\)",
                lambda m: f"(objectAtLocation {m[1]} {where[moved[m[1]]]})",
                problem,
            )
            + goal
        )
        return data


def _initial_state(problem: str) -> tuple[str, str]:
    """A problem's text up to its goal, whose variables (``?o``) name no object; the goal."""
    start = problem.index("(:goal")
    return problem[:start], problem[start:]


def _targets_elsewhere(catalog: GameCatalog, index: int) -> tuple[str, str] | None:
    """The one receptacle holding the targets of game ``index`` and another of its type."""
    problem, _ = _initial_state(catalog.game_data(catalog.game(index))["pddl_problem"])
    kind = dict(re.findall(r"\(receptacleType (\S+) (\S+)\)", problem))
    target = f"{catalog.game(index).signature.object}Type"
    targets = {o for o, t in re.findall(r"\(objectType (\S+) (\S+)\)", problem) if t == target}
    inside = re.findall(r"\(inReceptacle (\S+) (\S+)\)", problem)
    holding = {where for thing, where in inside if thing in targets}
    if len(holding) != 1:
        return None
    [first] = holding
    others = sorted(r for r in kind if kind[r] == kind[first] and r != first)
    return (first, others[-1]) if others else None


def _decisions_until_the_views_differ(sessions: list[AlfworldSession], index: int) -> list:
    """Game ``index`` played in both sessions by the first one's expert while the two have
    shown the same observations: the pairs of the experts' answers."""
    views = [session.reset(index) for session in sessions]
    answers: list[tuple[str | None, ...]] = []
    while views[0].observation == views[1].observation and not views[0].done:
        answers.append(tuple(session.expert_action() for session in sessions))
        views = [session.step(answers[-1][0]) for session in sessions]
    return answers


@pytest.mark.parametrize(
    "task_type",
    [
        # one in CI's fast lane: each plays two games and two privileged plans of new problems
        pytest.param(task_type, marks=[] if "cool" in task_type else [pytest.mark.slow])
        for task_type in TASK_TYPES
    ],
)
def test_the_expert_decides_from_what_the_episode_has_shown(environment, task_type):
    """The targets moved into a receptacle of the same type that the agent has not looked
    into: none of the expert's decisions changes until an observation shows the difference.
    The plan of privileged state, which knows every fact, walks to the targets at once, so it
    changes from its first action."""
    catalog = environment.catalog
    first, size, _ = GENERATED_SPLITS["generated_train"]
    games = (i for i in range(first, first + size) if catalog.game(i).task_type == task_type)
    index, pair = next((i, pair) for i in games if (pair := _targets_elsewhere(catalog, i)))
    swapped = alfworld.AlfworldEnvironment(_SwappedCatalog(catalog, *pair), SPEC.max_rounds)
    sessions = [environment.open_session(), swapped.open_session()]
    try:
        answers = _decisions_until_the_views_differ(sessions, index)
    finally:
        for session in sessions:
            session.close()
    assert answers and all(mine == theirs for mine, theirs in answers)
    assert _privileged_plan(environment, index)[0] != _privileged_plan(swapped, index)[0]


def test_records_of_the_expert_that_knew_every_fact_are_not_resumed(tmp_path):
    """Demos and corrections made before the expert searched name no expert in their settings:
    a rerun into them is refused, not appended to."""
    from agentcli.policy import PolicyConfig
    from agentcli.resume import guard_output
    from agentcli.rollout import RolloutConfig
    from agentcli.teacher.stages import CorrectConfig

    collect = RolloutConfig(
        env="alfworld", out=tmp_path / "demos", policy=PolicyConfig(kind="oracle")
    )
    correct = CorrectConfig(
        env="alfworld", rollout=tmp_path / "rollout", teacher={"kind": "oracle"}
    )
    for settings, section in (
        (collect.record_settings(SPEC), "policy"),
        (correct.record_settings(), "teacher"),
    ):
        assert settings[section]["expert"] == SPEC.expert
        before = json.loads(json.dumps(settings))
        del before[section]["expert"]
        records = tmp_path / f"{section}.jsonl"
        guard_output(records, before, overwrite=False)
        records.write_text("{}\n")
        with pytest.raises(UsageError, match=rf"other settings \({section}\.expert: None → "):
            guard_output(records, settings, overwrite=False)
