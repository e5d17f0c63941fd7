"""`deedbench runs`: the store's runs newest first, filtered, as a table or JSON, with the
cost `report` computes, read without a transcript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.engine.test_store import make_config, make_record
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.engine import Message, RunStore, Usage


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
    assert "openai/gpt-4o" in text and "plain, spicy" in text and "unknown" in text
    assert "deedbench report RUN" in text


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
