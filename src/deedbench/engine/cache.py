"""Cached model answers as they travel between the run's one writer and its workers.

The store holds every answer a run paid for (`RunStore.add_responses`), each row carrying
the episode it belongs to: sample, epoch and the episode's seed, which is derived from the
run seed, the sample, the condition and the epoch, and is part of the cache key anyway. So
the driver can select an episode's answers before the episode starts and send them along
with its job, and a worker never reads the store. In the worker the model agents see an
`EpisodeCache`: the answers of the episodes in flight there, and every new answer passed
on at once to whoever writes the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from deedbench.engine.episode import AgentContext

__all__ = ["CacheEntry", "EpisodeCache", "EpisodeIdentity", "identity_of"]

# What an answer belongs to, across runs: (sample, epoch, episode seed).
EpisodeIdentity = tuple[str, int, int]


@dataclass(frozen=True)
class CacheEntry:
    """One paid answer: its key, who gave it, the raw response (JSON text) and its episode."""

    key: str
    protocol: str
    model: str
    response: str
    sample_id: str
    epoch: int
    seed: int

    @property
    def identity(self) -> EpisodeIdentity:
        return (self.sample_id, self.epoch, self.seed)


def identity_of(context: AgentContext) -> EpisodeIdentity:
    """The episode an agent's call belongs to, as the cache names it."""
    return (context.sample_id, context.epoch, context.seed)


class EpisodeCache:
    """The response cache as the model agents of one process see it.

    `hold` an episode's shipped answers when it starts and `release` them when it ends, so
    memory follows the episodes in flight. `put` keeps a new answer for its episode and
    hands it to `send` at once (the driver commits it), so a kill loses as little paid work
    as possible. `lookup`, where the store is at hand (the in-process executor, audits),
    finds answers by key that were not shipped: rows written before answers carried their
    episode, or by another run meanwhile.
    """

    def __init__(
        self,
        send: Callable[[CacheEntry], None],
        lookup: Callable[[str], CacheEntry | None] | None = None,
    ) -> None:
        self._send = send
        self._lookup = lookup
        self._answers: dict[str, str] = {}
        self._keys: dict[EpisodeIdentity, set[str]] = {}
        self._holders: dict[EpisodeIdentity, int] = {}

    def hold(self, identity: EpisodeIdentity, entries: Iterable[CacheEntry]) -> None:
        self._holders[identity] = self._holders.get(identity, 0) + 1
        keys = self._keys.setdefault(identity, set())
        for entry in entries:
            self._answers[entry.key] = entry.response
            keys.add(entry.key)

    def release(self, identity: EpisodeIdentity) -> None:
        left = self._holders.pop(identity, 1) - 1
        if left > 0:
            self._holders[identity] = left
            return
        for key in self._keys.pop(identity, ()):
            self._answers.pop(key, None)

    def get(self, key: str) -> dict[str, Any] | None:
        text = self._answers.get(key)
        if text is None and self._lookup is not None:
            found = self._lookup(key)
            text = found.response if found is not None else None
        return json.loads(text) if text is not None else None

    def put(
        self,
        key: str,
        protocol: str,
        model: str,
        response: dict[str, Any],
        context: AgentContext,
    ) -> None:
        identity = identity_of(context)
        entry = CacheEntry(key, protocol, model, json.dumps(response), *identity)
        if identity in self._holders:
            self._answers[key] = entry.response
            self._keys[identity].add(key)
        self._send(entry)
