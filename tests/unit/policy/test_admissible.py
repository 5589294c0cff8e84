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
