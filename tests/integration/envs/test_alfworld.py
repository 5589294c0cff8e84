"""alfworld's engine in fresh processes: the same games whatever the process and hash seed."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support.processes import outputs_under_hash_seeds

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
for index in env.splits()["builtin"]:
    session = env.open_session()
    transition = session.reset(index)
    out.append([transition.observation, transition.available_actions])
    while not transition.done:
        action = session.expert_action()
        transition = session.step(action)
        out.append([action, transition.observation, transition.available_actions])
    session.close()
    out.append(env.privileged_state(index))
print(json.dumps(out))
"""


def test_games_are_identical_across_processes_and_hash_seeds():
    dumps = outputs_under_hash_seeds(_DUMP)
    assert dumps[0] == dumps[1]
    assert len(json.loads(dumps[0])) > 10
