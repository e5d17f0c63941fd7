"""A function-backed agent: the one-function seam that tests and scripts use."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from deedbench.engine import AgentContext
from deedbench.records import Message

__all__ = ["FunctionAgent"]

_TurnFunction = Callable[
    [Sequence[Message], Sequence[dict[str, Any]], AgentContext],
    Message | str | Awaitable[Message | str],
]


class FunctionAgent:
    """Wraps `fn(messages, tools, context)`; a plain string becomes a text reply."""

    def __init__(self, fn: _TurnFunction) -> None:
        self.fn = fn

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        result = self.fn(messages, tools, context)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, str):
            return Message(role="assistant", content=result)
        return result
