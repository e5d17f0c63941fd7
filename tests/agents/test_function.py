"""FunctionAgent: one function, sync or async, returning a message or plain text."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from deedbench.agents import FunctionAgent
from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall

CONTEXT = AgentContext(sample_id="s1", condition="plain", epoch=2, seed=7)
MESSAGES = [Message(role="user", content="hello")]
TOOLS = [{"type": "function", "function": {"name": "t", "description": "", "parameters": {}}}]


def ask(agent: FunctionAgent) -> Message:
    return asyncio.run(agent.next_turn(MESSAGES, TOOLS, CONTEXT))


def test_sync_function_returning_text() -> None:
    seen: list[tuple[Any, ...]] = []

    def reply(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> str:
        seen.append((messages, tools, context))
        return f"hi from {context.sample_id}"

    message = ask(FunctionAgent(reply))
    assert message == Message(role="assistant", content="hi from s1")
    assert seen == [(MESSAGES, TOOLS, CONTEXT)]


def test_async_function_returning_text() -> None:
    async def reply(
        messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> str:
        await asyncio.sleep(0)
        return f"epoch {context.epoch}"

    assert ask(FunctionAgent(reply)) == Message(role="assistant", content="epoch 2")


def test_message_is_returned_unchanged() -> None:
    turn = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="t", arguments="{}")])

    def sync(*_: Any) -> Message:
        return turn

    async def async_(*_: Any) -> Message:
        return turn

    assert ask(FunctionAgent(sync)) is turn
    assert ask(FunctionAgent(async_)) is turn


def test_empty_string_is_an_empty_text_reply() -> None:
    message = ask(FunctionAgent(lambda *_: ""))
    assert message.role == "assistant"
    assert message.content == ""
    assert message.tool_calls == []
