"""Cached model answers as they travel between the run's one writer and its workers.

The store holds every answer a run paid for (`RunStore.add_responses`), each row carrying
the episode it was given in: the sample, epoch and seed of the asking agent's context. The
episode's seed is what selects them: it is derived from the run seed, the sample, the
condition and the epoch (so it names the episode across runs), it is part of every cache
key, and it is in every context a benchmark builds for an episode, including its
model-played user's (whose sample and epoch are its own: retail's user asks as
"<sample>:user", epoch 0). So the driver can select an episode's answers before the
episode starts and send them with its job, and a worker never reads the store. In the
worker the model agents see an `EpisodeCache`: the answers of the episodes in flight there,
and every new answer passed on at once to whoever writes the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from deedbench.engine.agent import AgentContext
from deedbench.secrets import redact

__all__ = ["CacheEntry", "EpisodeCache"]


@dataclass(frozen=True)
class CacheEntry:
    """One paid answer: its key, who gave it, the raw response (JSON text), and the sample,
    epoch and episode seed of the context it was asked in."""

    key: str
    protocol: str
    model: str
    response: str
    sample_id: str
    epoch: int
    seed: int

    @classmethod
    def of(
        cls, key: str, protocol: str, model: str, response: dict[str, Any], context: AgentContext
    ) -> CacheEntry:
        text = redact(json.dumps(response))  # a last guard: no key is ever cached
        return cls(key, protocol, model, text, context.sample_id, context.epoch, context.seed)


class EpisodeCache:
    """The response cache as the model agents of one process see it.

    `hold` an episode's shipped answers (by its seed) when it starts and `release` them
    when it ends, so memory follows the episodes in flight. `put` keeps a new answer for
    its episode and hands it to `send` at once (the driver commits it), so a kill loses as
    little paid work as possible. `lookup`, where the store is at hand (the in-process
    executor, audits), finds answers by key that were not shipped: rows written before
    answers carried their episode, or by another run meanwhile.
    """

    def __init__(
        self,
        send: Callable[[CacheEntry], None],
        lookup: Callable[[str], CacheEntry | None] | None = None,
    ) -> None:
        self._send = send
        self._lookup = lookup
        self._answers: dict[str, str] = {}
        self._keys: dict[int, set[str]] = {}
        self._holders: dict[int, int] = {}

    def hold(self, seed: int, entries: Iterable[CacheEntry]) -> None:
        self._holders[seed] = self._holders.get(seed, 0) + 1
        keys = self._keys.setdefault(seed, set())
        for entry in entries:
            self._answers[entry.key] = entry.response
            keys.add(entry.key)

    def release(self, seed: int) -> None:
        left = self._holders.pop(seed, 1) - 1
        if left > 0:
            self._holders[seed] = left
            return
        for key in self._keys.pop(seed, ()):
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
        entry = CacheEntry.of(key, protocol, model, response, context)
        if context.seed in self._holders:
            self._answers[key] = entry.response
            self._keys[context.seed].add(key)
        self._send(entry)
