"""AdaptiveLimiter: a cap on calls in flight that halves on rate limits and recovers.

The unit tests drive the limiter with plain asyncio tasks; the end-to-end tests
count, on a fake server, how many model calls were ever in flight at once.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import pytest
from typer.testing import CliRunner

from deedbench.agents import AdaptiveLimiter, Providers
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.openai_agent import OpenAIAgent
from deedbench.cli.main import app
from deedbench.engine import AgentContext
from deedbench.records import GenerationParams, Message, RetryPolicy
from deedbench.testing import FakeModelServer, Reply, tac_player


async def peak_in_flight(limiter: AdaptiveLimiter, tasks: int, hold: float = 0.01) -> int:
    """Run `tasks` tasks that each hold a slot for a moment; the most ever inside at once."""
    inside = 0
    peak = 0

    async def one() -> None:
        nonlocal inside, peak
        async with limiter.slot():
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(hold)
            inside -= 1

    await asyncio.gather(*(one() for _ in range(tasks)))
    return peak


# --- the limiter alone ------------------------------------------------------------------------


@pytest.mark.parametrize("cap", [1, 3, 8])
def test_never_more_than_limit_in_flight(cap: int) -> None:
    limiter = AdaptiveLimiter(cap)
    peak = asyncio.run(peak_in_flight(limiter, tasks=25))
    assert peak == cap


def test_a_halved_limit_admits_fewer_tasks() -> None:
    async def go() -> tuple[int, int]:
        limiter = AdaptiveLimiter(8, cooldown=0)
        await limiter.rate_limited()
        halved = await peak_in_flight(limiter, tasks=20)
        await limiter.rate_limited()
        return halved, await peak_in_flight(limiter, tasks=20)

    assert asyncio.run(go()) == (4, 2)


def test_rate_limited_halves_down_to_one() -> None:
    async def go() -> list[tuple[int, int]]:
        limiter = AdaptiveLimiter(16, cooldown=0)
        seen = []
        for _ in range(6):
            await limiter.rate_limited()
            seen.append((limiter.limit, limiter.lowest))
        return seen

    assert asyncio.run(go()) == [(8, 8), (4, 4), (2, 2), (1, 1), (1, 1), (1, 1)]


def test_odd_limits_round_down_and_the_cap_is_at_least_one() -> None:
    async def go() -> int:
        limiter = AdaptiveLimiter(5)
        await limiter.rate_limited()
        return limiter.limit

    assert asyncio.run(go()) == 2
    assert AdaptiveLimiter(0).cap == 1
    assert AdaptiveLimiter(0).limit == 1


def test_rate_limits_within_the_cooldown_cut_once() -> None:
    # The 429s of calls already in flight report one overload: one cut, not one per call.
    async def go() -> tuple[int, int]:
        limiter = AdaptiveLimiter(16, cooldown=3600)
        for _ in range(5):
            await limiter.rate_limited()
        return limiter.limit, limiter.lowest

    assert asyncio.run(go()) == (8, 8)


def test_a_rate_limit_within_the_cooldown_still_resets_the_streak() -> None:
    async def go() -> list[int]:
        limiter = AdaptiveLimiter(4, recover_after=2, cooldown=3600)
        await limiter.rate_limited()  # 4 -> 2
        await limiter.succeeded()
        await limiter.rate_limited()  # no second cut, but the streak is lost
        limits = [limiter.limit]
        for _ in range(2):
            await limiter.succeeded()
            limits.append(limiter.limit)
        return limits

    assert asyncio.run(go()) == [2, 2, 3]


def test_success_streaks_give_back_one_slot_each_up_to_the_cap() -> None:
    async def go() -> list[int]:
        limiter = AdaptiveLimiter(4, recover_after=3, cooldown=0)
        await limiter.rate_limited()
        await limiter.rate_limited()  # 4 -> 2 -> 1
        limits = [limiter.limit]
        for _ in range(12):
            await limiter.succeeded()
            limits.append(limiter.limit)
        assert limiter.lowest == 1  # the low-water mark is kept
        return limits

    assert asyncio.run(go()) == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4]


def test_a_rate_limit_resets_the_success_streak() -> None:
    async def go() -> int:
        limiter = AdaptiveLimiter(4, recover_after=3, cooldown=0)
        await limiter.rate_limited()  # 2
        await limiter.succeeded()
        await limiter.succeeded()
        await limiter.rate_limited()  # 1, streak lost
        await limiter.succeeded()
        await limiter.succeeded()
        return limiter.limit

    assert asyncio.run(go()) == 1


def test_successes_at_the_cap_do_not_raise_it() -> None:
    async def go() -> int:
        limiter = AdaptiveLimiter(3, recover_after=1)
        for _ in range(5):
            await limiter.succeeded()
        return limiter.limit

    assert asyncio.run(go()) == 3


def test_a_recovered_slot_wakes_a_waiting_task() -> None:
    async def go() -> list[str]:
        limiter = AdaptiveLimiter(2, recover_after=1)
        await limiter.rate_limited()  # one slot
        events: list[str] = []
        release = asyncio.Event()
        entered = asyncio.Event()

        async def holder() -> None:
            async with limiter.slot():
                events.append("holder in")
                entered.set()
                await release.wait()
            events.append("holder out")

        async def waiter() -> None:
            async with limiter.slot():
                events.append("waiter in")

        holding = asyncio.create_task(holder())
        await entered.wait()
        waiting = asyncio.create_task(waiter())
        for _ in range(5):
            await asyncio.sleep(0)
        events.append("recover")
        await limiter.succeeded()  # limit 1 -> 2 while the holder still holds its slot
        await asyncio.wait_for(waiting, timeout=5)
        release.set()
        await holding
        return events

    assert asyncio.run(go()) == ["holder in", "recover", "waiter in", "holder out"]


def test_a_slot_is_released_when_the_body_raises() -> None:
    async def go() -> int:
        limiter = AdaptiveLimiter(1)
        for _ in range(3):
            with pytest.raises(RuntimeError):
                async with limiter.slot():
                    raise RuntimeError("boom")
        return await peak_in_flight(limiter, tasks=3)

    assert asyncio.run(go()) == 1


def test_providers_share_one_limiter_per_endpoint() -> None:
    providers = Providers(concurrency=5)
    a = providers.limiter("openai", "http://a")
    assert providers.limiter("openai", "http://a") is a
    assert providers.limiter("openai", "http://b") is not a
    assert providers.limiter("anthropic", "http://a") is not a
    assert a.cap == 5


# --- end to end -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "cls", "key_env"),
    [("openai", OpenAIAgent, "OPENAI_API_KEY"), ("anthropic", AnthropicAgent, "ANTHROPIC_API_KEY")],
)
def test_model_calls_in_flight_never_exceed_the_limiter(
    monkeypatch: pytest.MonkeyPatch,
    protocol: Literal["openai", "anthropic"],
    cls: Any,
    key_env: str,
) -> None:
    monkeypatch.setenv(key_env, "sk-test-limiter-0000")
    with FakeModelServer(protocol, lambda body: Reply(text="ok", delay=0.1)) as server:
        limiter = AdaptiveLimiter(3)
        agent = cls(
            "fake-model",
            base_url=server.base_url,
            params=GenerationParams(timeout=30),
            limiter=limiter,
            retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05),
        )
        messages = [Message(role="user", content="hi")]

        async def go() -> list[Message]:
            try:
                return await asyncio.gather(
                    *(
                        agent.next_turn(messages, [], AgentContext(f"s{n}", "base", 1, n))
                        for n in range(9)
                    )
                )
            finally:
                await agent.aclose()

        replies = asyncio.run(go())

    assert [r.content for r in replies] == ["ok"] * 9
    assert server.hits == 9
    assert 1 < server.max_in_flight <= 3


def test_cli_concurrency_bounds_calls_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-limiter-cli-0000")

    def slow_player(body: dict[str, Any]) -> Reply:
        reply = tac_player(body)
        reply.delay = 0.1
        return reply

    store = tmp_path / "runs.db"
    with FakeModelServer("openai", slow_player) as server:
        result = CliRunner().invoke(
            app,
            [
                "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
                "--limit", "3", "--epochs", "1", "--concurrency", "3",
                "--store", str(store), "--run-id", "bounded",
            ],
        )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert server.hits >= 6 * 3  # six episodes, three calls each at least
    assert server.max_in_flight <= 3
    with closing(sqlite3.connect(store)) as db:
        statuses = db.execute("SELECT status FROM episodes WHERE run_id = 'bounded'").fetchall()
    assert statuses == [("scored",)] * 6
