"""WebArena, client only: its sites (shopping, shopping admin, forum, GitLab, map, wiki) run in
docker and AgentGym's webarena server (agentenv-webarena) drives a browser on them; we speak
that server's wire (``WIRE``) and run nothing of it here.

Item ``webarena_<n>`` is WebArena's task n (its server plays ``config_files/<n>.json``,
written from WebArena's ``test.raw.json``, whose 812 tasks are numbered 0-811). The first
observation is the server's whole prompt (the page's accessibility tree, its URL, the
objective, the previous action); a step sends the action between triple backticks, which is
where the server reads it; the episode ends at ``stop [answer]`` (or a terminating action),
scored by WebArena's evaluator, 1 or 0.
"""

from __future__ import annotations

from agentcli.envs.base import EnvSpec
from agentcli.envs.wire.format import ResetRequest, WireFormat

TASKS = 812  # WebArena's test.raw.json: task ids 0-811
INSTRUCTION = """\
You are an agent browsing the web to complete a user's task. Each turn you see the current \
page's accessibility tree (elements with their [id]), its URL, the objective and your \
previous action.

Actions:
- click [id], hover [id], type [id] [content] [0|1] (1, the default: press Enter after), \
press [key_comb], scroll [down|up]
- new_tab, tab_focus [tab_index], close_tab
- goto [url], go_back, go_forward
- stop [answer]: when the task is done, with the answer the objective asks for (N/A if it \
cannot be done)

Every turn, answer in this format and nothing else:
Thought: <your reasoning>
Action: <one action>"""


# AgentGym's webarena server (agentenv-webarena/agentenv_webarena/server.py); we have no
# server of it. /create answers {"env_idx"}; a reset names the task "idx" (its
# config_files/<idx>.json) and answers {observation, sites, object}, or the observation
# "TimeoutError" for any failure; a step takes the model's text and acts on what it
# holds between triple backticks.
WIRE = WireFormat(
    reset_fields=("observation", "sites", "object"),
    step_fields=("observation", "reward", "terminated", "truncated", "info"),
    reset_request=ResetRequest,
    # WebArena's evaluators score a finished task 1 or 0
    infer_success=lambda body: (
        bool(body.get("terminated")) and float(body.get("reward") or 0) >= 1.0
    ),
    id_field="env_idx",
    index_field="idx",
    reset_extra={"seed": 0},
    observe_after_reset=True,
    done_field="terminated",
    reward_when_done_only=True,
    action_format="```{action}```",
    failed_reset="TimeoutError",
)

SPEC = EnvSpec(
    name="webarena",
    summary="Do a task on real web sites (a shop and its admin, a forum, GitLab, a map).",
    requires=(
        "AgentGym's webarena server (agentenv-webarena, port 8000) and WebArena's sites"
        " (docker); pass --env-server URL"
    ),
    instruction=INSTRUCTION,
    max_rounds=30,  # WebArena's run.py --max_steps
    wire=WIRE,
    default_port=8000,
    load=None,
    probe_action="scroll [down]",
    known_splits=lambda: {"test": list(range(TASKS))},
)
