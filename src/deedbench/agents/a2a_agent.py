"""A remote agent that speaks the A2A protocol (``--agent a2a/URL``), through ``a2a-sdk``.

deedbench plays the host: each episode is one A2A context, each turn of the agent one
message sent to it. The first message of an episode carries a data part
``{"deedbench": {"system": ..., "tools": [...]}}`` (the system prompt and the tool specs,
as a model would be sent them); every message carries what the agent has not seen yet:
the user's words as text parts, tool results as a data part ``{"tool_results": [{"id",
"name", "content", "error"}]}``. The agent answers with a message, or a task whose
status message and artifacts hold the parts: text parts are its words to the user, a
data part ``{"tool_calls": [{"id", "name", "arguments"}]}`` asks deedbench to run tools
(``arguments`` a JSON object, or its text). deedbench runs them and sends the results.

The agent card is read once, on the first turn; an agent that cannot be reached then
stops the run (`RunAborted`), while a failed turn later is an infrastructure error (the
episode runs again on resume). ``a2a-sdk`` is imported when the agent is made.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deedbench.engine import AgentContext
from deedbench.errors import AgentSpecError, InfrastructureError, RunAborted
from deedbench.records import Message, ToolCall

__all__ = ["A2AAgent"]

_TIMEOUT_SECONDS = 300.0
"""How long one turn of the remote agent may take."""


@dataclass
class _Episode:
    context_id: str
    seen: int  # messages of the conversation the agent has been sent, or sent itself


class A2AAgent:
    """The agent at `url`, reached over A2A's JSON-RPC binding."""

    def __init__(self, url: str, timeout: float = _TIMEOUT_SECONDS) -> None:
        try:
            import a2a.client  # noqa: F401  (checked now: a missing SDK is a spec error)
        except ImportError:
            raise AgentSpecError(
                "a2a/URL agents need the A2A SDK: pip install 'deedbench[a2a]'"
            ) from None
        if not url.startswith(("http://", "https://")):
            raise AgentSpecError(f"a2a/URL: {url!r} is no http(s) URL")
        self.url = url
        self.timeout = timeout
        self._client: Any = None
        self._http: Any = None
        self._connecting = asyncio.Lock()
        self._episodes: dict[tuple[str, str, int, int], _Episode] = {}

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        from a2a.types import Message as A2AMessage
        from a2a.types import Role, SendMessageRequest

        client = await self._connect()
        key = (context.sample_id, context.condition, context.epoch, context.seed)
        episode = self._episodes.get(key)
        if episode is None or episode.seen > len(messages):  # a new episode of this key
            episode = self._episodes[key] = _Episode(uuid.uuid4().hex, 0)
        parts = _parts(messages, tools, episode.seen)
        sent = A2AMessage(
            message_id=uuid.uuid4().hex,
            context_id=episode.context_id,
            role=Role.ROLE_USER,
            parts=parts,
        )
        try:
            received = [
                event async for event in client.send_message(SendMessageRequest(message=sent))
            ]
        except Exception as exc:  # the SDK's and httpx's errors alike: this turn failed
            raise InfrastructureError(
                f"A2A agent {self.url}: {type(exc).__name__}: {exc}"
            ) from None
        episode.seen = len(messages) + 1  # the reply is appended next
        return _reply(received)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
        if self._http is not None:
            await self._http.aclose()
        self._client = self._http = None

    async def _connect(self) -> Any:
        async with self._connecting:
            if self._client is None:
                import httpx
                from a2a.client import ClientConfig, create_client

                self._http = httpx.AsyncClient(timeout=self.timeout)
                config = ClientConfig(streaming=False, httpx_client=self._http)
                try:
                    self._client = await create_client(self.url, client_config=config)
                except Exception as exc:
                    await self._http.aclose()
                    self._http = None
                    raise RunAborted(
                        f"cannot reach the A2A agent at {self.url}: {type(exc).__name__}: {exc}"
                    ) from None
            return self._client


def _parts(messages: Sequence[Message], tools: Sequence[dict[str, Any]], seen: int) -> list[Any]:
    """What the agent has not been sent yet, as A2A parts."""
    from a2a.helpers.proto_helpers import new_data_part, new_text_part

    parts = []
    if seen == 0:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        parts.append(new_data_part({"deedbench": {"system": system, "tools": list(tools)}}))
    results = []
    for message in messages[seen:]:
        if message.role == "user" and message.content:
            parts.append(new_text_part(message.content))
        elif message.role == "tool":
            results.append(
                {
                    "id": message.tool_call_id or "",
                    "name": message.tool_name or "",
                    "content": message.content,
                    "error": message.error,
                }
            )
    if results:
        parts.append(new_data_part({"tool_results": results}))
    if not parts:  # nothing new (the agent speaks twice): say so rather than send nothing
        parts.append(new_text_part(""))
    return parts


def _reply(events: list[Any]) -> Message:
    """The agent's turn from what the A2A call returned: its message, or its task's status
    message and artifacts."""
    from a2a.helpers.proto_helpers import get_data_parts, get_text_parts

    found: list[Any] = []
    for event in events:
        kind = event.WhichOneof("payload")
        if kind == "message":
            found += event.message.parts
        elif kind == "task":
            task = event.task
            if task.status.HasField("message"):
                found += task.status.message.parts
            for artifact in task.artifacts:
                found += artifact.parts
        elif kind == "status_update" and event.status_update.status.HasField("message"):
            found += event.status_update.status.message.parts
        elif kind == "artifact_update":
            found += event.artifact_update.artifact.parts
    text = "\n".join(t for t in get_text_parts(found) if t)
    calls: list[ToolCall] = []
    for data in get_data_parts(found):
        for n, call in enumerate(data.get("tool_calls", []) if isinstance(data, dict) else []):
            calls.append(_call(call, f"a2a_call_{len(calls) + n}"))
    return Message(role="assistant", content=text, tool_calls=calls)


def _call(call: Any, default_id: str) -> ToolCall:
    if not isinstance(call, dict):
        return ToolCall(id=default_id, name="", arguments=json.dumps(call))
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):  # A2A data holds numbers as doubles: 2.0 is 2 again
        arguments = json.dumps(_whole(arguments))
    return ToolCall(id=str(call.get("id") or default_id), name=str(call.get("name", "")),
                    arguments=arguments)  # fmt: skip


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value
