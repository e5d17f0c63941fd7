"""The agent of agent.py as an OpenAI-compatible endpoint: POST /v1/chat/completions.

deedbench sends the conversation and the tools as it would to any model; the answer is the
agent's next message, as a chat completion. Run it, then evaluate it:

    python serve_openai.py 8000 &
    deedbench run tac --agent openai-compatible/framework-agent --base-url http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import sys
import time
import uuid
from typing import Any

import uvicorn
from agent import next_message
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def chat_completions(request: Request) -> JSONResponse:
    body: dict[str, Any] = await request.json()
    message = next_message(body["messages"], body.get("tools") or [])
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return JSONResponse({
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "framework-agent"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })  # fmt: skip


app = Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
