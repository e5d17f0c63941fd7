"""What `deedbench run` refuses or repairs before it can do harm: a run another process is
executing, plans beyond the bounds, a condition named twice; and runs of one store side
by side."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.benchmarks import load_benchmark
from deedbench.cli.main import app
from deedbench.engine import RunStore, new_run_config
from deedbench.records import run as plan

TIMEOUT = 120.0
SLOW_AGENT = """
import asyncio
import os

from deedbench.benchmarks import load_benchmark


class Slow:
    def __init__(self):
        self.inner = load_benchmark("tac").baselines()["random"]()
        self.delay = float(os.environ["SLOW_AGENT_DELAY"])
        self.hold = os.environ.get("SLOW_AGENT_HOLD")  # wait for this file to exist

    async def next_turn(self, messages, tools, context):
        while self.hold and not os.path.exists(self.hold):
            await asyncio.sleep(0.02)
        await asyncio.sleep(self.delay)
        return await self.inner.next_turn(messages, tools, context)
"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "slowagent.py").write_text(textwrap.dedent(SLOW_AGENT))
    return tmp_path


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=TIMEOUT)


def start(
    processes: list[subprocess.Popen[str]],
    workdir: Path,
    run_id: str,
    *extra: str,
    delay: float = 0.01,
    hold: Path | None = None,
) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(workdir), "SLOW_AGENT_DELAY": str(delay)}
    if hold is not None:
        env["SLOW_AGENT_HOLD"] = str(hold)
    env.pop("DEEDBENCH_STORE", None)
    args = [sys.executable, "-c", "from deedbench.cli.main import main; main()", "run", "tac"]
    args += ["--store", str(workdir / "runs.db"), "--run-id", run_id, *extra]
    process = subprocess.Popen(
        args, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    processes.append(process)
    return process


def stored(store: Path, run_id: str) -> int:
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            sql = "SELECT COUNT(*) FROM episodes WHERE run_id = ?"
            return int(db.execute(sql, (run_id,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


SLOW_RUN = ("--agent", "python/slowagent:Slow", "--epochs", "1", "--concurrency", "2")


def locked(store: Path, run_id: str) -> bool:
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            sql = "SELECT COUNT(*) FROM run_locks WHERE run_id = ?"
            return bool(db.execute(sql, (run_id,)).fetchone()[0])
    except sqlite3.OperationalError:
        return False


def test_a_run_being_executed_is_refused_with_its_holder(
    workdir: Path, processes: list[subprocess.Popen[str]]
) -> None:
    store, release = workdir / "runs.db", workdir / "release"
    first = start(processes, workdir, "shared", *SLOW_RUN, "--limit", "6", hold=release)
    deadline = time.monotonic() + TIMEOUT
    while not locked(store, "shared"):  # its episodes wait for `release`
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.02)
    second = start(processes, workdir, "shared")  # resume it, as a second terminal would
    out, err = second.communicate(timeout=TIMEOUT)
    assert second.returncode == 2, out + err
    assert re.search(
        rf"error: run 'shared' is being executed by pid {first.pid} on host "
        rf"{re.escape(socket.gethostname())} since \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
        err,
    ), err
    assert first.poll() is None  # refused while the first still ran
    release.touch()
    out, err = first.communicate(timeout=TIMEOUT)
    assert first.returncode == 0, err
    assert stored(store, "shared") == 12


def test_two_runs_of_one_store_run_side_by_side(
    workdir: Path, processes: list[subprocess.Popen[str]]
) -> None:
    runs = [start(processes, workdir, name, *SLOW_RUN) for name in ("left", "right")]
    for process in runs:
        _, err = process.communicate(timeout=TIMEOUT)
        assert process.returncode == 0, err
    assert stored(workdir / "runs.db", "left") == stored(workdir / "runs.db", "right") == 96


def test_absurd_epochs_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    args = ["--agent", "baseline/random", "--limit", "1", "--store", str(store)]
    result = invoke("run", "tac", "--epochs", "99999999999", *args)
    assert result.exit_code == 2
    assert "'--epochs': Input should be less than or equal to 1000" in result.output
    assert not store.exists()


def test_a_plan_beyond_the_episode_bound_is_refused_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan, "MAX_PLANNED_EPISODES", 100)
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--epochs", "2", "--store", str(store)
    )
    assert result.exit_code == 2
    assert (
        "error: 48 samples x 2 conditions x 2 epochs is 192 episodes, more than the limit of "
        "100 per run: plan a smaller run (or several)"
    ) in " ".join(result.stderr.split())
    with RunStore(store) as runs:
        assert runs.run_ids() == []


@pytest.fixture
def absurd(tmp_path: Path) -> Path:
    """A store with a run recorded (by a version without bounds) with 99999999999 epochs
    of one sample, and its first few episodes."""
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "3",
        "--run-id", "absurd", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(store)) as db, db:
        (text,) = db.execute("SELECT config_json FROM runs").fetchone()
        config = json.loads(text) | {"epochs": 99_999_999_999}
        db.execute("UPDATE runs SET config_json = ?", (json.dumps(config),))
    return store


def test_an_absurd_recorded_run_cannot_be_resumed(absurd: Path) -> None:
    result = invoke("run", "tac", "--run-id", "absurd", "--store", str(absurd))
    assert result.exit_code == 2
    assert (
        "error: run 'absurd' cannot be resumed: 99999999999 epochs is more than the limit of 1,000"
    ) in " ".join(result.stderr.split())


@pytest.mark.skipif(sys.platform != "linux", reason="limits memory with RLIMIT_AS")
def test_reporting_an_absurd_run_allocates_nothing_per_planned_episode(absurd: Path) -> None:
    """Under a 1.5 GB address-space limit (listing 2e11 episode keys would need terabytes)."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000,) * 2); "
    command = [sys.executable, "-c", limit + "from deedbench.cli.main import main; main()"]
    result = subprocess.run(
        [*command, "report", "absurd", "--json", "--store", str(absurd)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["planned"], report["scored"]) == (2 * 99_999_999_999, 6)
    assert report["missing"] == 2 * 99_999_999_999 - 6


def test_a_condition_named_twice_counts_once(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--condition", "base,welfare,base",
        "--limit", "2", "--epochs", "1", "--run-id", "twice", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "starting run twice: 4 of 4 episodes to run" in result.stdout
    with RunStore(store) as runs:
        assert runs.require_run("twice").conditions == ["base", "welfare"]
        assert runs.count("twice") == {"scored": 4}
    again = invoke(
        "run", "tac", "--run-id", "twice", "--condition", "base,welfare", "--store", str(store)
    )
    assert again.exit_code == 0, again.output  # the same conditions: no conflict


def test_a_run_recorded_with_a_repeated_condition_completes(tmp_path: Path) -> None:
    """Earlier versions recorded `base,base` as two conditions: a run that never finished."""
    store = tmp_path / "runs.db"
    bench = load_benchmark("tac")
    config = new_run_config(
        run_id="legacy", benchmark=bench, agent="baseline/random", agent_params={},
        conditions=["base"], epochs=1, seed=0, samples=bench.samples()[:2],
    )  # fmt: skip
    with RunStore(store) as runs:
        runs.create_run(config)
    with closing(sqlite3.connect(store)) as db, db:
        stored = json.loads(config.model_dump_json()) | {"conditions": ["base", "base"]}
        db.execute("UPDATE runs SET config_json = ?", (json.dumps(stored),))
    result = invoke("run", "tac", "--run-id", "legacy", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert "resuming run legacy: 2 of 2 episodes to run" in result.stdout
    report = json.loads(invoke("report", "legacy", "--json", "--store", str(store)).stdout)
    assert (report["planned"], report["scored"], report["missing"]) == (2, 2, 0)
