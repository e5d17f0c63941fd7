"""Agents over the OpenAI chat-completions protocol: OpenAI itself and every
compatible server (vLLM, SGLang, Ollama, llama.cpp, DeepSeek, Together,
OpenRouter, Gemini's OpenAI endpoint, LiteLLM)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from deedbench.agents.model import ModelAgent
from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall, Usage

__all__ = ["OpenAIAgent", "OpenAICompatibleAgent"]

_TRUNCATED_BY: dict[Any, Literal["length", "content_filter"]] = {
    "length": "length",
    "content_filter": "content_filter",
}


class OpenAIAgent(ModelAgent):
    protocol = "openai"
    default_key_env = "OPENAI_API_KEY"
    max_tokens_field = "max_completion_tokens"
    key_required = True

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        import openai

        self.sdk = openai
        self.client_class = openai.AsyncOpenAI
        self._key = self.api_key(required=self.key_required) or "not-needed"

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> dict[str, Any]:
        p = self.params
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [_to_openai(m) for m in messages],
        }
        if tools:
            request["tools"] = list(tools)
            if context.tool_choice is not None:  # τ²'s "auto", its solo agent's "required"
                request["tool_choice"] = context.tool_choice
        optional = {
            "temperature": p.temperature,
            "top_p": p.top_p,
            self.max_tokens_field: p.max_tokens,
            "reasoning_effort": p.reasoning_effort,
            "seed": p.seed if p.seed is not None else context.seed % 2**31,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        request.update(p.extra)
        return request

    async def send(self, request: dict[str, Any]) -> dict[str, Any]:
        return await self.post_json("/chat/completions", request)

    def unusable(self, raw: dict[str, Any]) -> str | None:
        choices = raw.get("choices")
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
            return "response is not a chat completion (no choices)"
        if not isinstance(choices[0].get("message"), dict):
            return "response has no assistant message"
        return None

    def parse_response(self, raw: dict[str, Any]) -> Message:
        choice = raw["choices"][0]
        message = choice["message"]
        content = message.get("content") or ""
        if not content and message.get("refusal"):
            content = f"[refusal] {message['refusal']}"
        calls = []
        for n, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            arguments = function.get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments) if arguments is not None else ""
            calls.append(
                ToolCall(
                    id=call.get("id") or f"call_{n}",
                    name=function.get("name") or "",
                    arguments=arguments,
                )
            )
        usage = raw.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return Message(
            role="assistant",
            content=content,
            tool_calls=calls,
            content_null=message.get("content") is None and not calls,
            reasoning=message.get("reasoning_content") or message.get("reasoning"),
            truncated_by=_TRUNCATED_BY.get(choice.get("finish_reason")),
            usage=Usage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
                cached_input_tokens=details.get("cached_tokens") or 0,
                calls=1,
            ),
        )


class OpenAICompatibleAgent(OpenAIAgent):
    """Any server speaking the protocol at ``--base-url``; a key is optional."""

    protocol = "openai-compatible"
    default_key_env = "OPENAI_COMPATIBLE_API_KEY"
    max_tokens_field = "max_tokens"
    key_required = False


def _to_openai(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant":
        # Content is always a string, "" beside tool calls: OpenAI, vLLM, llama.cpp's server
        # and Ollama take it, while llama-cpp-python's server answers null with HTTP 500.
        out: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
        return out
    return {"role": message.role, "content": message.content}
