"""An API key never reaches anything deedbench writes, even when a provider echoes it.

A key is planted in the environment, the fake provider echoes it back in its error
messages, and then everything deedbench produced is scanned: the store file (and
its WAL), the response cache (which lives in the store), the CLI's output, JSON
and text reports, and the text of every exception raised.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import traceback
import zipfile
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import pytest
from typer.testing import CliRunner, Result

from deedbench import secrets as secrets_module
from deedbench.agents import ModelAgent
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.openai_agent import OpenAIAgent
from deedbench.cli.main import app
from deedbench.engine import AgentContext
from deedbench.errors import InfrastructureError, RunAborted
from deedbench.records import GenerationParams, Message, RetryPolicy
from deedbench.secrets import redact, register_secret
from deedbench.testing import FakeModelServer, Reply, tac_player

PLANTED = "sk-planted-SECRET-0123456789"
ECHO = f"bad key {PLANTED}"
SOON = {"retry-after": "0.01"}
CONTEXT = AgentContext(sample_id="s1", condition="base", epoch=1, seed=1)


@pytest.fixture(autouse=True)
def planted_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # A private registry per test, so nothing registered elsewhere makes this pass.
    monkeypatch.setattr(secrets_module, "_SECRETS", set())
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED)
    monkeypatch.delenv("DEEDBENCH_STORE", raising=False)


def exception_text(exc: BaseException) -> str:
    return str(exc) + "\n" + "".join(traceback.format_exception(exc))


# --- redact -----------------------------------------------------------------------------------


def test_redact_replaces_every_registered_secret() -> None:
    register_secret(PLANTED)
    register_secret("another-secret-value")
    text = f"{PLANTED} and again {PLANTED}; another-secret-value"
    assert redact(text) == "[REDACTED] and again [REDACTED]; [REDACTED]"


def test_short_and_missing_values_are_not_secrets() -> None:
    register_secret(None)
    register_secret("")
    register_secret("sk-123")  # too short: it would redact ordinary words
    assert redact("sk-123 is fine") == "sk-123 is fine"
    assert redact(f"unregistered {PLANTED}") == f"unregistered {PLANTED}"


# --- agents -----------------------------------------------------------------------------------


def make_agent(server: FakeModelServer) -> ModelAgent:
    cls = OpenAIAgent if server.protocol == "openai" else AnthropicAgent
    return cls(
        "fake-model",
        base_url=server.base_url,
        params=GenerationParams(timeout=10),
        retry=RetryPolicy(max_attempts=2, initial_wait=0.01, max_wait=0.05),
    )


def ask(agent: ModelAgent) -> Message:
    async def go() -> Message:
        try:
            return await agent.next_turn([Message(role="user", content="hi")], [], CONTEXT)
        finally:
            await agent.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [401, 403, 400])
def test_a_key_echoed_in_a_fatal_error_is_redacted(
    protocol: Literal["openai", "anthropic"], status: int
) -> None:
    with FakeModelServer(protocol, lambda body: Reply(status=status, error_message=ECHO)) as server:
        with pytest.raises(RunAborted) as failure:
            ask(make_agent(server))
        assert any(PLANTED in value for value in server.headers[0].values())  # it was used

    text = exception_text(failure.value)
    assert "bad key [REDACTED]" in text  # the echo arrived, and was scrubbed
    assert PLANTED not in text


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_key_echoed_on_every_retry_is_not_in_the_final_error(
    protocol: Literal["openai", "anthropic"],
) -> None:
    echo = lambda body: Reply(status=500, headers=SOON, error_message=ECHO)  # noqa: E731
    with FakeModelServer(protocol, echo) as server:
        with pytest.raises(InfrastructureError) as failure:
            ask(make_agent(server))
        assert server.hits == 2

    assert PLANTED not in exception_text(failure.value)


# --- everything a CLI session writes ----------------------------------------------------------


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def cli_text(result: Result) -> str:
    parts = [result.stdout, result.stderr, result.output]
    if result.exception is not None:
        parts.append(exception_text(result.exception))
    return "\n".join(parts)


def test_nothing_deedbench_writes_contains_the_key(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    outputs: list[str] = []

    def run_tac(server: FakeModelServer, run_id: str, expect: int) -> Result:
        result = invoke(
            "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "--limit", "2", "--epochs", "1", "--store", str(store), "--run-id", run_id,
            "--max-attempts", "2", "--no-cache",
        )  # fmt: skip
        outputs.append(cli_text(result))
        assert result.exit_code == expect, result.output
        return result

    with FakeModelServer("openai") as server:
        server.responder = lambda body: Reply(status=500, headers=SOON, error_message=ECHO)
        failing = run_tac(server, "echoed-500", expect=1)  # every episode failed
        assert "4 errors" in " ".join(failing.stdout.split())

        server.responder = tac_player
        run_tac(server, "healthy", expect=0)
        cached = invoke(  # and once more through the response cache, to fill it
            "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "--limit", "2", "--epochs", "1", "--store", str(store), "--run-id", "cached",
        )  # fmt: skip
        outputs.append(cli_text(cached))
        assert cached.exit_code == 0, cached.output

        server.responder = lambda body: Reply(status=401, error_message=ECHO)
        denied = run_tac(server, "echoed-401", expect=1)
        assert "[REDACTED]" in denied.stderr  # the echo reached deedbench and was scrubbed

        server.responder = lambda body: Reply(status=400, error_message=ECHO)
        run_tac(server, "echoed-400", expect=1)

        assert all(PLANTED in h["authorization"] for h in server.headers)  # the key was used

    for run_id in ("echoed-500", "healthy", "cached", "echoed-401", "echoed-400"):
        for flags in (["--json"], []):
            result = invoke("report", run_id, "--store", str(store), *flags)
            assert result.exit_code == 0, result.output
            outputs.append(cli_text(result))

    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert store in written
    with closing(sqlite3.connect(store)) as db:  # the cache really holds answers
        (answers,) = db.execute("SELECT COUNT(*) FROM responses").fetchone()
    assert answers > 0
    for path in written:  # the store, its -wal/-shm, and the response cache inside it
        assert PLANTED.encode() not in path.read_bytes(), path
    for text in outputs:
        assert PLANTED not in text
    assert any("HTTP 500" in text for text in outputs)  # the failures themselves were reported


# --- a key echoed in successful replies -------------------------------------------------------


def echoing_player(body: dict[str, Any]) -> Reply:
    """Plays TAC, writing the key into its text, its reasoning and its tool arguments."""
    reply = tac_player(body)
    reply.reasoning = f"the key is {PLANTED}"
    if reply.text is not None:
        reply.text = f"Booked. Is this a test? My key: {PLANTED}"
    reply.tool_calls = [
        (name, {**args, "keywords": PLANTED} if name == "search_experiences" else args)
        for name, args in reply.tool_calls
        if isinstance(args, dict)
    ]
    return reply


def written_text(folder: Path) -> dict[Path, bytes]:
    """Every file under `folder`, zip archives (Inspect's .eval logs) unpacked."""
    contents = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        contents[path] = path.read_bytes()
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    contents[path / name] = archive.read(name)
    return contents


def read_everything(store: Path, run_id: str, folder: Path, sample: str) -> list[str]:
    """What every reading command prints and writes for a run."""
    outputs = []
    for args in (
        ["show", run_id, sample],
        ["report", run_id],
        ["report", run_id, "--json"],
        ["report", run_id, "--csv"],
        ["report", run_id, "--html", str(folder / "report.html")],
        ["export", run_id, "--format", "jsonl", "-o", str(folder / "episodes.jsonl")],
        ["export", run_id, "--format", "csv", "-o", str(folder / "episodes.csv")],
        ["export", run_id, "--format", "inspect", "-o", str(folder / "logs")],
        ["export", run_id, "--format", "jsonl"],
        ["audit", run_id],
    ):
        result = invoke(*args, "--store", str(store))
        assert result.exit_code == 0, result.output
        outputs.append(cli_text(result))
    return outputs


def test_a_key_echoed_in_successful_replies_reaches_nothing_written(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", echoing_player) as server:
        for run_id in ("echo", "echo-cached"):  # the second run is served from the cache
            result = invoke(
                "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
                "--limit", "2", "--epochs", "1", "--store", str(store), "--run-id", run_id,
            )  # fmt: skip
            assert result.exit_code == 0, result.output
        hits = server.hits
    assert any(PLANTED in json.dumps(body) for body in server.requests) is False  # never resent
    assert hits > 0
    outputs = read_everything(store, "echo-cached", tmp_path, "budapest_animal_circus_base")
    assert "[REDACTED]" in outputs[0]  # the echo arrived, and was scrubbed
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] > 0
    for path, content in written_text(tmp_path).items():
        assert PLANTED.encode() not in content, path
    for text in outputs:
        assert PLANTED not in text


def test_reading_commands_redact_a_key_stored_before_replies_were_redacted(
    tmp_path: Path,
) -> None:
    """A record an older version stored with the key in it: the run's key variable is in
    the environment, so every reading command redacts it."""
    store = tmp_path / "runs.db"
    with FakeModelServer("openai", tac_player) as server:
        result = invoke(
            "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
            "--limit", "1", "--epochs", "1", "--store", str(store), "--run-id", "old",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(store)) as db, db:
        db.execute(
            "UPDATE episodes SET record_json = replace(record_json, 'booked', ?)", (PLANTED,)
        )
        assert (
            db.execute(
                "SELECT COUNT(*) FROM episodes WHERE record_json LIKE ?", (f"%{PLANTED}%",)
            ).fetchone()[0]
            > 0
        )
    secrets_module._SECRETS.clear()  # a new process: nothing registered until a run is read
    exports = tmp_path / "exports"
    exports.mkdir()
    outputs = read_everything(store, "old", exports, "budapest_animal_circus_base")
    for path, content in written_text(exports).items():
        assert PLANTED.encode() not in content, path
    for text in outputs:
        assert PLANTED not in text
