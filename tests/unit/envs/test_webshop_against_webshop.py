"""Our webshop against WebShop's own code (tests/support/webshop_original.py): the goals it
builds from files in its formats, and how its text environment reads each page, rendered
from its own templates."""

from __future__ import annotations

import hashlib
import json

import pytest

from agentcli.envs.webshop import generate, webpage
from agentcli.envs.webshop.catalog import read_catalog
from agentcli.envs.webshop.session import WebShopEnvironment, load
from agentcli.errors import SessionStateError, UsageError
from tests.support import webshop_original as original
from tests.unit.envs.test_webshop import ANNOTATIONS, ITEMS, SNEAKERS, TAGGER

# git's blob ids of WebShop's templates (web_agent_site/templates/ at princeton-nlp/WebShop
# 64fa2a5 and in AgentGym 3ef9235's copy alike)
TEMPLATE_BLOBS = {
    "attributes_page.html": "68ec6b98edbf1880dc13e5b9b30f4c657f21cfc2",
    "description_page.html": "5fd598e613abee0f3940e79c016dc9fbfa9cd4f7",
    "done_page.html": "4803dc89764961be11de208c0ad4de6281aca89e",
    "features_page.html": "4baab1047c07be55f98b8598f02226d3fd2275b1",
    "item_page.html": "a4b4bb3f758d76545d0e66829620be7f0886503a",
    "results_page.html": "03373f57a95f2da4528f39ddd2175c8bf0b485d3",
    "review_page.html": "805842909c2edb1ffc8db54ed1258bc62415c981",
    "search_page.html": "f834614a4f66e9bc830e94d91c992ca0189d6905",
}
# Products at the edges of the human goals' price bounds: $975 leaves two multiples of 10
# above it, $985 one (then its goals have no bound, four times over).
EDGES = [
    {**SNEAKERS, "asin": "B0PRICE975", "pricing": "$975.00", "customization_options": None},
    {**SNEAKERS, "asin": "B0PRICE985", "pricing": "$985.00", "customization_options": None},
]


def _human_instructions(items: list[dict], annotations: dict) -> dict:
    """items_human_ins.json for every third product: its synthetic instruction reworded, the
    first value of each option as the person's choice; the sneakers get one without
    attributes (skipped) and the ranged-price socks options no product lists."""
    written = {}
    for item in items[::3]:
        annotation = annotations[item["asin"]]
        chosen = [o[0]["value"].lower() for o in (item["customization_options"] or {}).values()]
        written[item["asin"]] = [{
            "instruction": f"{annotation['instruction']}, please.",
            "instruction_attributes": annotation["instruction_attributes"],
            "instruction_options": chosen,
        }]  # fmt: skip
    written["B07XYZ1234"] = [
        {"instruction": "running sneakers, red, size 10.", "instruction_attributes":
         ["rubber sole"], "instruction_options": ["red", "10"]},
        {"instruction": "any shoes", "instruction_attributes": [], "instruction_options": []},
    ]  # fmt: skip
    written["B01ABCDEFG"] = [{"instruction": "warm wool socks", "instruction_attributes":
                              ["merino wool"], "instruction_options": ["xl"]}]  # fmt: skip
    for edge in EDGES:
        written[edge["asin"]] = [{"instruction": "a pair of shoes",
                                  "instruction_attributes": ["rubber sole"],
                                  "instruction_options": []}]  # fmt: skip
    return written


@pytest.fixture
def webshop_data(tmp_path, monkeypatch):
    """A folder of WebShop's three files, as AgentGym's server reads them, in WEBSHOP_DATA."""
    items, annotations = generate.records(60)
    items = [*ITEMS, *EDGES, *items]
    # WebShop's loader needs a record for every product (the lamp's lists no attributes)
    annotations = {**annotations, **ANNOTATIONS, "B0LAMPLAMP": {"attributes": []},
                   **{e["asin"]: ANNOTATIONS["B07XYZ1234"] for e in EDGES}}  # fmt: skip
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps(items))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps(annotations))
    (tmp_path / "items_human_ins.json").write_text(
        json.dumps(_human_instructions(items, annotations))
    )
    monkeypatch.setenv("WEBSHOP_DATA", str(tmp_path))
    return tmp_path


def _ours(environment: WebShopEnvironment) -> list[tuple]:
    return [(g.product.asin, g.text, list(g.attributes), g.price_upper, list(g.wanted_options))
            for g in environment.goals]  # fmt: skip


def _webshops(goals: list[dict]) -> list[tuple]:
    def options(chosen):
        return list(chosen.items()) if isinstance(chosen, dict) else list(chosen)

    return [(g["asin"], g["instruction_text"], list(g["attributes"]), g["price_upper"],
             options(g["goal_options"])) for g in goals]  # fmt: skip


def test_agentgyms_server_serves_the_synthetic_goals_even_beside_the_human_file(webshop_data):
    environment = load()
    prices = {product.asin: product.price for product in environment.products}
    assert _ours(environment) == _webshops(original.served_goals(webshop_data, False, prices))


def test_webshop_goals_human_builds_webshops_human_goals_in_agentgyms_order(
    webshop_data, monkeypatch
):
    monkeypatch.setenv("WEBSHOP_GOALS", "human")
    environment = load()
    prices = {product.asin: product.price for product in environment.products}
    expected = _webshops(original.served_goals(webshop_data, True, prices))
    assert _ours(environment) == expected
    assert len(expected) > 40  # 4 a written instruction (2 at $975, none without attributes)
    by_asin = {}
    for goal in environment.goals:
        by_asin.setdefault(goal.product.asin, []).append(goal)
    assert sorted(g.price_upper for g in by_asin["B0PRICE975"]) == [980.0, 990.0]
    assert [g.text for g in by_asin["B0PRICE985"]] == ["a pair of shoes"] * 4
    # what the expert selects: each chosen value under the option that lists it
    sneakers = by_asin["B07XYZ1234"][0]
    assert sneakers.options == {"color": "red", "size": "10"}
    assert by_asin["B01ABCDEFG"][0].options == {}  # "xl" is none of the socks' options
    session = environment.open_session()
    index = environment.goals.index(sneakers)
    session.reset(index)
    for _ in range(8):
        last = session.step(session.expert_action())
        if last.done:
            break
    # values compared as values (a synthetic goal's as name/value pairs)
    assert last.success, environment.privileged_state(index)


def test_human_goals_need_webshops_human_file(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBSHOP_GOALS", "human")
    with pytest.raises(UsageError, match="set WEBSHOP_DATA to the folder"):
        load()
    items, annotations = generate.records(5)
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps(items))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps(annotations))
    monkeypatch.setenv("WEBSHOP_DATA", str(tmp_path))
    with pytest.raises(UsageError, match="holds no items_human_ins.json"):
        load()
    monkeypatch.setenv("WEBSHOP_GOALS", "people")
    with pytest.raises(UsageError, match="WEBSHOP_GOALS='people': give 'synthetic' or 'human'"):
        load()


def test_the_templates_are_webshops_own():
    for name, blob in TEMPLATE_BLOBS.items():
        data = (webpage.TEMPLATES / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name


# every page, from the search to the thank-you page
PATH = ["search[sneakers]", "click[next >]", "click[< prev]", "click[b07xyz1234]", "click[red]",
        "click[description]", "click[< prev]", "click[features]", "click[< prev]",
        "click[reviews]", "click[< prev]", "click[10]", "click[buy now]"]  # fmt: skip
ATTRIBUTES = ["click[attributes]", "click[< prev]"]  # where the item page lists it


@pytest.mark.parametrize("show_attrs", [False, True])
def test_every_page_reads_as_webshops_text_environment_reads_its_template(show_attrs):
    environment = WebShopEnvironment(
        read_catalog(ITEMS, ANNOTATIONS), TAGGER, show_attrs=show_attrs
    )
    session = environment.open_session()
    transition = session.reset(0)
    seen = set()
    path = PATH[:-2] + ATTRIBUTES + PATH[-2:] if show_attrs else PATH
    for action in [None, *path]:
        if action is not None:
            transition = session.step(action)
        html = session.state()["html"]
        assert original.convert_html_to_text(html) == transition.observation, action
        assert original.get_available_actions(html) == session.available_actions(), action
        if not transition.done:
            assert original.get_instruction_text(html) == session.instruction_text(), action
        browser = session.browser
        seen.add(browser.sub_page if browser.kind == "sub" else browser.kind)
    assert seen == {"search", "results", "item", "Description", "Features", "Reviews", "done"} | (
        {"Attributes"} if show_attrs else set()
    )
    with pytest.raises(SessionStateError, match="thank-you page"):
        session.instruction_text()  # WebShop's fails there: the page has no instruction


def test_the_attributes_page_lists_the_attributes_then_category_query_and_breadcrumb():
    environment = WebShopEnvironment(read_catalog(ITEMS, ANNOTATIONS), TAGGER, show_attrs=True)
    session = environment.open_session()
    goal = environment.goals[0].text
    session.reset(0)
    session.step("search[sneakers]")
    item = session.step("click[b07xyz1234]")
    assert "Reviews [SEP] Attributes [SEP] Buy Now" in item.observation
    assert "click[attributes]" in item.available_actions
    assert session.step("click[attributes]").observation == (
        f"Instruction: [SEP] {goal} [SEP] Back to Search [SEP] < Prev [SEP] breathable mesh "
        "[SEP] rubber sole [SEP] fashion [SEP] men's sneakers [SEP] Clothing, Shoes & Jewelry "
        "› Men › Shoes › Sneakers"
    )
    assert session.state()["url"] == (
        "http://127.0.0.1:3000/item_sub_page/0/B07XYZ1234/sneakers/1/Attributes/{}"
    )
    # without show_attrs (AgentGym's server) the item page lists no Attributes to click
    plain = WebShopEnvironment(read_catalog(ITEMS, ANNOTATIONS), TAGGER).open_session()
    plain.reset(0)
    plain.step("search[sneakers]")
    listed = plain.step("click[b07xyz1234]")
    assert "Attributes" not in listed.observation
    assert plain.step("click[attributes]").observation == listed.observation
