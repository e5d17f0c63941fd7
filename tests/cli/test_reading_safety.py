"""Reading runs back safely: a corrupt record is named and skipped while the rest is
reported, `show` reads the one episode it shows, and report and export files land whole
or not at all (a missing folder is an error naming it)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app

CORRUPT = ("seville_bullfight_base", "welfare", 1)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 'damaged' (TAC, 48 samples x 2 conditions, one epoch), one record of which was
    damaged on disk afterwards, with its summary."""
    path = tmp_path_factory.mktemp("damaged") / "runs.db"
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--epochs", "1", "--run-id", "damaged",
        "--store", str(path),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(path)) as db, db:  # the record and the summary reports read
        for table, column in (("episodes", "record_json"), ("episode_summaries", "summary_json")):
            db.execute(
                f"UPDATE {table} SET {column} = substr({column}, 1, 500) "
                "WHERE sample_id = ? AND condition = ? AND epoch = ?",
                CORRUPT,
            )
    return path


NAMED = "run 'damaged', sample 'seville_bullfight_base', condition 'welfare', epoch 1"


def warned(result: Result) -> bool:
    text = " ".join(result.stderr.split())
    return text.startswith("warning: ") and NAMED in text


def test_report_names_the_corrupt_record_and_reports_the_rest(store: Path) -> None:
    result = invoke("report", "damaged", "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert warned(result)
    report = json.loads(result.stdout)
    assert (report["planned"], report["scored"], report["missing"]) == (96, 95, 1)


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "damaged", "damaged"],
        ["export", "damaged", "--format", "csv"],
        ["audit", "damaged"],
    ],
    ids=["compare", "export", "audit"],
)
def test_every_reader_skips_it_and_says_so(store: Path, args: list[str]) -> None:
    result = invoke(*args, "--store", str(store))
    assert result.exit_code == 0, result.output
    assert warned(result)
    if args[0] == "export":
        assert len(list(csv.DictReader(io.StringIO(result.stdout)))) == 95


def test_show_reads_only_the_episode_it_shows(store: Path) -> None:
    result = invoke("show", "damaged", "seville_bullfight_base", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # the corrupt record of the other condition was not read
    assert "seville_bullfight_base  condition base  epoch 1" in result.stdout


def test_show_of_the_corrupt_record_names_it(store: Path) -> None:
    result = invoke(
        "show", "damaged", "seville_bullfight_base", "--condition", "welfare", "--store", str(store)
    )
    assert result.exit_code == 2
    assert f"{NAMED} is corrupt" in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    "args",
    [["report", "damaged", "--html"], ["export", "damaged", "--format", "jsonl", "-o"]],
    ids=["report --html", "export -o"],
)
def test_an_output_in_a_missing_folder_is_a_clear_error(
    store: Path, tmp_path: Path, args: list[str]
) -> None:
    target = tmp_path / "not made yet" / "out.file"
    result = invoke(*args, str(target), "--store", str(store))
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)
    assert f"error: cannot write {target}: the folder {target.parent} does not exist" in (
        " ".join(result.stderr.split())
    )
    assert not target.parent.exists()


def test_report_and_export_files_replace_what_was_there_whole(store: Path, tmp_path: Path) -> None:
    page, lines = tmp_path / "report.html", tmp_path / "runs.jsonl"
    page.write_text("an older report")
    lines.write_text("older lines\n")
    assert invoke("report", "damaged", "--html", str(page), "--store", str(store)).exit_code == 0
    result = invoke("export", "damaged", "-o", str(lines), "--store", str(store))
    assert result.exit_code == 0
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert len(lines.read_text(encoding="utf-8").splitlines()) == 95
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "runs.jsonl"]


def test_inspect_logs_into_a_file_are_a_clear_error(store: Path, tmp_path: Path) -> None:
    taken = tmp_path / "logs"
    taken.write_text("a file, not a folder")
    result = invoke(
        "export", "damaged", "--format", "inspect", "-o", str(taken), "--store", str(store)
    )
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)
    assert f"error: cannot write Inspect logs into {taken}: File exists" in result.stderr
