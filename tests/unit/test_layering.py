"""The import rules of DESIGN.md §2, read from the source with ``ast`` (nothing is imported).

Data flows one way (envs → policy → rollout → teacher → data → train → evaluate → iterate):
data/ and train/ never import envs/ or rollout/ (train/ is handed its in-training eval),
teachers never import rollout, envs/ never imports the CLI, policy or training, and envs/'
modules import one another one way (no circles). Every import counts, including those inside
functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "agentcli"


@dataclass(frozen=True)
class Rule:
    package: str  # a folder under agentcli/, or one module
    forbidden: tuple[str, ...]
    allowed: tuple[str, ...] = ()  # exceptions inside the forbidden ones

    def files(self) -> list[Path]:
        path = PACKAGE / self.package
        return sorted(path.rglob("*.py")) if path.is_dir() else [path]

    def breaks(self, module: str) -> bool:
        def within(prefixes: tuple[str, ...]) -> bool:
            return any(module == p or module.startswith(p + ".") for p in prefixes)

        return within(self.forbidden) and not within(self.allowed)


RULES = {
    "data": Rule(
        "data",
        forbidden=tuple(
            f"agentcli.{layer}"
            for layer in ("envs", "rollout", "policy", "teacher", "train", "iterate", "rl")
        ),
        allowed=("agentcli.iterate.run_layout",),  # where a run's files live, nothing more
    ),
    "teacher": Rule("teacher", forbidden=("agentcli.rollout",)),
    "envs": Rule(
        "envs",
        forbidden=tuple(
            f"agentcli.{layer}" for layer in ("cli", "policy", "train", "rollout", "teacher", "rl")
        ),
    ),
    # what data/ and teacher/ reach the iterate package for must not pull the rest of it in
    "iterate/__init__": Rule("iterate/__init__.py", forbidden=("agentcli",)),
    "iterate/run_layout": Rule("iterate/run_layout.py", forbidden=("agentcli",)),
    "common": Rule("common.py", forbidden=("agentcli",)),
    # its in-training eval is handed in by agentcli.train_eval
    "train": Rule(
        "train",
        forbidden=tuple(
            f"agentcli.{layer}"
            for layer in ("envs", "rollout", "evaluate", "policy", "teacher", "rl")
        ),
    ),
    # TRL's environments are built on envs/ and conversation.py, never on training or the CLI
    "rl": Rule("rl", forbidden=tuple(f"agentcli.{layer}" for layer in ("cli", "train", "iterate"))),
    # what the student sees is rendered the same for every layer that shows it
    "conversation": Rule(
        "conversation.py",
        forbidden=tuple(
            f"agentcli.{layer}"
            for layer in ("envs", "rollout", "policy", "teacher", "train", "iterate", "cli")
        ),
    ),
}


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``source`` (a module of ``package``) imports, in line
    order; ``from a import b`` gives ``a.b``: the module ``b`` when it is one, else where ``b``
    comes from."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1 packages
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return sorted(found)


def _package_of(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])


def _cases() -> list:
    cases = []
    for name, rule in RULES.items():
        for path in rule.files():
            where = str(path.relative_to(PACKAGE))
            cases.append(pytest.param(rule, path, id=f"{name}:{where}"))
    return cases


@pytest.mark.parametrize(("rule", "path"), _cases())
def test_a_module_imports_only_what_its_layer_may(rule: Rule, path: Path):
    imports = imported_modules(path.read_text(encoding="utf-8"), _package_of(path))
    broken = [f"{module} (line {line})" for line, module in imports if rule.breaks(module)]
    assert not broken, f"agentcli/{path.relative_to(PACKAGE)} imports {', '.join(broken)}"


def test_imports_inside_functions_and_relative_ones_count():
    source = (
        "import os\n"
        "def f():\n"
        "    from agentcli.rollout import END_ERROR\n"
        "from ..iterate import run_layout\n"
        "from . import jsonl\n"
    )
    assert imported_modules(source, "agentcli.data") == [
        (1, "os"),
        (3, "agentcli.rollout.END_ERROR"),
        (4, "agentcli.iterate.run_layout"),
        (5, "agentcli.data.jsonl"),
    ]
    assert RULES["teacher"].breaks("agentcli.rollout.END_ERROR")
    assert RULES["data"].breaks("agentcli.iterate.config.IterateConfig")
    assert RULES["data"].breaks("agentcli.iterate.IterateConfig")
    assert not RULES["data"].breaks("agentcli.iterate.run_layout.RunLayout")
    assert not RULES["data"].breaks("agentcli.iterate_helpers")  # a prefix is not a package


def test_envs_spawn_no_cli_process():
    """A child started with ``python -m agentcli.cli.main …`` depends on the CLI as an import
    would: the launcher spawns ``agentcli.envs.wire.serve``."""
    for path in RULES["envs"].files():
        named = [
            node.value
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and RULES["envs"].breaks(node.value)
        ]
        assert not named, f"agentcli/{path.relative_to(PACKAGE)} names {', '.join(named)}"


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(folder: str) -> dict[str, set[str]]:
    """Module -> the modules of ``folder`` it names in an import (every import, those inside
    functions and under ``TYPE_CHECKING`` too): ``from a import b`` names ``a.b`` when that is
    a module, else ``a``."""
    paths = sorted((PACKAGE / folder).rglob("*.py"))
    modules = {_module_of(path): path for path in paths}
    graph = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        named = set()
        for _, name in imported_modules(path.read_text(encoding="utf-8"), package):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                named.add(name)
        graph[module] = named
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first again at the end)."""
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> list[str] | None:
        if module in trail:
            return [*trail[trail.index(module) :], module]
        if module in done:
            return None
        for named in sorted(graph[module]):
            found = visit(named, [*trail, module])
            if found:
                return found
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module, [])
        if found:
            return found
    return None


def test_envs_modules_import_one_way():
    """DESIGN.md §2: a module's helpers never import the module that uses them, not even inside
    a function."""
    circle = _circle(_import_graph("envs"))
    assert circle is None, "envs/ imports in a circle: " + " -> ".join(circle)


def test_a_circle_is_found_however_deep_the_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circle(graph) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None
