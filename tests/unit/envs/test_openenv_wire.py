"""OpenEnv's protocol is served for every built-in env alike (no simulator loaded here: the
app's routes are built before its environment loads), and a reset names one item."""

from __future__ import annotations

import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute

from agentcli.envs.registry import BUILT_IN
from agentcli.envs.wire.openenv import OpenEnvReset
from agentcli.envs.wire.server import create_app
from agentcli.errors import UsageError


@pytest.mark.parametrize("spec", BUILT_IN, ids=lambda spec: spec.name)
def test_every_built_in_server_has_openenvs_routes_beside_agentgyms(spec):
    routes = create_app(spec).routes
    sockets = [route.path for route in routes if isinstance(route, APIWebSocketRoute)]
    gets = [
        route.path for route in routes if isinstance(route, APIRoute) and "GET" in route.methods
    ]
    assert sockets == ["/ws"]
    assert {"/schema", "/metadata", "/health"} <= set(gets)
    assert gets.count("/state") == 1  # webshop's own /state, AgentGym's, wins there


@pytest.mark.parametrize(
    ("request_fields", "index"),
    [({"item_id": "textcraft_12"}, 12), ({"seed": 12}, 12),
     ({"item_id": "textcraft_12", "seed": 12}, 12)],
)  # fmt: skip
def test_a_reset_takes_its_item_as_an_item_id_or_a_seed(request_fields, index):
    assert OpenEnvReset(**request_fields).index("textcraft") == index


@pytest.mark.parametrize(
    ("request_fields", "says"),
    [({}, "names its item"), ({"item_id": "sciworld_12"}, "not a textcraft item"),
     ({"item_id": "textcraft_12", "seed": 3}, "different items"), ({"item_id": "12"}, "item id")],
)  # fmt: skip
def test_a_reset_without_one_item_of_this_env_is_refused(request_fields, says):
    with pytest.raises(UsageError, match=says):
        OpenEnvReset(**request_fields).index("textcraft")
