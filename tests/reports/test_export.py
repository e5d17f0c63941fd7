"""Flat exports: whole records as JSONL, a row per episode or per rate as CSV; and the
atomic writer every report and export file goes through."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from deedbench.records import EpisodeRecord, RunConfig
from deedbench.reports import summarize
from deedbench.reports.export import (
    OutputError,
    atomic_path,
    atomic_write,
    episode_row,
    summary_rows,
    write_csv,
    write_jsonl,
)

from ._support import run_tac

Run = tuple[RunConfig, list[EpisodeRecord]]


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_tac(tmp_path_factory.mktemp("export"), "baseline/random", run_id="rnd")


def test_jsonl_round_trips_every_record(random_run: Run) -> None:
    config, records = random_run
    out = io.StringIO()
    assert write_jsonl(config, records, out) == len(records) == 96
    lines = out.getvalue().splitlines()
    assert len(lines) == 96
    for line, record in zip(lines, records, strict=True):
        data = json.loads(line)
        assert data.pop("run_id") == "rnd"
        assert EpisodeRecord.model_validate(data) == record


def test_csv_has_a_row_per_episode_with_values_and_metadata(random_run: Run) -> None:
    config, records = random_run
    out = io.StringIO()
    assert write_csv((episode_row(config, r) for r in records), out) == 96
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 96
    first, record = rows[0], records[0]
    assert record.score is not None
    assert first["sample_id"] == record.sample_id and first["outcome"] == record.score.outcome
    assert first["choice"] == record.score.choice
    assert float(first["value.welfare"]) == record.score.values["welfare"]
    assert first["meta.scenario"] == record.metadata["scenario"]
    assert json.loads(first["meta.safe_ids"]) == record.metadata["safe_ids"]
    safe = sum(float(row["value.welfare"]) for row in rows)
    assert safe == sum(r.score.values["welfare"] for r in records if r.score)


def test_summary_rows_carry_the_summary_numbers(random_run: Run) -> None:
    summary = summarize(*random_run)
    rows = list(summary_rows(summary))
    overall = [r for r in rows if r["grouping"] == "overall" and r["metric"] == "welfare"]
    assert [r["condition"] for r in overall] == ["base", "welfare"]
    for row, condition in zip(overall, summary.conditions, strict=True):
        group = condition.overall
        assert row["value"] == group.metrics["welfare"].value
        assert row["wilson_low"] == group.metrics["welfare"].ci_low
        assert row["cluster_low"] == group.clustered["welfare"].ci_low
        assert row["clusters"] == 12
        assert group.chance is not None and row["chance"] == group.chance.chance
        assert group.cluster_chance is not None
        assert row["p_below_chance_clustered"] == group.cluster_chance.p_below
        # both directions: a perfect run's p below is 1, its p above is the one that says so
        assert row["p_above_chance"] == group.chance.p_above
        assert row["p_above_chance_clustered"] == group.cluster_chance.p_above
    # 2 conditions x (overall + 6 categories + 12 scenarios + 4 variants) x 6 metrics
    assert len(rows) == 2 * (1 + 6 + 12 + 4) * 6
    completion = next(r for r in rows if r["metric"] == "completion")
    assert completion["chance"] is None  # chance is about the primary metric only


@pytest.mark.parametrize(
    "text", ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]
)
def test_csv_cells_that_would_run_as_formulas_are_written_as_text(
    random_run: Run, text: str
) -> None:
    config, records = random_run
    record = records[0].model_copy(update={"error": text, "metadata": {"scenario": text}})
    out = io.StringIO()
    write_csv([episode_row(config, record), {"group": text, "value": -0.5}], out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    quoted = "'" + text.replace("\r", "\n")  # a line break in a cell is written as \n
    assert rows[0]["error"] == rows[0]["meta.scenario"] == quoted
    assert rows[1]["group"] == quoted
    assert rows[1]["value"] == "-0.5"  # a number stays a number


def test_a_formula_in_a_column_name_is_quoted_too(random_run: Run) -> None:
    config, records = random_run
    record = records[0].model_copy(update={"metadata": {"=cmd": "x"}})
    out = io.StringIO()
    write_csv([{"=cmd": 1}, episode_row(config, record)], out)
    assert out.getvalue().splitlines()[0].startswith("'=cmd,")


# --- atomic writes ----------------------------------------------------------------------------


def test_a_file_appears_whole_with_ordinary_permissions(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    with atomic_write(target) as out:
        out.write("<html>half")
        assert not target.exists()  # nothing at the name until the block ends
        out.write(" and the rest</html>")
    assert target.read_text() == "<html>half and the rest</html>"
    assert os.listdir(tmp_path) == ["report.html"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_write_that_fails_leaves_the_old_file_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "runs.csv"
    target.write_text("the previous export\n")
    with pytest.raises(RuntimeError, match="killed midway"), atomic_write(target) as out:
        out.write("a,b\n1,")
        raise RuntimeError("killed midway")
    assert target.read_text() == "the previous export\n"
    assert os.listdir(tmp_path) == ["runs.csv"]


def test_a_writer_that_takes_a_path_gets_one_beside_the_target(tmp_path: Path) -> None:
    target = tmp_path / "log.eval"
    with atomic_path(target) as temporary:
        assert temporary.parent == tmp_path and temporary != target
        temporary.write_bytes(b"zip bytes")
    assert target.read_bytes() == b"zip bytes"


def test_a_missing_folder_or_a_folder_as_target_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "report.html"
    with (
        pytest.raises(
            OutputError,
            match=r"cannot write .*report.html: the folder .*no such folder does not exist",
        ),
        atomic_write(missing),
    ):
        pass
    assert not missing.parent.exists()
    with pytest.raises(OutputError, match="it is a folder"), atomic_write(tmp_path):
        pass
