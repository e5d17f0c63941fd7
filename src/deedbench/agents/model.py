"""What every model-backed agent shares: cache, retries, rate limits, secrets.

A protocol subclass says how to turn the conversation into a request, how to send
it with its SDK, how to read the raw response, and how to classify the SDK's
errors; everything else lives here once.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from deedbench.agents.cache import Cache, cache_key
from deedbench.agents.limiter import AdaptiveLimiter, Limiter
from deedbench.engine import AgentContext
from deedbench.errors import ContextExceeded, InfrastructureError, RunAborted, TransientError
from deedbench.records import GenerationParams, Message, RetryPolicy
from deedbench.secrets import redact, redact_bytes, register_secret

if TYPE_CHECKING:  # tenacity is imported when a call first needs a retry
    from tenacity import RetryCallState


class _Retried(NamedTuple):
    """What a model call took beyond its answer: attempts sent again, and how many of
    those failures were timeouts."""

    retries: int
    timeouts: int


__all__ = ["ModelAgent", "fast_http_client"]


# How providers say a prompt is over the context window: OpenAI's words (which vLLM and
# llama-cpp-python copy), its code, llama.cpp's server's, and Anthropic's.
_CONTEXT_EXCEEDED = re.compile(
    r"maximum context length|context_length_exceeded|exceed_context_size|"
    r"exceeds the available context|context window|prompt is too long",
    re.IGNORECASE,
)
_EXPLANATION_CHARS = 300  # of a server's error message, in what deedbench reports


class ModelAgent(ABC):
    """An agent that asks a model, through an official SDK, for each turn."""

    protocol: ClassVar[str]
    default_key_env: ClassVar[str]
    sdk: Any  # the official SDK module, imported when the agent is created
    client_class: Any  # its async client class
    _key: str  # read from the environment when the agent is created; never stored

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        params: GenerationParams | None = None,
        cache: Cache | None = None,
        limiter: Limiter | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env or self.default_key_env
        self.params = params or GenerationParams()
        self.cache = cache
        self.limiter: Limiter = limiter or AdaptiveLimiter(16)
        self.retry = retry or RetryPolicy()
        self.calls_made = 0
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._aborted: RunAborted | None = None  # once the provider doomed the run

    def client(self) -> Any:
        """The SDK client of the running event loop (connections belong to one loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._client, self._loop = self.make_client(), loop
        return self._client

    def api_key(self, required: bool = True) -> str | None:
        """The key from the environment; registered so it is redacted everywhere."""
        key = os.environ.get(self.api_key_env)
        if not key and required:
            raise RunAborted(
                f"{self.protocol}/{self.model}: set the environment variable {self.api_key_env} "
                "to your API key"
            )
        register_secret(key)
        return key

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        request = self.build_request(messages, tools, context)
        if self.cache is None:
            return self._turn(*await self._call_with_retries(request))
        key = cache_key(  # the episode's seed too: a simulated user has no epoch of its own
            protocol=self.protocol,
            base_url=self.base_url,
            model=self.model,
            request=request,
            sample=context.sample_id,
            epoch=context.epoch,
            seed=context.seed,
        )
        cached = self.cache.get(key)
        if cached is not None and self.unusable(cached) is None:  # older versions cached some
            message = self.parse_response(cached)
            if message.usage is not None:
                message.usage.cache_hits = 1
            return message
        raw, retried = await self._call_with_retries(request)
        message = self._turn(raw, retried)  # only what parses is worth keeping
        self.cache.put(key, self.protocol, self.model, raw, context)
        return message

    def _turn(self, raw: dict[str, Any], retried: _Retried) -> Message:
        message = self.parse_response(raw)
        if message.usage is not None:
            message.usage.retries, message.usage.timeouts = retried
        return message

    async def _call_with_retries(self, request: dict[str, Any]) -> tuple[dict[str, Any], _Retried]:
        """The raw response, and how many attempts were sent again (and timed out) before
        it came.

        The first attempt is a plain call: most calls succeed at once, and building the
        retry loop for each of them cost a few percent of the client's CPU per call.
        """
        if self._aborted is not None:  # the same request would be refused the same way
            raise self._aborted
        started = time.monotonic()
        try:
            return await self._attempt(request), _Retried(0, 0)
        except TransientError as failure:
            return await self._retry(request, failure, started)

    async def _attempt(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send once within the limiter; raise what `classify` makes of a failure."""
        async with self.limiter.slot():
            try:
                self.calls_made += 1
                raw = await self.send(request)
            except Exception as exc:
                failure = self.classify(exc)
                if isinstance(failure, TransientError):
                    if failure.rate_limited:
                        await self.limiter.rate_limited()
                elif isinstance(failure, RunAborted):
                    self._aborted = failure
                raise failure from None
        await self.limiter.succeeded()
        return raw

    async def _retry(
        self, request: dict[str, Any], first: TransientError, started: float
    ) -> tuple[dict[str, Any], _Retried]:
        """The retry loop after a first attempt (begun at `started`) failed with `first`.

        The loop's own first attempt replays that failure, so tenacity counts it, waits
        after it (Retry-After honoured) and stops as if it had made it: at
        `max_attempts` attempts, or `max_seconds` after `started`.
        """
        from tenacity import AsyncRetrying, retry_if_exception_type

        policy = self.retry

        def stop(state: RetryCallState) -> bool:  # stop_after_attempt | stop_after_delay
            ended = state.outcome_timestamp or time.monotonic()
            return state.attempt_number >= policy.max_attempts or (
                ended - started >= policy.max_seconds
            )

        retrying = AsyncRetrying(
            stop=stop,
            wait=self._wait,
            retry=retry_if_exception_type(TransientError),
            reraise=True,
        )
        replay: TransientError | None = first
        attempts, timeouts = 0, int(first.timed_out)
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    if replay is not None:
                        failure, replay = replay, None
                        raise failure
                    try:
                        return await self._attempt(request), _Retried(attempts - 1, timeouts)
                    except TransientError as failure:
                        timeouts += failure.timed_out
                        raise
        except TransientError as exc:
            elapsed = time.monotonic() - started
            raise InfrastructureError(
                redact(
                    f"{self.protocol}/{self.model}: gave up after {attempts} attempts in "
                    f"{elapsed:.1f}s; last error: {exc}"
                )
            ) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientError) and exc.retry_after is not None:
            return min(exc.retry_after, self.retry.max_wait)
        from tenacity import wait_exponential, wait_random

        backoff = wait_exponential(
            multiplier=self.retry.initial_wait, max=self.retry.max_wait
        ) + wait_random(0, self.retry.initial_wait)
        return float(backoff(state))

    async def aclose(self) -> None:
        """Close the SDK client's connections (call inside the loop that used them)."""
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = self._loop = None

    async def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST `body` as it is with the SDK client's generic `post`, and decode the JSON
        answer here; raises ValueError when it is not a JSON object.

        The SDK still adds the key, headers and base URL, and raises its own errors for
        failed statuses, timeouts and dropped connections. What this skips is the typed
        path of `create`, whose transform of the request into the SDK's parameter types
        and whose pydantic models of the response (dumped straight back to a dict here)
        cost a quarter of the client's CPU at a hundred calls in flight
        (bench/concurrency.py).
        """
        content = redact_bytes(await self.client().post(path, body=body, cast_to=bytes))
        raw = json.loads(content)  # a key the provider echoed is gone before anything keeps it
        if not isinstance(raw, dict):
            raise ValueError(f"response is not a JSON object: {content[:200]!r}")
        problem = self.unusable(raw)
        if problem is not None:
            raise ValueError(f"{problem}: {content[:200]!r}")
        return raw

    def fatal(self, what: str, exc: Exception) -> RunAborted:
        return RunAborted(redact(f"{self.protocol}/{self.model}: {what}: {exc}"))

    def make_client(self) -> Any:
        """A new SDK client (no retries of its own: retrying is done here)."""
        return self.client_class(
            api_key=self._key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.params.timeout,
            http_client=fast_http_client(self.sdk),
        )

    @abstractmethod
    def build_request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> dict[str, Any]:
        """The request body (SDK keyword arguments), JSON-serialisable."""

    @abstractmethod
    async def send(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send once, no retries; return the raw response as a dict.

        Raises ValueError for a body that is no usable turn (`unusable`), which is retried.
        """

    @abstractmethod
    def unusable(self, raw: dict[str, Any]) -> str | None:
        """Why a raw response holds no assistant turn (no choices, no message...), or None.

        Such a reply is a transient fault, never a turn: read as an empty reply it would
        be scored as the agent's refusal.
        """

    @abstractmethod
    def parse_response(self, raw: dict[str, Any]) -> Message:
        """The assistant message in a usable raw response; never raises on odd fields."""

    def classify(self, exc: Exception) -> Exception:
        """A `TransientError` to retry, a `RunAborted` to stop the run, a `ContextExceeded`
        to end the episode, or `exc` itself.

        Both official SDKs share these error classes and their meaning.
        """
        sdk = self.sdk
        if isinstance(exc, sdk.APIConnectionError):  # timeouts are a subclass
            return self._connection_failure(exc)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            retry_after = _retry_after(exc.response.headers)
            explanation = _explanation(exc)
            if status == 429:
                return TransientError(
                    "HTTP 429 rate limited", retry_after=retry_after, rate_limited=True
                )
            if status >= 500 or status in (408, 409):
                return TransientError(
                    redact(f"HTTP {status}: {explanation}" if explanation else f"HTTP {status}"),
                    retry_after=retry_after,
                )
            if status in (401, 403):
                return self.fatal(
                    f"authentication failed (HTTP {status}); check {self.api_key_env}", exc
                )
            if _CONTEXT_EXCEEDED.search(f"{_error_code(exc)} {explanation}"):
                return ContextExceeded(
                    redact(
                        f"{self.protocol}/{self.model}: the prompt is over the model's "
                        f"context window (HTTP {status}): {explanation}"
                    )
                )
            return self.fatal(f"request rejected (HTTP {status})", exc)
        if isinstance(exc, ValueError):  # a garbled or misshapen body
            return TransientError(redact(f"unreadable response: {exc}"))
        return exc

    def _connection_failure(self, exc: Any) -> TransientError:
        """What went wrong on the way, and where: a refused connection (which the aiohttp
        transport reports as a connect timeout), a timeout, or another failure."""
        url = exc.request.url
        causes: list[BaseException] = []
        cause: BaseException | None = exc
        while cause is not None and len(causes) < 10:
            causes.append(cause)
            cause = cause.__cause__ or cause.__context__
        if any(isinstance(c, ConnectionRefusedError) for c in causes):
            return TransientError(redact(f"connection refused: {url}"))
        if isinstance(exc, self.sdk.APITimeoutError):
            after = f" after {self.params.timeout:g}s" if self.params.timeout else ""
            return TransientError(redact(f"timed out{after}: {url}"), timed_out=True)
        return TransientError(redact(f"connection failed: {url}: {causes[-1]}"))


def _error_body(exc: Any) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]  # Anthropic's SDK keeps the envelope; OpenAI's unwraps it
    return body if isinstance(body, dict) else {}


def _error_code(exc: Any) -> str:
    body = _error_body(exc)
    return f"{body.get('code') or ''} {body.get('type') or ''}"


def _explanation(exc: Any) -> str:
    """The server's own words about an error, on one line and shortened."""
    message = _error_body(exc).get("message")
    if not isinstance(message, str):
        raw = getattr(exc, "body", None)
        message = raw if isinstance(raw, str) else ""
    text = " ".join(message.split())
    return text if len(text) <= _EXPLANATION_CHARS else text[: _EXPLANATION_CHARS - 1] + "…"


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from Retry-After (or retry-after-ms), when the server gave one."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


def fast_http_client(sdk: Any) -> Any:
    """The SDK's aiohttp transport where installed (the ``aiohttp`` extra): at a hundred
    calls in flight it costs a fraction of the CPU of the default one. None otherwise,
    which makes the SDK use its default client."""
    factory = getattr(sdk, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory()
    except RuntimeError:  # the aiohttp extra is not installed
        return None
