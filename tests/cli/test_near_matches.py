"""An unknown run, benchmark, agent or option value names the nearest valid one ("did you
mean 'tac-random'?"), whichever command or layer found it unknown; the runs a missing
run id lists are the latest, newest first, as `deedbench runs` lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.app import did_you_mean
from deedbench.cli.main import app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("near") / "runs.db"
    for run_id in ("tac-random", "tac-relevance", "other"):  # made in this order
        agent = "baseline/relevance" if run_id == "tac-relevance" else "baseline/random"
        result = invoke(
            "run", "tac", "--agent", agent, "--limit", "1", "--epochs", "1",
            "--run-id", run_id, "--store", str(path),
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    return path


def listed(store: Path) -> str:
    """The store's run ids as `deedbench runs` lists them: newest first."""
    result = invoke("runs", "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    return ", ".join(row["run_id"] for row in json.loads(result.stdout))


def error_of(result: Result) -> str:
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize("command", ["report", "show", "export", "audit"])
def test_an_unknown_run_names_the_nearest_and_the_latest_newest_first(
    store: Path, command: str
) -> None:
    args = [command, "tac-randm"] + (["seville_bullfight_base"] if command == "show" else [])
    line = error_of(invoke(*args, "--store", str(store)))
    assert line == (
        f"error: no run 'tac-randm' in {store}: did you mean 'tac-random'? (latest runs: "
        f"{listed(store)})"
    )


def test_an_unknown_run_with_no_near_one_lists_the_latest_alone(store: Path) -> None:
    line = error_of(invoke("report", "zzzzzz", "--store", str(store)))
    assert line == f"error: no run 'zzzzzz' in {store} (latest runs: {listed(store)})"


RUN = ["run", "tac", "--agent", "baseline/random"]


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["run", "tacc", *RUN[2:]], "unknown benchmark 'tacc' (did you mean 'tac'?)."),
        (
            [*RUN[:3], "baseline/randm"],
            "unknown agent 'baseline/randm' (did you mean 'baseline/random'?) for",
        ),
        ([*RUN, "-T", "variants=upstrem"], "got 'upstrem' (did you mean 'upstream'?)"),
        (
            [*RUN, "--condition", "welfar"],
            "unknown condition(s) ['welfar'] (did you mean 'welfare'?).",
        ),
        ([*RUN, "--executor", "rey"], "unknown executor 'rey' (did you mean 'ray'?)."),
        (["export", "other", "--format", "jsnl"], "unknown format 'jsnl' (did you mean 'jsonl'?)."),
    ],
)
def test_an_unknown_benchmark_agent_or_option_value_names_the_nearest(
    store: Path, args: list[str], hint: str
) -> None:
    line = error_of(invoke(*args, "--store", str(store)))
    assert hint in line, line


def test_runs_filtered_by_a_name_no_run_has_names_the_nearest(store: Path) -> None:
    result = invoke(
        "runs", "--benchmark", "tacc", "--agent", "baseline/randm", "--store", str(store)
    )
    assert result.exit_code == 0, result.output
    assert " ".join(result.stdout.split()) == (
        f"no runs matching the filters in {store} (did you mean --benchmark tac --agent "
        "baseline/random?)"
    )


def test_a_message_without_a_near_name_is_left_as_it_is() -> None:
    message = "unknown benchmark 'zzzz'. Valid benchmarks: retail, tac (or python/MODULE:ATTR)"
    assert did_you_mean(message) == message
    assert did_you_mean("no such file") == "no such file"
    both = "unknown benchmark 'ta\\'c\"'. Valid benchmarks: tac"  # repr of ta'c": no hint, no crash
    assert did_you_mean(both) == both
