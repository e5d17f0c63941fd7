"""One run in worker processes (from a fork server): each episode once, the same results,
no store handle in any worker, clean stops, and failures reported with what finished kept."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.engine import Launch, ProcessExecutor, RunStore, new_run_config, run
from deedbench.errors import ExecutorError, RunAborted
from deedbench.recipes import RunRecipe
from deedbench.records import EpisodeRecord, RunConfig

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes and signals")
AGENTS = "python/engine._agents"  # tests/engine/_agents.py, as the workers import it


def _config(
    run_id: str, agent: str = "baseline/random", *, epochs: int = 1, samples: int = 48
) -> RunConfig:
    bench = TacBenchmark()
    return new_run_config(
        run_id=run_id,
        benchmark=bench,
        agent=agent,
        agent_params={},
        conditions=list(bench.conditions),
        epochs=epochs,
        seed=0,
        samples=bench.samples()[:samples],
    )


def _in_workers(
    config: RunConfig,
    store: Path,
    *,
    workers: int = 2,
    concurrency: int = 4,
    on_record: Callable[[EpisodeRecord], None] | None = None,
) -> int:
    async def go() -> int:
        recipe = RunRecipe(config)
        with RunStore(store) as runs:
            launch = Launch(config, runs, recipe, on_record=on_record)
            return await launch.run(ProcessExecutor(workers, concurrency))

    return asyncio.run(go())


def _outcomes(store: Path, run_id: str) -> dict[tuple[str, str, int], str | None]:
    with RunStore(store) as runs:
        return {
            (r.sample_id, r.condition, r.epoch): r.score.outcome if r.score else None
            for r in runs.episodes(run_id)
        }


def test_workers_store_every_episode_once_with_the_results_of_one_process(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    one, many = _config("one", epochs=2), _config("many", epochs=2)
    with RunStore(store) as runs:
        runs.create_run(one)
        bench = TacBenchmark()
        asyncio.run(run(one, bench, bench.baselines()["random"](), runs))
    seen: list[EpisodeRecord] = []
    assert _in_workers(many, store, workers=3, concurrency=6, on_record=seen.append) == 192
    alone, shared = _outcomes(store, "one"), _outcomes(store, "many")
    assert len(shared) == many.planned_episodes == 192
    assert len(seen) == 192 and len({r.key for r in seen}) == 192  # progress: each once
    # each episode's seed comes from its key, so where it ran changes nothing
    assert shared == alone


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_workers_never_hold_the_store_open(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    config = _config("watched", samples=12)
    looked: list[int] = []

    def look(record: EpisodeRecord) -> None:
        for worker in multiprocessing.active_children():
            assert worker.pid is not None
            fds = Path(f"/proc/{worker.pid}/fd")
            targets = [os.readlink(fd) for fd in fds.iterdir()]
            assert not [t for t in targets if t.startswith(str(store))], targets
            looked.append(worker.pid)

    _in_workers(config, store, on_record=look)
    assert len(set(looked)) == 2  # both workers were looked at while they ran
    assert len(_outcomes(store, "watched")) == 24


def test_a_resumed_run_runs_only_what_is_missing(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    config = _config("resumed", samples=12)
    with RunStore(store) as runs:
        runs.create_run(config)
        bench = TacBenchmark()
        done = _records_of_one_process(bench, config, tmp_path)[:10]
        for record in done:
            runs.add("resumed", record)
    assert _in_workers(config, store) == 24 - 10
    with RunStore(store) as runs:
        stored = {r.key: r for r in runs.episodes("resumed")}
    assert len(stored) == 24
    assert all(stored[r.key] == r for r in done)  # kept, not run again


def _records_of_one_process(
    bench: TacBenchmark, config: RunConfig, folder: Path
) -> list[EpisodeRecord]:
    with RunStore(folder / "elsewhere.db") as other:
        asyncio.run(run(config, bench, bench.baselines()["random"](), other))
        return list(other.episodes(config.run_id))


def test_an_aborted_episode_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    config = _config("refused", f"{AGENTS}:Refused", samples=12)
    with pytest.raises(RunAborted, match="401 from the provider"):
        _in_workers(config, store)
    assert _outcomes(store, "refused") == {}
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_reported_and_what_finished_is_kept(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    config = _config("dies", f"{AGENTS}:Dies", samples=24)
    with pytest.raises(ExecutorError, match=r"deedbench-worker-\d exited \(code 7\)"):
        _in_workers(config, store, concurrency=2)  # one episode at a time per worker
    kept = _outcomes(store, "dies")
    assert 2 <= len(kept) < 48  # each worker finished two before its third killed it
    assert set(kept.values()) == {"refused"}
    assert multiprocessing.active_children() == []


def test_cancelling_the_driver_stops_the_workers_and_keeps_what_they_finished(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    config = _config("stopped", f"{AGENTS}:Slow", samples=12)

    async def cancel_after_ten() -> None:
        main = asyncio.current_task()
        assert main is not None
        seen: list[EpisodeRecord] = []

        def count(record: EpisodeRecord) -> None:
            seen.append(record)
            if len(seen) == 10:
                main.cancel()  # what SIGTERM does to `deedbench run`

        with RunStore(store) as runs:
            launch = Launch(config, runs, RunRecipe(config), on_record=count)
            await launch.run(ProcessExecutor(2, 4))

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_after_ten())
    assert multiprocessing.active_children() == []
    stored = _outcomes(store, "stopped")
    assert 10 <= len(stored) < 24
    assert all(outcome is not None for outcome in stored.values())
    assert _in_workers(config, store) == 24 - len(stored)
    assert len(_outcomes(store, "stopped")) == 24


def _prepare(config: RunConfig) -> None:
    async def go() -> None:
        async with ProcessExecutor(2, 2) as executor:
            await executor.prepare(RunRecipe(config))

    asyncio.run(go())


def test_preparing_reports_an_agent_the_workers_cannot_build(tmp_path: Path) -> None:
    with pytest.raises(ExecutorError, match=r"cannot import agent python/engine._agents:Nobody"):
        _prepare(_config("nobody", f"{AGENTS}:Nobody"))
    assert multiprocessing.active_children() == []


def test_workers_import_a_python_agent_from_the_working_folder(working_folder: Path) -> None:
    """As `deedbench run --workers 2 --agent python/mine:Agent` beside mine.py, with the
    working folder not on sys.path (the console script's case)."""
    (working_folder / "deedbench_here_worker_agent.py").write_text(
        "import os\n"
        "from deedbench.records import Message\n\n"
        "class Agent:\n"
        "    async def next_turn(self, messages, tools, context):\n"
        "        return Message(role='assistant', content=f'pid {os.getpid()}')\n"
    )
    config = _config("here", "python/deedbench_here_worker_agent:Agent", samples=3)
    assert _in_workers(config, working_folder / "runs.db") == 6
    with RunStore(working_folder / "runs.db") as runs:
        replies = {r.messages[-1].content for r in runs.episodes("here")}
    assert replies and f"pid {os.getpid()}" not in replies


def test_preparing_reports_a_key_missing_where_the_workers_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(RunAborted, match="set the environment variable OPENAI_API_KEY"):
        _prepare(_config("keyless", "openai/gpt-4o"))


def test_workers_see_the_environment_the_driver_has_when_they_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork server outlives executors (one per process): its environment is older."""
    store = tmp_path / "runs.db"
    for mark in ("first", "second"):
        monkeypatch.setenv("DEEDBENCH_TEST_MARK", mark)
        config = _config(mark, f"{AGENTS}:Environment", samples=1)
        _in_workers(config, store)
        with RunStore(store) as runs:
            said = {r.messages[-1].content for r in runs.episodes(mark)}
        assert said == {mark}
