"""Training imports no env, rollout or evaluation code (DESIGN: data flows envs → rollout →
train → evaluate): not in any of its functions, nor through what the modules it imports
import when loaded; its in-training eval is handed in by ``agentcli.train_eval``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[3] / "agentcli"
FORBIDDEN = ("agentcli.envs", "agentcli.rollout", "agentcli.evaluate", "agentcli.policy")


def module_file(name: str) -> Path | None:
    path = PACKAGE.parent.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(path: Path, *, anywhere: bool) -> set[str]:
    """agentcli modules ``path`` imports (``from x import y``: x and x.y): ``anywhere`` in its
    code, or when it is loaded (module level, ``if TYPE_CHECKING`` aside)."""
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree) if anywhere else iter(tree.body)
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in names if name.split(".")[0] == "agentcli"}


def reachable_from(start: list[str]) -> dict[str, str]:
    """Every agentcli module the ``start`` modules import, directly or not → who imports it."""
    seen: dict[str, str] = {name: name for name in start}
    queue = list(start)
    while queue:
        name = queue.pop()
        path = module_file(name)
        if path is None:
            continue
        parts = name.split(".")
        parents = [".".join(parts[:end]) for end in range(2, len(parts))]  # packages' __init__
        anywhere = name.startswith("agentcli.train.")
        for imported in [*imported_modules(path, anywhere=anywhere), *parents]:
            if imported not in seen and module_file(imported) is not None:
                seen[imported] = name
                queue.append(imported)
    return seen


def test_training_reaches_no_env_rollout_or_evaluation_module():
    train = [f"agentcli.train.{path.stem}" for path in sorted((PACKAGE / "train").glob("*.py"))]
    reached = reachable_from(train)
    bad = {name: by for name, by in reached.items() if name.startswith(FORBIDDEN)}
    assert not bad, f"imported by training (module: importer): {bad}"
