"""`deedbench runs`: the store's runs newest first, filtered, as a table or JSON, with the
cost `report` computes, each run's state and its primary rate per condition, read without a
transcript, in one table at 80 columns."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest
from tests.engine.test_store import make_config, make_record
from typer.testing import CliRunner, Result

from deedbench.cli.app import console
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.records import Message, Usage
from deedbench.stats import rate


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Three runs: two of `tiny` by two agents (one a priced model with a cached call),
    one of `other`, created in that order."""
    path = tmp_path / "runs.db"
    with RunStore(path) as runs:
        paid = Usage(input_tokens=1000, output_tokens=100, calls=1)
        hit = Usage(input_tokens=5000, output_tokens=500, calls=1, cache_hits=1)
        model = make_config("gpt", "2026-01-01T00:00:00+00:00").model_copy(
            update={"agent": "openai/gpt-4o"}
        )
        for config in (
            model,
            make_config("scripted", "2026-01-02T00:00:00+00:00"),
            make_config("later", "2026-01-03T00:00:00+00:00").model_copy(
                update={"benchmark": "other"}
            ),
        ):
            runs.create_run(config)
        record = make_record("s1")
        calls = [Message(role="assistant", usage=paid), Message(role="assistant", usage=hit)]
        runs.add("gpt", record.model_copy(update={"messages": calls}))
        runs.add("gpt", make_record("s2", status="error"))
        runs.add("scripted", make_record("s1"))
    return path


def test_runs_are_listed_newest_first_with_counts_and_cost(store: Path) -> None:
    result = invoke("runs", "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["run_id"] for r in rows] == ["later", "scripted", "gpt"]
    gpt = rows[2]
    assert gpt | {"created_at": None} == {
        "run_id": "gpt",
        "benchmark": "tiny",
        "agent": "openai/gpt-4o",
        "conditions": ["plain", "spicy"],
        "epochs": 2,
        "scored": 1,
        "errors": 1,
        "planned": 8,
        "created_at": None,
        "model_calls": 2,  # the error's message carries tokens but counts no call
        "cost_usd": gpt["cost_usd"],
        "state": "stopped",  # 2 of 8 episodes stored, and no process executes it
        "executor": None,
        "primary": "ok",
        "rates": [
            {"condition": "plain", **rate(1, 1).model_dump()},  # the error counts in no rate
            {"condition": "spicy", **rate(0, 0).model_dump()},
        ],
    }
    report = json.loads(invoke("report", "gpt", "--json", "--store", str(store)).stdout)
    assert gpt["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in report["costs"]))
    assert gpt["cost_usd"] == pytest.approx((1010 * 2.5 + 103 * 10) / 1e6)  # the hit is free
    assert rows[1]["cost_usd"] is None  # python/tests:agent has no price: unknown, not zero


def test_filters_by_benchmark_and_agent(store: Path) -> None:
    def listed(*filters: str) -> list[str]:
        result = invoke("runs", "--json", *filters, "--store", str(store))
        return [r["run_id"] for r in json.loads(result.stdout)]

    assert listed("--benchmark", "tiny") == ["scripted", "gpt"]
    assert listed("--agent", "openai/gpt-4o") == ["gpt"]
    assert listed("--benchmark", "other", "--agent", "openai/gpt-4o") == []


def test_the_table_names_each_run(store: Path) -> None:
    result = invoke("runs", "--store", str(store))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.index("later") < text.index("scripted") < text.index("gpt")
    assert "openai/gpt-4o" in text and "unknown" in text
    gpt = text.splitlines()[[line.split()[:1] for line in text.splitlines()].index(["gpt"])]
    assert gpt.split()[:7] == [
        "gpt",
        "tiny",
        "openai/gpt-4o",
        "stopped",
        "plain",
        "100.0%",
        "[20.7,",
    ]
    assert "  deedbench report RUN" in text.splitlines()  # a command on a line of its own


def test_a_run_without_model_calls_costs_none(store: Path) -> None:
    """One word for a cost that there is none of, as the viewer and the HTML report say."""
    text = invoke("runs", "--store", str(store)).stdout
    later = next(line for line in text.splitlines() if line.startswith("later "))
    assert later.split()[-1] == "none" and " - " not in later


def add_lock(path: Path, run_id: str, heartbeat_at: float) -> None:
    """A lock on `run_id` as an executing process holds it, its heartbeat at that time."""
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "INSERT INTO run_locks VALUES (?, 4242, 'elsewhere', '2026-01-01 00:00:00 UTC', ?)",
            (run_id, heartbeat_at),
        )


def test_a_run_is_running_while_its_heartbeat_is_fresh(store: Path) -> None:
    """As the viewer tells it: running while the lock's heartbeat is fresh; once it stops
    beating, stopped (episodes missing) or finished."""
    add_lock(store, "gpt", time.time())
    add_lock(store, "scripted", time.time() - 60)  # its executor died a minute ago
    rows = {
        r["run_id"]: r for r in json.loads(invoke("runs", "--json", "--store", str(store)).stdout)
    }
    assert rows["gpt"]["state"] == "running"
    assert rows["gpt"]["executor"] == "pid 4242 on host elsewhere"
    assert rows["scripted"]["state"] == "stopped" and rows["scripted"]["executor"] is None
    text = invoke("runs", "--store", str(store)).stdout
    assert next(line for line in text.splitlines() if line.startswith("gpt ")).split()[3] == (
        "running"
    )


def test_twelve_runs_fit_80_columns_in_one_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run's id, state and primary rate per condition in one table; the columns left
    out are named, with the command that shows them."""
    path = tmp_path / "runs.db"
    with RunStore(path) as runs:
        for day in range(1, 13):
            config = make_config(f"tac-202601{day:02}-120000-abcd", f"2026-01-{day:02}T12:00:00")
            runs.create_run(config.model_copy(update={"agent": "openai-compatible/qwen2.5-7b"}))
            for sample in config.sample_ids:
                for condition in config.conditions:
                    for epoch in (1, 2):
                        runs.add(config.run_id, make_record(sample, condition, epoch))
    monkeypatch.setattr(console, "width", 80)
    text = invoke("runs", "--store", str(path)).stdout
    *lines, command = text.splitlines()  # a command is never wrapped, whatever its length
    assert "(continued)" not in text and max(map(len, lines)) <= 80
    for day in range(1, 13):
        assert f"tac-202601{day:02}-120000-abcd" in text
    assert text.count("finished") == 12 and text.count("100.0% [51.0, 100.0]") == 24
    assert "Not shown at 80 columns:" in text
    assert command == f"  deedbench runs --store {path} --wide"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.db"]  # its reader left no -wal
    wide = invoke("runs", "--wide", "--store", str(path)).stdout
    assert "Not shown" not in wide and "(continued)" in wide
    assert wide.count("openai-compatible/qwen2.5-7b") == 12


def test_an_empty_store_says_so(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    RunStore(path).close()
    assert json.loads(invoke("runs", "--json", "--store", str(path)).stdout) == []
    result = invoke("runs", "--store", str(path))
    assert result.exit_code == 0 and f"no runs in {path}" in " ".join(result.stdout.split())
    filtered = invoke("runs", "--agent", "x", "--store", str(path))
    assert "no runs matching the filters" in filtered.stdout


def test_report_without_a_run_says_how_to_list_runs(store: Path) -> None:
    result = invoke("report", "--store", str(store))
    assert result.exit_code == 2
    assert f"list the store's runs with: deedbench runs --store {store}" in " ".join(
        result.output.split()
    )


@pytest.mark.parametrize("width", [80, 100])
def test_at_80_columns_a_long_agent_spec_leaves_the_rate_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """The README's order: the primary rate is kept before the agent's sub-line, which is
    folded instead (issue 39: a τ² run of a long model name left no room for the rate)."""
    path = tmp_path / "runs.db"
    agent = "openai-compatible/Qwen/Qwen2.5-72B-Instruct-Turbo-0425-with-a-long-suffix"
    with RunStore(path) as runs:
        config = make_config("tau2-airline-tau2-qwen-f97b5a5e").model_copy(
            update={"agent": agent, "benchmark": "tau2-airline"}
        )
        runs.create_run(config)
        for sample in config.sample_ids:
            for condition in config.conditions:
                runs.add(config.run_id, make_record(sample, condition, 1))
    monkeypatch.setattr(console, "width", width)
    text = invoke("runs", "--store", str(path)).stdout
    *lines, _ = text.splitlines()
    assert max(map(len, lines)) <= width
    assert "primary rate" in text and text.count("100.0% [34.2, 100.0]") == 2
    assert "Not shown" in text and "primary rate" not in text.split("Not shown")[1]
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("tau2-airline-tau2-qwen"))
    column = lines[at].index("stopped")  # the first column's lines: the agent, folded
    under = "".join(line[:column].strip() for line in lines[at + 1 : at + 5])
    assert under.startswith(f"tau2-airline{agent}") or under.startswith(f"tau2-airline {agent}")
