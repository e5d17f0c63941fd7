"""Messages, tool specs and token counts between deedbench and Inspect.

One deedbench message is one Inspect chat message, both ways, so a transcript keeps
what deedbench's scorers read (tool calls, their arguments, which results were
errors) through a round trip. Tool-call arguments are JSON text in deedbench and a
dict in Inspect; text that is not a JSON object travels as Inspect's `parse_error`.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
    ModelUsage,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolCallError, ToolInfo

from deedbench.records import Message, ToolCall, Usage

__all__ = [
    "from_inspect",
    "to_inspect",
    "tool_spec_from_inspect",
    "usage_from_inspect",
    "usage_to_inspect",
]

_ERROR_PREFIX = "Error: "  # how deedbench's tool errors begin, and how Inspect shows one


def to_inspect(message: Message) -> ChatMessage:
    """The Inspect chat message for a deedbench message."""
    if message.role == "system":
        return ChatMessageSystem(content=message.content)
    if message.role == "user":
        return ChatMessageUser(content=message.content)
    if message.role == "tool":
        error = ToolCallError("unknown", message.content.removeprefix(_ERROR_PREFIX))
        return ChatMessageTool(
            content=message.content,
            tool_call_id=message.tool_call_id,
            function=message.tool_name,
            error=error if message.error else None,
        )
    calls = [_call_to_inspect(call) for call in message.tool_calls]
    if message.reasoning:
        return ChatMessageAssistant(
            content=[
                ContentReasoning(reasoning=message.reasoning),
                ContentText(text=message.content),
            ],
            tool_calls=calls or None,
        )
    return ChatMessageAssistant(content=message.content, tool_calls=calls or None)


def from_inspect(message: ChatMessage, usage: Usage | None = None) -> Message:
    """The deedbench message for an Inspect chat message (`usage` for a model's turn)."""
    if isinstance(message, ChatMessageAssistant):
        return Message(
            role="assistant",
            content=message.text,
            tool_calls=[_call_from_inspect(call) for call in message.tool_calls or []],
            reasoning=_reasoning(message),
            usage=usage,
        )
    if isinstance(message, ChatMessageTool):
        shown = f"{_ERROR_PREFIX}{message.error.message}" if message.error else ""
        return Message(
            role="tool",
            content=message.text or shown,
            tool_call_id=message.tool_call_id,
            tool_name=message.function,
            error=message.error is not None,
        )
    return Message(role=message.role, content=message.text)


def tool_spec_from_inspect(info: ToolInfo) -> dict[str, Any]:
    """The OpenAI-style function spec deedbench gives agents (`Tool.spec`) for an Inspect tool."""
    return {
        "type": "function",
        "function": {
            "name": info.name,
            "description": info.description,
            "parameters": info.parameters.model_dump(exclude_none=True),
        },
    }


def usage_from_inspect(usage: ModelUsage, calls: int = 1) -> Usage:
    """deedbench counts cached prompt tokens inside `input_tokens`; Inspect apart from them."""
    read = usage.input_tokens_cache_read or 0
    written = usage.input_tokens_cache_write or 0
    return Usage(
        input_tokens=usage.input_tokens + read + written,
        output_tokens=usage.output_tokens,
        cached_input_tokens=read,
        calls=calls,
    )


def usage_to_inspect(usage: Usage) -> ModelUsage:
    uncached = usage.input_tokens - usage.cached_input_tokens
    return ModelUsage(
        input_tokens=uncached,
        output_tokens=usage.output_tokens,
        total_tokens=usage.input_tokens + usage.output_tokens,
        input_tokens_cache_read=usage.cached_input_tokens or None,
    )


def _call_to_inspect(call: ToolCall) -> InspectToolCall:
    arguments = call.args
    return InspectToolCall(
        id=call.id,
        function=call.name,
        arguments=arguments if arguments is not None else {},
        parse_error=None if arguments is not None else call.arguments,
    )


def _call_from_inspect(call: InspectToolCall) -> ToolCall:
    if call.parse_error is not None:  # keep it unparseable, so deedbench rejects it too
        return ToolCall(id=call.id, name=call.function, arguments=call.parse_error)
    return ToolCall.decoded(call.id, call.function, call.arguments)


def _reasoning(message: ChatMessageAssistant) -> str | None:
    if isinstance(message.content, str):
        return None
    texts = [
        block.summary if block.redacted else block.reasoning
        for block in message.content
        if isinstance(block, ContentReasoning)
    ]
    return "\n\n".join(t for t in texts if t) or None
