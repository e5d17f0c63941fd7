"""Agents the Ray tests run by spec (``python/executors._agents:NAME``); the executor
ships this package to the workers, which do not have the tests on their path."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from deedbench.benchmarks import load_benchmark
from deedbench.engine import AgentContext
from deedbench.records import Message

DOOMED = load_benchmark("tac").samples()[0].id


class KillsOnDoomed:
    """Takes its worker process down whenever it plays the first TAC sample."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        if context.sample_id == DOOMED:
            os._exit(7)
        return Message(role="assistant", content="nothing to book")
