"""The agent of agent.py over A2A (a2a-sdk), with deedbench's messages: the first of an
episode carries {"deedbench": {"system", "tools"}}, each carries the user's words as text and
tool results as {"tool_results": [...]}; the answer is text, or {"tool_calls": [...]}.

    python serve_a2a.py 9999 &
    deedbench run tac --agent a2a/http://127.0.0.1:9999
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

import uvicorn
from a2a.helpers.proto_helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Message, Role
from agent import next_message
from starlette.applications import Starlette


class Episodes(AgentExecutor):
    """Each A2A context is one episode; the conversation is kept in chat format."""

    def __init__(self) -> None:
        self.chats: dict[str, list[dict[str, Any]]] = {}
        self.tools: dict[str, list[dict[str, Any]]] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.context_id is not None
        chat = self.chats.setdefault(context.context_id, [])
        parts = list(context.message.parts)
        for data in get_data_parts(parts):
            if "deedbench" in data:
                chat.append({"role": "system", "content": data["deedbench"]["system"]})
                self.tools[context.context_id] = data["deedbench"]["tools"]
        chat += [{"role": "user", "content": t} for t in get_text_parts(parts) if t]
        for data in get_data_parts(parts):
            for result in data.get("tool_results", []):
                chat.append({"role": "tool", "tool_call_id": result["id"],
                             "content": result["content"]})  # fmt: skip
        message = next_message(chat, self.tools.get(context.context_id, []))
        chat.append(message)
        reply = [new_text_part(message["content"])] if message["content"] else []
        calls = [{"id": c["id"], "name": c["function"]["name"],
                  "arguments": c["function"]["arguments"]}
                 for c in message.get("tool_calls") or []]  # fmt: skip
        if calls:
            reply.append(new_data_part({"tool_calls": calls}))
        await event_queue.enqueue_event(Message(
            message_id=uuid.uuid4().hex, context_id=context.context_id, role=Role.ROLE_AGENT,
            parts=reply,
        ))  # fmt: skip

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def app(url: str) -> Starlette:
    card = AgentCard(
        name="framework-agent",
        description="a booking agent that returns tool calls for its host to run",
        version="1",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", url=url, protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="book", name="book", description="books tickets", tags=["tools"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Episodes(), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(f"http://127.0.0.1:{port}/"), host="127.0.0.1", port=port,
                log_level="warning")  # fmt: skip
