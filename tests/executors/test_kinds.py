"""The executor table: deedbench's own kinds by name, one another package installs through
the ``deedbench.executors`` entry point, read by `deedbench run` and `deedbench study`
alike, and the names refused with the valid ones listed."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.engine import RunStore, plugins
from deedbench.errors import ExecutorError
from deedbench.executors.kinds import GROUP, executor_kind, executor_kinds

from ._kinds import InlineKind

INLINE = EntryPoint(name="inline", value="executors._kinds:InlineKind", group=GROUP)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """InlineKind registered as an installed package's entry point would register it."""
    real = plugins.entry_points

    def points(*, group: str) -> list[EntryPoint]:
        return [INLINE] if group == GROUP else list(real(group=group))

    monkeypatch.setattr(plugins, "entry_points", points)
    InlineKind.made.clear()
    yield


def test_deedbench_names_its_own_three_and_refuses_others_listing_them() -> None:
    assert list(executor_kinds())[:3] == ["local", "workers", "ray"]
    with pytest.raises(
        ExecutorError, match=r"unknown executor 'nowhere'\. Valid executors: local, workers, ray$"
    ):
        executor_kind("nowhere")
    with pytest.raises(
        ExecutorError,
        match="the workers executor runs one run at a time; a study runs on: local, ray",
    ):
        executor_kind("workers", study=True)


def test_an_installed_kind_runs_a_run(installed: None, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    args = ["run", "tac", "--agent", "baseline/random", "--limit", "2", "--store", str(store)]
    done = invoke(*args, "--executor", "inline", "--run-id", "by-inline")
    assert done.exit_code == 0, done.output
    assert InlineKind.made == ["by-inline"]
    with RunStore(store) as runs:
        assert runs.count("by-inline") == {"scored": 12}  # 2 samples x 2 conditions x 3 epochs


def test_a_wrong_name_lists_the_installed_kinds_too(installed: None, tmp_path: Path) -> None:
    done = invoke("run", "tac", "--agent", "baseline/random", "--executor", "nowhere")
    assert done.exit_code == 2
    assert "Valid executors: local, workers, ray, inline" in done.output


def test_a_study_refuses_a_kind_that_runs_one_run_at_a_time(
    installed: None, tmp_path: Path
) -> None:
    """From the flag and from the file alike, before anything is written."""
    study = tmp_path / "study.toml"
    text = 'name = "s"\n[[benchmarks]]\nname = "tac"\nlimit = 1\n'
    text += '[[agents]]\nspec = "baseline/random"\n'
    study.write_text(text)
    store = tmp_path / "runs.db"
    by_flag = invoke("study", str(study), "--executor", "workers", "--store", str(store))
    assert by_flag.exit_code == 2
    assert (
        "the workers executor runs one run at a time; a study runs on: local, ray" in by_flag.output
    )
    study.write_text('executor = "inline"\n' + text)
    by_file = invoke("study", str(study), "--store", str(store))
    assert by_file.exit_code == 2
    assert (
        "the inline executor runs one run at a time; a study runs on: local, ray" in by_file.output
    )
    assert not store.exists()
