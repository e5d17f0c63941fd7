"""Per-endpoint call limits across a Ray cluster: one `Limits` actor keeps the AIMD limiter
of each endpoint (protocol and base URL) for every worker and every run of the driver, and
grants call slots one at a time; in a worker, `RemoteLimits` stands in for the limits a
model agent draws on (`agents.limiter.CallLimits`). `ray.py` says why a central grant.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from deedbench.agents.limiter import AdaptiveLimiter
from deedbench.errors import ExecutorError

__all__ = ["Limits", "RemoteLimiter", "RemoteLimits"]


class Limits:
    """A Ray actor: one AIMD limiter per endpoint for the whole cluster, its slots granted
    one call at a time and recorded per worker incarnation (`holder`)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self.held: dict[str, dict[str, int]] = {}
        self.gone: set[str] = set()

    def _limiter(self, endpoint: str) -> AdaptiveLimiter:
        if endpoint not in self.limiters:
            self.limiters[endpoint] = AdaptiveLimiter(self.cap)
        return self.limiters[endpoint]

    async def acquire(self, endpoint: str, holder: str) -> bool:
        """Wait for a slot; False for a worker already declared dead (it gets none)."""
        if holder in self.gone:
            return False
        limiter = self._limiter(endpoint)
        await limiter.acquire()
        if holder in self.gone:  # it died while waiting
            await limiter.release()
            return False
        counts = self.held.setdefault(holder, {})
        counts[endpoint] = counts.get(endpoint, 0) + 1
        return True

    async def release(self, endpoint: str, holder: str, successes: int) -> None:
        counts = self.held.get(holder, {})
        limiter = self._limiter(endpoint)
        if counts.get(endpoint, 0) > 0:
            counts[endpoint] -= 1
            await limiter.release()
        for _ in range(successes):
            await limiter.succeeded()

    async def rate_limited(self, endpoint: str) -> None:
        await self._limiter(endpoint).rate_limited()

    async def forget(self, holder: str) -> None:
        """A worker died: give back every slot it held."""
        self.gone.add(holder)
        for endpoint, count in self.held.pop(holder, {}).items():
            for _ in range(count):
                await self._limiter(endpoint).release()

    def state(self) -> dict[str, dict[str, int]]:
        """Per endpoint: the cap, the current allowance, its lowest, the calls in flight."""
        return {
            endpoint: {
                "cap": limiter.cap,
                "limit": limiter.limit,
                "lowest": limiter.lowest,
                "in_flight": limiter.in_flight,
            }
            for endpoint, limiter in self.limiters.items()
        }


class RemoteLimiter:
    """What a model agent in a worker sees as its endpoint's limiter: slots from `Limits`.

    A success is counted here and sent with the next slot given back (one message less
    per call); a 429 is sent at once.
    """

    def __init__(self, limits: Any, endpoint: str, holder: str) -> None:
        self._limits = limits
        self._endpoint = endpoint
        self._holder = holder
        self._successes = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if not await self._limits.acquire.remote(self._endpoint, self._holder):
            raise ExecutorError("this Ray worker was replaced; its episodes run elsewhere")
        try:
            yield
        finally:
            successes, self._successes = self._successes, 0
            self._limits.release.remote(self._endpoint, self._holder, successes)

    async def rate_limited(self) -> None:
        self._limits.rate_limited.remote(self._endpoint)

    async def succeeded(self) -> None:
        self._successes += 1


@dataclass
class RemoteLimits:
    """A worker's `CallLimits`: a `RemoteLimiter` per endpoint."""

    limits: Any
    holder: str
    limiters: dict[str, RemoteLimiter] = field(default_factory=dict)

    def limiter(self, protocol: str, base_url: str | None) -> RemoteLimiter:
        endpoint = _endpoint(protocol, base_url)
        if endpoint not in self.limiters:
            self.limiters[endpoint] = RemoteLimiter(self.limits, endpoint, self.holder)
        return self.limiters[endpoint]


def _endpoint(protocol: str, base_url: str | None) -> str:
    return f"{protocol} {base_url or ''}"
