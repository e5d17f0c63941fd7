"""Faults between a model agent and its provider, injected by the fake server.

Transient faults (429, 5xx, timeouts, dropped connections, garbled bodies, replies
without a usable assistant turn) are retried and then succeed, and only usable
turns are cached; a fault on every attempt becomes an `InfrastructureError` after
exactly `max_attempts` requests, whose text says what went wrong (connection
refused at which URL, the server's own explanation of a 5xx); credentials and
rejected requests stop the run (`RunAborted`) after one request, and nothing is sent
after that; a prompt over the context limit ends only its episode
(`ContextExceeded`). At the run level, episodes that infrastructure broke are
recorded as errors and run again on resume.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import pytest
import tenacity

from deedbench.agents import AdaptiveLimiter, ModelAgent, ResponseCache
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.openai_agent import OpenAIAgent
from deedbench.benchmarks import load_benchmark
from deedbench.engine import AgentContext, Benchmark, RunStore, new_run_config, run
from deedbench.errors import ContextExceeded, InfrastructureError, RunAborted
from deedbench.records import EpisodeKey, GenerationParams, Message, RetryPolicy, RunConfig
from deedbench.reports import summarize
from deedbench.testing import FakeModelServer, Reply, tac_player

PROTOCOLS = ["openai", "anthropic"]
AGENTS: dict[str, type[ModelAgent]] = {"openai": OpenAIAgent, "anthropic": AnthropicAgent}
CONTEXT = AgentContext(sample_id="s1", condition="base", epoch=1, seed=99)
MESSAGES = [Message(role="system", content="Be brief."), Message(role="user", content="Hi.")]
ATTEMPTS = 3
SOON = {"retry-after": "0.01"}


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults-openai-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-faults-anthropic-0000")


@pytest.fixture(params=PROTOCOLS)
def server(request: pytest.FixtureRequest) -> Iterator[FakeModelServer]:
    with FakeModelServer(request.param) as fake:
        yield fake


def make_agent(
    server: FakeModelServer,
    *,
    limiter: AdaptiveLimiter | None = None,
    timeout: float = 30.0,
    attempts: int = ATTEMPTS,
    cache: ResponseCache | None = None,
) -> ModelAgent:
    return AGENTS[server.protocol](
        "fake-model",
        base_url=server.base_url,
        params=GenerationParams(timeout=timeout),
        limiter=limiter,
        cache=cache,
        retry=RetryPolicy(
            max_attempts=attempts, max_seconds=20.0, initial_wait=0.01, max_wait=0.05
        ),
    )


def ask(agent: ModelAgent, messages: Sequence[Message] = MESSAGES) -> Message:
    async def go() -> Message:
        try:
            return await agent.next_turn(messages, [], CONTEXT)
        finally:
            await agent.aclose()

    return asyncio.run(go())


# --- transient faults, then success -----------------------------------------------------------


def test_rate_limit_with_retry_after_then_success(server: FakeModelServer) -> None:
    limiter = AdaptiveLimiter(8)
    server.script(Reply(status=429, headers={"retry-after": "0.05"}), Reply(text="ok"))
    agent = make_agent(server, limiter=limiter)
    message = ask(agent)

    assert message.content == "ok"
    assert server.hits == 2
    assert agent.calls_made == 2
    assert limiter.lowest < limiter.cap
    assert limiter.limit == 4  # halved once; one success does not give a slot back yet


def test_rate_limit_with_retry_after_ms_then_success(server: FakeModelServer) -> None:
    limiter = AdaptiveLimiter(2)
    server.script(Reply(status=429, headers={"retry-after-ms": "20"}), Reply(text="ok"))
    assert ask(make_agent(server, limiter=limiter)).content == "ok"
    assert server.hits == 2
    assert limiter.lowest == 1


@pytest.mark.parametrize("status", [500, 502, 503, 529, 408, 409])
def test_server_error_then_success(server: FakeModelServer, status: int) -> None:
    limiter = AdaptiveLimiter(8)
    server.script(Reply(status=status), Reply(text="ok"))
    assert ask(make_agent(server, limiter=limiter)).content == "ok"
    assert server.hits == 2
    assert limiter.lowest == 8  # only 429 shrinks the allowance


def test_slow_response_beyond_timeout_then_success(server: FakeModelServer) -> None:
    server.script(Reply(text="too late", delay=0.6), Reply(text="ok"))
    message = ask(make_agent(server, timeout=0.2))

    assert message.content == "ok"
    assert server.hits == 2


def test_dropped_connection_then_success(server: FakeModelServer) -> None:
    server.script(Reply(drop_connection=True), Reply(text="ok"))
    assert ask(make_agent(server)).content == "ok"
    assert server.hits == 2


@pytest.mark.parametrize("body", ["not json", "", "[]", "null"])
def test_malformed_body_then_success(server: FakeModelServer, body: str) -> None:
    server.script(Reply(raw_body=body), Reply(text="ok"))
    assert ask(make_agent(server)).content == "ok"
    assert server.hits == 2


def test_several_faults_in_a_row_within_the_attempt_budget(server: FakeModelServer) -> None:
    server.script(
        Reply(status=503, headers=SOON),
        Reply(drop_connection=True),
        Reply(raw_body="{{{"),
        Reply(text="finally"),
    )
    message = ask(make_agent(server, attempts=4))
    assert message.content == "finally"
    assert server.hits == 4


def test_json_body_of_the_wrong_shape_is_retried(server: FakeModelServer) -> None:
    server.script(Reply(raw_body='{"unexpected": true}'), Reply(text="ok"))
    message = ask(make_agent(server))
    assert message.content == "ok"
    assert server.hits == 2


def test_openai_choices_of_the_wrong_type_is_retried() -> None:
    with FakeModelServer("openai") as server:
        server.script(Reply(raw_body='{"choices": "oops"}'), Reply(text="ok"))
        message = ask(make_agent(server))
        assert message.content == "ok"
        assert server.hits == 2


@pytest.mark.parametrize("empty", ["choices", "message"])
def test_a_reply_without_an_assistant_turn_is_retried_and_never_cached(
    tmp_path: Path, empty: Literal["choices", "message"]
) -> None:
    """A 200 whose choice has no message is no refusal: scoring it as one raised TAC's
    welfare rate, and caching it made the misscore permanent."""
    cache = ResponseCache(tmp_path / "cache.db")
    with FakeModelServer("openai") as server:
        server.script(Reply(empty=empty), Reply(text="ok"))
        assert ask(make_agent(server, cache=cache)).content == "ok"
        assert server.hits == 2
        again = ask(make_agent(server, cache=cache))  # the cached answer is the usable one
        assert again.content == "ok" and again.usage is not None and again.usage.cache_hits == 1
        assert server.hits == 2


def test_no_assistant_turn_on_every_attempt_is_an_infrastructure_error(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    with FakeModelServer("openai", lambda body: Reply(empty="message")) as server:
        with pytest.raises(InfrastructureError, match="no assistant message") as failure:
            ask(make_agent(server, cache=cache))
        assert server.hits == ATTEMPTS
    assert f"gave up after {ATTEMPTS} attempts" in str(failure.value)
    with closing(sqlite3.connect(tmp_path / "cache.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone() == (0,)


@pytest.mark.parametrize(
    ("protocol", "finish", "truncated_by"),
    [
        ("openai", "length", "length"),
        ("openai", "content_filter", "content_filter"),
        ("anthropic", "max_tokens", "length"),
        ("anthropic", "model_context_window_exceeded", "length"),
        ("openai", "stop", None),
        ("anthropic", "end_turn", None),
    ],
)
def test_a_reply_cut_short_says_by_what(
    protocol: Literal["openai", "anthropic"], finish: str, truncated_by: str | None
) -> None:
    with FakeModelServer(protocol) as server:
        server.script(Reply(text="The best option is", finish_reason=finish))
        message = ask(make_agent(server))
    assert message.content == "The best option is"
    assert message.truncated_by == truncated_by


def test_a_prompt_over_the_context_limit_ends_the_episode_not_the_run(
    server: FakeModelServer,
) -> None:
    server.context_limit = 50
    long = [*MESSAGES, Message(role="user", content="tell me more " * 40)]
    with pytest.raises(ContextExceeded) as failure:
        ask(make_agent(server), long)
    assert not isinstance(failure.value, RunAborted)
    assert server.hits == 1  # never retried: the same prompt would overflow again
    text = str(failure.value)
    assert "context" in text and "fake-model" in text
    assert "50" in text  # the provider's own words, with its limit


@pytest.mark.parametrize(
    "body",
    [
        # vLLM: OpenAI's words, no code
        '{"error": {"message": "This model\'s maximum context length is 2048 tokens. However, '
        'you requested 2100 tokens.", "type": "BadRequestError", "code": 400}}',
        # llama.cpp's own server
        '{"error": {"code": 400, "message": "the request exceeds the available context size, '
        'try increasing it", "type": "exceed_context_size_error"}}',
        # OpenAI's code alone
        '{"error": {"message": "too long", "type": "invalid_request_error", '
        '"code": "context_length_exceeded"}}',
    ],
)
def test_context_overflow_is_recognised_in_each_servers_words(body: str) -> None:
    with FakeModelServer("openai", lambda request: Reply(status=400, raw_body=body)) as server:
        with pytest.raises(ContextExceeded):
            ask(make_agent(server))
        assert server.hits == 1


def test_connection_refused_says_so_with_the_url() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens here once the socket is closed
    agent = OpenAIAgent(
        "fake-model",
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.02),
    )
    with pytest.raises(InfrastructureError) as failure:
        ask(agent)
    text = str(failure.value)
    assert f"connection refused: http://127.0.0.1:{port}/v1" in text
    assert "timed out" not in text


def test_a_timeout_says_after_how_long_and_where(server: FakeModelServer) -> None:
    server.responder = lambda body: Reply(text="late", delay=0.5)
    with pytest.raises(InfrastructureError) as failure:
        ask(make_agent(server, timeout=0.1, attempts=1))
    assert f"timed out after 0.1s: {server.base_url}" in str(failure.value)


def test_a_5xx_shows_the_servers_explanation_shortened_and_redacted(
    server: FakeModelServer,
) -> None:
    key = (
        "sk-test-faults-openai-0000"
        if server.protocol == "openai"
        else "sk-test-faults-anthropic-0000"
    )
    explanation = "Input should be a valid string at messages.2.content " + key + " " + "x" * 2000
    server.responder = lambda body: Reply(status=500, headers=SOON, error_message=explanation)
    with pytest.raises(InfrastructureError) as failure:
        ask(make_agent(server))
    text = str(failure.value)
    assert "HTTP 500: Input should be a valid string at messages.2.content [REDACTED]" in text
    assert key not in text
    assert len(text) < 600


def test_nothing_is_sent_after_an_abort(server: FakeModelServer) -> None:
    server.responder = lambda body: Reply(status=400, error_message="unknown parameter: foo")
    agent = make_agent(server)
    with pytest.raises(RunAborted):
        ask(agent)
    with pytest.raises(RunAborted, match="unknown parameter: foo"):
        ask(agent)  # the same request would be rejected again: it is not sent
    assert server.hits == 1


# --- the retry loop is built only for a call that needs it -------------------------------------


@pytest.fixture
def loops_built(monkeypatch: pytest.MonkeyPatch) -> list[tenacity.AsyncRetrying]:
    """Every tenacity retry loop built from now on, however its class was imported."""
    built: list[tenacity.AsyncRetrying] = []
    init = tenacity.AsyncRetrying.__init__

    def counted(self: tenacity.AsyncRetrying, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(tenacity.AsyncRetrying, "__init__", counted)
    return built


def test_a_first_attempt_that_succeeds_builds_no_retry_loop(
    server: FakeModelServer, loops_built: list[tenacity.AsyncRetrying]
) -> None:
    agent = make_agent(server)
    for _ in range(3):
        server.script(Reply(text="ok"))
        assert ask(agent).content == "ok"
    assert server.hits == 3
    assert loops_built == []


def test_a_transient_fault_retries_with_the_policy_counting_the_first_attempt(
    server: FakeModelServer, loops_built: list[tenacity.AsyncRetrying]
) -> None:
    limiter = AdaptiveLimiter(8)
    server.script(
        Reply(status=429, headers={"retry-after": "0.3"}),
        Reply(status=503, headers={"retry-after": "0.2"}),
        Reply(text="ok"),
    )
    agent = AGENTS[server.protocol](
        "fake-model",
        base_url=server.base_url,
        limiter=limiter,
        retry=RetryPolicy(max_attempts=3, max_seconds=20.0, initial_wait=0.01, max_wait=5.0),
    )
    started = time.monotonic()
    assert ask(agent).content == "ok"
    assert time.monotonic() - started >= 0.5  # both Retry-After waits, the first one's too
    assert server.hits == 3
    assert len(loops_built) == 1
    assert limiter.limit == 4  # the first attempt's 429 counted as a rate limit

    server.responder = lambda body: Reply(status=500, headers=SOON)
    with pytest.raises(InfrastructureError, match=f"gave up after {ATTEMPTS} attempts"):
        ask(make_agent(server))
    assert server.hits == 3 + ATTEMPTS  # the first attempt is one of max_attempts


def test_the_retry_time_budget_counts_the_first_attempts_time(server: FakeModelServer) -> None:
    server.responder = lambda body: Reply(status=500, delay=0.4)
    agent = AGENTS[server.protocol](
        "fake-model",
        base_url=server.base_url,
        retry=RetryPolicy(max_attempts=10, max_seconds=0.3, initial_wait=0.01, max_wait=0.05),
    )
    with pytest.raises(InfrastructureError, match="gave up after 1 attempts"):
        ask(agent)
    assert server.hits == 1


def test_timeouts_before_the_answer_are_counted_from_the_first_attempt(
    server: FakeModelServer,
) -> None:
    server.script(Reply(text="late", delay=1.0), Reply(text="late", delay=1.0), Reply(text="ok"))
    message = ask(make_agent(server, timeout=0.2))
    assert message.content == "ok"
    assert message.usage is not None and message.usage.timeouts == 2
    assert message.usage.retries == 2


def test_every_attempt_sent_again_is_counted_as_a_retry(server: FakeModelServer) -> None:
    server.script(Reply(status=503), Reply(status=429), Reply(text="ok"))
    message = ask(make_agent(server))
    assert message.content == "ok"
    assert message.usage is not None
    assert (message.usage.retries, message.usage.timeouts) == (2, 0)
    server.script(Reply(text="at once"))
    again = ask(make_agent(server))
    assert again.usage is not None and again.usage.retries == 0


# --- permanent faults -------------------------------------------------------------------------


def test_every_attempt_failing_raises_infrastructure_error(server: FakeModelServer) -> None:
    server.responder = lambda body: Reply(status=500, headers=SOON)
    agent = make_agent(server)
    with pytest.raises(InfrastructureError) as failure:
        ask(agent)

    assert server.hits == ATTEMPTS
    text = str(failure.value)
    assert f"gave up after {ATTEMPTS} attempts" in text
    assert "HTTP 500" in text


def test_rate_limited_on_every_attempt_shrinks_to_one_slot(server: FakeModelServer) -> None:
    limiter = AdaptiveLimiter(16, cooldown=0)
    server.responder = lambda body: Reply(status=429, headers=SOON)
    with pytest.raises(InfrastructureError, match="429"):
        ask(make_agent(server, limiter=limiter, attempts=5))

    assert server.hits == 5
    assert limiter.limit == 1  # 16 -> 8 -> 4 -> 2 -> 1 -> 1
    assert limiter.lowest == 1


def test_a_burst_of_rate_limits_within_the_cooldown_halves_once(server: FakeModelServer) -> None:
    limiter = AdaptiveLimiter(16, cooldown=3600)
    server.responder = lambda body: Reply(status=429, headers=SOON)
    with pytest.raises(InfrastructureError, match="429"):
        ask(make_agent(server, limiter=limiter, attempts=4))

    assert server.hits == 4
    assert limiter.limit == limiter.lowest == 8


def test_dropped_on_every_attempt_raises_infrastructure_error(server: FakeModelServer) -> None:
    server.responder = lambda body: Reply(drop_connection=True)
    with pytest.raises(InfrastructureError, match="gave up after 2 attempts"):
        ask(make_agent(server, attempts=2))
    assert server.hits == 2


@pytest.mark.parametrize("status", [401, 403])
def test_bad_credentials_abort_after_one_request(server: FakeModelServer, status: int) -> None:
    server.responder = lambda body: Reply(status=status, error_message="invalid x-api-key")
    agent = make_agent(server)
    with pytest.raises(RunAborted) as failure:
        ask(agent)

    assert server.hits == 1
    text = str(failure.value)
    assert "authentication failed" in text
    assert f"HTTP {status}" in text
    assert agent.api_key_env in text  # names the variable to fix
    assert "fake-model" in text


@pytest.mark.parametrize("status", [400, 404, 422])
def test_rejected_request_aborts_after_one_request(server: FakeModelServer, status: int) -> None:
    server.responder = lambda body: Reply(status=status, error_message="unknown parameter: foo")
    with pytest.raises(RunAborted) as failure:
        ask(make_agent(server))

    assert server.hits == 1
    text = str(failure.value)
    assert f"request rejected (HTTP {status})" in text
    assert "unknown parameter: foo" in text  # the provider's own explanation is kept


# --- at the run level -------------------------------------------------------------------------


def small_run(store: RunStore, bench: Benchmark, run_id: str, model: str) -> RunConfig:
    config = new_run_config(
        run_id=run_id,
        benchmark=bench,
        agent=f"openai/{model}",
        agent_params={},
        conditions=list(bench.conditions),
        epochs=1,
        seed=0,
        samples=bench.samples()[:2],
    )
    store.create_run(config)
    return config


def run_once(
    config: RunConfig, bench: Benchmark, agent: ModelAgent, store: RunStore
) -> list[EpisodeKey]:
    """The keys of the episodes the run finished."""
    finished: list[EpisodeKey] = []

    async def go() -> list[EpisodeKey]:
        try:
            await run(
                config,
                bench,
                agent,
                store,
                concurrency=4,
                on_record=lambda r: finished.append(r.key),
            )
        finally:
            await agent.aclose()
        return finished

    return asyncio.run(go())


def stored_rows(path: Path, run_id: str) -> list[tuple[str, str, int, str]]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(
            "SELECT sample_id, condition, epoch, status FROM episodes WHERE run_id = ?",
            (run_id,),
        ).fetchall()


def test_a_failing_provider_records_errors_and_a_resume_completes_each_episode_once(
    tmp_path: Path,
) -> None:
    bench = load_benchmark("tac")
    path = tmp_path / "runs.db"
    with FakeModelServer("openai") as server, RunStore(path) as store:
        server.responder = lambda body: Reply(status=500, headers=SOON)
        config = small_run(store, bench, "outage", "gpt-4o")
        keys = list(config.episode_keys())
        assert len(keys) == 4

        attempted = run_once(config, bench, make_agent(server, attempts=2), store)
        assert sorted(attempted) == sorted(keys)
        assert server.hits == 2 * len(keys)  # max_attempts requests per episode
        records = list(store.episodes("outage"))
        assert len(records) == len(keys)
        assert {r.status for r in records} == {"error"}
        assert {r.termination for r in records} == {"infrastructure_error"}
        assert all(r.score is None for r in records)
        assert all("HTTP 500" in (r.error or "") for r in records)
        summary = summarize(config, records)
        assert (summary.scored, summary.errors, summary.missing) == (0, len(keys), 0)
        assert store.count("outage") == {"error": len(keys)}

        server.responder = tac_player  # the provider recovers
        before = server.hits
        attempted = run_once(config, bench, make_agent(server), store)
        assert sorted(attempted) == sorted(keys)
        assert server.hits > before
        assert store.count("outage") == {"scored": len(keys)}
        summary = summarize(config, store.episodes("outage"))
        assert (summary.scored, summary.errors, summary.missing) == (len(keys), 0, 0)

        before = server.hits
        assert run_once(config, bench, make_agent(server), store) == []  # nothing left
        assert server.hits == before

    rows = stored_rows(path, "outage")
    assert len(rows) == len(keys)
    assert sorted((s, c, e) for s, c, e, _ in rows) == sorted(keys)
    assert {status for *_, status in rows} == {"scored"}


def test_a_context_overflow_ends_its_episode_and_the_run_goes_on(tmp_path: Path) -> None:
    bench = load_benchmark("tac")
    with (
        FakeModelServer("openai", tac_player, context_limit=1) as server,
        RunStore(tmp_path / "runs.db") as store,
    ):
        config = small_run(store, bench, "overflow", "gpt-4o")
        run_once(config, bench, make_agent(server), store)
        assert server.hits == 4  # one request per episode, none retried

        records = list(store.episodes("overflow"))
        assert len(records) == 4
        assert {r.status for r in records} == {"scored"}
        assert {r.termination for r in records} == {"context_exceeded"}
        assert {r.score.outcome for r in records if r.score} == {"context_exceeded"}
        assert run_once(config, bench, make_agent(server), store) == []  # a resume has no work
        assert server.hits == 4


def test_after_an_abort_no_request_is_sent(tmp_path: Path) -> None:
    bench = load_benchmark("tac")
    with FakeModelServer("openai") as server, RunStore(tmp_path / "runs.db") as store:
        server.responder = lambda body: Reply(status=400, error_message="unknown parameter: foo")
        config = small_run(store, bench, "rejected", "gpt-4o")
        agent = make_agent(server)
        with pytest.raises(RunAborted, match="unknown parameter"):
            run_once(config, bench, agent, store)
        first = server.hits
        assert 1 <= first <= 4
        with pytest.raises(RunAborted, match="unknown parameter"):
            run_once(config, bench, agent, store)  # resumed with the same agent: refused at once
        assert server.hits == first
        assert store.count("rejected").get("scored", 0) == 0


def test_bad_credentials_stop_the_whole_run(tmp_path: Path) -> None:
    bench = load_benchmark("tac")
    with FakeModelServer("anthropic") as server, RunStore(tmp_path / "runs.db") as store:
        server.responder = lambda body: Reply(status=401, error_message="invalid x-api-key")
        config = small_run(store, bench, "denied", "claude")
        with pytest.raises(RunAborted, match="authentication failed"):
            run_once(config, bench, make_agent(server), store)

        assert 1 <= server.hits <= config.planned_episodes  # never retried
        assert store.count("denied") == {}


def test_an_agent_can_be_reused_by_a_second_event_loop(tmp_path: Path) -> None:
    """A run, then a resume in the same process with the same agent: connections belong
    to one event loop, so the agent must not carry them into the next."""
    bench = load_benchmark("tac")
    with FakeModelServer("openai", tac_player) as server, RunStore(tmp_path / "r.db") as store:
        agent = make_agent(server)
        first = small_run(store, bench, "first", "gpt-4o")
        asyncio.run(run(first, bench, agent, store))  # deliberately not closed
        assert store.count("first") == {"scored": 4}

        second = small_run(store, bench, "second", "gpt-4o")
        run_once(second, bench, agent, store)
        gc.collect()  # finalise the first loop's leftovers now, not while pytest reports
        errors = [r.error for r in store.episodes("second") if r.status == "error"]
        assert errors == []
        assert store.count("second") == {"scored": 4}
