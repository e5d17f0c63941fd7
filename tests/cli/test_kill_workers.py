"""Killing the driver of a `--workers` run at random moments loses nothing it committed.

A real `deedbench run --workers 2` of an OpenAI model against the fake server (which
numbers its answers: "chatcmpl-N" is the answer to request N) is killed with SIGKILL or
SIGTERM at seeded random moments, resumed, killed again, and finally resumed to the end.
After every kill: the workers are gone, and every record and cached answer that a
separate connection saw committed just before the kill is still there. At the end: one
record per episode, and no request was sent again for an answer the cache held: the
only repeated requests are those in flight at a kill, whose answers never reached the
store. A SIGTERM cancels at most the calls in flight (the concurrency); a SIGKILL also
loses the answers on their way to the driver.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from deedbench.testing import FakeModelServer, Reply, tac_player

pytestmark = [
    pytest.mark.slow,  # processes killed at random moments, then resumed
    pytest.mark.skipif(
        not Path("/proc/self/stat").exists(), reason="finds the workers through /proc"
    ),
]

RUN_ID = "killed"
TOTAL = 12 * 2 * 2  # --limit 12 samples x 2 conditions x --epochs 2
CONCURRENCY = 4
KILLS = 3
TIMEOUT = 60.0
LAUNCHER = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from deedbench.cli.main import main; main()"
)


def slow_player(body: dict[str, Any]) -> Reply:
    return replace(tac_player(body), delay=0.03)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer("openai", slow_player) as started:
        yield started


def start(store: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-kill-0000"}
    env.pop("DEEDBENCH_STORE", None)
    args = [sys.executable, "-c", LAUNCHER, "run", "tac", "--store", str(store)]
    args += ["--run-id", RUN_ID, "--workers", "2", "--concurrency", str(CONCURRENCY), *extra]
    return subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def read(store: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows as a separate, read-only connection sees them committed."""
    if not store.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as db:
            return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # no tables yet
        return []


def records(store: Path) -> dict[tuple[str, str, int], str]:
    sql = "SELECT sample_id, condition, epoch, record_json FROM episodes"
    return {(s, c, e): text for s, c, e, text in read(store, sql)}


def answers(store: Path) -> dict[str, str]:
    """Cached answers: cache key -> the number of the request whose answer it is."""
    rows = read(store, "SELECT key, response_json FROM responses")
    return {key: json.loads(text)["id"] for key, text in rows}


def descendants(pid: int) -> list[int]:
    """Every process below `pid`: the fork server, the workers it forked, helpers."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [], [pid]
    while frontier:
        below = [child for child, parent in parents.items() if parent in frontier]
        found += below
        frontier = below
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def body_text(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


def test_killing_the_driver_of_workers_at_random_moments_loses_nothing(
    tmp_path: Path, server: FakeModelServer
) -> None:
    rng = random.Random(12)
    store = tmp_path / "runs.db"
    first = ["--agent", "openai/gpt-4o", "--base-url", server.base_url, "--limit", "12"]
    first += ["--epochs", "2"]
    # per run: the index of its first request, the cache as the next run found it, and
    # the signal that ended it (0: it finished)
    starts: list[int] = []
    caches: list[dict[str, str]] = []
    ends: list[int] = []
    for attempt in range(KILLS + 1):
        before_run = len(records(store))
        starts.append(server.hits)
        process = start(store, *(first if attempt == 0 else ()))
        try:
            if attempt < KILLS:
                deadline = time.monotonic() + TIMEOUT
                while len(records(store)) <= before_run and process.poll() is None:
                    assert time.monotonic() < deadline, "no episode stored in time"
                    time.sleep(0.01)
                time.sleep(rng.uniform(0.0, 0.6))
            if attempt < KILLS and process.poll() is None:
                workers = descendants(process.pid)
                assert len(workers) >= 3, workers  # two workers, their fork server, helpers
                kill = rng.choice([signal.SIGKILL, signal.SIGTERM])
                committed, paid = records(store), answers(store)
                process.send_signal(kill)
                out, err = process.communicate(timeout=TIMEOUT)
                ends.append(kill)
                if kill == signal.SIGTERM and process.returncode == 143:
                    assert f"terminated: {len(records(store))} of {TOTAL} episodes scored" in err
                    assert not read(store, "SELECT * FROM run_locks")  # released on the way out
                elif kill == signal.SIGTERM:  # the run had just finished its episodes
                    assert len(records(store)) == TOTAL, err
                else:
                    assert process.returncode == -signal.SIGKILL
                    left = read(store, "SELECT pid FROM run_locks")  # for the next to take over
                    finished = len(records(store)) == TOTAL  # killed while printing the summary
                    assert left == [(process.pid,)] or (finished and not left), left
                deadline = time.monotonic() + 10
                while any(alive(pid) for pid in workers):  # they end with their driver
                    assert time.monotonic() < deadline, [p for p in workers if alive(p)]
                    time.sleep(0.02)
                after = records(store)
                assert {k: after.get(k) for k in committed} == committed
                cached = answers(store)
                assert {k: cached.get(k) for k in paid} == paid
            else:
                out, err = process.communicate(timeout=TIMEOUT)
                assert process.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
                ends.append(0)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        caches.append(answers(store))
        if len(records(store)) == TOTAL and attempt >= 1:
            break
    assert len([end for end in ends if end]) >= 2

    rows = read(store, "SELECT sample_id, condition, epoch, status FROM episodes")
    assert len(rows) == len({row[:3] for row in rows}) == TOTAL
    assert {row[3] for row in rows} == {"scored"}

    # Nothing paid twice for a cached answer: a request repeated in a later run was one
    # whose earlier answer the cache did not hold when that run started.
    bodies = [body_text(b) for b in server.requests]
    first_seen: dict[str, list[int]] = {}
    repeated = [0] * len(starts)  # by the run that sent the request before
    for number, text in enumerate(bodies):
        run = max(i for i, s in enumerate(starts) if s <= number)
        earlier = first_seen.setdefault(text, [])
        for previous in earlier:
            assert previous < starts[run], f"request {number} repeated within one run"
            held = set(caches[run - 1].values())
            assert f"chatcmpl-{previous}" not in held, f"request {number} was paid twice"
        if earlier:
            repeated[max(i for i, s in enumerate(starts) if s <= earlier[-1])] += 1
        earlier.append(number)
    final = answers(store)
    assert len(final) == len(first_seen)  # one cached answer per distinct request
    assert server.hits == len(final) + sum(repeated)
    for run, end in enumerate(ends):
        if end == signal.SIGTERM:  # only the calls it cancelled were asked again
            assert repeated[run] <= CONCURRENCY, (ends, repeated)
