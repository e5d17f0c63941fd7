"""One run in several forked processes: each episode once, the same results, clean stops."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.engine import (
    Agent,
    AgentContext,
    Benchmark,
    Message,
    RunAborted,
    RunConfig,
    RunStore,
    new_run_config,
    run,
    run_in_processes,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="workers are forked")


async def _nothing() -> None:
    return None


def _config(bench: TacBenchmark, run_id: str, epochs: int = 1) -> RunConfig:
    return new_run_config(
        run_id=run_id,
        benchmark=bench,
        agent="baseline/random",
        agent_params={},
        conditions=list(bench.conditions),
        epochs=epochs,
        seed=0,
        samples=bench.samples(),
    )


def _baseline(bench: TacBenchmark) -> Callable[[], tuple[Benchmark, Agent, Any]]:
    return lambda: (bench, bench.baselines()["random"](), _nothing)


def _outcomes(store: Path, run_id: str) -> dict[tuple[str, str, int], str | None]:
    with RunStore(store) as runs:
        return {
            (r.sample_id, r.condition, r.epoch): r.score.outcome if r.score else None
            for r in runs.episodes(run_id)
        }


def test_workers_store_every_episode_once_with_the_results_of_one_process(
    tmp_path: Path,
) -> None:
    bench = TacBenchmark()
    store = tmp_path / "runs.db"
    one, many = _config(bench, "one", epochs=2), _config(bench, "many", epochs=2)
    progress: list[int] = []
    with RunStore(store) as runs:
        runs.create_run(one)
        runs.create_run(many)
        asyncio.run(run(one, bench, bench.baselines()["random"](), runs))
    run_in_processes(
        many, store, _baseline(bench), workers=3, concurrency=6, on_progress=progress.append
    )
    alone, shared = _outcomes(store, "one"), _outcomes(store, "many")
    assert len(shared) == len(many.episode_keys()) == 192
    # each episode's seed comes from its key, so the split changes nothing
    assert shared == alone
    assert progress == sorted(progress) and progress[-1] <= 192


def test_a_shard_runs_every_count_th_key_and_the_rest_resume(tmp_path: Path) -> None:
    bench = TacBenchmark()
    config = _config(bench, "sharded")
    store = tmp_path / "runs.db"
    with RunStore(store) as runs:
        runs.create_run(config)
        attempted = asyncio.run(
            run(config, bench, bench.baselines()["random"](), runs, shard=(1, 3))
        )
        assert attempted == config.episode_keys()[1::3]
        with pytest.raises(ValueError, match="shard 3 of 3"):
            asyncio.run(run(config, bench, bench.baselines()["random"](), runs, shard=(3, 3)))
    run_in_processes(config, store, _baseline(bench), workers=2, concurrency=4)
    assert len(_outcomes(store, "sharded")) == 96


class _Refused:
    """An agent whose provider rejects the credentials: the whole run must stop."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        raise RunAborted("401 from the provider: check OPENAI_API_KEY")


def test_an_aborted_worker_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    bench = TacBenchmark()
    config = _config(bench, "refused")
    store = tmp_path / "runs.db"
    with RunStore(store) as runs:
        runs.create_run(config)
    with pytest.raises(RunAborted, match="401 from the provider"):
        run_in_processes(
            config, store, lambda: (bench, _Refused(), _nothing), workers=2, concurrency=2
        )
    assert _outcomes(store, "refused") == {}


def test_a_crashed_worker_is_reported(tmp_path: Path) -> None:
    bench = TacBenchmark()
    config = _config(bench, "crash")
    store = tmp_path / "runs.db"
    with RunStore(store) as runs:
        runs.create_run(config)

    def always_crash() -> tuple[Benchmark, Agent, Callable[[], Awaitable[None]]]:
        raise SystemExit(7)

    with pytest.raises(RuntimeError, match="exited with code 7"):
        run_in_processes(config, store, always_crash, workers=2, concurrency=2)


class _Slow:
    """TAC's random baseline, slowed so a run can be stopped midway."""

    def __init__(self, bench: TacBenchmark) -> None:
        self.inner = bench.baselines()["random"]()

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        await asyncio.sleep(0.05)
        return await self.inner.next_turn(messages, tools, context)


def test_ctrl_c_stops_the_workers_and_keeps_what_they_finished(tmp_path: Path) -> None:
    bench = TacBenchmark()
    config = _config(bench, "stopped", epochs=2)
    store = tmp_path / "runs.db"
    with RunStore(store) as runs:
        runs.create_run(config)
    seen: list[int] = []

    def interrupt_later(stored: int) -> None:
        seen.append(stored)
        if stored >= 10:
            seen.append(-1)  # once
            threading.Timer(0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()

    with pytest.raises(KeyboardInterrupt):
        run_in_processes(
            config,
            store,
            lambda: (bench, _Slow(bench), _nothing),
            workers=2,
            concurrency=4,
            on_progress=lambda n: None if -1 in seen else interrupt_later(n),
        )
    time.sleep(0.1)
    stored = _outcomes(store, "stopped")
    assert 10 <= len(stored) < 192
    assert all(outcome is not None for outcome in stored.values())
    run_in_processes(config, store, _baseline(bench), workers=2, concurrency=4)
    assert len(_outcomes(store, "stopped")) == 192
