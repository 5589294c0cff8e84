"""WebShop, built in: a web store's pages as WebShop's text mode shows them, without Java.

``catalog`` reads products in WebShop's file formats (its real files under ``WEBSHOP_DATA``,
else ``generate``'s), ``goals`` builds its synthetic goals in AgentGym's order, ``search``
ranks as its Lucene index does, ``pages`` renders, ``reward`` scores a purchase, ``session``
steps (reading an action as ``actions`` does, which also sorts a recorded step into its kind
for eval) and ``expert`` advises. Importing this package imports none of the search libraries.
``WIRE`` is AgentGym's webshop server's (``env_idx``, ``session_id``, ``state``).
"""

from __future__ import annotations

from typing import Any

from agentcli.envs.base import ActionKinds, EnvSpec
from agentcli.envs.webshop import actions
from agentcli.envs.webshop.baseline import rule_action
from agentcli.envs.webshop.reward import noun_tagger, stand_in_note
from agentcli.envs.wire.format import ResetRequest, WireFormat

INSTRUCTION = """\
You are shopping on a web store for a customer. Each turn you see the current page and the \
buttons you can click. Find a product that matches the customer's request and buy it.

Actions:
- search[<keywords>]: search the store (only when the page has a search bar).
- click[<button>]: click one of the buttons listed on the page, e.g. click[Buy Now].

Every turn, answer in this format and nothing else:
Thought: <your reasoning>
Action: <one action>"""


def _load():  # noqa: ANN202 - the session module imports the search libraries
    from agentcli.envs.webshop.session import load

    return load()


def _note() -> str | None:
    return stand_in_note(noun_tagger())


# AgentGym's webshop server's page routes (GET ?env_idx=), answered by the session.
def available_actions(session: Any) -> dict[str, Any]:
    """``{has_search_bar, clickables}``: what WebShop's ``get_available_actions`` reads off
    the page (AgentGym's shape)."""
    return session.available_actions()


def instruction_text(session: Any) -> str:
    """The instruction as WebShop's ``get_instruction_text`` reads it off the page (409 on
    the thank-you page, which shows none)."""
    return session.instruction_text()


def state(session: Any) -> dict[str, str]:
    """``{url, html, instruction_text}``: WebShop's state of the page (AgentGym's server
    answers these fields' own names instead: it unpacks the state dict into its keys)."""
    return session.state()


WIRE = WireFormat(
    reset_fields=("state",),  # our server answers [state, null], as AgentGym's does
    step_fields=("state", "reward", "done", "info"),
    reset_request=ResetRequest,
    # WebShop's reward is the purchase's match score; a perfect match is its success.
    infer_success=lambda body: float(body.get("reward") or 0) >= 1.0,
    id_field="env_idx",
    index_field="session_id",
    observation_field="state",
    any_503_is_busy=True,
    observe_after_reset=True,
)

SPEC = EnvSpec(
    name="webshop",
    summary="Buy a product matching a request on a simulated web store (WebShop pages, reward).",
    requires="nothing (WEBSHOP_DATA for WebShop's own files, WEBSHOP_GOALS=human for its human"
    " goals); spaCy's English model for WebShop's reward (make install adds it)",
    instruction=INSTRUCTION,
    max_rounds=20,
    wire=WIRE,
    default_port=36001,
    load=_load,
    note=_note,
    probe_action="search[shoes]",
    session_routes={
        "/available_actions": available_actions,
        "/instruction_text": instruction_text,
        "/state": state,
    },
    action_kinds=ActionKinds(actions.KINDS, actions.action_kind),
    page_actions=actions.page_actions,
    baseline=rule_action,
    score_reported=True,
)
