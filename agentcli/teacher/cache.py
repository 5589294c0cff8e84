"""Replies on disk, keyed by a hash of the whole request, so a rerun pays for nothing twice.

The key covers everything that shapes the reply (model, messages, max_tokens, temperature,
response format), never the endpoint's key. Every reply is kept, usable or not: a rerun then
walks the same repair conversation without sending a request that was already answered. Only
a conversation that ended with no usable reply is forgotten, so that retrying its item asks
afresh instead of replaying the same failure. One JSONL line per reply, appended as it
arrives, so a killed run keeps what it was sent.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agentcli.data.jsonl import append_records, read_records, write_records
from agentcli.records import Record


class CachedReply(Record):
    key: str
    text: str
    prompt_tokens: int
    completion_tokens: int


def request_key(request: dict[str, Any]) -> str:
    """sha256 of the request as canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        replies = read_records(path, CachedReply) if path.exists() else []
        self._replies = {reply.key: reply for reply in replies}

    def get(self, key: str) -> CachedReply | None:
        return self._replies.get(key)

    def put(self, reply: CachedReply) -> None:
        append_records(self.path, [reply])
        self._replies[reply.key] = reply

    def forget(self, keys: set[str]) -> None:
        """Drop these replies (rewrites the file: rare, after an item's replies all failed)."""
        if keys & self._replies.keys():
            self._replies = {key: r for key, r in self._replies.items() if key not in keys}
            write_records(self.path, self._replies.values())

    def __len__(self) -> int:
        return len(self._replies)
