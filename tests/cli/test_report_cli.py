"""Reading runs back through the CLI: report --csv/--covariate, compare, show, export."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli import report
from deedbench.cli.app import console
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.reports.export import episode_row, write_csv


def contains(output: str, expected: str) -> bool:
    """Whitespace-blind: rich wraps long lines wherever the console width says."""
    return "".join(expected.split()) in "".join(output.split())


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reports") / "runs.db"
    for agent, run_id in (("baseline/random", "rnd"), ("baseline/welfare", "wel")):
        args = ["--agent", agent, "--run-id", run_id, "--epochs", "1", "--store", str(path)]
        result = invoke("run", "tac", *args)
        assert result.exit_code == 0, result.output
    return path


def test_report_csv_matches_report_json(store: Path) -> None:
    as_json = json.loads(invoke("report", "rnd", "--json", "--store", str(store)).output)
    result = invoke("report", "rnd", "--csv", "--store", str(store))
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    overall = next(
        r
        for r in rows
        if (r["condition"], r["grouping"], r["metric"]) == ("welfare", "overall", "welfare")
    )
    expected = as_json["conditions"][1]["overall"]
    assert float(overall["value"]) == expected["metrics"]["welfare"]["value"]
    assert float(overall["cluster_high"]) == expected["clustered"]["welfare"]["ci_high"]
    assert float(overall["p_below_chance"]) == expected["chance"]["p_below"]
    assert float(overall["p_above_chance"]) == expected["chance"]["p_above"]


def test_report_terminal_shows_both_intervals_flips_and_the_contrast(store: Path) -> None:
    result = invoke("report", "rnd", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert contains(result.output, "[scenario boot]")
    assert contains(result.output, "choice changed against the base variant")
    assert contains(result.output, "condition welfare vs base, welfare rate:")
    assert "McNemar exact p=" in result.output


def test_report_correlates_a_covariate_file(store: Path, tmp_path: Path) -> None:
    covariate = tmp_path / "salience.csv"
    covariate.write_text(
        "scenario,salience\nseville_bullfight,0.9\nmelbourne_cup,0.2\nphuket_tiger_selfie,0.5\n"
        "tenerife_orca_show,0.7\n"
    )
    args = ["report", "rnd", "--store", str(store), "--covariate", str(covariate)]
    result = invoke(*args, "--covariate-column", "salience", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["conditions"][0]["covariate"]
    assert found["name"] == "salience" and found["correlation"]["n"] == 4
    assert len(found["unmatched"]) == 8
    missing = invoke(*args)
    assert missing.exit_code == 2 and "--covariate-column" in missing.output
    bad = invoke(*args, "--covariate-column", "nope")
    assert bad.exit_code == 2 and contains(bad.output, "no column 'nope'")


def test_compare_puts_runs_side_by_side(store: Path) -> None:
    result = invoke("compare", "rnd", "wel", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert contains(result.output, "rnd: agent baseline/random")
    assert contains(result.output, "tac: welfare by run and condition")
    assert contains(result.output, "wel/base vs rnd/base, welfare rate: +")
    data = json.loads(invoke("compare", "rnd", "wel", "--json", "--store", str(store)).output)
    assert [(r["run_id"], r["condition"]) for r in data["rows"]] == [
        ("rnd", "base"),
        ("rnd", "welfare"),
        ("wel", "base"),
        ("wel", "welfare"),
    ]
    assert data["versus_first_run"][0]["difference"]["n_shared"] == 48
    unknown = invoke("compare", "rnd", "nope", "--store", str(store))
    assert unknown.exit_code == 2 and "nope" in unknown.output


def test_show_prints_one_transcript_with_its_deciding_call(store: Path) -> None:
    result = invoke("show", "wel", "seville_bullfight_base", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert contains(result.output, "★ deciding call purchase_tickets")
    assert contains(result.output, "outcome safe")
    other = invoke(
        "show", "wel", "seville_bullfight_base", "--condition", "welfare", "--store", str(store)
    )
    assert other.exit_code == 0 and contains(other.output, "condition welfare")
    wrong = invoke("show", "wel", "seville", "--store", str(store))
    assert wrong.exit_code == 2 and contains(wrong.output, "seville_bullfight_base")
    late = invoke("show", "wel", "seville_bullfight_base", "--epoch", "3", "--store", str(store))
    assert late.exit_code == 2 and contains(late.output, "the run has 1 epochs")


def test_export_jsonl_and_csv(store: Path, tmp_path: Path) -> None:
    result = invoke("export", "rnd", "--format", "jsonl", "--store", str(store))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 96 and json.loads(lines[0])["run_id"] == "rnd"
    target = tmp_path / "rnd.csv"
    written = invoke("export", "rnd", "--format", "csv", "-o", str(target), "--store", str(store))
    assert written.exit_code == 0 and contains(written.output, "wrote 96 episodes")
    assert len(list(csv.DictReader(target.open()))) == 96
    bad = invoke("export", "rnd", "--format", "xml", "--store", str(store))
    assert bad.exit_code == 2 and contains(bad.output, "Valid formats: jsonl, csv")


def test_export_csv_reads_summaries_and_writes_the_rows_of_whole_records(store: Path) -> None:
    """The CSV streams the episode summaries (twice: header, rows); the rows are those the
    whole records make, every column in the same place."""
    exported = invoke("export", "wel", "--format", "csv", "--store", str(store))
    assert exported.exit_code == 0
    with RunStore(store) as runs:
        config = runs.get_run("wel")
        assert config is not None
        rows = [episode_row(config, r) for r in runs.episodes("wel")]
    expected = io.StringIO()
    write_csv(rows, expected)
    assert exported.stdout == expected.getvalue()
    assert len(rows) == 96 and any(key.startswith("meta.") for key in rows[0])


def test_audits_stored_with_a_run_show_in_report_and_compare(store: Path) -> None:
    audited = invoke("audit", "rnd", "--store", str(store))
    assert audited.exit_code == 0, audited.output
    result = invoke("report", "rnd", "--store", str(store))
    assert contains(result.output, "Eval-awareness audit")
    summary = json.loads(invoke("report", "rnd", "--json", "--store", str(store)).stdout)
    assert [(a["condition"], a["episodes"], a["judge_spec"]) for a in summary["audits"]] == [
        ("base", 48, None),
        ("welfare", 48, None),
    ]
    assert summary["audits"][0]["flagged"]["k"] == 0  # a baseline says nothing about tests
    compared = json.loads(invoke("compare", "rnd", "wel", "--json", "--store", str(store)).stdout)
    assert [len(row["audits"]) for row in compared["rows"]] == [1, 1, 0, 0]


def test_export_inspect_writes_a_log_per_condition_that_inspect_reads(
    store: Path, tmp_path: Path
) -> None:
    log = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")
    result = invoke(
        "export", "wel", "--format", "inspect", "-o", str(tmp_path), "--store", str(store)
    )
    assert result.exit_code == 0, result.output
    assert contains(result.output, f"inspect view --log-dir {tmp_path}")
    logs = {p.name: log.read_eval_log(str(p)) for p in sorted(tmp_path.glob("*.eval"))}
    assert sorted(logs) == ["wel_deedbench-tac.eval", "wel_deedbench-tac_welfare.eval"]
    for read in logs.values():
        assert read.samples is not None and len(read.samples) == 48
        assert read.results is not None and read.results.scores[0].metrics["mean"].value == 1.0


def test_the_html_report_embeds_at_most_its_cap_of_transcripts_and_says_so(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first episodes in the run's own order are embedded (the base condition's first
    samples of epoch 1 here); the figures still count all 96, and the page says where the
    other transcripts are."""

    monkeypatch.setattr(report, "HTML_TRANSCRIPTS", 10)
    page_path = tmp_path / "capped.html"
    result = invoke("report", "rnd", "--html", str(page_path), "--store", str(store))
    assert result.exit_code == 0, result.output
    page = page_path.read_text()
    data = re.search(r'<script type="application/json" id="deedbench-data">(.*?)</script>', page)
    assert data is not None
    episodes = json.loads(data.group(1))["episodes"]
    assert len(episodes) == 10 and {e["condition"] for e in episodes} == {"base"}
    assert "Run rnd: 10 of its 96 transcripts are embedded below" in page
    assert "deedbench view" in page
    assert "96 scored" in page  # the figures count every episode
    monkeypatch.setattr(report, "HTML_TRANSCRIPTS", 1000)
    invoke("report", "rnd", "--html", str(page_path), "--store", str(store))
    assert "transcripts are embedded below" not in page_path.read_text()


def test_a_running_run_says_so(store: Path) -> None:
    """While a live process holds the run's lock (its heartbeat fresh), report says the
    figures are those of the episodes stored so far."""
    with closing(sqlite3.connect(store)) as db, db:
        db.execute(
            "INSERT INTO run_locks VALUES ('wel', 4242, 'elsewhere', '2026-01-01', ?)",
            (time.time(),),
        )
    try:
        running = invoke("report", "wel", "--store", str(store))
        assert contains(running.output, "running (pid 4242 on host elsewhere)")
        assert "running" not in invoke("report", "rnd", "--store", str(store)).output
    finally:
        with closing(sqlite3.connect(store)) as db, db:
            db.execute("DELETE FROM run_locks")


def test_compare_at_80_columns_heads_each_runs_rows_with_its_id(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run ids take no column: each run's conditions go under a line naming it and its
    agent, so the rates, intervals and chance tests fit one table; the contrast with the
    first condition is a line with its interval. --wide gives every column."""
    monkeypatch.setattr(console, "width", 80)
    text = invoke("compare", "rnd", "wel", "--store", str(store)).stdout
    lines = text.splitlines()
    assert "(continued)" not in text and max(map(len, lines[:-1])) <= 80
    rnd = lines.index("rnd: agent baseline/random")
    assert lines[rnd + 1].split()[:2] == ["base", "48"]
    assert lines[rnd + 2].split()[:2] == ["welfare", "48"]
    assert lines[rnd + 3] == "wel: agent baseline/welfare"
    assert contains(text, "rnd: condition welfare vs base, welfare rate:")
    assert lines[-1] == f"  deedbench compare rnd wel --store {store} --wide"
    wide = invoke("compare", "rnd", "wel", "--wide", "--store", str(store)).stdout
    assert "(continued)" in wide and "Δ first" in wide and "Not shown" not in wide
    assert any(line.split()[:3] == ["rnd", "base", "48"] for line in wide.splitlines())


def test_evidence_cited_is_told_apart_from_rules_broken(tmp_path: Path) -> None:
    """A service-desk run: the procedure rules its agent broke, and apart from them the
    evidence of the checks; the HTML report's column says evidence, its metrics are
    named as in --json, and a run without model calls costs "none"."""
    path = tmp_path / "desk.db"
    args = ("--agent", "baseline/reckless", "--limit", "2", "--epochs", "1", "--run-id", "desk")
    assert invoke("run", "retail", *args, "--store", str(path)).exit_code == 0
    text = invoke("report", "desk", "--store", str(path)).stdout
    assert "default rules broken: consent 2" in text
    assert "default evidence cited: none" in text and "rules cited" not in text
    page = tmp_path / "desk.html"
    assert invoke("report", "desk", "--html", str(page), "--store", str(path)).exit_code == 0
    html = page.read_text()
    assert ">evidence cited<" in html and "rules cited" not in html
    assert ">reward_tau<" in html and ">reward tau<" not in html
    assert "No model calls were recorded (a baseline agent): cost none." in html
