"""τ²'s files as a hostile or careless one may be written (issue 39): an integer of more
digits than Python converts (in a result file, in τ²'s db.json), a timestamp that is no
date or lies in the future, a task listed twice. Each is one line naming the file and the
field, exit 2, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks.tau2.results import read_results
from deedbench.cli.main import app
from deedbench.errors import BenchmarkError

from . import _reference
from .test_results import _file

AIRLINE = _reference.domain_data("airline")


def _write(path: Path, content: dict[str, Any]) -> Path:
    path.write_text(json.dumps(content))
    return path


def test_a_result_file_with_a_100000_digit_integer_is_one_line(tmp_path: Path) -> None:
    text = json.dumps(_file()).replace('"duration": 60.0', '"duration": ' + "7" * 100_000, 1)
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(BenchmarkError, match=r"an integer of 100,000 digits") as caught:
        read_results(path)
    assert str(path) in str(caught.value)
    done = CliRunner().invoke(app, ["rescore", "tau2", str(path), "--data", str(AIRLINE)])
    assert done.exit_code == 2 and "100,000 digits" in done.output
    assert "Traceback" not in done.output


def test_taus_database_with_a_5000_digit_integer_is_one_line(tmp_path: Path) -> None:
    assert (AIRLINE / "db.json").is_file(), f"τ²'s airline data is not at {AIRLINE}"
    folder = tmp_path / "airline"
    shutil.copytree(AIRLINE, folder)
    db = folder / "db.json"
    text = db.read_text(encoding="utf-8")
    at = text.index('"price": ') + len('"price": ')
    end = at + next(i for i, c in enumerate(text[at:]) if not c.isdigit())
    db.chmod(0o644)
    db.write_text(text[:at] + "9" * 5_000 + text[end:], encoding="utf-8")
    done = CliRunner().invoke(
        app,
        ["run", "tau2-airline", "--data", str(folder), "--agent", "baseline/idle", "--limit",
         "1", "--epochs", "1", "--store", str(tmp_path / "s.db")],
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    assert "db.json" in said and "an integer of 5,000 digits" in said
    assert "Traceback" not in done.output


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"timestamp": "last tuesday"}, "field timestamp: 'last tuesday' is no date and time"),
        ({"timestamp": "2999-01-01T00:00:00"}, "field timestamp: '2999-01-01T00:00:00' is in"),
        ({"simulations.0.start_time": "soon"}, "field simulations.0.start_time: 'soon' is no"),
        ({"simulations.1.end_time": "2999-12-31T23:59:59+00:00"}, "end_time: '2999-12-31"),
    ],
    ids=["timestamp-no-date", "timestamp-future", "start-no-date", "end-future"],
)
def test_a_timestamp_that_is_no_date_or_in_the_future_is_refused(
    tmp_path: Path, change: dict[str, str], said: str
) -> None:
    content = _file()
    for where, value in change.items():
        target: Any = content
        *path, last = where.split(".")
        for part in path:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    path = _write(tmp_path / "results.json", content)
    with pytest.raises(BenchmarkError, match="not a τ² result file") as caught:
        read_results(path)
    assert said in str(caught.value)


def test_a_task_listed_twice_is_refused(tmp_path: Path) -> None:
    content = _file()
    content["tasks"] = [*content["tasks"], {"id": "t1", "user_scenario": {"instructions": "y"}}]
    path = _write(tmp_path / "results.json", content)
    with pytest.raises(
        BenchmarkError, match=r"task id 't1' is listed twice \(tasks.0 and tasks.1\)"
    ):
        read_results(path)


def test_timestamps_as_tau2_writes_them_are_read(tmp_path: Path) -> None:
    content = _file()
    content["timestamp"] = "2026-07-16T10:00:00.123456"  # τ²'s get_now(): local, no zone
    content["simulations"][0]["start_time"] = "2026-07-16T10:00:00+02:00"
    assert read_results(_write(tmp_path / "results.json", content)).timestamp
