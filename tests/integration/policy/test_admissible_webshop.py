"""``policy.actions: admissible`` on a real webshop server, whose steps send no list of
actions: the page's actions are read off its text. A student that cuts the last character off
every click (the asin, the option, Buy Now) and searches as the expert does wins once its clicks
are mapped to the nearest the page lists, and loses as written; its searches pass unchanged."""

from __future__ import annotations

import asyncio

from agentcli.conversation import StudentView, turn_text
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import get_spec
from agentcli.envs.webshop.actions import parse_action
from agentcli.policy.base import Reply
from agentcli.records import Episode
from agentcli.rollout import run_rollout
from tests.support.servers import running_server

TRAIN_ITEMS = [500, 501]  # the generated catalog's first training goals


def cut(action: str) -> str:
    """A click with its argument's last character cut off (``click[b0vmx6l26]``); a search as
    it is."""
    name, argument = parse_action(action)
    return f"click[{argument[:-1]}]" if name == "click" and argument else action


class CuttingExpert:
    """The env's expert, each click a character short."""

    name = "cutting-expert"

    async def act(self, conversation, session) -> Reply:
        return Reply(text=turn_text("", cut(await session.expert_action() or "click[buy now]")))

    async def aclose(self) -> None:
        return None


def _play(url: str, out, actions: str) -> list[Episode]:
    asyncio.run(
        run_rollout(
            get_spec("webshop"), [url], CuttingExpert(), TRAIN_ITEMS, out, split="train",
            concurrency=2, max_rounds=8, view=StudentView(), actions=actions,
        )
    )  # fmt: skip
    return sorted(read_records(out, Episode), key=lambda episode: episode.item_id)


def test_a_student_clicking_a_character_short_wins_within_the_pages_actions(tmp_path):
    with running_server("webshop") as url:
        admissible = _play(url, tmp_path / "admissible.jsonl", "admissible")
        free = _play(url, tmp_path / "free.jsonl", "free")
    assert [episode.success for episode in admissible] == [True, True]
    assert [episode.success for episode in free] == [False, False]
    for episode in admissible:
        searches = [step.action for step in episode.steps if step.action.startswith("search[")]
        assert searches and episode.steps[0].candidate_actions == ["search[<keywords>]"]
        replaced = episode.meta["replaced_actions"]
        assert len(replaced) == episode.n_steps - len(searches)  # every click, no search
        for record in replaced:
            step = episode.steps[record["t"]]
            assert record["action"] == step.action and step.action in step.candidate_actions
            assert record["reply"] == cut(step.action)
