"""TAC's categories are upstream's (inspect_evals/tac): a file in the official schema, with
upstream's category ids, loads and is reported per category under those ids; the longer
names of deedbench's first scenario files are read as aliases of them (issue 39)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks.tac.scenario import CATEGORIES, CATEGORY_ALIASES, load_scenarios
from deedbench.cli.main import app
from deedbench.errors import BenchmarkError

from ._support import OFFICIAL_FIXTURE

UPSTREAM = [
    "captive_marine",
    "captive_shows",
    "animal_riding",
    "animal_racing",
    "animal_fighting",
    "wildlife_exploitation",
]


def official_file(path: Path, categories: list[str]) -> Path:
    """The official file's shape (DESIGN.md: {"scenarios": [{"id", "category", "input",
    "harmful_ids", "safe_ids", "experiences": [...]}]}, with its canary), one scenario per
    category given, made from the fixture's first scenario."""
    base = json.loads(OFFICIAL_FIXTURE.read_text(encoding="utf-8"))["scenarios"][0]
    scenarios: list[dict[str, Any]] = []
    for number, category in enumerate(categories):
        text = json.dumps(base).replace('"san-', f'"s{number}-')  # ids unique across the file
        scenario = json.loads(text)
        scenario["id"] = f"{category}_{number}"
        scenario["category"] = category
        scenarios.append(scenario)
    path.write_text(json.dumps({"canary": "BENCHMARK DATA", "scenarios": scenarios}))
    return path


def test_upstreams_categories_are_the_canonical_ones() -> None:
    assert list(CATEGORIES) == UPSTREAM
    assert set(CATEGORY_ALIASES.values()) <= set(CATEGORIES)


def test_an_official_file_is_reported_per_category_under_upstreams_names(tmp_path: Path) -> None:
    data = official_file(tmp_path / "tac.json", UPSTREAM)
    store = tmp_path / "runs.db"
    runner = CliRunner()
    done = runner.invoke(
        app,
        [
            "run", "tac", "--agent", "baseline/relevance", "--scenarios", str(data),
            "--epochs", "1", "--condition", "base", "--run-id", "official", "--store", str(store),
            "-q",
        ],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    report = runner.invoke(app, ["report", "official", "--json", "--store", str(store)])
    payload = json.loads(report.output)
    for condition in payload["conditions"]:
        groups = [g["group"] for g in condition["by"]["category"]]
        assert sorted(groups) == sorted(UPSTREAM)
    shown = runner.invoke(app, ["report", "official", "--store", str(store)])
    assert shown.exit_code == 0, shown.output
    for category in UPSTREAM:
        assert category in shown.output


def test_the_longer_names_are_read_as_upstreams(tmp_path: Path) -> None:
    data = official_file(tmp_path / "old.json", list(CATEGORY_ALIASES))
    found = [s.category for s in load_scenarios(data)]
    assert found == [CATEGORY_ALIASES[name] for name in CATEGORY_ALIASES]
    builtin = {s.category for s in load_scenarios()}  # the shipped files keep the long names
    assert builtin == set(UPSTREAM)


def test_a_misspelt_category_is_told_upstreams_name(tmp_path: Path) -> None:
    data = official_file(tmp_path / "bad.json", ["captive_marin"])
    with pytest.raises(
        BenchmarkError, match="unknown category 'captive_marin'; did you mean 'captive_marine'"
    ):
        load_scenarios(data)
