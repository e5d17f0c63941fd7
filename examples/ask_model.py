"""A TAC agent (or any benchmark's) that asks a model, through the official openai SDK,
against any OpenAI-compatible URL: OpenAI, vLLM, Ollama, llama.cpp, a proxy.

    pip install openai
    export OPENAI_BASE_URL=http://localhost:8000/v1   # the SDK's own variables
    export OPENAI_API_KEY=...                         # any text for a server without keys
    export ASK_MODEL=Qwen/Qwen2.5-7B-Instruct
    deedbench run tac --agent python/ask_model:agent

deedbench's own `openai-compatible/MODEL` agent does this with retries, a rate limiter, a
response cache and token counts; this file shows the agent API in full (docs/agents.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from openai import AsyncOpenAI

from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall


class AskModel:
    """Sends the conversation and the tool specs to the model; returns its turn."""

    def __init__(self) -> None:
        self.model = os.environ.get("ASK_MODEL", "gpt-4o-mini")
        self.client: AsyncOpenAI | None = None  # made on first use, inside the run's loop

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        if self.client is None:
            self.client = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY
        response = await self.client.chat.completions.create(
            model=self.model,
            messages=[_to_openai(m) for m in messages],  # type: ignore[misc]
            tools=list(tools),  # type: ignore[arg-type]  # already in OpenAI's shape
            seed=context.seed % 2**31,  # the episode's seed: a rerun asks the same
        )
        reply = response.choices[0].message
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments)
            for c in reply.tool_calls or []
            if c.type == "function"
        ]
        return Message(role="assistant", content=reply.content or "", tool_calls=calls)


def _to_openai(message: Message) -> dict[str, Any]:
    """One deedbench message as a chat-completions message."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


agent = AskModel()  # python/ask_model:agent names this object; python/ask_model:AskModel a new one
