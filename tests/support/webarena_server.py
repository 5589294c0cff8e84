"""A stand-in for AgentGym's webarena server, on loopback, for tests of our webarena client.

The real one (agentenv-webarena/agentenv_webarena/server.py and environment.py at AgentGym
3ef9235) drives a browser on WebArena's docker sites; nothing of it can run here. This one
speaks its wire as it does, over a two-page shop instead of the sites:

- ``GET /`` → ``"ok"``; ``POST /create`` → ``{"env_idx"}`` (ids from 0, never reused);
- ``POST /reset {"env_idx", "seed", "idx"}`` (a KeyError, HTTP 500, without seed or idx)
  plays ``config_files/<idx>.json`` and answers ``{"observation": <the page's accessibility
  tree>, "sites", "object": <the intent>}``, or for any failure ``{"observation":
  "TimeoutError", "sites": "Error", "object": "Error"}``;
- ``GET /observation?env_idx=`` → the prompt: WebArena's template filled with the page, its
  URL, the objective and the previous action;
- ``POST /step {"env_idx", "action"}`` takes the model's text, acts on the first span between
  triple backticks (none: the observation says it cannot parse the action) and answers
  ``{"observation": <the prompt>, "reward", "terminated", "truncated", "info"}``: the reward
  of an action that ran is 1.0 (WebArena's ``float(success)``) until ``stop [answer]`` ends
  the episode with the evaluator's score (1.0 for the right answer, else 0.0);
- ``POST /close {"env_idx"}`` → ``{"closed": "closed"}``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request

from agentcli.agentgym_prompts import AGENTGYM_OPENINGS
from tests.support.servers import app_in_thread

# WebArena's p_cot_id_actree_2s prompt template
TEMPLATE = """OBSERVATION:
{observation}
URL: {url}
OBJECTIVE: {objective}
PREVIOUS ACTION: {previous_action}"""
HOME = "http://onestopmarket.com"
PAGES = {
    HOME: {
        "[1] RootWebArea 'One Stop Market'": None,
        "[1744] link 'HP CB782A#ABA 640 Inkjet Fax Machine (Renewed)'": f"{HOME}/hp-fax.html",
        "[1757] button 'Add to Cart'": None,
    },
    f"{HOME}/hp-fax.html": {
        "[2] RootWebArea 'HP CB782A#ABA 640 Inkjet Fax Machine (Renewed)'": None,
        "[1749] StaticText '$279.49'": None,
    },
}
# the tasks of config_files/: idx -> (sites, intent, the evaluator's reference answer); the
# even ones ask for the price the product page shows, the odd ones for what it does not say
TASKS = {
    idx: (["shopping"], "What is the price of HP Inkjet Fax Machine", "$279.49")
    if idx % 2 == 0
    else (["shopping"], "Which fax machine does the store sell?", "HP CB782A#ABA 640")
    for idx in range(20)
}


def shopper(messages: list[dict[str, str]]) -> str:
    """A model for the stand-in's shop (an OpenAI server's reply function): to the fax
    machine's page, then its price as the answer; worded as WebArena's prompt asks, or as
    ours does."""
    page = messages[-1]["content"]
    action = "stop [$279.49]" if "hp-fax.html" in page else "click [1744]"
    if messages[0]["content"] == AGENTGYM_OPENINGS["webarena"][0]:
        summary = "Let's think step-by-step. In summary, the next action I will perform is"
        return f"{summary} ```{action}```"
    return f"Thought: the fax machine's page shows its price.\nAction: {action}"


@dataclass
class Browser:
    """One env of the server: its task, page and the actions taken."""

    task: int | None = None
    url: str = HOME
    history: list[str] = field(default_factory=lambda: ["None"])

    def tree(self) -> str:
        return "\n".join(PAGES[self.url])

    def prompt(self) -> str:
        objective = TASKS[self.task][1] if self.task is not None else ""
        return TEMPLATE.format(observation=self.tree(), url=self.url, objective=objective,
                               previous_action=self.history[-1])  # fmt: skip

    def act(self, action: str) -> tuple[float, bool]:
        """(reward, terminated) of one parsed action."""
        if match := re.fullmatch(r"stop \[(.*)\]", action):
            reference = TASKS[self.task][2]
            self.history.append(action)
            return float(match.group(1).strip() == reference), True
        if match := re.fullmatch(r"click \[(\d+)\]", action):
            element = next((e for e in PAGES[self.url] if e.startswith(f"[{match[1]}] ")), None)
            if element is None:
                self.history.append(f'Attempt to perfom "click" on element "[{match[1]}]" but'
                                    " no matching element found.")  # fmt: skip
                return 0.0, False
            self.history.append(
                f"click [{match[1]}] where [{match[1]}] is {element.split(' ', 1)[1]}"
            )
            self.url = PAGES[self.url][element] or self.url
            return 1.0, False
        self.history.append(action)  # scroll, go_back, ...: the page stays
        return 1.0, False


@dataclass
class WebArenaStandIn:
    url: str = ""
    envs: dict[int, Browser] = field(default_factory=dict)
    requests: list[tuple[str, Any]] = field(default_factory=list)  # (path, body) as they came


def build_app(server: WebArenaStandIn) -> FastAPI:
    app = FastAPI()
    ids = itertools.count()

    async def body(request: Request) -> dict[str, Any]:
        data = await request.json()
        server.requests.append((request.url.path, data))
        return data

    @app.get("/")
    def ok() -> str:
        return "ok"

    @app.post("/create")
    def create() -> dict[str, int]:
        env_idx = next(ids)
        server.envs[env_idx] = Browser()
        return {"env_idx": env_idx}

    @app.post("/reset")
    async def reset(request: Request) -> dict[str, Any]:
        query = await body(request)
        options = {"config_file": f"./config_files/{query['idx']}.json"}  # KeyError: a 500
        _seed = query["seed"]  # likewise
        try:
            if query["idx"] not in TASKS:
                raise FileNotFoundError(options["config_file"])
            server.envs[query["env_idx"]] = Browser(task=query["idx"])
            sites, intent = TASKS[query["idx"]][:2]
            return {"observation": server.envs[query["env_idx"]].tree(), "sites": sites,
                    "object": intent}  # fmt: skip
        except Exception:
            return {"observation": "TimeoutError", "sites": "Error", "object": "Error"}

    @app.get("/observation")
    def observation(env_idx: int) -> str:
        return server.envs[env_idx].prompt()

    @app.post("/step")
    async def step(request: Request) -> dict[str, Any]:
        query = await body(request)
        browser = server.envs[query["env_idx"]]
        found = re.search(r"```((.|\n)*?)```", query["action"])  # force_prefix is empty
        if found is None:
            message = f"Cannot parse action from response {query['action']}"
            return {"observation": message, "reward": 0, "terminated": False,
                    "truncated": False, "info": None}  # fmt: skip
        reward, terminated = browser.act(found.group(1).strip())
        return {"observation": browser.prompt(), "reward": reward, "terminated": terminated,
                "truncated": False, "info": {"page": {"url": browser.url}}}  # fmt: skip

    @app.post("/close")
    async def close(request: Request) -> dict[str, str]:
        server.envs.pop((await body(request))["env_idx"], None)
        return {"closed": "closed"}

    return app


@contextmanager
def webarena_server(port: int | None = None) -> Iterator[WebArenaStandIn]:
    """The stand-in running in a background thread until the block ends (on ``port``, else
    a free one)."""
    running = WebArenaStandIn()
    with app_in_thread(build_app(running), port) as running.url:
        yield running
