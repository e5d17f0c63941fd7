"""Agents that worker processes import by spec (``python/engine._agents:NAME``): TAC's
random baseline slowed down, one whose credentials are refused, one that kills its
process. Workers find this module through the test run's sys.path."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from deedbench.benchmarks import load_benchmark
from deedbench.engine import AgentContext
from deedbench.errors import RunAborted
from deedbench.records import Message


class Slow:
    """TAC's random baseline, slowed so a run can be stopped midway."""

    def __init__(self) -> None:
        self.inner = load_benchmark("tac").baselines()["random"]()

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        await asyncio.sleep(0.05)
        return await self.inner.next_turn(messages, tools, context)


class Refused:
    """An agent whose provider rejects the credentials: the whole run must stop."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        raise RunAborted("401 from the provider: check OPENAI_API_KEY")


class Dies:
    """An agent that takes its worker process down on its third episode."""

    def __init__(self) -> None:
        self.episodes: set[str] = set()

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        self.episodes.add(context.sample_id)
        if len(self.episodes) >= 3:
            os._exit(7)
        return Message(role="assistant", content="nothing to book")


class Environment:
    """Says what DEEDBENCH_TEST_MARK is in the environment of the process it runs in."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        return Message(role="assistant", content=os.environ.get("DEEDBENCH_TEST_MARK", "unset"))
