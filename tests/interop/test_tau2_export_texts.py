"""A τ² submission says where the texts its models were shown came from: τ²'s source (its
path, version and a digest of every text), or deedbench's own wording, which is refused
unless ``--own-wording`` asks to export it with the difference in the methodology's
notes. And a run says so when it starts, and records it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deedbench.benchmarks.tau2.source import OWN_WORDING, TEXTS_KEY
from deedbench.engine import RunStore

from .test_tau2_export import CHECKOUT, copy_run, invoke, one_line, oracle_run

pytestmark = pytest.mark.reference("tau2")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle's airline run (τ²'s texts read from ../shared's source, the checkout
    holding the data) and a copy recorded as if no source had been found."""
    path = tmp_path_factory.mktemp("texts") / "runs.db"
    oracle_run(path, "tau2-airline", "oracle")
    with RunStore(path) as runs:
        files = dict(runs.require_run("oracle").data_files)
    files[TEXTS_KEY] = f"{OWN_WORDING} sha256:{'0' * 64}"
    copy_run(path, "own", {"data_files": {TEXTS_KEY: files[TEXTS_KEY]}})
    return path


def _export(store: Path, folder: Path, run_id: str, *extra: str) -> tuple[int, str, dict]:
    result = invoke(
        "export", run_id, "--format", "tau2-submission", "-o", str(folder),
        "--model-org", "Sierra", "--store", str(store), *extra,
    )  # fmt: skip
    submission = folder / "submission.json"
    found = json.loads(submission.read_text()) if submission.is_file() else {}
    return result.exit_code, one_line(result.output), found


def test_a_run_shown_taus_texts_says_where_they_were_read(store: Path, tmp_path: Path) -> None:
    code, output, submission = _export(store, tmp_path / "sub", "oracle")
    assert code == 0, output
    notes = submission["methodology"]["notes"]
    assert "judge prompt were τ²'s own, read from τ² 1.0.1 source at" in notes
    assert str(CHECKOUT / "src" / "src" / "tau2") in notes and "sha256:" in notes


def test_a_run_shown_deedbenchs_own_wording_is_refused(store: Path, tmp_path: Path) -> None:
    code, output, submission = _export(store, tmp_path / "sub", "own")
    assert code == 2 and not submission
    assert "were shown deedbench's own wording" in output and "--own-wording" in output
    assert not (tmp_path / "sub").exists() or not any((tmp_path / "sub").iterdir())


def test_own_wording_writes_the_difference_into_the_notes(store: Path, tmp_path: Path) -> None:
    code, output, submission = _export(store, tmp_path / "sub", "own", "--own-wording")
    assert code == 0, output
    methodology = submission["methodology"]
    assert "not comparable with the leaderboard's" in methodology["notes"]
    assert methodology["verification"]["modified_prompts"] is True


def test_a_run_says_where_its_texts_come_from_and_records_it(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    args = ["run", "tau2-airline", "--data", str(CHECKOUT), "--agent", "baseline/oracle"]
    args += ["--limit", "1", "--store", str(store), "-q"]
    found = invoke(*args, "--run-id", "with")
    own = invoke(*args, "--run-id", "without", "-T", "source=none")
    assert found.exit_code == 0 and own.exit_code == 0, (found.output, own.output)
    assert "note: τ² texts: τ² 1.0.1 source at" in one_line(found.output)
    assert "note: no τ² source found" in one_line(own.output)
    with RunStore(store) as runs:
        recorded = runs.require_run("with").data_files
        assert recorded[TEXTS_KEY].startswith("τ² 1.0.1 source at")
        assert any(path.endswith("domains/airline/tools.py") for path in recorded)
        assert runs.require_run("without").data_files[TEXTS_KEY].startswith(OWN_WORDING)
        assert runs.require_run("with").data_hash != runs.require_run("without").data_hash


def test_a_study_says_where_each_runs_texts_come_from(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(
        'name = "texts"\n\n[[benchmarks]]\nname = "tau2-airline"\n'
        f'data = "{CHECKOUT}"\nlimit = 1\noptions = {{ source = "none" }}\n\n'
        '[[agents]]\nspec = "baseline/oracle"\n'
    )
    result = invoke("study", str(path), "--store", str(tmp_path / "runs.db"))
    assert result.exit_code == 0, result.output
    assert "note: texts-tau2-airline-oracle: no τ² source found" in one_line(result.output)
