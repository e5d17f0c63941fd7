"""A study's runs, all at once, on one executor kind, under shared limits.

Each unfinished run is an engine `Launch` (its lock, its lazy plan, the store written by
this process only), all of them driven concurrently on one event loop and one store
connection. What they share is where their calls go: the executor kind makes one
executor per run drawing on shared limits, one limiter per endpoint (protocol and base
URL) for the whole study, capped at the study's concurrency with the AIMD back-off
shared, so fourteen runs against one provider keep to its limit together and a 429 met
by one slows them all (`executors.kinds`: a `SharedLimits` in this process for
``local``; one `RayPool` and its cluster-wide limits actor for ``ray``). Each run keeps
up to the concurrency of episodes in flight of its own.

Finished runs are not touched. The launches take their steps together: every run
locked, every recipe prepared where its episodes will run, before any run is recorded,
so a run executed elsewhere, a bad agent spec or a missing key stops the study before it
starts. After that, a run that fails (its provider refused the key, a cluster with no
live worker) stops alone; the others go on, and the study reports it, to be resumed by
running the study again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass

from deedbench.engine import Launch, RunStore
from deedbench.errors import ExecutorError, RunAborted, StoreError
from deedbench.executors.kinds import Placement, executor_kind
from deedbench.recipes import RunRecipe
from deedbench.records import EpisodeRecord
from deedbench.study.planner import PlannedRun, StudyPlan
from deedbench.study.store import save_study

__all__ = ["RunOutcome", "run_study", "study_record"]


@dataclass
class RunOutcome:
    """How one run of the study ended this time."""

    run: PlannedRun
    started: int = 0
    failure: str | None = None
    was_finished: bool = False


def study_record(plan: StudyPlan, executor: str) -> str:
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
    executor: str | None = None,
    placement: Placement | None = None,
    cache: bool = True,
    on_started: Callable[[list[PlannedRun]], None] | None = None,
    on_record: Callable[[str, EpisodeRecord], None] | None = None,
) -> list[RunOutcome]:
    """Run the study's unfinished runs to their end on the executor kind named `executor`
    (`placement`: concurrency, workers, cluster; the study file's where not given); one
    outcome per run, in plan order.

    Raises (before anything is written) StoreError when a run is executed elsewhere,
    ExecutorError for an executor that cannot run a study here, what preparing a recipe
    raises (AgentSpecError, BenchmarkError, RunAborted, ExecutorError), and, once
    running, CancelledError when cancelled (each run stored what finished). `on_started`
    is told the runs about to run, after the new ones were recorded.
    """
    study = plan.study
    executor = executor or study.executor
    kind = executor_kind(executor, study=True)
    placement = placement or Placement(study.concurrency, study.workers, study.ray_address)
    outcomes = [RunOutcome(run, was_finished=run.finished) for run in plan.runs]
    pending = [o for o in outcomes if not o.was_finished]
    recipes = {o.run.run_id: RunRecipe(o.run.config, cache=cache) for o in pending}
    launches = {
        o.run.run_id: Launch(
            o.run.config,
            store,
            recipes[o.run.run_id],
            on_record=None if on_record is None else _told(on_record, o.run.run_id),
        )
        for o in pending
    }
    with ExitStack() as locks:
        for launch in launches.values():  # a run executed elsewhere: refused before anything
            locks.enter_context(launch.lock())
        async with AsyncExitStack() as stack:
            executors = await kind.for_study(stack, placement, recipes, store) if recipes else {}
            for run_id, launch in launches.items():
                await launch.prepare(executors[run_id])
            for outcome in pending:
                launches[outcome.run.run_id].record()
                outcome.run.exists = True
            save_study(store, plan.study.name, study_record(plan, executor))
            if on_started is not None:
                on_started([o.run for o in pending])

            async def drive(outcome: RunOutcome) -> None:
                try:
                    outcome.started = await launches[outcome.run.run_id].drive()
                except (RunAborted, ExecutorError, StoreError) as exc:
                    outcome.failure = str(exc)

            await asyncio.gather(*(drive(o) for o in pending))
    return outcomes


def _told(
    on_record: Callable[[str, EpisodeRecord], None], run_id: str
) -> Callable[[EpisodeRecord], None]:
    """`on_record` told which run each record is of."""
    return lambda record: on_record(run_id, record)
