"""Agents over Anthropic's Messages API."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from deedbench.agents.model import ModelAgent
from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall, Usage

__all__ = ["AnthropicAgent"]

_DEFAULT_MAX_TOKENS = 4096
_TOOL_CHOICE: dict[str, dict[str, str]] = {
    "auto": {"type": "auto"},
    "required": {"type": "any"},
    "none": {"type": "none"},
}
# Stop reasons that cut a reply short (a refusal is the model's own, read as its words).
_TRUNCATED_BY: dict[Any, Literal["length", "content_filter"]] = {
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}


class AnthropicAgent(ModelAgent):
    protocol = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        import anthropic

        self.sdk = anthropic
        self.client_class = anthropic.AsyncAnthropic
        self._key = self.api_key() or ""  # required: a missing key raised RunAborted

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> dict[str, Any]:
        p = self.params
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": p.max_tokens or _DEFAULT_MAX_TOKENS,
            "messages": _to_anthropic([m for m in messages if m.role != "system"]),
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [
                {
                    "name": t["function"]["name"],
                    "description": t["function"].get("description", ""),
                    "input_schema": t["function"]["parameters"],
                }
                for t in tools
            ]
            choice = _TOOL_CHOICE.get(context.tool_choice or "")
            if choice is not None:  # OpenAI's words in Anthropic's form, as LiteLLM maps them
                request["tool_choice"] = choice
        optional = {"temperature": p.temperature, "top_p": p.top_p}
        request.update({k: v for k, v in optional.items() if v is not None})
        if p.reasoning_effort is not None:
            request["output_config"] = {"effort": p.reasoning_effort}
        request.update(p.extra)
        return request

    async def send(self, request: dict[str, Any]) -> dict[str, Any]:
        return await self.post_json("/v1/messages", request)

    def unusable(self, raw: dict[str, Any]) -> str | None:
        # An empty list is a real (empty) turn; a missing one is no turn at all.
        return None if isinstance(raw.get("content"), list) else "response is not a message"

    def parse_response(self, raw: dict[str, Any]) -> Message:
        blocks = [b for b in raw.get("content") or [] if isinstance(b, dict)]
        texts, thoughts, calls = [], [], []
        for n, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind == "thinking":
                thoughts.append(block.get("thinking") or "")
            elif kind == "tool_use":
                call_id, name = block.get("id") or f"toolu_{n}", block.get("name") or ""
                arguments = block.get("input", {})
                if isinstance(arguments, dict):  # kept decoded: sent back as it came
                    calls.append(ToolCall.decoded(call_id, name, arguments))
                else:
                    calls.append(ToolCall(id=call_id, name=name, arguments=json.dumps(arguments)))
        content = "".join(texts)
        if raw.get("stop_reason") == "refusal" and not content:
            content = "[refusal]"
        usage = raw.get("usage") or {}
        keep_blocks = any(b.get("type") in ("thinking", "redacted_thinking") for b in blocks)
        return Message(
            role="assistant",
            content=content,
            tool_calls=calls,
            reasoning="\n".join(thoughts) or None,
            provider_content=blocks if keep_blocks else None,
            truncated_by=_TRUNCATED_BY.get(raw.get("stop_reason")),
            usage=Usage(
                # Anthropic counts cache reads and writes apart from `input_tokens`;
                # deedbench's input_tokens is every prompt token, cached ones included.
                input_tokens=(usage.get("input_tokens") or 0)
                + (usage.get("cache_read_input_tokens") or 0)
                + (usage.get("cache_creation_input_tokens") or 0),
                output_tokens=usage.get("output_tokens") or 0,
                cached_input_tokens=usage.get("cache_read_input_tokens") or 0,
                calls=1,
            ),
        )


def _to_anthropic(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Alternating user/assistant turns; tool results travel in the next user turn."""
    out: list[dict[str, Any]] = []

    def add(role: str, block: dict[str, Any]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].append(block)
        else:
            out.append({"role": role, "content": [block]})

    for m in messages:
        if m.role == "tool":
            add(
                "user",
                {
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id,
                    "content": m.content,
                    "is_error": m.error,
                },
            )
        elif m.role == "user":
            add("user", {"type": "text", "text": m.content})
        elif m.provider_content is not None:
            for block in m.provider_content:
                add("assistant", block)
        else:
            if m.content:
                add("assistant", {"type": "text", "text": m.content})
            for call in m.tool_calls:
                add(
                    "assistant",
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": call.args or {},
                    },
                )
            if not m.content and not m.tool_calls:
                add("assistant", {"type": "text", "text": "(no reply)"})
    return out
