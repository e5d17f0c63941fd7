"""`deedbench run` refuses, before anything runs or is stored, input it used to take and
then fail on: settings that fail every model call, and option values that only look like
numbers. Each is one line naming the value, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from deedbench.cli.main import app
from deedbench.engine import RunStore


def refused(tmp_path: Path, *args: str) -> str:
    store = tmp_path / "runs.db"
    result = CliRunner().invoke(app, ["run", "tac", *args, "--store", str(store)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.output  # no traceback
    if store.exists():
        with RunStore(store) as runs:
            assert runs.run_ids() == []  # nothing was planned, nothing ran
    [line] = result.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--timeout", "-1"], "timeout = -1.0: a finite number of seconds above 0"),
        (["--temperature", "nan"], "temperature = nan: a finite number of 0 or more"),
        (["--top-p", "inf"], "top_p = inf: a finite number from 0 to 1"),
        (["--max-tokens", "0"], "max_tokens = 0: a whole number of 1 or more"),
    ],
)
def test_a_model_setting_that_would_fail_every_call_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], message: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")
    line = refused(tmp_path, "--agent", "openai/gpt-4o", "--base-url", "http://127.0.0.1:9", *flags)
    assert line == f"error: {message}"


@pytest.mark.parametrize("value", ["١", "٢", "0_1"])
def test_a_nudge_that_only_looks_like_a_number_is_refused(tmp_path: Path, value: str) -> None:
    line = refused(tmp_path, "--agent", "baseline/random", "-T", f"nudge={value}")
    assert line == (f"error: tac option nudge: it must be 0, 1, 2, true or false; got {value!r}")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--user", "openai/gpt-4o"], "--user: benchmark 'tac' has no model-played user"),
        (["--judge", "openai/gpt-4o"], "--judge: benchmark 'tac' has no judge"),
        (
            ["--judge-temperature", "0.5"],
            "--judge-*, -J set the judge's model, but the run has none (give one with "
            "--judge SPEC, or -T judge=SPEC)",
        ),
    ],
)
def test_a_role_the_benchmark_or_the_run_has_no_model_in_is_refused(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    line = refused(tmp_path, "--agent", "baseline/random", *flags)
    assert line == f"error: {message}"
