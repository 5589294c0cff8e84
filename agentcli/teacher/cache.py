"""Replies on disk, keyed by a hash of the whole request, so a rerun pays for nothing twice.

The key covers everything that shapes the reply (model, messages, max_tokens, temperature,
response format), never the endpoint's key. Every reply is kept, usable or not: a rerun then
walks the same repair conversation without sending a request that was already answered.
One JSONL line per reply, appended as it arrives, so a killed run keeps what it was sent.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agentcli.data.jsonl import append_records, read_records
from agentcli.data.records import Record


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

    def __len__(self) -> int:
        return len(self._replies)
