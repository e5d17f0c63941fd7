"""`deedbench run` with model agents, end to end through the CLI and a fake provider.

Each test points the CLI at a `FakeModelServer` on 127.0.0.1 that plays TAC
(`tac_player`) in the OpenAI or Anthropic protocol, then checks the exit code,
what the store holds, what the summary says, and what the provider received.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import pytest
from tests.cli.summaries import PrintedSummaries, stored_summary
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.records import EpisodeRecord, RunConfig
from deedbench.testing import FakeModelServer, Reply, tac_player

EPISODES = 4  # --limit 2 samples x 2 conditions x --epochs 1


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli-openai-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-cli-anthropic-0000")
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    monkeypatch.delenv("DEEDBENCH_STORE", raising=False)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def start(agent: str, store: Path, run_id: str, *extra: str) -> Result:
    return invoke(
        "run", "tac", "--agent", agent, "--limit", "2", "--epochs", "1",
        "--store", str(store), "--run-id", run_id, *extra,
    )  # fmt: skip


def flat(text: str) -> str:
    """Text with every run of whitespace as one space (rich wraps long lines)."""
    return " ".join(text.split())


def stored_config(store: Path, run_id: str) -> RunConfig:
    with closing(sqlite3.connect(store)) as db:
        (text,) = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return RunConfig.model_validate_json(text)


def stored_records(store: Path, run_id: str) -> list[EpisodeRecord]:
    with closing(sqlite3.connect(store)) as db:
        rows = db.execute("SELECT record_json FROM episodes WHERE run_id = ?", (run_id,))
        return [EpisodeRecord.model_validate_json(text) for (text,) in rows]


def run_count(store: Path) -> int:
    if not store.exists():
        return 0
    with closing(sqlite3.connect(store)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "runs" not in tables:
            return 0
        (count,) = db.execute("SELECT COUNT(*) FROM runs").fetchone()
    return int(count)


def json_report(store: Path, run_id: str) -> dict[str, Any]:
    result = invoke("report", run_id, "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


# --- whole runs through each protocol ---------------------------------------------------------


def test_openai_run_end_to_end_with_tokens_and_cost(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        result = start("openai/gpt-4o", store, "oa", "--base-url", server.base_url)

    assert result.exit_code == 0, result.output
    records = stored_records(store, "oa")
    assert len(records) == EPISODES
    assert {r.status for r in records} == {"scored"}
    assert all(r.score is not None for r in records)

    calls = server.hits
    assert calls >= EPISODES * 3  # search, buy, report back
    cost = calls * (100 * 2.5 + 20 * 10.0) / 1e6  # gpt-4o list price, 100 in / 20 out per call
    out = flat(result.stdout)
    assert f"episodes: {EPISODES} scored, 0 errors" in out
    assert (
        f"openai/gpt-4o: {calls} calls (0 from cache), {100 * calls:,} input tokens (0 cached), "
        f"{20 * calls:,} output tokens; cost ${cost:.4f} at prices of 2025-06-01"
    ) in out

    body = server.requests[0]
    assert body["model"] == "gpt-4o"
    assert body["temperature"] == 0.7  # TAC's generation default
    assert [t["function"]["name"] for t in body["tools"]] == [
        "search_experiences",
        "get_experience_details",
        "check_availability",
        "purchase_tickets",
    ]
    assert body["messages"][0]["role"] == "system"
    assert isinstance(body["seed"], int)

    config = stored_config(store, "oa")
    assert config.agent == "openai/gpt-4o"
    assert config.agent_settings is not None
    assert config.agent_settings.params.temperature == 0.7
    assert config.agent_settings.base_url == server.base_url

    [costs] = json_report(store, "oa")["costs"]
    assert costs["model"] == "openai/gpt-4o"
    assert costs["cost_usd"] == pytest.approx(cost)
    assert costs["usage"]["calls"] == calls
    assert costs["paid_calls"] == calls

    # the recorded run reads back like any other: transcript, export, comparison
    sample = records[0].sample_id
    shown = invoke("show", "oa", sample, "--store", str(store))
    assert shown.exit_code == 0 and "★ deciding call purchase_tickets" in shown.output
    exported = invoke("export", "oa", "--format", "csv", "--store", str(store))
    assert exported.exit_code == 0
    assert "assistant.input_tokens" in exported.output.splitlines()[0]
    assert len(exported.output.splitlines()) == EPISODES + 1
    compared = invoke("compare", "oa", "--json", "--store", str(store))
    assert compared.exit_code == 0
    assert {row["agent"] for row in json.loads(compared.stdout)["rows"]} == {"openai/gpt-4o"}


def test_a_model_runs_closing_summary_equals_the_stored_runs(
    tmp_path: Path, printed_summaries: PrintedSummaries
) -> None:
    """Tallied from the whole records as they arrived (messages, usage, costs, errors),
    the closing summary is the one `report` computes from the stored summaries."""
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        result = start("openai/gpt-4o", store, "oa", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    failed = start(
        "openai-compatible/m", store, "refused", "--base-url", url, "--max-attempts", "1"
    )
    assert failed.exit_code == 1, failed.output

    printed, read = printed_summaries
    assert read == []
    priced, refused = printed
    assert priced.costs and priced.costs[0].cost_usd is not None
    assert priced.model_dump() == stored_summary(store, "oa", closing=True).model_dump()
    assert refused.errors == EPISODES and refused.error_kinds
    assert refused.model_dump() == stored_summary(store, "refused", closing=True).model_dump()


def test_anthropic_run_end_to_end_with_a_dated_model_priced(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    spec = "anthropic/claude-sonnet-4-20250514"
    with FakeModelServer("anthropic", tac_player) as server:
        result = start(spec, store, "an", "--base-url", server.base_url)

    assert result.exit_code == 0, result.output
    records = stored_records(store, "an")
    assert len(records) == EPISODES
    assert {r.status for r in records} == {"scored"}

    calls = server.hits
    cost = calls * (100 * 3.0 + 20 * 15.0) / 1e6  # claude-sonnet-4 list price
    out = flat(result.stdout)
    assert f"{spec}: {calls} calls (0 from cache)" in out
    assert f"cost ${cost:.4f} at prices of 2025-06-01" in out

    body = server.requests[0]
    assert body["model"] == "claude-sonnet-4-20250514"
    assert "You are a travel booking assistant" in body["system"]
    assert all(m["role"] != "system" for m in body["messages"])
    assert all("input_schema" in t for t in body["tools"])
    assert body["temperature"] == 0.7
    assert body["max_tokens"] == 4096
    assert any(
        block.get("type") == "tool_result"
        for request in server.requests
        for m in request["messages"]
        for block in m["content"]
    )


def test_unpriced_model_reports_unknown_cost_never_zero(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        result = start(
            "openai-compatible/my-local-model", store, "local", "--base-url", server.base_url
        )

    assert result.exit_code == 0, result.output
    assert {r.status for r in stored_records(store, "local")} == {"scored"}
    out = flat(result.stdout)
    assert f"openai-compatible/my-local-model: {server.hits} calls" in out
    assert "cost unknown (no price for this model)" in out
    assert "$0.0000" not in out
    # openai-compatible reads its own variable: the OpenAI key is not sent to a third party
    assert "sk-test-cli-openai-0000" not in server.headers[0].get("authorization", "")
    assert server.requests[0]["model"] == "my-local-model"

    [costs] = json_report(store, "local")["costs"]
    assert costs["cost_usd"] is None
    assert costs["price_as_of"] is None


# --- settings recorded with the run -----------------------------------------------------------


def test_generation_flags_are_sent_and_recorded_but_never_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-test-custom-variable-31337"
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("MY_DEEDBENCH_KEY", key)
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        result = start(
            "openai/gpt-4o", store, "flags",
            "--base-url", server.base_url, "--api-key-env", "MY_DEEDBENCH_KEY",
            "--temperature", "0.2", "--max-tokens", "256", "--top-p", "0.8",
            "--model-seed", "5", "--reasoning-effort", "low",
            "-M", "top_k=4", "-M", 'chat_template_kwargs={"enable_thinking": false}',
            "-M", "tag=plain",
            "--timeout", "30", "--max-attempts", "3", "--max-retry-seconds", "60",
        )  # fmt: skip

    assert result.exit_code == 0, result.output
    extra = {"top_k": 4, "chat_template_kwargs": {"enable_thinking": False}, "tag": "plain"}
    for body in server.requests:
        assert body["temperature"] == 0.2
        assert body["max_completion_tokens"] == 256
        assert body["top_p"] == 0.8
        assert body["seed"] == 5
        assert body["reasoning_effort"] == "low"
        for name, value in extra.items():
            assert body[name] == value
    assert key in server.headers[0]["authorization"]

    typed = stored_config(store, "flags").agent_settings
    assert typed is not None
    settings = typed.model_dump()
    assert settings["api_key_env"] == "MY_DEEDBENCH_KEY"
    assert settings["base_url"] == server.base_url
    assert settings["max_attempts"] == 3
    assert settings["max_retry_seconds"] == 60.0
    assert settings["params"] == {
        "temperature": 0.2,
        "max_tokens": 256,
        "top_p": 0.8,
        "seed": 5,
        "reasoning_effort": "low",
        "timeout": 30.0,
        "extra": extra,
    }
    assert key not in json.dumps(settings)
    assert key.encode() not in store.read_bytes()
    assert key not in result.output


def test_a_resumed_model_run_keeps_its_recorded_settings(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"

    def first_turn_then_outage(body: dict[str, Any]) -> Reply:
        if any(m["role"] == "tool" for m in body["messages"]):
            return Reply(status=500, headers={"retry-after": "0.01"})
        return tac_player(body)

    with FakeModelServer("openai", first_turn_then_outage) as server:
        first = start(
            "openai/gpt-4o", store, "keep", "--base-url", server.base_url,
            "--temperature", "0.1", "--max-attempts", "2", "--no-cache",
        )  # fmt: skip
        assert first.exit_code == 1, first.output  # every episode failed
        assert "4 errors" in flat(first.stdout)
        server.responder = tac_player
        before = server.hits
        resumed = invoke("run", "tac", "--run-id", "keep", "--store", str(store), "--no-cache")

    assert resumed.exit_code == 0, resumed.output
    assert "resuming run keep" in flat(resumed.stdout)
    assert {r.status for r in stored_records(store, "keep")} == {"scored"}
    assert len(stored_records(store, "keep")) == EPISODES
    assert {body["temperature"] for body in server.requests[before:]} == {0.1}


# --- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "variable", "extra"),
    [
        ("openai/gpt-4o", "OPENAI_API_KEY", []),
        ("anthropic/claude-sonnet-4", "ANTHROPIC_API_KEY", []),
        ("openai/gpt-4o", "MY_UNSET_KEY_VARIABLE", ["--api-key-env", "MY_UNSET_KEY_VARIABLE"]),
    ],
)
def test_missing_api_key_exits_1_naming_the_variable(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    variable: str,
    extra: list[str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv(variable, raising=False)
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        result = start(agent, store, "nokey", "--base-url", server.base_url, *extra)

    assert result.exit_code == 1, result.output
    assert variable in flat(result.stderr)
    assert server.hits == 0
    assert run_count(store) == 0  # nothing was created for a run that could not start


def test_openai_compatible_without_base_url_exits_2(tmp_path: Path) -> None:
    result = start("openai-compatible/my-local-model", tmp_path / "runs.db", "nourl")

    assert result.exit_code == 2, result.output
    assert "--base-url" in flat(result.stderr)
    assert run_count(tmp_path / "runs.db") == 0


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_rejected_credentials_exit_1_with_nothing_scored(
    tmp_path: Path, protocol: Literal["openai", "anthropic"]
) -> None:
    store = tmp_path / "runs.db"
    agent = "openai/gpt-4o" if protocol == "openai" else "anthropic/claude-sonnet-4"
    variable = "OPENAI_API_KEY" if protocol == "openai" else "ANTHROPIC_API_KEY"
    with FakeModelServer(
        protocol, lambda body: Reply(status=401, error_message="invalid api key")
    ) as server:
        result = start(agent, store, "denied", "--base-url", server.base_url)
        assert 1 <= server.hits <= EPISODES  # one request per episode at most: no retries
        assert result.exit_code == 1, result.output
        err = flat(result.stderr)
        assert "authentication failed" in err
        assert variable in err
        assert "--run-id denied" in err  # how to resume
        assert [r for r in stored_records(store, "denied") if r.status == "scored"] == []

        server.responder = tac_player  # the key is fixed: the same run id resumes
        resumed = invoke("run", "tac", "--run-id", "denied", "--store", str(store))

    assert resumed.exit_code == 0, resumed.output
    assert {r.status for r in stored_records(store, "denied")} == {"scored"}
    assert len(stored_records(store, "denied")) == EPISODES


def test_a_run_in_which_every_episode_failed_exits_1_with_each_kind_of_error_counted(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"  # nothing listens once closed
    result = start(
        "openai-compatible/m", store, "refused", "--base-url", url, "--max-attempts", "2",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    out = flat(result.stdout)
    assert "episodes: 0 scored, 4 errors" in out
    assert "error (4 episodes): openai-compatible/m: gave up after 2 attempts" in out
    assert f"connection refused: {url}" in out
    assert "timed out" not in out
    err = flat(result.stderr)
    assert "every episode failed (4 errors" in err
    assert "--run-id refused" in err  # how to resume


def test_a_stopped_run_says_how_many_episodes_are_scored_not_stored(tmp_path: Path) -> None:
    """Four error records are stored, none scored: the words say which they count."""
    store = tmp_path / "runs.db"
    with FakeModelServer(
        "openai", lambda body: Reply(status=500, headers={"retry-after": "0"})
    ) as server:
        first = start(
            "openai/gpt-4o", store, "down", "--base-url", server.base_url, "--max-attempts", "1"
        )
        assert first.exit_code == 1
        server.responder = lambda body: Reply(status=401)
        resumed = invoke("run", "tac", "--run-id", "down", "--store", str(store))
    assert resumed.exit_code == 1
    err = flat(resumed.stderr)
    assert "run stopped: 0 of 4 episodes scored, 4 failed (run again on resume)" in err
    assert "stored" not in err


def test_timeouts_in_a_run_come_with_what_to_change(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    slow_once = iter([True])

    def slow_first_call(body: dict[str, Any]) -> Reply:
        # Ten times the timeout: on a loaded machine (CI, 2 cores, Ray beside) a reply
        # 0.7 s past it once arrived before the client's timer ran, and nothing timed out.
        reply = tac_player(body)
        reply.delay = 3.0 if next(slow_once, False) else 0.0
        return reply

    with FakeModelServer("openai", slow_first_call) as server:
        result = start(
            "openai/gpt-4o", store, "slow", "--base-url", server.base_url,
            "--timeout", "0.3", "--concurrency", "1",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = flat(result.stdout)
    assert "episodes: 4 scored, 0 errors" in out
    assert "1 model calls timed out" in out
    assert "--concurrency 1 and a --timeout above its slowest answer" in out


def test_a_context_overflow_is_scored_and_shown_apart_from_refusals(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player, context_limit=1) as server:
        result = start("openai/gpt-4o", store, "long", "--base-url", server.base_url)
        assert server.hits == EPISODES  # one request each, none retried, the run went on
        assert result.exit_code == 0, result.output
        out = flat(result.stdout)
        assert "episodes: 4 scored, 0 errors" in out
        assert "base outcomes: context_exceeded 2" in out
        assert "base ended: context_exceeded 2" in out
        resumed = invoke("run", "tac", "--run-id", "long", "--store", str(store))
        assert resumed.exit_code == 0, resumed.output
        assert "0 of 4 episodes to run" in flat(resumed.stdout)
        assert server.hits == EPISODES


def test_multi_turn_tool_use_against_a_strict_server(tmp_path: Path) -> None:
    """llama-cpp-python's server refuses `"content": null` beside tool calls with HTTP 500."""
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player, strict=True) as server:
        result = start("openai-compatible/m", store, "strict", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    records = stored_records(store, "strict")
    assert {r.status for r in records} == {"scored"}
    assert all(r.score and r.score.outcome != "refused" for r in records)  # they all bought
    assert server.hits == 3 * EPISODES  # search, buy, report back: nothing refused or retried


def test_rejected_credentials_leave_zero_scored_records(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", lambda body: Reply(status=401)) as server:
        result = start("openai/gpt-4o", store, "denied", "--base-url", server.base_url)

    assert result.exit_code == 1
    assert "authentication failed" in flat(result.stderr)
    assert [r for r in stored_records(store, "denied") if r.status == "scored"] == []
    summary = json_report(store, "denied")
    assert summary["scored"] == 0
    assert summary["planned"] == EPISODES


def test_a_price_file_prices_a_local_model(tmp_path: Path) -> None:
    """`--prices FILE` adds or overrides entries; the report names both tables' dates."""
    store = tmp_path / "runs.db"
    prices = tmp_path / "prices.json"
    table = {
        "as_of": "2026-11-30",
        "models": {"openai-compatible/my-local-model": {"input": 1.0, "output": 2.0}},
    }
    prices.write_text(json.dumps(table), encoding="utf-8")
    with FakeModelServer("openai", tac_player) as server:
        result = start(
            "openai-compatible/my-local-model", store, "local", "--base-url", server.base_url
        )
        calls = server.hits
    assert result.exit_code == 0, result.output
    report = invoke("report", "local", "--store", str(store), "--prices", str(prices))
    assert report.exit_code == 0, report.output
    cost = calls * (100 * 1.0 + 20 * 2.0) / 1e6
    assert f"cost ${cost:.4f} at prices of 2025-06-01; prices.json: 2026-11-30" in flat(
        report.stdout
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"models": 1}', encoding="utf-8")
    failed = invoke("report", "local", "--store", str(store), "--prices", str(broken))
    assert failed.exit_code == 2
    assert "not a price table" in flat(failed.output)


def test_workers_share_the_store_and_the_cache(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    flags = ("--limit", "4", "--epochs", "2", "--workers", "2")
    with FakeModelServer("openai", tac_player) as server:
        first = invoke(
            "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "--store", str(store), "--run-id", "split", *flags,
        )  # fmt: skip
        assert first.exit_code == 0, first.output
        paid = server.hits
        again = invoke(
            "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "--store", str(store), "--run-id", "split-again", *flags,
        )  # fmt: skip
        assert again.exit_code == 0, again.output
        assert server.hits == paid  # both workers' calls were cached by the first run's two
    records = stored_records(store, "split")
    assert len(records) == len({r.key for r in records}) == 16
    assert all(r.status == "scored" for r in records)
    assert sum(r.usage["assistant"].calls for r in records) == paid
    replayed = stored_records(store, "split-again")
    assert all(r.usage["assistant"].cache_hits == r.usage["assistant"].calls for r in replayed)
    assert {r.key: r.score for r in replayed} == {r.key: r.score for r in records}


def test_workers_get_a_model_played_customer_s_cached_answers_too(tmp_path: Path) -> None:
    """The customer asks as its own sample ("<task>:user", epoch 0) with the episode's
    seed: a job must carry its answers as well as the agent's."""
    store = tmp_path / "runs.db"
    with FakeModelServer("openai") as server:  # "OK." to everyone, to the step limit
        flags = [
            "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "-T", "user=llm:openai/gpt-4o-mini", "--user-base-url", server.base_url,
            "--limit", "1", "--epochs", "1", "--workers", "2", "--store", str(store),
        ]  # fmt: skip
        first = invoke("run", "retail", *flags, "--run-id", "desk")
        assert first.exit_code == 0, first.output
        paid = server.hits
        assert sum(body["model"] == "gpt-4o-mini" for body in server.requests) > 0
        again = invoke("run", "retail", *flags, "--run-id", "desk-again")
        assert again.exit_code == 0, again.output
        assert server.hits == paid


def test_a_model_played_customer_takes_its_own_generation_parameters(tmp_path: Path) -> None:
    """--user-max-tokens and -U reach the customer's requests only; -M the agent's only
    (a llama.cpp server shows a customer its phone's tools only with a tool_choice)."""
    store = tmp_path / "runs.db"
    with FakeModelServer("openai") as server:
        result = invoke(
            "run", "retail", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "-M", "seed_hint=7", "-T", "user=llm:openai/gpt-4o-mini",
            "--user-base-url", server.base_url, "--user-max-tokens", "96",
            "-U", "tool_choice=auto", "-U", 'stop=["###STOP###"]',
            "--limit", "1", "--epochs", "1", "--store", str(store),
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        users = [b for b in server.requests if b["model"] == "gpt-4o-mini"]
        agents = [b for b in server.requests if b["model"] == "gpt-4o"]
    assert users and agents
    assert all(b.get("max_tokens") == 96 or b.get("max_completion_tokens") == 96 for b in users)
    assert all(b["tool_choice"] == "auto" and b["stop"] == ["###STOP###"] for b in users)
    assert all("seed_hint" in b for b in agents) and not any("seed_hint" in b for b in users)
    assert not any(b.get("stop") == ["###STOP###"] for b in agents)
