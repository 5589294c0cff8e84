"""The disk store of alfworld's PDDL translations: what it keeps, what it refuses to trust."""

from __future__ import annotations

import os

from agentcli.envs.alfworld.translations import DiskStore, cache_dir


def test_a_translation_reads_back_as_written(tmp_path):
    store = DiskStore(tmp_path, version="1")
    key = store.key("(domain)", "(problem)", optimize=False)
    assert store.get(key) is None
    store.put(key, ("task", "sas text"))
    assert store.get(key) == ("task", "sas text")


def test_the_key_depends_on_every_input():
    store = DiskStore(cache_dir(), version="1")
    keys = {
        store.key("d", "p", optimize=False),
        store.key("d", "p", optimize=True),
        store.key("d", "q", optimize=False),
        store.key("e", "p", optimize=False),
        DiskStore(cache_dir(), version="2").key("d", "p", optimize=False),
        store.key("dp", "", optimize=False),
    }
    assert len(keys) == 6


def test_an_unreadable_file_is_a_miss_and_is_replaced(tmp_path):
    store = DiskStore(tmp_path, version="1")
    key = store.key("d", "p", optimize=False)
    (tmp_path / key).write_bytes(b"half a file")
    assert store.get(key) is None
    store.put(key, "translation")
    assert store.get(key) == "translation"


def test_pruning_keeps_the_translations_played_last(tmp_path):
    store = DiskStore(tmp_path, version="1")
    keys = [store.key("d", str(n), optimize=False) for n in range(5)]
    for age, key in enumerate(keys):
        store.put(key, key)
        os.utime(tmp_path / key, (1000 + age, 1000 + age))
    store.get(keys[0])  # played again: now the newest
    store.prune(kept=2)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([keys[0], keys[4]])


def test_the_store_lives_in_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "agentgym" / "alfworld-translations"
