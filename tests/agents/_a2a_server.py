"""An A2A agent on 127.0.0.1 for the tests: any deedbench `Agent` served over A2A's JSON-RPC
binding with the messages of docs/environment.md ("The A2A messages"), so that what the
remote agent decides can be compared with the same agent run in process."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role
from a2a.types import Message as A2AMessage
from starlette.applications import Starlette

from deedbench.engine import Agent, AgentContext
from deedbench.records import Message


@dataclass
class Seen:
    """What the served agent was sent, per A2A context."""

    tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    conversations: dict[str, list[Message]] = field(default_factory=dict)
    calls: int = 0


class _Executor(AgentExecutor):
    def __init__(self, agent: Agent, seen: Seen, as_task: bool) -> None:
        self.agent = agent
        self.seen = seen
        self.as_task = as_task

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.context_id is not None
        self.seen.calls += 1
        conversation = self.seen.conversations.setdefault(context.context_id, [])
        parts = list(context.message.parts)
        for data in get_data_parts(parts):
            if "deedbench" in data:
                head = data["deedbench"]
                self.seen.tools[context.context_id] = head["tools"]
                conversation.append(Message(role="system", content=head["system"]))
        for text in get_text_parts(parts):
            if text:
                conversation.append(Message(role="user", content=text))
        for data in get_data_parts(parts):
            for result in data.get("tool_results", []):
                conversation.append(
                    Message(
                        role="tool",
                        content=result["content"],
                        tool_call_id=result["id"],
                        tool_name=result["name"],
                        error=result["error"],
                    )
                )
        tools = self.seen.tools[context.context_id]
        turn = await self.agent.next_turn(
            conversation, tools, AgentContext(context.context_id, "remote", 1, 0)
        )
        conversation.append(turn)
        reply = [new_text_part(turn.content)] if turn.content else []
        if turn.tool_calls:
            calls = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls
            ]
            reply.append(new_data_part({"tool_calls": calls}))
        message = A2AMessage(
            message_id=uuid.uuid4().hex,
            context_id=context.context_id,
            role=Role.ROLE_AGENT,
            parts=reply,
        )
        if not self.as_task:
            await event_queue.enqueue_event(message)
            return
        from a2a.helpers.proto_helpers import new_task_from_user_message
        from a2a.server.tasks import TaskUpdater

        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact(reply)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serve(agent: Agent, *, as_task: bool = False) -> Iterator[tuple[str, Seen]]:
    """`agent` served over A2A on 127.0.0.1 while the block runs: its URL, and what it saw.
    `as_task`: it answers with a completed task holding an artifact, not a message."""
    port = _port()
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="served",
        description="a deedbench agent served over A2A for the tests",
        version="1",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", url=url + "/", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="tools", name="tools", description="calls tools", tags=["tools"])],
    )
    seen = Seen()
    handler = DefaultRequestHandler(
        agent_executor=_Executor(agent, seen, as_task),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the A2A agent did not start"
        time.sleep(0.02)
    try:
        yield url, seen
    finally:
        server.should_exit = True
        thread.join(timeout=10)
