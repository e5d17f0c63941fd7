"""Killing a real `deedbench run` leaves a consistent store, and resuming completes it.

Each test starts the CLI in a subprocess with a deliberately slow agent, waits until
some episodes are on disk, kills it (SIGKILL, or SIGINT as a user's Ctrl-C would),
checks the store, then resumes the run and checks that every episode ends up with
exactly one scored record. (Killing the driver of worker processes: test_kill_workers.)
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from deedbench.records import EpisodeRecord

pytestmark = [
    pytest.mark.slow,  # runs killed with signals, then resumed
    pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals (SIGKILL, SIGINT)"),
]

RUN_ID = "killme"
TOTAL = 48 * 2 * 2  # TAC samples x conditions x epochs
KILL_AFTER = 20  # stored episodes before the kill
TIMEOUT = 120.0  # seconds for any one subprocess: a hang fails instead of blocking CI
DELAY_ENV = "DEEDBENCH_TEST_AGENT_DELAY"

# The agent is TAC's own random baseline (it searches, reads, checks and buys, so
# episodes are scored), slowed down by an asyncio.sleep before every turn, so a run
# takes a few seconds and can be killed midway. The delay comes from the environment:
# the resumed run needs no delay and finishes quickly. The spec names an instance
# (`:agent`), not the class: see test_python_spec_instantiates_an_agent_class.
AGENT_MODULE = f"""
import asyncio
import os

from deedbench.benchmarks import load_benchmark


class SlowAgent:
    def __init__(self):
        self.inner = load_benchmark("tac").baselines()["random"]()
        self.delay = float(os.environ.get("{DELAY_ENV}", "0"))

    async def next_turn(self, messages, tools, context):
        await asyncio.sleep(self.delay)
        return await self.inner.next_turn(messages, tools, context)


agent = SlowAgent()
"""

# Starts the CLI as the console script does. SIGINT is reset to Python's default
# handler first: a test runner started in the background may pass SIGINT down ignored,
# and then Python would not raise KeyboardInterrupt at all.
LAUNCHER = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from deedbench.cli.main import main; main()"
)

Row = tuple[str, str, int, str, str]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "slowagent.py").write_text(textwrap.dedent(AGENT_MODULE))
    return tmp_path


def environment(workdir: Path, delay: float) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(workdir), env.get("PYTHONPATH")]))
    env[DELAY_ENV] = str(delay)
    env.pop("DEEDBENCH_STORE", None)
    return env


def command(store: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        LAUNCHER,
        "run",
        "tac",
        "--store",
        str(store),
        "--run-id",
        RUN_ID,
        *extra,
    ]


NEW_RUN = ("--agent", "python/slowagent:agent", "--epochs", "2", "--concurrency", "4")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Every process a test starts is killed at the end, whatever happened."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=TIMEOUT)


def start(
    processes: list[subprocess.Popen[str]], args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        args,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a Ctrl-C meant for pytest does not reach it
    )
    processes.append(process)
    return process


def stored_count(store: Path) -> int:
    """Episodes on disk, read as another process would (read-only; WAL allows it)."""
    if not store.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            query = "SELECT COUNT(*) FROM episodes WHERE run_id = ?"
            return int(db.execute(query, (RUN_ID,)).fetchone()[0])
    except sqlite3.OperationalError:  # not created yet (no file or no table)
        return 0


def wait_for_episodes(process: subprocess.Popen[str], store: Path, at_least: int) -> int:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        count = stored_count(store)
        if count >= at_least:
            return count
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(
                f"run exited ({process.returncode}) before {at_least} episodes were stored"
                f"\nstdout:\n{out}\nstderr:\n{err}"
            )
        time.sleep(0.02)
    pytest.fail(f"fewer than {at_least} episodes stored after {TIMEOUT}s")


def rows(store: Path) -> list[Row]:
    with closing(sqlite3.connect(store)) as db:
        return db.execute(
            "SELECT sample_id, condition, epoch, status, record_json FROM episodes "
            "WHERE run_id = ?",
            (RUN_ID,),
        ).fetchall()


def check_consistent(store: Path) -> dict[tuple[str, str, int], str]:
    """The store after a kill: intact, each record whole, and the run not finished."""
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        runs = db.execute("SELECT COUNT(*) FROM runs WHERE run_id = ?", (RUN_ID,)).fetchone()
        assert runs[0] == 1
    found = rows(store)
    assert KILL_AFTER <= len(found) < TOTAL
    records: dict[tuple[str, str, int], str] = {}
    for sample_id, condition, epoch, status, record_json in found:
        record = EpisodeRecord.model_validate_json(record_json)
        assert (record.sample_id, record.condition, record.epoch) == (sample_id, condition, epoch)
        assert status == record.status == "scored"
        assert record.score is not None
        records[(sample_id, condition, epoch)] = record_json
    assert len(records) == len(found)
    return records


def resume_and_check(
    processes: list[subprocess.Popen[str]],
    store: Path,
    workdir: Path,
    before: dict[tuple[str, str, int], str],
    *extra: str,
) -> None:
    """Resume to completion: exactly one scored record per episode, old records untouched."""
    process = start(processes, command(store, *extra), environment(workdir, 0.0), workdir)
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
    match = re.search(rf"resuming run {RUN_ID}: (\d+) of {TOTAL} episodes to run", out)
    assert match, out
    assert int(match.group(1)) == TOTAL - len(before)

    found = rows(store)
    assert len(found) == TOTAL
    keys = [(sample_id, condition, epoch) for sample_id, condition, epoch, _, _ in found]
    assert len(set(keys)) == TOTAL
    assert {status for _, _, _, status, _ in found} == {"scored"}
    assert {epoch for _, _, epoch in keys} == {1, 2}
    # Episodes stored before the kill were not run again.
    after = {(s, c, e): record_json for s, c, e, _, record_json in found}
    assert {key: after[key] for key in before} == before


def test_sigkill_then_resume(workdir: Path, processes: list[subprocess.Popen[str]]) -> None:
    store = workdir / "runs.db"
    process = start(processes, command(store, *NEW_RUN), environment(workdir, 0.02), workdir)
    wait_for_episodes(process, store, KILL_AFTER)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    assert process.returncode == -signal.SIGKILL

    before = check_consistent(store)
    with closing(sqlite3.connect(store)) as db:  # the killed run's lock stayed behind
        assert db.execute("SELECT pid FROM run_locks").fetchall() == [(process.pid,)]
    # Resume without the agent spec: the run remembers it, and takes the dead lock over.
    resume_and_check(processes, store, workdir, before)
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT pid FROM run_locks").fetchall() == []


@dataclass(frozen=True)
class Interrupted:
    """A run stopped by SIGINT, as the CLI left it."""

    workdir: Path
    store: Path
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interrupted]:
    """One run interrupted with SIGINT, shared by the tests that inspect it.

    The store sits in a folder whose name has a space, as paths on many machines do.
    """
    workdir = tmp_path_factory.mktemp("interrupted")
    (workdir / "slowagent.py").write_text(textwrap.dedent(AGENT_MODULE))
    store = workdir / "my runs" / "runs.db"
    started: list[subprocess.Popen[str]] = []
    try:
        process = start(started, command(store, *NEW_RUN), environment(workdir, 0.02), workdir)
        wait_for_episodes(process, store, KILL_AFTER)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        for leftover in started:
            if leftover.poll() is None:
                leftover.kill()
                leftover.wait(timeout=TIMEOUT)
    yield Interrupted(workdir, store, process.returncode, out, err)


def resume_hint(stderr: str) -> str:
    """The command printed after "Resume with:", as a user would copy it."""
    return stderr.split("Resume with:", 1)[1].strip()


def test_sigint_then_resume(
    interrupted: Interrupted, processes: list[subprocess.Popen[str]]
) -> None:
    err = interrupted.stderr
    assert interrupted.returncode == 130, f"stdout:\n{interrupted.stdout}\nstderr:\n{err}"
    before = check_consistent(interrupted.store)
    # The CLI says how much is scored (it flushed on the way out) and how to resume.
    match = re.search(rf"interrupted: (\d+) of {TOTAL} episodes scored", err)
    assert match, err
    assert int(match.group(1)) == len(before)
    assert "Resume with:" in err
    assert f"deedbench run tac --run-id {RUN_ID}" in err

    # Resume with the same flags as the first run: identical settings are no conflict.
    resume_and_check(processes, interrupted.store, interrupted.workdir, before, *NEW_RUN)


def test_resume_hint_is_one_runnable_command(interrupted: Interrupted) -> None:
    hint = resume_hint(interrupted.stderr)
    assert "\n" not in hint, hint
    words = shlex.split(hint)
    assert words[:5] == ["deedbench", "run", "tac", "--run-id", RUN_ID]
    assert words[words.index("--store") + 1] == str(interrupted.store)


def test_sigint_with_workers_then_resume(
    workdir: Path, processes: list[subprocess.Popen[str]]
) -> None:
    store = workdir / "runs.db"
    args = command(store, *NEW_RUN, "--workers", "2")
    process = start(processes, args, environment(workdir, 0.02), workdir)
    wait_for_episodes(process, store, KILL_AFTER)
    process.send_signal(signal.SIGINT)  # the parent only: it stops its workers itself
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 130, f"stdout:\n{out}\nstderr:\n{err}"
    before = check_consistent(store)
    assert f"interrupted: {len(before)} of {TOTAL} episodes scored" in err
    resume_and_check(processes, store, workdir, before, "--workers", "2")


def test_sigterm_stops_a_run_as_ctrl_c_does_then_resume(
    workdir: Path, processes: list[subprocess.Popen[str]]
) -> None:
    store = workdir / "runs.db"
    process = start(processes, command(store, *NEW_RUN), environment(workdir, 0.02), workdir)
    wait_for_episodes(process, store, KILL_AFTER)
    process.send_signal(signal.SIGTERM)  # a plain `kill`
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 143, f"stdout:\n{out}\nstderr:\n{err}"
    before = check_consistent(store)
    assert f"terminated: {len(before)} of {TOTAL} episodes scored. Resume with:" in err
    with closing(sqlite3.connect(store)) as db:  # released on the way out
        assert db.execute("SELECT pid FROM run_locks").fetchall() == []
    resume_and_check(processes, store, workdir, before)
