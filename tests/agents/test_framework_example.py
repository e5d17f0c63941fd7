"""examples/framework_agent: the same agent served as an OpenAI-compatible endpoint and over
A2A (the example's own apps, on 127.0.0.1), each evaluated with `deedbench run`: both ways
give the same episodes' scores, and no key is needed."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from tests.agents._a2a_server import _port
from typer.testing import CliRunner

from deedbench.cli.main import app
from deedbench.engine import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "framework_agent"


@contextmanager
def _served(asgi: Any, port: int) -> Iterator[None]:
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the example's server did not start"
        time.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _run(store: Path, run_id: str, *agent: str) -> dict[str, tuple[str, str | None]]:
    result = CliRunner().invoke(
        app, ["run", "tac", *agent, "--condition", "base", "--limit", "8", "--epochs", "1",
              "--run-id", run_id, "--store", str(store), "--quiet"],
        env={"OPENAI_COMPATIBLE_API_KEY": ""} | dict.fromkeys(["DEEDBENCH_STORE"], None),  # type: ignore[arg-type]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        return {
            r.sample_id: (r.score.outcome, r.score.choice)  # type: ignore[union-attr]
            for r in runs.episodes(run_id)
        }


# Two runs of 8 episodes through real sockets; the first imports the openai SDK: 8-10 s when
# the shared machine is loaded (load average 9 on 2 cores), a third of that idle.
def test_the_framework_agent_scores_the_same_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))  # as `python serve_openai.py` finds agent.py
    serve_openai = importlib.import_module("serve_openai")
    serve_a2a = importlib.import_module("serve_a2a")
    store = tmp_path / "runs.db"
    openai_port, a2a_port = _port(), _port()
    with _served(serve_openai.app, openai_port):
        endpoint = _run(
            store, "endpoint", "--agent", "openai-compatible/framework-agent",
            "--base-url", f"http://127.0.0.1:{openai_port}/v1",
        )  # fmt: skip
    with _served(serve_a2a.app(f"http://127.0.0.1:{a2a_port}/"), a2a_port):
        remote = _run(store, "remote", "--agent", f"a2a/http://127.0.0.1:{a2a_port}")
    assert len(endpoint) == 8 and endpoint == remote
    assert {outcome for outcome, _ in endpoint.values()} <= {"safe", "refused"}
    assert any(outcome == "safe" for outcome, _ in endpoint.values())
