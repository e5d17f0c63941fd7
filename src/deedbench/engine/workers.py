"""One run in several processes: each runs its share of the episodes, all write one store.

A model agent spends about 2 ms of CPU per call inside the provider's SDK (building the
request, HTTP, decoding), so one process with a hundred calls in flight is CPU-bound
on one core long before the provider is the limit. Workers spread that over cores.

Workers are forked once the run is planned, so they inherit the benchmark and
configuration without pickling; each builds its own agent (its own HTTP clients,
cache connection and rate limiter) and its own store connection, and runs every
`workers`-th episode of the plan. The store's primary key keeps one record per episode
whatever the workers do, and resuming works as for one process: a worker only runs
the keys of its share that the store does not hold scored.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import sys
from collections.abc import Awaitable, Callable
from multiprocessing.connection import wait
from multiprocessing.queues import SimpleQueue
from pathlib import Path

from deedbench.engine.benchmark import Benchmark
from deedbench.engine.episode import Agent, RunAborted
from deedbench.engine.records import RunConfig
from deedbench.engine.runner import run
from deedbench.engine.store import RunStore

__all__ = ["WorkerBuild", "run_in_processes"]

# Builds, inside a worker, the benchmark to run, the agent, and what closes the agent.
WorkerBuild = Callable[[], tuple[Benchmark, Agent, Callable[[], Awaitable[None]]]]

_ABORTED = 3  # a worker's exit code when the run was aborted (bad credentials...)


def run_in_processes(
    config: RunConfig,
    store_path: Path,
    build: WorkerBuild,
    *,
    workers: int,
    concurrency: int,
    on_progress: Callable[[int], None] | None = None,
    poll_seconds: float = 0.2,
) -> None:
    """Run the missing episodes of `config` in `workers` forked processes.

    `concurrency` is the whole run's cap; each worker gets its share (at least one).
    `on_progress` receives the number of stored episodes while the workers run.
    Raises RunAborted with a worker's reason when one aborted, RuntimeError when one
    crashed; KeyboardInterrupt is passed on after the workers have flushed and exited.
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        raise RuntimeError("several workers need a platform that can fork (Linux, macOS)")
    context = multiprocessing.get_context("fork")
    reasons: SimpleQueue[str] = context.SimpleQueue()
    share = max(1, concurrency // workers)
    processes = [
        context.Process(
            target=_worker,
            args=(config, store_path, build, (index, workers), share, reasons),
            name=f"deedbench-worker-{index}",
        )
        for index in range(workers)
    ]
    for process in processes:
        process.start()
    try:
        with RunStore(store_path) as watch:
            while running := [p.sentinel for p in processes if p.is_alive()]:
                if on_progress is not None:
                    on_progress(sum(watch.count(config.run_id).values()))
                wait(running, timeout=poll_seconds)  # wakes as soon as a worker ends
    except KeyboardInterrupt:
        for process in processes:  # SIGTERM: each cancels its episodes and flushes
            process.terminate()
        raise
    finally:
        for process in processes:
            process.join()
    if not reasons.empty():
        raise RunAborted(reasons.get())
    crashed = [p for p in processes if p.exitcode != 0]
    if crashed:
        raise RuntimeError(
            ", ".join(f"{p.name} exited with code {p.exitcode}" for p in crashed)
            + "; the episodes it stored are kept, resume to run the rest"
        )


def _worker(
    config: RunConfig,
    store_path: Path,
    build: WorkerBuild,
    shard: tuple[int, int],
    concurrency: int,
    reasons: SimpleQueue[str],
) -> None:
    # Ctrl-C reaches the whole process group; the parent decides, and stops workers with
    # SIGTERM, which cancels the run so that it flushes what it finished.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    benchmark, agent, close = build()

    async def go(store: RunStore) -> None:
        main = asyncio.current_task()
        assert main is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
        try:
            await run(config, benchmark, agent, store, concurrency=concurrency, shard=shard)
        finally:
            await close()

    with RunStore(store_path) as store:
        try:
            asyncio.run(go(store))
        except RunAborted as exc:
            reasons.put(str(exc))
            sys.exit(_ABORTED)
        except asyncio.CancelledError:
            sys.exit(130)
