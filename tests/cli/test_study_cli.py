"""`deedbench study FILE`: a whole study in one command, its plan, its resume, its report.

The model agents talk to `deedbench.testing`'s fake server on 127.0.0.1; two of them
share its endpoint, so the study's `--concurrency` is one cap across both runs.
"""

from __future__ import annotations

import json
import os
import re
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
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.study.store import recorded_study
from deedbench.testing import FakeModelServer, Reply, tac_player

KEY = "sk-test-study-0000-4321"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RUNS = ["paper-tac-random", "paper-tac-decline", "paper-tac-model-a", "paper-tac-model-b"]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Output without colour codes or whitespace (rich wraps long lines anywhere)."""
    return "".join(ANSI.sub("", text).split())


def study_text(url: str, *, epochs: int = 2) -> str:
    return f"""\
name = "paper"
seed = 3

[[benchmarks]]
name = "tac"
limit = 4
epochs = {epochs}

[[agents]]
spec = "baseline/random"

[[agents]]
spec = "python/study._agents:decline"

[[agents]]
name = "model-a"
spec = "openai/gpt-4o"
base_url = "{url}"
max_attempts = 2
price = {{ input = 2.5, output = 10.0 }}

[[agents]]
name = "model-b"
spec = "openai/house-model"
base_url = "{url}"
temperature = 0.5
max_attempts = 2
"""


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    def slow(body: dict[str, Any]) -> Reply:
        return replace(tac_player(body), delay=0.02)

    with FakeModelServer("openai", slow) as started:
        yield started


@pytest.fixture
def study(tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = tmp_path / "paper.toml"
    path.write_text(study_text(server.base_url))
    return path


def started_at(store: Path) -> dict[str, list[float]]:
    with RunStore(store) as runs:
        return {r: sorted(e.started_at for e in runs.episodes(r)) for r in RUNS}


def test_an_invalid_file_gets_one_message_per_problem_and_nothing_runs(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\n'
        "\n"
        "[[benchmarks]]\n"
        'name = "tac"\n'
        'conditions = ["base", "nope"]\n'
        "\n"
        "[[benchmarks]]\n"
        'name = "no-such-bench"\n'
        "\n"
        "[[agents]]\n"
        'spec = "baseline/random"\n'
        "temperature = 0.2\n"
    )
    store = tmp_path / "runs.db"
    result = invoke("study", str(path), "--store", str(store))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert [line.split(": ")[1] for line in lines] == [f"{path}:5", f"{path}:8", f"{path}:12"]
    assert "benchmarks[1].conditions: unknown condition(s) ['nope']" in lines[0]
    assert "benchmarks[2].name" in lines[1] and "no-such-bench" in lines[1]
    assert "agents[1].temperature: only model agents take settings" in lines[2]
    assert "Traceback" not in result.output
    assert not store.exists()


def test_every_problem_of_a_file_is_listed_in_one_pass_each_once(tmp_path: Path) -> None:
    """Problems of the file's shape (an unknown key, a value no provider takes) and of
    its meaning (an unknown benchmark, condition or agent) come together, each with the
    nearest valid name, so one run of the command shows every mistake."""
    path = tmp_path / "many.toml"
    path.write_text(
        'name = "many"\n'
        "concurrenc = 3\n"
        "\n"
        "[[benchmarks]]\n"
        'name = "tac"\n'
        'conditions = ["base", "welfar"]\n'
        "\n"
        "[[benchmarks]]\n"
        'name = "tacc"\n'
        "\n"
        "[[benchmarks]]\n"
        'name = "tac"\n'
        'label = "nudged"\n'
        'options = { nudge = "١", variants = "upstrem" }\n'
        "\n"
        "[[agents]]\n"
        'spec = "baseline/randm"\n'
        "\n"
        "[[agents]]\n"
        'name = "m"\n'
        'spec = "openai/gpt-4o"\n'
        "temperature = nan\n"
        "timeout = -1.0\n"
    )
    result = invoke("study", str(path), "--dry-run", "--store", str(tmp_path / "runs.db"))
    assert result.exit_code == 2, result.output
    assert [" ".join(line.split()) for line in result.stderr.split("error: ")[1:]] == [
        f"{path}:2: concurrenc: unknown key (a typo? did you mean 'concurrency'?)",
        f"{path}:6: benchmarks[1].conditions: unknown condition(s) ['welfar'] (did you mean "
        "'welfare'?). Valid conditions of tac: base, welfare",
        f"{path}:9: benchmarks[2].name: unknown benchmark 'tacc' (did you mean 'tac'?). Valid "
        "benchmarks: retail, tac, tau2-airline, tau2-banking, tau2-retail, tau2-telecom, "
        "taubench-airline, taubench-retail (or python/MODULE:ATTR)",
        f"{path}:14: benchmarks[3].options: tac option nudge: it must be 0, 1, 2, true or "
        "false; got '١'",
        f"{path}:17: agents[1].spec: unknown agent 'baseline/randm' (did you mean "
        "'baseline/random'?) for benchmarks 'tac', 'nudged'. Valid agents: baseline/random, "
        "baseline/relevance, baseline/welfare, baseline/refuse; list the benchmarks this "
        "agent runs in its `benchmarks`",
        f"{path}:22: agents[2].temperature: temperature = nan: a finite number of 0 or more",
        f"{path}:23: agents[2].timeout: timeout = -1.0: a finite number of seconds above 0",
    ]


def test_dry_run_prints_runs_episodes_calls_and_cost_and_stores_nothing(
    study: Path, tmp_path: Path, server: FakeModelServer
) -> None:
    store = tmp_path / "runs.db"
    result = invoke("study", str(study), "--dry-run", "--store", str(store))
    assert result.exit_code == 0, result.output
    out = flat(result.output)
    for run_id in RUNS:
        assert flat(f"{run_id} │ tac") in out
    assert out.count(flat("2 x 2 │ 16 of 16 (new)")) == 4
    rows = {
        cells[0]: cells
        for line in result.output.splitlines()
        if len(cells := [c.strip() for c in line.strip()[1:-1].split("│")]) == 8
    }
    assert rows["paper-tac-random"][5:7] == ["none", "none"]
    calls = float(rows["paper-tac-model-a"][5].replace(",", ""))
    assert calls >= 16  # at least one call per episode
    assert float(rows["paper-tac-model-a"][6]) > 0  # its price is in the file
    assert rows["paper-tac-model-b"][6] == "unknown"  # no price known for it: no cost, never $0
    assert "total" not in rows  # in words below the table: a table split in parts would show
    # the row's label alone in the parts without its figures
    said = " ".join(result.output.split())
    total_calls = sum(float(rows[f"paper-tac-model-{m}"][5].replace(",", "")) for m in "ab")
    assert (
        f"4 runs in this process: 64 episodes, {total_calls:,.0f} model calls, cost unknown "
        "in all; at most 16 model calls in flight per endpoint"
    ) in said
    assert "Prices: the study's own (openai/gpt-4o), then deedbench's table of 2025-06-01. " in said
    assert "Nothing was run" in result.output
    assert not store.exists() and server.requests == []


def test_dry_run_says_where_its_prices_come_from_first_found_first(
    study: Path, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"as_of": "2026-01-01", "models": {"openai/house-model": '
                      '{"input": 1.0, "output": 2.0}}}')  # fmt: skip
    result = invoke(
        "study", str(study), "--dry-run", "--prices", str(prices), "--store", str(tmp_path / "r.db")
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert (
        f"Prices: the study's own (openai/gpt-4o), then those of {prices}, then deedbench's "
        "table of 2025-06-01. Nothing was run."
    ) in said
    assert "the study's prices." not in said and "cost unknown in all" not in said


def test_a_study_runs_every_run_under_one_cap_then_compares_them_and_resumes(
    study: Path, tmp_path: Path, server: FakeModelServer
) -> None:
    store, html = tmp_path / "runs.db", tmp_path / "study.html"
    result = invoke(
        "study", str(study), "--store", str(store), "--concurrency", "2", "--html", str(html)
    )
    assert result.exit_code == 0, result.output
    out = flat(result.output)
    assert flat("4 of 4 runs to run, 64 episodes") in out
    assert "tac:welfarebyrunandcondition" in out  # the compare table, runs x conditions
    for run_id in RUNS:
        assert out.count(flat(f"{run_id} base")) >= 1
        assert out.count(flat(f"{run_id} welfare")) >= 1
    assert "McNemar" in out and "chance" in out  # a header may wrap at its space
    assert 1 < server.max_in_flight <= 2  # one cap for both model runs' endpoint
    with RunStore(store) as runs:
        assert [runs.count(r) for r in RUNS] == [{"scored": 16}] * 4
        recorded = json.loads(recorded_study(runs, "paper") or "{}")
        seeds = {r.seed for r in runs.episodes("paper-tac-random")}
    assert recorded["runs"] == RUNS and recorded["executor"] == "local"
    assert len(seeds) == 16
    page = html.read_text()
    assert all(run_id in page for run_id in RUNS)
    assert KEY not in page and KEY not in result.output

    before, requests = started_at(store), len(server.requests)
    again = invoke("study", str(study), "--store", str(store), "--concurrency", "2")
    assert again.exit_code == 0, again.output
    assert flat("0 of 4 runs to run, 0 episodes") in flat(again.output)
    assert started_at(store) == before and len(server.requests) == requests

    with closing(sqlite3.connect(store)) as db, db:  # one unfinished run: only it runs
        for table in ("episodes", "episode_summaries"):  # the summaries' trigger keeps the kinds
            db.execute(f"DELETE FROM {table} WHERE run_id = ?", ("paper-tac-model-a",))
    resumed = invoke("study", str(study), "--store", str(store))
    assert resumed.exit_code == 0, resumed.output
    assert flat("1 of 4 runs to run, 16 episodes") in flat(resumed.output)
    after = started_at(store)
    assert {r: after[r] == before[r] for r in RUNS} == {
        "paper-tac-random": True,
        "paper-tac-decline": True,
        "paper-tac-model-a": False,
        "paper-tac-model-b": True,
    }
    assert len(server.requests) == requests  # its answers were in the cache: none paid twice


def test_a_changed_setting_of_a_finished_run_is_refused_naming_it(
    study: Path, tmp_path: Path, server: FakeModelServer
) -> None:
    store = tmp_path / "runs.db"
    assert invoke("study", str(study), "--store", str(store)).exit_code == 0
    text = study.read_text().replace("temperature = 0.5", "temperature = 0.9")
    study.write_text(text.replace("epochs = 2", "epochs = 3"))
    requests = len(server.requests)
    result = invoke("study", str(study), "--store", str(store))
    assert result.exit_code == 2, result.output
    lines = [" ".join(line.split()) for line in result.output.split("error: ")[1:]]
    epochs_line = study.read_text().splitlines().index("epochs = 3") + 1
    temperature_line = study.read_text().splitlines().index("temperature = 0.9") + 1
    assert len(lines) == 5  # epochs for each of the four runs, temperature for one
    assert all(f"{study}:{epochs_line}: benchmarks[1].epochs: run" in line for line in lines[:4])
    assert "(finished) was made with epochs = 2; the file says 3" in lines[0], lines
    assert lines[4].startswith(f"{study}:{temperature_line}: agents[4].temperature:")
    assert "temperature = 0.5; the file says 0.9" in lines[4]
    assert len(server.requests) == requests


def test_a_study_terminated_mid_run_resumes_without_a_record_twice_or_a_call_paid_twice(
    study: Path, tmp_path: Path, server: FakeModelServer
) -> None:
    """A real `deedbench study` process gets SIGTERM once episodes are stored: it exits
    143 saying how to resume; the same command then finishes every run, each episode
    stored once, no request sent again but those in flight at the kill."""
    store = tmp_path / "runs.db"
    command = [sys.executable, "-c", "from deedbench.cli.main import main; main()", "study"]
    command += [str(study), "--store", str(store), "--concurrency", "2"]
    tests = str(Path(__file__).resolve().parents[1])  # where `study._agents` is
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": path}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while stored(store) < 40 and process.poll() is None:  # the baselines and 8 more
        assert time.monotonic() < deadline, "no episode stored in time"
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "terminated:" in err and f"Resume with:\n  deedbench study {study}" in err
    at_kill = stored(store)
    assert 40 <= at_kill < 64
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with closing(sqlite3.connect(store)) as db:
        keys = db.execute("SELECT run_id, sample_id, condition, epoch FROM episodes").fetchall()
    assert len(keys) == len(set(keys)) == 64
    every = [json.dumps(b, sort_keys=True) for b in server.requests]
    repeated = len(every) - len(set(every))
    assert repeated <= 2  # at most the calls in flight at the kill: the cap, 2


def stored(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10)) as db:
            return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
    except sqlite3.OperationalError:  # no tables yet
        return 0


def desk_study(url: str | None) -> str:
    base = f'base_url = "{url}"\n' if url else ""
    return (
        'name = "desk"\n\n[[benchmarks]]\nname = "retail"\nlimit = 2\n\n'
        '[[agents]]\nspec = "baseline/oracle"\n\n'
        f'[user]\nspec = "openai-compatible/customer"\n{base}temperature = 0.3\n'
    )


def test_a_user_table_plays_the_customer_of_a_desk_benchmark(tmp_path: Path) -> None:
    """The study's `[user]` table gives the desk's customer its model, as -T user=llm:SPEC
    does on `deedbench run`; its dry run builds that model as the study does."""
    # over 3 s: a dry run (its estimate plays the desk's oracle) and the study itself (4.2 s
    # measured at a load average of 11 on 2 cores)
    study = tmp_path / "desk.toml"
    store = tmp_path / "runs.db"
    customer = Reply(text=f"I want to cancel my order. {'###STOP###'}")
    with FakeModelServer("openai", lambda _: customer) as server:
        study.write_text(desk_study(server.base_url))
        dry = invoke("study", str(study), "--dry-run", "--store", str(store))
        assert dry.exit_code == 0, dry.output
        assert server.requests == [] and not store.exists()
        result = invoke("study", str(study), "--store", str(store))
        assert result.exit_code == 0, result.output
        assert {body["model"] for body in server.requests} == {"customer"}
        assert {body["temperature"] for body in server.requests} == {0.3}
    with RunStore(store) as runs:
        config = runs.require_run("desk-retail-oracle")
    assert config.user is not None and config.user.spec == "openai-compatible/customer"
    assert config.user.settings.base_url == server.base_url
    assert config.benchmark_options["user"] == "llm:openai-compatible/customer"


def test_a_user_without_its_base_url_is_refused_by_the_study_and_its_dry_run(
    tmp_path: Path,
) -> None:
    study = tmp_path / "desk.toml"
    study.write_text(desk_study(None))
    for dry in (["--dry-run"], []):
        result = invoke("study", str(study), *dry, "--store", str(tmp_path / "runs.db"))
        assert result.exit_code == 2
        assert flat(
            f"{study}:10: user.base_url: the user's model openai-compatible/customer needs a "
            "base URL: --user-base-url URL"
        ) in flat(result.output)
