"""Runs added and removed whole (issue 39).

An import is all or nothing: while it writes, no command lists the run; killed midway
(SIGKILL) or stopped by bad input (a trial of 2**70, a lone surrogate in a message) it
leaves nothing, and the same file imports again. `runs --delete` removes a run with its
episodes, summaries, audits and the figures the viewer keeps, and refuses a run a live
process is executing.

The τ² result files here are written by hand on τ²'s own airline tasks (../shared/tau2):
short conversations that the rescore scores in milliseconds."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from benchmarks.tau2 import _reference  # tests/ is on the path, as pytest puts it
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.view.summaries import SummaryCache

AIRLINE = _reference.domain_data("airline")

# Runs `deedbench` with every record's serialization pausing at the third one (writing a
# marker first): what the store is doing then is what a kill at that moment leaves.
PAUSED = """
import sys, time
from pathlib import Path
from deedbench.records import EpisodeRecord

marker, *args = sys.argv[1:]
real = EpisodeRecord.model_dump_json
calls = 0

def paused(self, **kwargs):
    global calls
    calls += 1
    if calls == 3:
        Path(marker).write_text("writing")
        time.sleep(120)
    return real(self, **kwargs)

EpisodeRecord.model_dump_json = paused
sys.argv = ["deedbench", *args]
from deedbench.cli.main import main
main()
"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def results_file(path: Path, *, simulations: int = 4, **changes: Any) -> Path:
    """A τ² airline result file: `simulations` short conversations on τ²'s first tasks,
    two trials each; `changes` set fields of simulation 1 (a trial, a message)."""
    tasks = json.loads((AIRLINE / "tasks.json").read_text(encoding="utf-8"))[: simulations // 2]
    sims = [
        {
            "id": f"s{n}",
            "task_id": tasks[n // 2]["id"],
            "trial": n % 2,
            "start_time": "2026-07-16T10:00:00",
            "end_time": "2026-07-16T10:01:00",
            "duration": 60.0,
            "termination_reason": "user_stop",
            "reward_info": {"reward": 0.0},
            "messages": [
                {"role": "assistant", "content": "Hi! How can I help you today?"},
                {"role": "user", "content": "never mind, bye ###STOP###"},
            ],
        }
        for n in range(simulations)
    ]
    sims[1].update(changes)
    content = {
        "timestamp": "2026-07-16T10:00:00",
        "info": {
            "num_trials": 2,
            "max_steps": 200,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
            "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1"},
            "environment_info": {"domain_name": "airline", "policy": "policy"},
        },
        "tasks": tasks,
        "simulations": sims,
    }
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


def listed(store: Path) -> list[dict[str, Any]]:
    done = invoke("runs", "--json", "--store", str(store))
    assert done.exit_code == 0, done.output
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def rows(store: Path, table: str) -> int:
    with closing(sqlite3.connect(store)) as db:
        (count,) = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    return int(count)


def test_the_data_is_here() -> None:
    assert (AIRLINE / "tasks.json").is_file(), f"τ²'s airline data is not at {AIRLINE}"


def test_a_killed_import_shows_nothing_leaves_nothing_and_imports_again(tmp_path: Path) -> None:
    # 2 to 3 s of CPU: a kill needs a process of its own (deedbench's start and τ²'s data
    # load), then the same import again in this one
    data = results_file(tmp_path / "results.json")
    store = tmp_path / "runs.db"
    with RunStore(store):
        pass  # the store exists: `runs` reads it while the import writes
    given = ["import", "tau2", str(data), "--data", str(AIRLINE), "--store", str(store)]
    marker = tmp_path / "writing"
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSED, str(marker), *given],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "the import never got to its records"
            time.sleep(0.05)
        assert listed(store) == []  # a run being imported is never shown
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert listed(store) == []
    assert rows(store, "episodes") == rows(store, "episode_summaries") == 0
    again = invoke(*given)
    assert again.exit_code == 0, again.output
    [run] = listed(store)
    assert run["scored"] == 4 and run["state"] == "imported"  # the file's episodes


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"trial": 2**70}, "field trial: 1180591620717411303424 is beyond the 1,000 trials"),
        (
            {
                "messages": [
                    {"role": "assistant", "content": "Hi!"},
                    {"role": "user", "content": "\udc80 ###STOP###"},
                ]
            },
            "field simulations.1.messages.1.content holds text that is not Unicode",
        ),
    ],
    ids=["trial-2**70", "lone-surrogate"],
)
def test_bad_input_leaves_no_run(tmp_path: Path, changes: dict[str, Any], said: str) -> None:
    store = tmp_path / "runs.db"
    bad = results_file(tmp_path / "bad.json", **changes)
    done = invoke("import", "tau2", str(bad), "--data", str(AIRLINE), "--store", str(store))
    assert done.exit_code == 2, done.output
    assert said in " ".join(done.output.split()) and "Traceback" not in done.output
    assert not store.exists() or listed(store) == []
    good = results_file(tmp_path / "good.json")
    again = invoke("import", "tau2", str(good), "--data", str(AIRLINE), "--store", str(store))
    assert again.exit_code == 0, again.output


def test_delete_removes_a_run_with_its_audits_and_figures(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    where = ["--store", str(store)]
    for run_id in ("keep", "drop"):
        done = invoke(
            "run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "1",
            "--run-id", run_id, *where, "-q",
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        assert invoke("audit", run_id, *where).exit_code == 0
    figures = tmp_path / "figures.db"
    assert SummaryCache(figures, on_problem=pytest.fail).get(store, "keep", "k") is None
    with closing(sqlite3.connect(figures)) as db, db:  # a row each, as the viewer keeps one
        for run_id in ("keep", "drop"):
            db.execute(
                "INSERT INTO summaries VALUES (?, ?, 'k', '{}', 4, 0.1)",
                (str(store.resolve()), run_id),
            )
    refused = invoke("runs", "--delete", "drop", *where)  # off a terminal: --yes needed
    assert refused.exit_code == 2 and "add --yes" in refused.output
    assert {r["run_id"] for r in listed(store)} == {"keep", "drop"}
    done = invoke("runs", "--delete", "drop", "--yes", "--figures-cache", str(figures), *where)
    assert done.exit_code == 0, done.output
    assert "deleted run drop" in done.output and "4 episodes, 4 audits" in done.output
    assert [r["run_id"] for r in listed(store)] == ["keep"]
    with closing(sqlite3.connect(store)) as db:
        for table in ("episodes", "episode_summaries", "audits", "runs"):
            count = db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = 'drop'").fetchone()
            assert count == (0,), table
        assert db.execute("SELECT COUNT(*) FROM episodes").fetchone() == (4,)  # keep's
    with closing(sqlite3.connect(figures)) as db:
        assert [r[0] for r in db.execute("SELECT run_id FROM summaries")] == ["keep"]
    again = invoke("report", "drop", *where)
    assert again.exit_code == 2 and "no run 'drop'" in again.output
    near = invoke("runs", "--delete", "kep", "--yes", *where)
    assert near.exit_code == 2 and "did you mean 'keep'" in near.output


def test_delete_refuses_a_run_a_live_process_is_executing(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    where = ["--store", str(store)]
    done = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "1",
        "--run-id", "busy", *where, "-q",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    with RunStore(store) as runs, runs.lock_run("busy"):  # this live process executes it
        refused = invoke("runs", "--delete", "busy", "--yes", *where)
    assert refused.exit_code == 2
    assert f"is being executed by pid {os.getpid()}" in " ".join(refused.output.split())
    assert [r["run_id"] for r in listed(store)] == ["busy"]
