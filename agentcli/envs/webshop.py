"""WebShop, client side only: no package ships its product data, so a user runs a WebShop
server elsewhere (AgentGym's ``webshop`` server) and points agentgym at it with
``--env-server``. The wire variant (``env_idx``, ``state``) is in ``protocol.WIRE_FORMATS``.
"""

from __future__ import annotations

from agentcli.envs.base import EnvSpec

INSTRUCTION = """\
You are shopping on a web store for a customer. Each turn you see the current page and the \
buttons you can click. Find a product that matches the customer's request and buy it.

Actions:
- search[<keywords>]: search the store (only when the page has a search bar).
- click[<button>]: click one of the buttons listed on the page, e.g. click[Buy Now].

Every turn, answer in this format and nothing else:
Thought: <your reasoning>
Action: <one action>"""

SPEC = EnvSpec(
    name="webshop",
    summary="Buy a product matching a request on a simulated web store (client only).",
    requires="a WebShop server you run elsewhere, given with --env-server URL",
    instruction=INSTRUCTION,
    max_rounds=20,
    wire="webshop",
    default_port=36001,
    load=None,
    probe_action="search[shoes]",
)
