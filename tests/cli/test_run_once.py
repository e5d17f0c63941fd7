"""`deedbench run` builds its benchmark once and takes the run's lock once: the CLI parses,
the engine's `Launch` does the rest (the CLI built TAC twice and locked twice before)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.cli.main import app
from deedbench.engine import RunStore


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_run_builds_its_benchmark_once_and_locks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """In this process; with workers, each worker builds its own, in its own process."""
    built: list[object] = []
    locked: list[str] = []
    init, lock = TacBenchmark.__init__, RunStore.lock_run

    def counted_init(self: TacBenchmark, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        init(self, *args, **kwargs)

    def counted_lock(self: RunStore, run_id: str) -> Any:
        locked.append(run_id)
        return lock(self, run_id)

    monkeypatch.setattr(TacBenchmark, "__init__", counted_init)
    monkeypatch.setattr(RunStore, "lock_run", counted_lock)
    args = ["run", "tac", "--agent", "baseline/random", "--limit", "2", "--run-id", "once"]
    done = CliRunner().invoke(app, [*args, "--workers", workers, "--store", str(tmp_path / "r.db")])
    assert done.exit_code == 0, done.output
    assert len(built) == 1
    assert locked == ["once"]
