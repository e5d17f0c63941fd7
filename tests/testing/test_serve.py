"""The fake endpoint in its own process reports when its first request came and its last
answer went (what bench/concurrency.py times start-up and exit by)."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx


def test_serve_prints_the_first_arrival_and_the_last_answer_in_wall_clock_time() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "deedbench.testing.serve", "--delay", "0.1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        before = time.time()
        for _ in range(2):
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            assert httpx.post(f"{url}/chat/completions", json=body).status_code == 200
        after = time.time()
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=10)
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    first, last = float(lines["first_request_at"]), float(lines["last_answer_at"])
    skew = 0.005  # the wall clock read on two cores of this VM differed by 0.14 ms once
    assert before - skew <= first < last <= after + skew
    assert last - first >= 0.2  # two answers 0.1 s apart at least, the second one's sent
    assert out.splitlines()[-1] == "requests: 2"
