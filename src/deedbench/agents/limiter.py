"""Calls in flight per provider, shrinking on rate limits and recovering after.

Additive increase, multiplicative decrease: a 429 halves the allowance (never
below one), at most once per `cooldown` seconds, since the 429s of calls already
in flight report the same overload; every `recover_after` successes in a row
give one slot back, up to the cap the user set with ``--concurrency``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["AdaptiveLimiter"]


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

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: self._in_flight < self.limit)
            self._in_flight += 1
        try:
            yield
        finally:
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
