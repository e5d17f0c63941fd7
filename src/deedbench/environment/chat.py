"""Observations and actions in the chat format trainers speak, and the typed line a person
types.

An observation's messages are what a model in the seat is sent, as OpenAI's chat format
has them (`chat_message`: the role, the text, an assistant's tool calls, a tool result's
call id). An action is an assistant message, given as a `Message`, as a chat-format
dict (``{"content": ..., "tool_calls": [{"id", "function": {"name", "arguments"}}]}``;
``{"name": ..., "arguments": {...}}`` for a single call), or as plain text (`action`).
A person types a line: ``name {json}`` calls the tool `name`, anything else is text
(`typed`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from deedbench.errors import UsageError
from deedbench.records import Message, ToolCall

__all__ = ["action", "chat_message", "typed"]


def chat_message(message: Message) -> dict[str, Any]:
    """One message as OpenAI's chat format writes it."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


def action(value: Message | Mapping[str, Any] | str, prefix: str = "call") -> Message:
    """The assistant message an action stands for; calls without an id get
    ``{prefix}_{n}``. UsageError naming what is wrong with a dict that is no message."""
    if isinstance(value, Message):
        if value.role == "assistant":
            return value
        return value.model_copy(update={"role": "assistant"})
    if isinstance(value, str):
        return Message(role="assistant", content=value)
    if not isinstance(value, Mapping):
        raise UsageError(f"an action is a Message, a dict or a str, not {type(value).__name__}")
    if "name" in value and "tool_calls" not in value:  # one call, written flat
        value = {"content": "", "tool_calls": [value]}
    content = value.get("content") or ""
    if not isinstance(content, str):
        raise UsageError("an action's content is text")
    calls = value.get("tool_calls") or []
    if not isinstance(calls, list):
        raise UsageError("an action's tool_calls is a list")
    made = [_call(call, f"{prefix}_{n}") for n, call in enumerate(calls)]
    return Message(role="assistant", content=content, tool_calls=made)


def _call(call: Any, default_id: str) -> ToolCall:
    if not isinstance(call, Mapping):
        raise UsageError("each tool call is a dict with a name and arguments")
    function = call.get("function", call)
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or not name:
        raise UsageError("each tool call names its tool (name)")
    arguments = function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return ToolCall(id=str(call.get("id") or default_id), name=name, arguments=arguments)


def typed(line: str, tools: Collection[str], call_id: str) -> Message:
    """What a person typed: ``name {json}`` (or a tool's name alone) calls that tool, with
    the text after the name as its arguments whatever it is (a bad one is the tool's
    error, as a model's would be); anything else is a message of text."""
    text = line.strip()
    name, _, rest = text.partition(" ")
    if name in tools:
        arguments = rest.strip() or "{}"
        call = ToolCall(id=call_id, name=name, arguments=arguments)
        return Message(role="assistant", content="", tool_calls=[call])
    return Message(role="assistant", content=text)
