"""One run, from its plan to its last record, in one place.

`deedbench run`, `deedbench study` and the Python API's `run` each used to take the run's
lock, prepare the executor, record the run and drive it in their own order; a `Launch`
does it once, in this order:

1. the run's lock (`lock`): a run executed by another live process is refused before
   anything is built or written;
2. the recipe prepared where the episodes will run (`prepare`): a bad agent spec or a
   missing key stops here, with nothing written;
3. the run recorded, if it is new (`record`), after which `started` is True;
4. the episodes driven (`drive`: `engine.runner`'s driver), and whatever finished stored
   however the run ends.

`run` does all four for one run, starting and closing its executor; a study takes the
steps itself, each for all of its runs, so that one run's problem stops the study before
any run is written, and starts the executors itself, since its runs share them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from deedbench.engine.agent import Agent
from deedbench.engine.benchmark import Benchmark
from deedbench.engine.executor import Executor, InProcessExecutor, Prebuilt, Recipe
from deedbench.engine.runner import drive
from deedbench.engine.store import RunStore
from deedbench.records import EpisodeRecord, RunConfig

__all__ = ["Launch", "run"]


class Launch:
    """A planned (or resumed) run: its store, the recipe its executor builds, and who is
    told of each record. Recorded in the store if it is not there yet."""

    def __init__(
        self,
        config: RunConfig,
        store: RunStore,
        recipe: Recipe,
        *,
        on_record: Callable[[EpisodeRecord], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.recipe = recipe
        self.on_record = on_record
        self.executor: Executor | None = None  # where the recipe was prepared
        self.started = False  # the run is recorded and its episodes may run

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The run's lock (StoreError naming the process that holds it)."""
        with self.store.lock_run(self.config.run_id):
            yield

    async def prepare(self, executor: Executor) -> None:
        """Build the recipe where the episodes run, on a started executor, which then runs
        them; what building raises, raised."""
        await executor.prepare(self.recipe)
        self.executor = executor

    def record(self) -> None:
        """Record the run if the store has not got it; from here on, it resumes."""
        if self.store.get_run(self.config.run_id) is None:
            self.store.create_run(self.config)
        self.started = True

    async def drive(self) -> int:
        """Run the episodes the store does not hold scored on the prepared executor;
        returns how many were started. Whatever finished is stored however it ends."""
        if self.executor is None:
            raise RuntimeError("a launch drives only after `prepare`")
        try:
            return await drive(self.config, self.store, self.executor, self.recipe, self.on_record)
        finally:
            self.store.flush()

    async def run(self, executor: Executor, on_started: Callable[[], None] | None = None) -> int:
        """All of it, on an executor not started yet: under the run's lock, the executor
        started, the recipe prepared, the run recorded, then driven, and the executor
        closed; `on_started` is told once the run is recorded, before its first episode."""
        with self.lock():
            async with executor:
                await self.prepare(executor)
                self.record()
                if on_started is not None:
                    on_started()
                return await self.drive()


async def run(
    config: RunConfig,
    benchmark: Benchmark[Any],
    agent: Agent,
    store: RunStore,
    *,
    concurrency: int = 16,
    on_record: Callable[[EpisodeRecord], None] | None = None,
) -> int:
    """Run the episodes of `config` that the store does not hold scored yet, in this
    process with this benchmark and agent, recording the run first if the store has not
    got it; returns how many were started.

    Records are flushed even when the run is cancelled, so an interrupted run resumes
    where it stopped. Elsewhere (worker processes, Ray): a `Launch` of a `RunRecipe` on
    that executor.
    """
    launch = Launch(config, store, Prebuilt(benchmark, agent), on_record=on_record)
    return await launch.run(InProcessExecutor(concurrency))
