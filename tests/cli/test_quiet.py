"""Every command that prints a legend (the lines saying what a table's columns mean)
takes -q and then leaves it out (issue 39: `compare -q` was refused while `run -q` and
`report -q` worked)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app

LEGEND = "[Wilson 95%]: episodes as independent trials"  # report's, compare's, study's
RUNS_LEGEND = "primary rate: each run's headline metric"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("quiet") / "runs.db"
    for run_id in ("a", "b"):
        done = invoke(
            "run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "1",
            "--run-id", run_id, "--store", str(path), "-q",
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        assert LEGEND not in " ".join(done.output.split())
    return path


@pytest.mark.parametrize(
    ("args", "legend"),
    [(["report", "a"], LEGEND), (["compare", "a", "b"], LEGEND), (["runs"], RUNS_LEGEND)],
    ids=["report", "compare", "runs"],
)
def test_q_leaves_the_legend_out(store: Path, args: list[str], legend: str) -> None:
    loud = invoke(*args, "--store", str(store))
    assert loud.exit_code == 0, loud.output
    assert legend in " ".join(loud.output.split())
    for flag in ("-q", "--quiet"):
        quiet = invoke(*args, flag, "--store", str(store))
        assert quiet.exit_code == 0, quiet.output
        assert legend not in " ".join(quiet.output.split())


def test_study_takes_q(tmp_path: Path) -> None:
    study = tmp_path / "s.toml"
    study.write_text(
        'name = "s"\n[[benchmarks]]\nname = "tac"\nlimit = 1\nepochs = 1\n'
        '[[agents]]\nspec = "baseline/random"\n'
    )
    where = ["--store", str(tmp_path / "runs.db")]
    loud = invoke("study", str(study), *where)
    assert loud.exit_code == 0, loud.output
    assert LEGEND in " ".join(loud.output.split())
    quiet = invoke("study", str(study), "-q", *where)
    assert quiet.exit_code == 0, quiet.output
    assert LEGEND not in " ".join(quiet.output.split())
