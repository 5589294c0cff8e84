"""agentcli's import graph, read from the source with ``ast`` (nothing is imported).

Every import statement counts: at the top of a module, inside a function, under
``TYPE_CHECKING``. ``from a import b`` is an edge to the module ``a.b`` when there is one, else
to ``a`` (``b`` is a name defined there); relative imports are resolved against the importing
module's package. ``tests/unit/test_import_graph.py`` (no circles) and
``tests/unit/test_layering.py`` (no layer imports one above it) read it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "agentcli"
ROOT = PACKAGE.name


def module_name(path: Path) -> str:
    """``agentcli/envs/__init__.py`` → ``agentcli.envs``, ``agentcli/common.py`` →
    ``agentcli.common``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of agentcli, by dotted name (a package by its own name)."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_names(source: str, package: str) -> list[tuple[int, str]]:
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


def ours(name: str, known: Iterable[str]) -> str | None:
    """The module of ours that importing ``name`` reaches: the longest of ``known`` that is
    ``name`` or a package above it; None for anything not ours."""
    known = set(known)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def package_of(module: str) -> str:
    """The package a module's relative imports start from: a package's own name, else its
    parent's."""
    return module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]


@cache
def import_graph() -> dict[str, dict[str, int]]:
    """Module → {module of ours it imports: the first line that does}; no self-edges."""
    known = modules()
    graph: dict[str, dict[str, int]] = {}
    for module, path in known.items():
        edges: dict[str, int] = {}
        for line, name in imported_names(path.read_text(encoding="utf-8"), package_of(module)):
            target = ours(name, known)
            if target is not None and target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def circles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The sets of modules that import each other round a circle (strongly connected
    components of more than one module), sorted."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = lowest[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                lowest[module] = min(lowest[module], lowest[target])
            elif target in on_stack:
                lowest[module] = min(lowest[module], index[target])
        if lowest[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found, key=sorted)


def chain(graph: Mapping[str, Iterable[str]], circle: frozenset[str]) -> list[str]:
    """One way round ``circle``, from its first module back to it: the shortest."""
    start = min(circle)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for target in sorted(graph.get(module, ())):
                if target == start:
                    path = [module]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target in circle and target not in came_from:
                    came_from[target] = module
                    following.append(target)
        frontier = following
    raise ValueError(f"{sorted(circle)} is not a circle")
