"""babyai in fresh processes: the same tasks whatever the hash seed, and a light import."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.processes import outputs_under_hash_seeds

_DUMP = """
import json
from agentcli.envs.babyai import SPEC
env = SPEC.load()
session = env.open_session("native")
out = []
for index in (7, 25, 38, 1234):
    texts = [session.reset(index).observation]
    for _ in range(4):
        action = session.expert_action()
        texts += [action, session.step(action).observation]
    out.append(texts)
out.append(env.privileged_state(38))
print(json.dumps(out))
"""


def test_tasks_and_expert_are_identical_across_processes_and_hash_seeds():
    dumps = outputs_under_hash_seeds(_DUMP)
    assert dumps[0] == dumps[1]
    assert len(json.loads(dumps[0])) == 5


def test_importing_the_module_does_not_import_minigrid():
    code = (
        "import sys, agentcli.envs.babyai; "
        "assert 'minigrid' not in sys.modules and 'gymnasium' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PATH": ""})
