"""`deedbench import inspect` takes the folder `export --format inspect` writes (a log per
condition, or several), and says what to do when the run id it would store is taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.engine import RunStore

pytest.importorskip("inspect_ai")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store with run 'r' (two conditions), and the folder of its Inspect logs."""
    folder = tmp_path_factory.mktemp("exported")
    store, logs = folder / "runs.db", folder / "logs"
    where = ["--store", str(store)]
    ran = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "2",
        "--run-id", "r", *where,
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    done = invoke("export", "r", "--format", "inspect", "-o", str(logs), *where)
    assert done.exit_code == 0, done.output
    assert len(list(logs.glob("*.eval"))) == 2  # one per condition
    return store, logs


def test_a_folder_of_exported_logs_imports_as_the_run_it_came_from(
    exported: tuple[Path, Path],
) -> None:
    store, logs = exported
    result = invoke("import", "inspect", str(logs), "--run-id", "back", "--store", str(store))
    assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        original, back = runs.require_run("r"), runs.require_run("back")
        assert back.conditions == original.conditions == ["base", "welfare"]
        pairs = {
            run: sorted((e.sample_id, e.condition, e.epoch, e.score and e.score.outcome)
                        for e in runs.episodes(run))
            for run in ("r", "back")
        }  # fmt: skip
    assert (
        pairs["back"] == pairs["r"] and len(pairs["r"]) == 2 * 2 * 2
    )  # samples, conditions, epochs


def test_a_folder_without_eval_logs_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no logs here")
    result = invoke("import", "inspect", str(tmp_path), "--store", str(tmp_path / "runs.db"))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {tmp_path}: no .eval logs in this folder (deedbench export RUN --format "
        "inspect -o FOLDER writes them)"
    )


def test_a_taken_run_id_says_what_to_do_with_or_without_run_id(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    _, logs = exported
    store = tmp_path / "runs.db"
    assert (
        invoke("import", "inspect", str(logs), "--run-id", "mine", "--store", str(store)).exit_code
        == 0
    )
    again = invoke("import", "inspect", str(logs), "--run-id", "mine", "--store", str(store))
    assert again.exit_code == 2
    assert (
        again.stderr.strip() == f"error: run 'mine' is already in {store}: choose another --run-id"
    )
    first = invoke("import", "inspect", str(logs), "--store", str(store))
    assert first.exit_code == 0, first.output
    twice = invoke("import", "inspect", str(logs), "--store", str(store))
    assert twice.exit_code == 2
    assert "(these logs were imported before?); pass --run-id to import them again" in twice.stderr
