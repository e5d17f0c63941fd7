"""A study's runs, all at once, in this process or on a Ray cluster, under shared limits.

Each unfinished run is driven by the engine's own driver (`execute`: its lock, its lazy
plan, the store written by this process only), all of them concurrently on one event
loop and one store connection. What they share is where their calls go: one limiter per
endpoint (protocol and base URL) for the whole study, capped at the study's concurrency
with the AIMD back-off shared, so fourteen runs against one provider keep to its limit
together and a 429 met by one slows them all. Locally that is a `SharedLimits` in this
process, handed to every run's `InProcessExecutor`; on Ray, one `RayPool` (its workers
and its cluster-wide limits actor) under every run's `RayExecutor`. Each run keeps up
to the concurrency of episodes in flight of its own.

Finished runs are not touched. Every run is locked, every recipe prepared where its
episodes will run, before anything is written: a run executed elsewhere, a bad agent
spec or a missing key stops the study before it starts. After that, a run that fails
(its provider refused the key, a cluster with no live worker) stops alone; the others
go on, and the study reports it, to be resumed by running the study again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from typing import Literal

from deedbench.agents import SharedLimits
from deedbench.engine import (
    EpisodeRecord,
    Executor,
    ExecutorError,
    InProcessExecutor,
    RunAborted,
    RunStore,
    StoreError,
    execute,
)
from deedbench.recipes import RunRecipe
from deedbench.study.planner import PlannedRun, StudyPlan

__all__ = ["ExecutorKind", "RunOutcome", "run_study", "study_record"]

ExecutorKind = Literal["local", "ray"]


@dataclass
class RunOutcome:
    """How one run of the study ended this time."""

    run: PlannedRun
    started: int = 0
    failure: str | None = None
    was_finished: bool = False


def study_record(plan: StudyPlan, executor: ExecutorKind) -> str:
    """What the store keeps of a study: its file, settings and runs, as JSON."""
    return json.dumps(
        {
            "file": str(plan.path.resolve()),
            "sha256": hashlib.sha256(plan.text.encode()).hexdigest(),
            "text": plan.text,
            "executor": executor,
            "runs": [run.run_id for run in plan.runs],
        }
    )


async def run_study(
    plan: StudyPlan,
    store: RunStore,
    *,
    executor: ExecutorKind = "local",
    concurrency: int = 16,
    address: str | None = None,
    workers: int | None = None,
    cache: bool = True,
    on_started: Callable[[list[PlannedRun]], None] | None = None,
    on_record: Callable[[str, EpisodeRecord], None] | None = None,
) -> list[RunOutcome]:
    """Run the study's unfinished runs to their end; one outcome per run, in plan order.

    Raises (before anything is written) StoreError when a run is executed elsewhere,
    what preparing a recipe raises (AgentSpecError, BenchmarkError, RunAborted,
    ExecutorError), and, once running, CancelledError when cancelled (each run stored
    what finished). `on_started` is told the runs about to run, after the new ones
    were recorded.
    """
    outcomes = [RunOutcome(run, was_finished=run.finished) for run in plan.runs]
    pending = [o for o in outcomes if not o.was_finished]
    recipes = {o.run.run_id: RunRecipe(o.run.config, cache=cache) for o in pending}
    with ExitStack() as locks:
        for outcome in pending:  # a run executed elsewhere: refused before anything runs
            locks.enter_context(store.lock_run(outcome.run.run_id))
        async with AsyncExitStack() as stack:
            executors = await _executors(
                stack, [o.run for o in pending], store, executor, concurrency, address, workers
            )
            for run_id, recipe in recipes.items():
                await executors[run_id].prepare(recipe)
            for outcome in pending:
                if not outcome.run.exists:
                    store.create_run(outcome.run.config)
                    outcome.run.exists = True
            store.save_study(plan.study.name, study_record(plan, executor))
            if on_started is not None:
                on_started([o.run for o in pending])

            async def drive(outcome: RunOutcome) -> None:
                run_id = outcome.run.run_id
                report = None if on_record is None else (lambda r: on_record(run_id, r))
                try:
                    outcome.started = await execute(
                        outcome.run.config,
                        store,
                        executors[run_id],
                        recipes[run_id],
                        on_record=report,
                    )
                except (RunAborted, ExecutorError, StoreError) as exc:
                    outcome.failure = str(exc)

            await asyncio.gather(*(drive(o) for o in pending))
    return outcomes


async def _executors(
    stack: AsyncExitStack,
    runs: list[PlannedRun],
    store: RunStore,
    kind: ExecutorKind,
    concurrency: int,
    address: str | None,
    workers: int | None,
) -> dict[str, Executor]:
    """A started executor per run, all drawing on the same call limits."""
    executors: dict[str, Executor] = {}
    if not runs:
        return executors
    if kind == "local":
        limits = SharedLimits(concurrency)
        for run in runs:
            local = InProcessExecutor(concurrency, lookup=store.response, limits=limits)
            executors[run.run_id] = await stack.enter_async_context(local)
        return executors
    from deedbench.executors.ray import RayExecutor, RayPool, modules_to_ship

    pool = RayPool(
        address=address,
        workers=workers,
        concurrency=concurrency,
        ship=modules_to_ship(run.config for run in runs),
    )
    stack.push_async_callback(pool.close)
    await pool.start()
    for run in runs:
        remote = RayExecutor(concurrency, pool=pool)
        executors[run.run_id] = await stack.enter_async_context(remote)
    return executors
