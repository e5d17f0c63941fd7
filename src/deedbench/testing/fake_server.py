"""Fake OpenAI-compatible and Anthropic endpoints on 127.0.0.1, scripted per test.

A real HTTP server in a background thread, so model clients are exercised through
the official SDKs over real sockets, faults included: rate limits with Retry-After,
server errors, slow answers, dropped connections and malformed bodies.

    with FakeModelServer("openai") as server:
        server.script(Reply(tool_calls=[("search", {"q": "x"})]), Reply(text="done"))
        ...  # point a client at server.base_url

Replies queued with `script` are served first, in order; after that `responder`
(a function of the request body) answers, or a plain "OK." text reply.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["FakeModelServer", "Reply"]

Protocol = Literal["openai", "anthropic"]


@dataclass
class Reply:
    """One scripted answer: content to return, or a fault to inject."""

    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    reasoning: str | None = None
    refusal: str | None = None
    input_tokens: int = 100
    output_tokens: int = 20
    cached_tokens: int = 0
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = "injected fault"
    delay: float = 0.0
    drop_connection: bool = False
    raw_body: str | None = None


Responder = Callable[[dict[str, Any]], Reply]


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the default backlog of 5 resets connections under load
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients drop connections on purpose here (timeouts, injected faults): stay quiet."""


class FakeModelServer:
    """A scripted model endpoint speaking one protocol; counts every request it gets."""

    def __init__(self, protocol: Protocol, responder: Responder | None = None) -> None:
        self.protocol = protocol
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        suffix = "/v1" if self.protocol == "openai" else ""
        return f"http://{host}:{port}{suffix}"

    @property
    def hits(self) -> int:
        with self._lock:
            return len(self.requests)

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> FakeModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._queue:
                return self._queue.popleft()
        return self.responder(body) if self.responder else Reply(text="OK.")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence stderr
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                reply = server._next_reply(body, {k.lower(): v for k, v in self.headers.items()})
                with server._lock:
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.drop_connection:
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    self._send(reply, body)
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _send(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.raw_body is not None:
                    payload = reply.raw_body.encode()
                elif reply.status >= 400:
                    payload = json.dumps(_error_body(server.protocol, reply)).encode()
                elif server.protocol == "openai":
                    payload = json.dumps(_openai_body(reply, body)).encode()
                else:
                    payload = json.dumps(_anthropic_body(reply, body)).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _arguments(value: dict[str, Any] | str) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _error_body(protocol: Protocol, reply: Reply) -> dict[str, Any]:
    if protocol == "openai":
        return {"error": {"message": reply.error_message, "type": "fake_error", "code": None}}
    return {"type": "error", "error": {"type": "fake_error", "message": reply.error_message}}


def _openai_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": reply.refusal}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}_{len(request.get('messages', []))}",
                "type": "function",
                "function": {"name": name, "arguments": _arguments(arguments)},
            }
            for n, (name, arguments) in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        },
    }


def _anthropic_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "fake-sig"})
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for n, (name, arguments) in enumerate(reply.tool_calls):
        value: Any = arguments if isinstance(arguments, dict) else json.loads(arguments)
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{n}_{len(request.get('messages', []))}",
                "name": name,
                "input": value,
            }
        )
    if reply.refusal is not None:
        stop_reason = "refusal"
    else:
        stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "fake"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "cache_read_input_tokens": reply.cached_tokens,
            "cache_creation_input_tokens": 0,
        },
    }
