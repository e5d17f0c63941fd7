"""`validate --exit-zero`: the failing tasks printed, and exit 0, so a script under `set -e`
goes on (issue 39: the README's τ² block stopped there, since some of τ²'s own tasks fail
a check by design)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field
from typer.testing import CliRunner

import deedbench.benchmarks
from deedbench.cli.main import app


class _Check(BaseModel):
    task: str
    problems: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class _Checked:
    def validate(self) -> list[_Check]:
        return [_Check(task="t1", problems=["gold action #1 raises"]), _Check(task="t2")]


@pytest.fixture(autouse=True)
def checked(monkeypatch: pytest.MonkeyPatch) -> None:
    def load(name: str, options: Any = None) -> _Checked:
        return _Checked()

    monkeypatch.setattr(deedbench.benchmarks, "load_benchmark", load)


def test_a_failing_task_exits_1_unless_exit_zero() -> None:
    runner = CliRunner()
    failing = runner.invoke(app, ["validate", "tac"])
    assert failing.exit_code == 1
    assert "t1: gold action #1 raises" in failing.output and "1 of 2 tasks pass" in failing.output
    going_on = runner.invoke(app, ["validate", "tac", "--exit-zero"])
    assert going_on.exit_code == 0
    assert going_on.output == failing.output
    as_json = runner.invoke(app, ["validate", "tac", "--json", "--exit-zero"])
    assert as_json.exit_code == 0
    assert [json.loads(line)["task"] for line in as_json.stdout.splitlines()] == ["t1", "t2"]
