"""The layers of ARCHITECTURE.md: no module imports a layer above its own. Read from the source
(``tests/support/import_graph.py``, every import, those inside functions included); nothing is
imported.

Lowest first: the shared leaves (errors, config, records, run_layout, compat…), what the
student sees (conversation), data/ (records on disk and training sets), envs/, what a stage
runs on (items, tiny models), policy/, rollout, rl/, teacher/, train/, evaluate, training with
its eval, iterate/, view/, cli/. A module may import its own layer and those below it, and
``NEVER`` names the lower layers a layer still must not reach: train/ is handed its
in-training eval and grpo's episodes, so it imports no env, policy or rollout code.
"""

from __future__ import annotations

import ast

import pytest

from tests.support.import_graph import ROOT, import_graph, modules, ours

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("leaves", (
        "agentcli", "agentcli.common", "agentcli.errors", "agentcli.config", "agentcli.resume",
        "agentcli.endpoints", "agentcli.serving", "agentcli.compat", "agentcli.run_layout",
        "agentcli.agentgym_prompts", "agentcli.records", "agentcli.quick_exit",
    )),
    ("conversation", ("agentcli.conversation", "agentcli.trained_view")),
    ("data", ("agentcli.data",)),
    ("envs", ("agentcli.envs",)),
    ("items", ("agentcli.items", "agentcli.models")),
    ("policy", ("agentcli.policy",)),
    ("rollout", ("agentcli.rollout",)),
    ("rl", ("agentcli.rl",)),
    ("teacher", ("agentcli.teacher",)),
    ("train", ("agentcli.train",)),
    ("evaluate", ("agentcli.evaluate", "agentcli.compare")),
    ("train_eval", ("agentcli.train_eval",)),
    ("iterate", ("agentcli.iterate",)),
    ("view", ("agentcli.view",)),
    ("cli", ("agentcli.cli",)),
)  # fmt: skip

# Lower modules a layer must still not import, though the order would allow them.
NEVER: dict[str, tuple[str, ...]] = {
    # handed its in-training eval and grpo's episodes by agentcli.train_eval
    "agentcli.train": (
        "agentcli.envs", "agentcli.policy", "agentcli.rollout", "agentcli.rl", "agentcli.teacher",
    ),
    "agentcli.teacher": ("agentcli.rollout",),
    # leaves that import nothing of ours
    "agentcli.common": (ROOT,),
    "agentcli.run_layout": (ROOT,),
    "agentcli.compat": (ROOT,),
    "agentcli.quick_exit": (ROOT,),
}  # fmt: skip


def within(module: str, prefix: str) -> bool:
    """``module`` is ``prefix`` or below it (``agentcli_x`` is not below ``agentcli``)."""
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the longest entry that is ``module`` or a package above it;
    the root's entry names the root package alone, so that each module is placed on purpose."""
    matches = [
        (len(entry), index)
        for index, (_, entries) in enumerate(LAYERS)
        for entry in entries
        if within(module, entry) and (entry != ROOT or module == ROOT)
    ]
    if not matches:
        raise KeyError(f"{module} is in no layer: add it to LAYERS")
    return max(matches)[1]


def breaks(importer: str, imported: str) -> bool:
    if layer_of(imported) > layer_of(importer):
        return True
    return any(
        within(importer, owner) and any(within(imported, never) for never in forbidden)
        for owner, forbidden in NEVER.items()
    )


def test_every_module_has_a_layer():
    for module in modules():
        layer_of(module)


@pytest.mark.parametrize("module", sorted(modules()))
def test_a_module_imports_only_its_layer_and_those_below(module: str):
    broken = [
        f"{target} (line {line}, layer {LAYERS[layer_of(target)][0]})"
        for target, line in import_graph()[module].items()
        if breaks(module, target)
    ]
    assert not broken, f"{module} (layer {LAYERS[layer_of(module)][0]}) imports {', '.join(broken)}"


def test_the_rules_read_as_meant():
    assert layer_of("agentcli.records") == 0
    assert layer_of("agentcli.data.build") == layer_of("agentcli.data")
    assert breaks("agentcli.data.build", "agentcli.iterate.config")
    assert not breaks("agentcli.data.build", "agentcli.run_layout")
    assert not breaks("agentcli.conversation", "agentcli.records")
    assert breaks("agentcli.conversation", "agentcli.data.jsonl")
    assert breaks("agentcli.teacher.stages", "agentcli.rollout")
    assert breaks("agentcli.train.run", "agentcli.envs.registry")
    assert not breaks("agentcli.train.run", "agentcli.data.jsonl")
    assert breaks("agentcli.common", "agentcli.errors")
    assert not breaks("agentcli.config", "agentcli.errors")
    for unplaced in ("agentcli_helpers", "agentcli.new_module"):  # a prefix is not a package
        with pytest.raises(KeyError):
            layer_of(unplaced)


def test_envs_spawn_no_cli_process():
    """A child started with ``python -m agentcli.cli.main …`` depends on the CLI as an import
    would: the launcher spawns ``agentcli.envs.wire.serve``."""
    envs = layer_of("agentcli.envs")
    for module, path in modules().items():
        if layer_of(module) != envs:
            continue
        named = [
            node.value
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith(ROOT + ".")
            and ours(node.value, modules()) is not None
            and layer_of(node.value) > envs
        ]
        assert not named, f"{module} names {', '.join(named)}"
