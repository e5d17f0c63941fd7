"""Fake OpenAI-compatible and Anthropic endpoints on 127.0.0.1, scripted per test.

A real HTTP server on its own thread and event loop, so model clients are
exercised through the official SDKs over real sockets, faults included: rate
limits with Retry-After, server errors, slow answers, dropped connections and
malformed bodies. It is asyncio rather than a thread per connection because at a
hundred calls in flight (bench/concurrency.py) threads waking together queue on
the GIL and `http.server`'s header parsing, adding tens of milliseconds to every
answer; the server must not be what a benchmark of the client measures.

    with FakeModelServer("openai") as server:
        server.script(Reply(tool_calls=[("search", {"q": "x"})]), Reply(text="done"))
        ...  # point a client at server.base_url

Replies queued with `script` are served first, in order; after that `responder`
(a function of the request body) answers, or a plain "OK." text reply.

Two options copy what real servers do to requests, before any reply is chosen:
`strict` answers HTTP 500 to an assistant turn with `"content": null` (which deedbench
once sent beside tool calls), as llama-cpp-python's server does; `context_limit` answers HTTP 400
with the provider's own "maximum context length" message to a prompt longer than
that many tokens (counted as the messages' JSON characters / 4).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

__all__ = ["FakeModelServer", "Reply"]

_Protocol = Literal["openai", "anthropic"]

_REASONS = {status.value: status.phrase for status in HTTPStatus}


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
    error_code: str | None = None
    delay: float = 0.0
    drop_connection: bool = False
    raw_body: str | None = None
    # the protocol's own finish_reason (OpenAI) or stop_reason (Anthropic), e.g. "length"
    finish_reason: str | None = None
    # an OpenAI 200 reply that is no usable turn: no choices, or a choice without a message
    empty: Literal["choices", "message"] | None = None


_Responder = Callable[[dict[str, Any]], Reply]
"""Called on the server's thread, one request at a time."""


class FakeModelServer:
    """A scripted model endpoint speaking one protocol; counts every request it gets."""

    def __init__(
        self,
        protocol: _Protocol,
        responder: _Responder | None = None,
        *,
        strict: bool = False,
        context_limit: int | None = None,
    ) -> None:
        self.protocol = protocol
        self.responder = responder
        self.strict = strict
        self.context_limit = context_limit
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        # Wall-clock times (time.time(), comparable across processes) of the first
        # request's arrival and the last answer's sending, for start-up and exit timings.
        self.first_request_at: float | None = None
        self.last_answer_at: float | None = None
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._address: tuple[str, int] = self._socket.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._address
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
        self._ready.wait()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join()
        self._socket.close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        # A short backlog resets connections when a hundred clients connect at once.
        server = await asyncio.start_server(self._connection, sock=self._socket, backlog=1024)
        self._ready.set()
        await self._stopping.wait()
        # Not `wait_closed`: from Python 3.12 it waits for clients to hang up. asyncio.run
        # cancels the connections still open instead, and they close in `finally`.
        server.close()

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Reply]:
        """The request's number (its index in `requests`) and the reply it gets."""
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            number = len(self.requests) - 1
            refused = self._refusal(body)
            if refused is not None:
                return number, refused
            if self._queue:
                return number, self._queue.popleft()
        return number, self.responder(body) if self.responder else Reply(text="OK.")

    def _refusal(self, body: dict[str, Any]) -> Reply | None:
        """What a real server answers to a request it cannot take, before any reply."""
        messages = body.get("messages") or []
        if self.strict and self.protocol == "openai":
            for n, message in enumerate(messages):
                if message.get("role") == "assistant" and message.get("content", "") is None:
                    return Reply(status=500, error_message=_LLAMA_NULL_CONTENT.format(n=n))
        tokens = len(json.dumps([body.get("system", ""), messages])) // 4
        limit = self.context_limit
        if limit is None or tokens <= limit:
            return None
        if self.protocol == "anthropic":
            too_long = f"prompt is too long: {tokens} tokens > {limit} maximum"
            return Reply(status=400, error_message=too_long)
        return Reply(  # OpenAI's words, which llama-cpp-python and vLLM use too
            status=400,
            error_code="context_length_exceeded",
            error_message=f"This model's maximum context length is {limit} tokens. However, "
            f"you requested {tokens} tokens. Please reduce the length of the messages.",
        )

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one kept-alive connection, request after request, until the client leaves."""
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                headers = {}
                for line in head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.strip().lower()] = value.strip()
                data = await reader.readexactly(int(headers.get("content-length") or 0))
                try:
                    body = json.loads(data or b"{}")
                except json.JSONDecodeError:
                    body = {}
                if self.first_request_at is None:
                    self.first_request_at = time.time()
                number, reply = self._next_reply(body, headers)
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
                try:
                    if reply.delay:
                        await asyncio.sleep(reply.delay)
                    if reply.drop_connection:
                        writer.transport.abort()
                        return
                    answer = self._response(reply, body, number)
                    # stamped before it leaves: a client that stops this server as soon as
                    # the answer arrives must not find the previous answer's time
                    self.last_answer_at = time.time()
                    writer.write(answer)
                finally:
                    self._in_flight -= 1
                if headers.get("connection", "").lower() == "close":
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return  # the client left, timed out or sent garbage: nothing to answer
        finally:
            writer.close()

    def _response(self, reply: Reply, body: dict[str, Any], number: int) -> bytes:
        if reply.raw_body is not None:
            payload = reply.raw_body.encode()
        elif reply.status >= 400:
            payload = json.dumps(_error_body(self.protocol, reply)).encode()
        elif self.protocol == "openai":
            payload = json.dumps(_openai_body(reply, body, number)).encode()
        else:
            payload = json.dumps(_anthropic_body(reply, body, number)).encode()
        lines = [
            f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Unknown')}",
            "content-type: application/json",
            f"content-length: {len(payload)}",
            *(f"{key}: {value}" for key, value in reply.headers.items()),
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


_LLAMA_NULL_CONTENT = (  # llama-cpp-python 0.3's answer, shortened
    "1 validation error:\n  {{'type': 'string_type', 'loc': ('body', 'messages', {n}, "
    "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid "
    "string', 'input': None}}"
)


def _arguments(value: dict[str, Any] | str) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _error_body(protocol: _Protocol, reply: Reply) -> dict[str, Any]:
    kind = "invalid_request_error" if reply.status == 400 else "fake_error"
    if protocol == "openai":
        error = {"message": reply.error_message, "type": kind, "code": reply.error_code}
        return {"error": error}
    return {"type": "error", "error": {"type": kind, "message": reply.error_message}}


def _openai_body(reply: Reply, request: dict[str, Any], number: int) -> dict[str, Any]:
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
    choice: dict[str, Any] = {
        "index": 0,
        "message": message,
        "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"),
    }
    if reply.empty == "message":
        del choice["message"]
    return {
        "id": f"chatcmpl-{number}",  # as real servers do, unique: an answer names its request
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "fake"),
        "choices": [] if reply.empty == "choices" else [choice],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        },
    }


def _anthropic_body(reply: Reply, request: dict[str, Any], number: int) -> dict[str, Any]:
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
    if reply.finish_reason is not None:
        stop_reason = reply.finish_reason
    elif reply.refusal is not None:
        stop_reason = "refusal"
    else:
        stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    return {
        "id": f"msg_{number}",
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
