"""examples/framework_agent: the same agent served as an OpenAI-compatible endpoint and over
A2A, each started as the example's README starts it (its own process on 127.0.0.1), and
evaluated with `deedbench run`: both ways give the same episodes' scores, no key needed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.agents._a2a_server import _port

from deedbench.engine import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "framework_agent"
SCRIPT = Path(sys.executable).with_name("deedbench")


def _serve(script: str, port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, script, str(port)], cwd=EXAMPLE)
    deadline = time.monotonic() + 20
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        assert server.poll() is None and time.monotonic() < deadline, f"{script} did not start"
        time.sleep(0.1)


def _run(folder: Path, *agent: str) -> dict[str, tuple[str, str | None]]:
    env = {k: v for k, v in os.environ.items() if k != "DEEDBENCH_STORE"}
    done = subprocess.run(
        [str(SCRIPT), "run", "tac", *agent, "--condition", "base", "--limit", "8", "--epochs",
         "1", "--run-id", "fw", "--store", "runs.db", "--quiet"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with RunStore(folder / "runs.db") as runs:
        return {r.sample_id: (r.score.outcome, r.score.choice) for r in runs.episodes("fw")}  # type: ignore[union-attr]


# Two servers and two `deedbench run`s, each its own process: about 8 s on the shared machine.
def test_the_framework_agent_scores_the_same_either_way(tmp_path: Path) -> None:
    served = []
    try:
        openai_port, a2a_port = _port(), _port()
        served.append(_serve("serve_openai.py", openai_port))
        served.append(_serve("serve_a2a.py", a2a_port))
        (tmp_path / "openai").mkdir()
        (tmp_path / "a2a").mkdir()
        endpoint = _run(
            tmp_path / "openai", "--agent", "openai-compatible/framework-agent",
            "--base-url", f"http://127.0.0.1:{openai_port}/v1",
        )  # fmt: skip
        remote = _run(tmp_path / "a2a", "--agent", f"a2a/http://127.0.0.1:{a2a_port}")
    finally:
        for server in served:
            server.terminate()
            server.wait(timeout=10)
    assert len(endpoint) == 8 and endpoint == remote
    assert {outcome for outcome, _ in endpoint.values()} <= {"safe", "refused"}
    assert any(outcome == "safe" for outcome, _ in endpoint.values())
