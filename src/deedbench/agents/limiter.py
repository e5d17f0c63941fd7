"""Calls in flight per provider, shrinking on rate limits and recovering after.

Additive increase, multiplicative decrease: a 429 halves the allowance (never
below one), at most once per `cooldown` seconds, since the 429s of calls already
in flight report the same overload; every `recover_after` successes in a row
give one slot back, up to the cap the user set with ``--concurrency``.

A model agent sees a `Limiter`: the `AdaptiveLimiter` of its endpoint, or a stand-in
for one kept elsewhere (a study's runs on a Ray cluster share one per endpoint, see
`deedbench.executors.ray`). `CallLimits` hands out the limiter of each endpoint;
`SharedLimits` is the in-process one, shared by every run given it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

__all__ = ["AdaptiveLimiter", "CallLimits", "Limiter", "SharedLimits"]


class Limiter(Protocol):
    """What a model agent asks of a limiter: a slot per call, and how the call went."""

    def slot(self) -> AbstractAsyncContextManager[None]: ...

    async def rate_limited(self) -> None: ...

    async def succeeded(self) -> None: ...


class CallLimits(Protocol):
    """The limiter of each endpoint (protocol and base URL) for the agents built with it."""

    def limiter(self, protocol: str, base_url: str | None) -> Limiter: ...


class AdaptiveLimiter:
    def __init__(self, cap: int, recover_after: int = 5, cooldown: float = 1.0) -> None:
        self.cap = max(1, cap)
        self.limit = self.cap
        self.lowest = self.cap
        self.recover_after = recover_after
        self.cooldown = cooldown
        self._in_flight = 0
        self._streak = 0
        self._last_cut = -float("inf")
        self._changed = asyncio.Condition()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            await self.release()

    async def acquire(self) -> None:
        """Wait for a free slot and take it (`slot` is the usual way; this is for a
        limiter whose callers take and give back slots in separate messages)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._in_flight < self.limit)
            self._in_flight += 1

    async def release(self) -> None:
        """Give back a slot `acquire` took."""
        async with self._changed:
            self._in_flight -= 1
            self._changed.notify_all()

    async def rate_limited(self) -> None:
        async with self._changed:
            self._streak = 0
            now = time.monotonic()
            if now - self._last_cut < self.cooldown:
                return
            self._last_cut = now
            self.limit = max(1, self.limit // 2)
            self.lowest = min(self.lowest, self.limit)

    async def succeeded(self) -> None:
        async with self._changed:
            self._streak += 1
            if self._streak >= self.recover_after and self.limit < self.cap:
                self.limit += 1
                self._streak = 0
                self._changed.notify_all()


class SharedLimits:
    """One `AdaptiveLimiter` per endpoint, capped at `cap` calls in flight, for every
    agent built with it: one run's agents (its `Providers`), or all the runs of a study
    in this process, so a rate limit one run meets slows the others at that endpoint."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.limiters: dict[tuple[str, str | None], AdaptiveLimiter] = {}

    def limiter(self, protocol: str, base_url: str | None) -> AdaptiveLimiter:
        key = (protocol, base_url)
        if key not in self.limiters:
            self.limiters[key] = AdaptiveLimiter(self.cap)
        return self.limiters[key]
