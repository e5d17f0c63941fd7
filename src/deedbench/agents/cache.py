"""The response cache: a model call already paid for is never paid again.

Keys cover everything that determines an answer (protocol, base URL, model, the
request as sent, and the episode's sample, epoch and seed, so different epochs are not
served one answer). Values are the provider's raw response, stored in the run store
with the episode they belong to, so that a run's driver can ship each episode's answers
to whichever process runs it (`deedbench.engine.EpisodeCache`, what agents see in a
run). `ResponseCache` is the same cache read and written straight through a store, for
work outside a run (audits, your own scripts): each answer is committed at once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Protocol

from deedbench.engine import AgentContext, RunStore
from deedbench.engine.cache import CacheEntry

__all__ = ["Cache", "ResponseCache", "cache_key"]


def cache_key(**parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Cache(Protocol):
    """What a model agent asks of a cache: an answer by key, and a new answer to keep
    (with the episode it was given in)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(
        self, key: str, protocol: str, model: str, response: dict[str, Any], context: AgentContext
    ) -> None: ...


class ResponseCache:
    """The cache in a store file of its own connection, for use outside a run."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._store = RunStore(self.path)

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self._store.response(key)
        return json.loads(entry.response) if entry is not None else None

    def put(
        self, key: str, protocol: str, model: str, response: dict[str, Any], context: AgentContext
    ) -> None:
        self._store.add_responses([CacheEntry.of(key, protocol, model, response, context)])

    def close(self) -> None:
        self._store.close()
