"""Typed records for one conversation: messages, tool calls and token usage.

Tool-call arguments are kept as the raw text the agent sent, so a transcript shows
exactly what a model produced, even when it was not valid JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["AnsweredCall", "Message", "Role", "ToolCall", "Usage", "answered_calls"]

Role = Literal["system", "user", "assistant", "tool"]


class Usage(BaseModel):
    """Tokens of model calls: one call on a message, a sum on a record.

    `cached_input_tokens` are input tokens the provider served from its prompt
    cache; `cache_hits` counts calls answered by deedbench's response cache,
    which cost nothing this time; `retries` counts attempts that failed for a
    transient reason (a timeout, 429, 5xx, a dropped connection) and were sent again
    before the answer came, and `timeouts` those of them that timed out (a server
    that queues calls past the timeout keeps computing the ones given up on).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    timeouts: int = 0
    retries: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            timeouts=self.timeouts + other.timeouts,
            retries=self.retries + other.retries,
        )


class ToolCall(BaseModel):
    """One tool call as the agent made it; `arguments` is the raw JSON text.

    `args` is the same arguments decoded, once per call however many readers ask (the
    toolbox, scorers, procedure rules, simulated customers, adapters): a dict, or None
    when the text is not a JSON object. Readers share it and must not change it.
    """

    id: str
    name: str
    arguments: str = "{}"

    @classmethod
    def decoded(cls, id: str, name: str, args: dict[str, Any]) -> ToolCall:
        """A call whose arguments arrived decoded (Anthropic's `input`): the text is made
        from them, and they serve as `args` without being decoded again."""
        call = cls(id=id, name=name, arguments=json.dumps(args))
        call.__dict__[_DECODED] = (call.arguments, args)
        return call

    @property
    def args(self) -> dict[str, Any] | None:
        """The arguments as a dict, or None when they are not a JSON object."""
        cached = self.__dict__.get(_DECODED)
        if cached is None or cached[0] is not self.arguments:  # decoded from this very text
            cached = (self.arguments, _decode(self.arguments))
            self.__dict__[_DECODED] = cached
        decoded: dict[str, Any] | None = cached[1]
        return decoded


# Where a ToolCall keeps its decoded arguments: beside its fields, never one of them (so
# neither dumps, comparisons nor copies see it; a copy with other text decodes anew).
_DECODED = "_decoded_arguments"


def _decode(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "{}")
    except (json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


class Message(BaseModel):
    """One turn of a conversation.

    Assistant messages may carry tool calls and reasoning; tool messages answer
    one call (`tool_call_id`) and say whether the call failed (`error`).
    `dropped_tool_calls` are calls the agent made in this turn that the benchmark's
    rules did not run (τ-bench runs only a turn's first call): kept for the record
    and the procedure rules, never sent back to the agent.
    `provider_content` keeps a provider's own blocks where they must be sent back
    verbatim (Anthropic's signed thinking blocks). `truncated_by` says when the provider
    cut a reply short: at its output token limit (`length`) or by its content filter.

    Where the user has tools of their own (τ²'s dual control), a user message may carry
    tool calls, and the tool messages answering them say ``requestor="user"``; the agent
    is never shown either (`visible_to_agent`).

    `content_null` marks an assistant turn whose provider sent its text as JSON null
    rather than a string (a refusal, or nothing at all): `content` holds what can be
    shown, but τ-bench's loop hands that None on as a reply, and fails on it.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    dropped_tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    error: bool = False
    reasoning: str | None = None
    usage: Usage | None = None
    provider_content: list[dict[str, Any]] | None = None
    truncated_by: Literal["length", "content_filter"] | None = None
    requestor: Literal["user"] | None = Field(default=None, exclude_if=lambda v: v is None)
    content_null: bool = Field(default=False, exclude_if=lambda v: not v)

    @property
    def visible_to_agent(self) -> bool:
        """False for the user's own tool calls and their results, which happen on the user's
        side (their phone) where the agent cannot see."""
        if self.role == "user":
            return not self.tool_calls
        return not (self.role == "tool" and self.requestor == "user")


@dataclass(slots=True)
class AnsweredCall:
    """A tool call of a transcript, where it was made, and the result that answered it
    (None when none did)."""

    index: int  # of the message that made the call
    position: int  # among that message's calls
    call: ToolCall
    result: Message | None = None

    @property
    def failed(self) -> bool:
        """Answered with an error. A call left unanswered (a transcript cut short) did
        not fail: every reader treats it as done."""
        return self.result is not None and self.result.error


def answered_calls(messages: Sequence[Message]) -> list[AnsweredCall]:
    """Every tool call of the transcript in order, the agent's and the user's, each with
    its result. A result answers the earliest call of its side with its id that is still
    unanswered, not every call with that id: recorded transcripts reuse call ids (49 of
    τ-bench's own 200 gpt-4o airline records do), and an id is no key."""
    found: list[AnsweredCall] = []
    waiting: dict[tuple[bool, str], list[int]] = {}
    for index, message in enumerate(messages):
        if message.tool_calls and message.role in ("assistant", "user"):
            side = message.role == "user"
            for position, call in enumerate(message.tool_calls):
                waiting.setdefault((side, call.id), []).append(len(found))
                found.append(AnsweredCall(index=index, position=position, call=call))
        elif message.role == "tool":
            queue = waiting.get((message.requestor == "user", message.tool_call_id or ""))
            if queue:
                found[queue.pop(0)].result = message
    return found
