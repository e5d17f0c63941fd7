"""The response cache: a model call already paid for is never paid again.

Unit tests of `ResponseCache` and `cache_key`; agent tests that count requests on a
fake server; and CLI runs that share one store (the cache lives in the store file).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import pytest
from typer.testing import CliRunner, Result

from deedbench.agents import ModelAgent, ResponseCache
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.cache import cache_key
from deedbench.agents.openai_agent import OpenAIAgent
from deedbench.cli.main import app
from deedbench.engine import AgentContext, RunStore
from deedbench.errors import InfrastructureError
from deedbench.records import EpisodeRecord, GenerationParams, Message, RetryPolicy
from deedbench.testing import FakeModelServer, Reply, tac_player

AGENTS: dict[str, type[ModelAgent]] = {"openai": OpenAIAgent, "anthropic": AnthropicAgent}
MESSAGES = [Message(role="system", content="Be brief."), Message(role="user", content="Hi.")]
EPOCH_1 = AgentContext(sample_id="s1", condition="base", epoch=1, seed=11)
SOON = {"retry-after": "0.01"}


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache-openai-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-cache-anthropic-0000")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    store = ResponseCache(tmp_path / "cache.db")
    yield store
    store.close()


def ask(
    server: FakeModelServer,
    cache: ResponseCache | None,
    context: AgentContext = EPOCH_1,
    *,
    model: str = "fake-model",
    **params: Any,
) -> Message:
    """One turn from a fresh agent (as a new run would build) sharing `cache`."""
    agent = AGENTS[server.protocol](
        model,
        base_url=server.base_url,
        params=GenerationParams(**params),
        cache=cache,
        retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05),
    )

    async def go() -> Message:
        try:
            return await agent.next_turn(MESSAGES, [], context)
        finally:
            await agent.aclose()

    return asyncio.run(go())


# --- the cache itself -------------------------------------------------------------------------


def test_put_get_and_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.db"
    first = ResponseCache(path)
    assert first.get("k1") is None
    first.put("k1", "openai", "gpt-4o", {"choices": [{"message": {"content": "one"}}]}, EPOCH_1)
    first.put("k1", "openai", "gpt-4o", {"choices": [{"message": {"content": "two"}}]}, EPOCH_1)
    first.close()

    reopened = ResponseCache(path)
    try:
        assert reopened.get("k1") == {"choices": [{"message": {"content": "two"}}]}
        assert reopened.get("k2") is None
    finally:
        reopened.close()


def test_an_entry_is_visible_to_another_connection_at_once(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    writer = ResponseCache(path)
    reader = ResponseCache(path)
    try:
        writer.put("k", "anthropic", "claude", {"content": []}, EPOCH_1)
        assert reader.get("k") == {"content": []}  # committed per entry, no batching
    finally:
        writer.close()
        reader.close()


def test_cache_key_covers_every_part() -> None:
    base: dict[str, Any] = {
        "protocol": "openai",
        "base_url": None,
        "model": "gpt-4o",
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        "sample": "s1",
        "epoch": 1,
    }
    key = cache_key(**base)
    assert key == cache_key(**dict(reversed(list(base.items()))))  # order does not matter
    changes: dict[str, Any] = {
        "protocol": "openai-compatible",
        "base_url": "http://localhost:8000/v1",
        "model": "gpt-4o-mini",
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi!"}]},
        "sample": "s2",
        "epoch": 2,
    }
    for part, value in changes.items():
        assert cache_key(**{**base, part: value}) != key, part


# --- agents through the cache -----------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_same_request_same_episode_is_served_from_cache(
    protocol: Literal["openai", "anthropic"], cache: ResponseCache
) -> None:
    with FakeModelServer(protocol) as server:
        server.script(
            Reply(text="paid once", input_tokens=70, output_tokens=7, cached_tokens=5),
            Reply(text="should never be served"),
        )
        first = ask(server, cache)
        assert server.hits == 1
        second = ask(server, cache)
        assert server.hits == 1

    assert first.content == second.content == "paid once"
    assert first.usage is not None and second.usage is not None
    assert first.usage.cache_hits == 0
    assert second.usage.cache_hits == 1
    assert second.usage.calls == 1
    # every prompt token counts as input; Anthropic reports cache reads apart from them
    expected_input = 70 if protocol == "openai" else 75
    assert (second.usage.input_tokens, second.usage.output_tokens) == (expected_input, 7)


@pytest.mark.parametrize(
    ("context", "changes"),
    [
        (AgentContext(sample_id="s1", condition="base", epoch=2, seed=11), {}),
        (AgentContext(sample_id="s2", condition="base", epoch=1, seed=11), {}),
        (EPOCH_1, {"temperature": 0.9}),
        (EPOCH_1, {"max_tokens": 10}),
        (EPOCH_1, {"extra": {"top_k": 3}}),
        (EPOCH_1, {"model": "other-model"}),
    ],
    ids=["epoch", "sample", "temperature", "max_tokens", "extra", "model"],
)
def test_a_different_episode_or_request_misses(
    cache: ResponseCache, context: AgentContext, changes: dict[str, Any]
) -> None:
    # An explicit seed keeps the request identical when only the episode changes.
    params: dict[str, Any] = {"seed": 7, "temperature": 0.5}
    with FakeModelServer("openai") as server:
        server.script(Reply(text="first"), Reply(text="second"))
        ask(server, cache, **params)
        message = ask(server, cache, context, **{**params, **changes})

    assert server.hits == 2
    assert message.content == "second"
    assert message.usage is not None and message.usage.cache_hits == 0


def test_only_the_repeated_episode_is_served_from_cache(cache: ResponseCache) -> None:
    with FakeModelServer("openai") as server:
        ask(server, cache, EPOCH_1)
        ask(server, cache, AgentContext("s1", "base", 2, EPOCH_1.seed))
        ask(server, cache, EPOCH_1)

    assert server.hits == 2


def test_failed_calls_are_not_cached(cache: ResponseCache) -> None:
    with FakeModelServer("anthropic") as server:
        server.responder = lambda body: Reply(status=500, headers=SOON)
        with pytest.raises(InfrastructureError):
            ask(server, cache)
        failed = server.hits
        server.responder = None  # healthy again: plain "OK."
        assert ask(server, cache).content == "OK."
        assert server.hits == failed + 1


def test_an_answer_that_cannot_be_read_is_not_cached(cache: ResponseCache) -> None:
    """A garbled 200 body is retried inside the call and never stored: the cache keeps
    the first answer that parses, and a later call is served that one."""
    with FakeModelServer("openai") as server:
        server.script(Reply(raw_body='{"choices": "oops"}'))
        message = ask(server, cache)  # garbled, retried, then the plain "OK."
        assert server.hits == 2
        assert message.content == "OK."
        again = ask(server, cache)
        assert server.hits == 2
        assert again.content == "OK."
        assert again.usage is not None and again.usage.cache_hits == 1


def test_without_a_cache_every_call_reaches_the_server() -> None:
    with FakeModelServer("openai") as server:
        ask(server, None)
        ask(server, None)
    assert server.hits == 2


# --- the CLI: runs sharing one store ----------------------------------------------------------


def deedbench_run(
    server: FakeModelServer, store: Path, run_id: str, *extra: str, code: int = 0
) -> Result:
    result = CliRunner().invoke(
        app,
        [
            "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "--limit", "2", "--epochs", "1", "--store", str(store), "--run-id", run_id,
            *extra,
        ],
    )  # fmt: skip
    assert result.exit_code == code, result.output
    return result


def resume(store: Path, run_id: str, *extra: str) -> Result:
    result = CliRunner().invoke(
        app, ["run", "tac", "--run-id", run_id, "--store", str(store), *extra]
    )
    assert result.exit_code == 0, result.output
    return result


def records(store: Path, run_id: str) -> list[EpisodeRecord]:
    with closing(sqlite3.connect(store)) as db:
        rows = db.execute("SELECT record_json FROM episodes WHERE run_id = ?", (run_id,))
        return [EpisodeRecord.model_validate_json(text) for (text,) in rows]


def test_cli_second_run_is_served_entirely_from_cache(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        deedbench_run(server, store, "first")
        paid = server.hits
        assert paid >= 4 * 3
        second = deedbench_run(server, store, "second")
        assert server.hits == paid  # zero requests

    again = records(store, "second")
    assert len(again) == 4
    assert {r.status for r in again} == {"scored"}
    turns = [m for r in again for m in r.messages if m.usage is not None]
    assert len(turns) == paid
    assert all(m.usage is not None and m.usage.cache_hits == 1 for m in turns)
    assert [r.score.outcome for r in again if r.score] == [
        r.score.outcome for r in records(store, "first") if r.score
    ]
    text = " ".join(second.stdout.split())
    assert f"openai/gpt-4o: {paid} calls ({paid} from cache)" in text
    assert "cost $0.0000" in text  # nothing paid this time


def test_cli_no_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        deedbench_run(server, store, "uncached", "--no-cache")
        per_run = server.hits
        deedbench_run(server, store, "cached")  # nothing was written for it to read
        assert server.hits == 2 * per_run
        deedbench_run(server, store, "uncached-again", "--no-cache")  # nor is anything read
        assert server.hits == 3 * per_run
        deedbench_run(server, store, "from-cache")
        assert server.hits == 3 * per_run


def test_cli_resume_makes_no_calls_for_answers_already_paid(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"

    def first_turns_only(body: dict[str, Any]) -> Reply:
        """Answers each episode's first turn, then fails: every episode stops midway."""
        if any(m["role"] == "tool" for m in body["messages"]):
            return Reply(status=503, headers=SOON)
        return tac_player(body)

    with FakeModelServer("openai", first_turns_only) as server:
        deedbench_run(server, store, "interrupted", "--max-attempts", "2", code=1)  # all failed
        assert server.hits == 4 * (1 + 2)  # per episode: the first turn, then two failures
        assert {r.status for r in records(store, "interrupted")} == {"error"}

        server.responder = tac_player
        before = server.hits
        resume(store, "interrupted")
        resumed = server.requests[before:]

    assert {r.status for r in records(store, "interrupted")} == {"scored"}
    assert len(records(store, "interrupted")) == 4
    assert len(resumed) == 4 * 2  # the first turns came from the cache
    assert all(any(m["role"] == "tool" for m in body["messages"]) for body in resumed)


def test_an_answer_is_stored_with_the_episode_it_belongs_to(
    cache: ResponseCache, tmp_path: Path
) -> None:
    with FakeModelServer("openai") as server:
        ask(server, cache, EPOCH_1)
    with RunStore(tmp_path / "cache.db") as store:
        [entry] = store.responses_for(11)
    assert (entry.protocol, entry.model) == ("openai", "fake-model")
    assert json.loads(entry.response)["choices"][0]["message"]["content"] == "OK."


def test_cli_answers_cached_before_they_carried_their_episode_are_used_in_process(
    tmp_path: Path,
) -> None:
    """A store of the previous release: its answers have no episode to be shipped with a
    job, and a one-process run still finds them by key."""
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        deedbench_run(server, store, "before")
        paid = server.hits
        with closing(sqlite3.connect(store)) as db, db:
            db.execute("UPDATE responses SET sample_id = NULL, epoch = NULL, seed = NULL")
        deedbench_run(server, store, "after")
        assert server.hits == paid
