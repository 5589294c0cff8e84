"""agentcli's modules import each other without circles (ARCHITECTURE.md): a module's helpers
never import the module that uses them, not even inside a function. Read from the source
(``tests/support/import_graph.py``); nothing is imported."""

from __future__ import annotations

from tests.support.import_graph import chain, circles, import_graph, imported_names


def readable(circle: frozenset[str]) -> str:
    graph = import_graph()
    path = chain(graph, circle)
    steps = [f"{a} (line {graph[a][b]})" for a, b in zip(path, path[1:], strict=False)]
    return " → ".join([*steps, path[-1]])


def test_no_module_imports_itself_round_a_circle():
    found = [readable(circle) for circle in sorted(circles(import_graph()), key=sorted)]
    assert not found, "import circles (move what both sides need to the lower module):\n" + (
        "\n".join(found)
    )


def test_imports_inside_functions_and_relative_ones_count():
    source = (
        "import os\n"
        "def f():\n"
        "    from agentcli.rollout import END_ERROR\n"
        "from .. import run_layout\n"
        "from . import jsonl\n"
    )
    assert imported_names(source, "agentcli.data") == [
        (1, "os"),
        (3, "agentcli.rollout.END_ERROR"),
        (4, "agentcli.run_layout"),
        (5, "agentcli.data.jsonl"),
    ]


def test_a_circle_is_found_and_told_as_a_chain():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": {"e"}}
    assert circles(graph) == [frozenset("abc"), frozenset({"e", "e2"})]
    assert chain(graph, frozenset("abc")) == ["a", "b", "c", "a"]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_resolves_submodules_packages_and_names():
    graph = import_graph()
    assert "agentcli.run_layout" in graph["agentcli.data.build"]  # a module
    assert "agentcli.teacher.config" in graph["agentcli.teacher.ledger"]  # a module
    assert "agentcli.teacher" in graph["agentcli.teacher.stages"]  # a name from a package
    assert "agentcli.rollout" in graph["agentcli.evaluate"]  # deferred, inside a function
