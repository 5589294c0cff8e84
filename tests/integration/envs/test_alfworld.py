"""alfworld's engine in fresh processes and behind real servers, without ALFWorld's data: the
same games whatever the process and hash seed; env check and collect on generated games."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter

import httpx
import pytest

from agentcli.envs.alfworld import translations
from agentcli.envs.alfworld.generation import TASK_TYPES
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.launcher import env_servers
from agentcli.records import Episode
from tests.support.cli import agentgym
from tests.support.processes import outputs_under_hash_seeds
from tests.support.servers import running_server

pytestmark = [
    pytest.mark.alfworld,
    pytest.mark.skipif(
        importlib.util.find_spec("alfworld") is None,
        reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
    ),
]


_DUMP = """
import json, logging
logging.disable(logging.WARNING)
from agentcli.envs.alfworld import SPEC
env = SPEC.load()
out = []
for index in [*env.splits()["builtin"], 2420]:
    session = env.open_session()
    transition = session.reset(index)
    out.append([transition.observation, transition.available_actions])
    while not transition.done:
        action = session.expert_action()
        transition = session.step(action)
        expert = session.expert_action()  # decided from the state's facts and the sightings
        out.append([action, transition.observation, transition.available_actions, expert])
    session.close()
    out.append(env.privileged_state(index))
catalog = env.catalog
for index in [*range(0, 2620, 97), *range(100_000, 100_040), *range(200_000, 200_040)]:
    out.append(catalog.game_data(catalog.game(index))["pddl_problem"])
print(json.dumps(out))
"""


def test_games_are_identical_across_processes_and_hash_seeds():
    dumps = outputs_under_hash_seeds(_DUMP)
    assert dumps[0] == dumps[1]
    assert len(json.loads(dumps[0])) > 100


def test_env_check_passes_on_the_default_item_without_data():
    with running_server("alfworld") as url:
        result = agentgym("env", "check", url, "--env", "alfworld")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "reset item 0" in result.stdout and "verdict: PASS" in result.stdout


def _collect(tmp_path, limit: int, *servers: str, given: tuple[str, ...] = ()) -> list[Episode]:
    out = tmp_path / "demos.jsonl"
    given = (*given, *(argument for url in servers for argument in ("--env-server", url)))
    result = agentgym(
        "collect", "--env", "alfworld", "--split", "train", "--limit", str(limit),
        "--out", str(out), *given, timeout=60 * limit,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return [Episode.model_validate_json(line) for line in out.read_text().splitlines()]


def _by_task_type(episodes: list[Episode]) -> dict[str, list[bool]]:
    from agentcli.envs.alfworld import SPEC

    found: dict[str, list[bool]] = {}
    for episode in episodes:
        index = int(episode.item_id.rsplit("_", 1)[1])
        found.setdefault(SPEC.categories(index), []).append(episode.success)
    return found


def test_collect_on_generated_games_is_flagged_and_won(tmp_path):
    episodes = _collect(tmp_path, 6)
    assert len(episodes) == 6 and all(episode.success for episode in episodes)
    assert all(episode.meta["generated"] is True for episode in episodes)
    assert all(episode.item_id.startswith("alfworld_1000") for episode in episodes)


def test_collect_plays_the_first_items_of_the_task_types_named_and_resumes_only_those(tmp_path):
    from agentcli.envs.alfworld import SPEC

    wanted = ("look_at_obj_in_light", "pick_and_place_simple")
    types = ("--task-types", wanted[0], "--task-types", wanted[1])
    episodes = _collect(tmp_path, 3, given=types)
    first = [index for index in range(100_000, 100_100) if SPEC.categories(index) in wanted][:3]
    assert sorted(episode.item_id for episode in episodes) == [f"alfworld_{i}" for i in first]
    other = agentgym("collect", "--env", "alfworld", "--split", "train", "--limit", "3",
                     "--out", str(tmp_path / "demos.jsonl"))  # fmt: skip
    assert other.returncode != 0 and "task_types" in other.stderr, other.stderr


# The first 24 train items hold all six task types (one of them, item 100020, needs more than
# 30 rounds of search). The 100 won 98/100 in 173 s with two servers
# (docs/environments/alfworld.md); 24 keep CI's suite within its time.
COLLECTED = 24


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_collect_train_items_wins_95_percent_of_every_task_type(tmp_path):
    # One server per core: an alfworld server runs one engine call at a time.
    with running_server("alfworld") as first, running_server("alfworld") as second:
        episodes = _collect(tmp_path, COLLECTED, first, second)
    by_type = _by_task_type(episodes)
    assert len(by_type) == 6, Counter({k: len(v) for k, v in by_type.items()})
    assert sum(episode.success for episode in episodes) >= 0.95 * COLLECTED


_RANDOM_PLAY = """
import json, logging, random
logging.disable(logging.WARNING)
from agentcli.envs.alfworld import SPEC, textworld_speedups
if {plain}:
    textworld_speedups.install = lambda: None
env = SPEC.load()
rng = random.Random(7)
out = []
for index in (0, 100_003, 200_001):
    session = env.open_session()
    transition = session.reset(index)
    out.append([transition.observation, transition.available_actions])
    action = "look"
    for turn in range(25):
        # every third command is not admissible (nothing happens): a repeat, or no such place
        admissible = transition.available_actions
        action = rng.choice(admissible if turn % 3 else [action, "go to nowhere 1"])
        transition = session.step(action)
        expert = session.expert_action()  # decided from the state's facts and the sightings
        out.append([action, transition.observation, transition.available_actions, expert])
    session.close()
print(json.dumps(out))
"""


def test_text_generation_speedups_and_stored_translations_leave_every_character_as_is():
    # the first process translates every problem and stores it; the second reads them back
    plain, sped_up = (
        outputs_under_hash_seeds(_RANDOM_PLAY.format(plain=plain), seeds=("1",))[0]
        for plain in (True, False)
    )
    assert sped_up == plain
    assert len(json.loads(plain)) == 3 * 26
    # one translation an item: its engine never replans, so the one for replanning is not made
    assert len(list(translations.cache_dir().iterdir())) == 3


def test_a_command_given_no_server_starts_one_alfworld_server_per_core(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    with env_servers(get_spec("alfworld"), []) as urls:
        assert len(set(urls)) == 2
        assert all(httpx.get(f"{url}/health").status_code == 200 for url in urls)
    for url in urls:
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{url}/health", timeout=1.0)


_ENVIRONMENT_AFTER_USE = """
import json, os
from agentcli.envs.registry import get_spec
spec = get_spec("alfworld")
env = spec.load()
env.open_session().reset(200_000)
print(json.dumps([spec.categories(100_000), os.environ.get("ALFWORLD_DATA"), spec.missing()]))
"""


def test_playing_alfworld_leaves_alfworld_data_unset_for_the_servers_started_after():
    # alfworld's first import sets ALFWORLD_DATA to ~/.cache/alfworld; a server started later
    # took that empty folder for the user's data and refused to start
    (output,) = outputs_under_hash_seeds(_ENVIRONMENT_AFTER_USE, seeds=("1",))
    category, data, missing = json.loads(output)
    assert category in TASK_TYPES
    assert data is None and missing is None
