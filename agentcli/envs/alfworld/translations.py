"""fast-downward's PDDL translations of ALFWorld problems, kept in memory and on disk.

TextWorld translates a game's problem twice on every load (plain, and optimised for
replanning), ~0.45 s each on a generated kitchen: about 90 % of a reset. The second serves
only its planner, which our engines never run (the expert decides from facts): loads made
``without_replanning()`` give the plain translation in its place, so a new item translates
once. A LEAP run plays the same items again and again — the expert's privileged state, a
correction replaying the student's steps, the three evals of the same test items (iteration 0,
the control, iteration 1), each stage in its own server process — so translations are kept on
disk, where reading one back takes a few milliseconds, and the last few in memory.

The disk store lives under the user's cache (``$XDG_CACHE_HOME/agentgym/alfworld-translations``,
~50 KB a translation compressed), keyed by the domain and problem text and fast-downward's version,
written atomically, and pruned to its newest ``DISK_KEPT`` entries.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import pickle
import tempfile
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger("agentgym.alfworld")

MEMORY_KEPT = 32
DISK_KEPT = 20_000  # translations (one an item for sessions, two for a planner): ~1 GB at most
_PRUNE_EVERY = 500  # writes between two checks of the store's size
_loading = threading.local()  # .replanning: False while an engine that never replans loads


def cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "agentgym" / "alfworld-translations"


def install() -> None:
    """Make fast_downward's translator (which TextWorld calls by module attribute) cached;
    done once per process."""
    import fast_downward

    if getattr(fast_downward, "_agentgym_translations", False):
        return
    store = DiskStore(cache_dir(), version=importlib.metadata.version("fast_downward_textworld"))
    translate = fast_downward.pddl2sas

    @lru_cache(maxsize=MEMORY_KEPT)
    def cached(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
        key = store.key(domain, problem, optimize)
        translation = store.get(key)
        if translation is None:
            translation = translate(domain, problem, verbose=verbose, optimize=optimize)
            store.put(key, translation)
        return translation

    def pddl2sas(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
        # without TextWorld's planner, its copy of the task need not be the optimised one
        replanning = getattr(_loading, "replanning", True)
        return cached(domain, problem, verbose, optimize and replanning)

    fast_downward.pddl2sas = pddl2sas
    fast_downward._agentgym_translations = True


@contextmanager
def without_replanning() -> Iterator[None]:
    """Loads in this block are for engines that never ask TextWorld's planner for a plan
    (``policy_commands``): they translate each problem once."""
    _loading.replanning = False
    try:
        yield
    finally:
        _loading.replanning = True


class DiskStore:
    """Pickled, compressed translations, one file each; a file that cannot be read is a miss."""

    def __init__(self, folder: Path, version: str) -> None:
        self.folder = folder
        self.version = version
        self._writes = 0

    def key(self, domain: str, problem: str, optimize: bool) -> str:
        digest = hashlib.sha256()
        for part in (self.version, str(optimize), domain, problem):
            digest.update(part.encode())
            digest.update(b"\0")
        return digest.hexdigest()

    def get(self, key: str) -> Any:
        path = self.folder / key
        try:
            translation = pickle.loads(zlib.decompress(path.read_bytes()))
            os.utime(path)  # pruning keeps what is played
            return translation
        except FileNotFoundError:
            return None
        except (OSError, zlib.error, pickle.UnpicklingError, EOFError, AttributeError) as error:
            log.debug("unreadable translation %s (%s): translating again", key, error)
            return None

    def put(self, key: str, translation: Any) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            data = zlib.compress(pickle.dumps(translation, protocol=pickle.HIGHEST_PROTOCOL), 1)
            with tempfile.NamedTemporaryFile(dir=self.folder, delete=False) as out:
                out.write(data)
            os.replace(out.name, self.folder / key)
        except OSError as error:  # a full or read-only cache only costs speed
            log.warning("could not keep an alfworld translation in %s: %s", self.folder, error)
            return
        self._writes += 1
        if self._writes % _PRUNE_EVERY == 0:
            self.prune()

    def prune(self, kept: int = DISK_KEPT) -> None:
        """Delete all but the ``kept`` translations played last (another process may be
        pruning the same store: a file already gone is skipped)."""
        ages = []
        for entry in os.scandir(self.folder):
            try:
                ages.append((entry.stat().st_mtime, entry.path))
            except FileNotFoundError:
                continue
        for _, path in sorted(ages)[: max(0, len(ages) - kept)]:
            Path(path).unlink(missing_ok=True)
