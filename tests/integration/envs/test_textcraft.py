"""textcraft in fresh processes: the same tasks whatever the process and hash seed."""

from __future__ import annotations

import json

from tests.support.processes import outputs_under_hash_seeds

_DUMP = """
import json
from agentcli.envs.textcraft import SPEC
env = SPEC.load()
print(json.dumps([env.task(i).observation for i in range(0, 544, 17)] + [env.goals]))
"""


def test_tasks_are_identical_across_processes_and_hash_seeds():
    dumps = outputs_under_hash_seeds(_DUMP)
    assert dumps[0] == dumps[1]
    assert len(json.loads(dumps[0])) > 10
