"""The nearest admissible action: what a reply becomes under ``policy.actions: admissible``."""

from __future__ import annotations

from agentcli.policy.admissible import nearest_admissible

OFFERED = ["go to countertop 1", "go to countertop 2", "take mug 1 from countertop 1", "look"]


def test_a_listed_action_stays_as_it_is():
    assert nearest_admissible("go to countertop 2", OFFERED) == "go to countertop 2"


def test_an_unlisted_action_becomes_the_listed_one_fewest_characters_away():
    assert nearest_admissible("take mug 1 from countert", OFFERED) == OFFERED[2]  # cut short
    assert nearest_admissible("go to countertop 3", OFFERED) == "go to countertop 1"  # a tie: first
    assert nearest_admissible("loook", OFFERED) == "look"


PAGE = ["search[<keywords>]", "click[b0vmx6l26b]", "click[b0k519rn8q]", "click[next >]"]


def test_a_listed_template_admits_every_action_that_fills_it_and_replaces_none():
    assert nearest_admissible("search[red phone case]", PAGE) == "search[red phone case]"
    assert nearest_admissible("click[b0vmx6l26]", PAGE) == "click[b0vmx6l26b]"  # cut short
    for unfilled in ("search[]", "search["):  # no words written: a whole listed action instead
        assert nearest_admissible(unfilled, PAGE) in PAGE[1:]
    assert nearest_admissible("click[x]", ["search[<keywords>]"]) == "click[x]"  # nothing whole
