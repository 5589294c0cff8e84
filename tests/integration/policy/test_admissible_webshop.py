"""``policy.actions: admissible`` on a real webshop server, whose steps send no list of
actions: the page's actions are read off its text. A student that cuts the last character off
every click (the asin, the option, Buy Now) and searches as the expert does wins once its clicks
are mapped to the nearest the page lists, and loses as written; its searches pass unchanged."""

from __future__ import annotations

from agentcli.envs.webshop.actions import parse_action
from agentcli.records import Episode
from tests.support.garbling_expert import GarblingExpert, play_garbled
from tests.support.servers import running_server

TRAIN_ITEMS = [500, 501]  # the generated catalog's first training goals


def cut(action: str) -> str:
    """A click with its argument's last character cut off (``click[b0vmx6l26]``); a search as
    it is."""
    name, argument = parse_action(action)
    return f"click[{argument[:-1]}]" if name == "click" and argument else action


def _play(url: str, out, actions: str) -> list[Episode]:
    expert = GarblingExpert(cut, fallback="click[buy now]")
    return play_garbled("webshop", url, out, expert, TRAIN_ITEMS, actions, max_rounds=8)


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
