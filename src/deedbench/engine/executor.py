"""Executors: where a run's episodes run, behind one interface the run's driver talks to.

The driver (`engine.runner.drive`) is the run's one writer: it plans the episodes
lazily, owns the only store connection, hands out `EpisodeJob`s, and commits what comes
back. A job is picklable and self-contained: a `Recipe` to rebuild the benchmark and the
agent from names and settings, the episode's key and seed, and the answers the cache
already holds for that episode (selected by its seed), so whatever runs it never reads
the store and a resumed run pays for nothing twice. What an executor reports back are
events: each new model
answer as soon as it arrives (`Answered`), each finished episode (`Finished`), a failure
that dooms the run (`Aborted`), and a lost worker (`Lost`).

An executor is started (`async with`), then asked to `prepare` the run's recipe where
jobs will run, so that a bad agent spec or a missing key is reported before the run
writes anything; then the driver submits jobs and reads events, and on the way out
`stop`s what is in flight. `InProcessExecutor` runs the jobs as tasks on the driver's own
event loop; `engine.workers.ProcessExecutor` in local worker processes; a distributed
backend implements the same methods.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Self

from deedbench.engine.agent import Agent, AgentContext
from deedbench.engine.benchmark import Benchmark
from deedbench.engine.cache import CacheEntry, EpisodeCache
from deedbench.engine.episode import run_episode
from deedbench.errors import RunAborted
from deedbench.records import (
    EpisodeKey,
    EpisodeRecord,
    Message,
    Sample,
    Score,
    Termination,
    Usage,
)
from deedbench.secrets import redact

__all__ = [
    "Aborted",
    "Answered",
    "Built",
    "EpisodeJob",
    "Event",
    "Executor",
    "Finished",
    "InProcessExecutor",
    "Lost",
    "Prebuilt",
    "Recipe",
    "drain",
    "run_job",
    "waiting",
]


async def _nothing() -> None:
    return None


@dataclass
class Built:
    """What a recipe builds in the process that runs episodes; `close` releases the agent's
    connections (inside the event loop that used them)."""

    benchmark: Benchmark[Any]
    agent: Agent
    close: Callable[[], Awaitable[None]] = _nothing
    samples: dict[str, Sample] = field(init=False)

    def __post_init__(self) -> None:
        self.samples = {s.id: s for s in self.benchmark.samples()}


class Recipe(Protocol):
    """How any process rebuilds what runs a run's episodes.

    Picklable and made of names and settings, never of live clients or connections, so it
    can travel to a worker process or another machine. `name` tells recipes apart in a
    worker that has built several; `uses_cache` says whether the agents read and write
    the response cache (the driver then ships each episode's answers with its job).
    `build` receives the process's cache (None: check that it builds, outside a run),
    its share of the run's concurrency, and `limits`, the per-endpoint call limits the
    process shares among runs (`deedbench.agents.CallLimits`; None: the recipe's own).
    """

    @property
    def name(self) -> str: ...

    @property
    def uses_cache(self) -> bool: ...

    def build(
        self, cache: EpisodeCache | None, concurrency: int, limits: Any | None = None
    ) -> Built: ...


@dataclass
class Prebuilt:
    """A recipe around a benchmark and an agent already built in this process (the Python
    API's `run`); only the in-process executor can use it."""

    benchmark: Benchmark[Any]
    agent: Agent
    name: str = "prebuilt"
    uses_cache: bool = False

    def build(
        self, cache: EpisodeCache | None, concurrency: int, limits: Any | None = None
    ) -> Built:
        return Built(self.benchmark, self.agent)


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to run, with everything needed to run it anywhere."""

    run_id: str
    recipe: Recipe
    key: EpisodeKey
    seed: int
    cached: tuple[CacheEntry, ...] = ()


@dataclass(frozen=True)
class Answered:
    """A model answer was paid for: commit it now."""

    entry: CacheEntry


@dataclass(frozen=True)
class Finished:
    """An episode ended, scored or as an infrastructure error. `json` is the record's JSON
    when it travelled as JSON (from a worker): the store keeps it as it is."""

    record: EpisodeRecord
    json: str | None = None


@dataclass(frozen=True)
class Aborted:
    """An episode raised RunAborted (bad credentials, a rejected request): stop the run."""

    reason: str


@dataclass(frozen=True)
class Lost:
    """A worker died; the episodes it had in flight are gone (they run again on resume)."""

    reason: str


Event = Answered | Finished | Aborted | Lost


class Executor(ABC):
    """Runs episode jobs somewhere and reports what they produce, to one driver.

    The driver keeps at most `capacity` jobs submitted and not finished, so memory follows
    the concurrency, not the size of the run. Use as an async context manager: `start`
    on entry, `close` on exit.
    """

    capacity: int

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @abstractmethod
    async def start(self) -> None:
        """Get ready to take jobs (start workers, connect to a cluster)."""

    @abstractmethod
    async def prepare(self, recipe: Recipe) -> None:
        """Build `recipe` wherever jobs will run, before any job. Raises RunAborted when
        building does (a missing key); otherwise what building raised (in this process)
        or an ExecutorError with its message (elsewhere)."""

    @abstractmethod
    def submit(self, job: EpisodeJob) -> None:
        """Start a job; never blocks for the job's result."""

    @abstractmethod
    async def events(self) -> list[Event]:
        """Wait for at least one event; return it and every other already there."""

    @abstractmethod
    async def stop(self) -> list[Event]:
        """Cancel the jobs in flight; return the events produced and not yet read (answers
        already paid for, episodes that finished), so the driver can commit them."""

    @abstractmethod
    async def close(self) -> None:
        """Release everything `start` and the jobs acquired."""


class InProcessExecutor(Executor):
    """Jobs as tasks on the driver's event loop, sharing one agent per recipe.

    `lookup` (the driver store's `response`) lets the agents find answers by key that no
    job shipped: those cached by deedbench versions that did not record their episode.
    `limits` are call limits shared with other runs in this process (a study's).
    """

    def __init__(
        self,
        concurrency: int = 16,
        *,
        lookup: Callable[[str], CacheEntry | None] | None = None,
        limits: Any | None = None,
    ) -> None:
        self.capacity = max(1, concurrency)
        self._lookup = lookup
        self._limits = limits
        self._built: dict[str, Built] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._cache = EpisodeCache(lambda entry: self._queue.put_nowait(Answered(entry)), lookup)

    async def start(self) -> None:
        return None

    async def prepare(self, recipe: Recipe) -> None:
        self._build(recipe)

    def _build(self, recipe: Recipe) -> Built:
        if recipe.name not in self._built:
            if self._limits is None:  # recipes written before limits were shared
                built = recipe.build(self._cache, self.capacity)
            else:
                built = recipe.build(self._cache, self.capacity, limits=self._limits)
            self._built[recipe.name] = built
        return self._built[recipe.name]

    def submit(self, job: EpisodeJob) -> None:
        task = asyncio.create_task(self._run(self._build(job.recipe), job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, built: Built, job: EpisodeJob) -> None:
        uses_cache = job.recipe.uses_cache
        if uses_cache:
            self._cache.hold(job.seed, job.cached)
        try:
            record = await run_job(built, job)
        except RunAborted as exc:
            self._queue.put_nowait(Aborted(str(exc)))
            return
        finally:
            if uses_cache:
                self._cache.release(job.seed)
        self._queue.put_nowait(Finished(record))

    async def events(self) -> list[Event]:
        return await drain(self._queue)

    async def stop(self) -> list[Event]:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        return waiting(self._queue)

    async def close(self) -> None:
        for built in self._built.values():
            await built.close()
        self._built.clear()


async def run_job(built: Built, job: EpisodeJob) -> EpisodeRecord:
    """Run one job with what its recipe built; a crash in the agent, a tool or the scorer
    is recorded as an error record, never lost. RunAborted passes through."""
    sample = built.samples.get(job.key.sample_id)
    if sample is None:
        raise RunAborted(
            f"sample {job.key.sample_id!r} of run {job.run_id!r} is not in the benchmark's "
            "data as loaded here"
        )
    key, seed = job.key, job.seed
    context = AgentContext(key.sample_id, key.condition, key.epoch, seed)
    started = time.time()
    clock = time.perf_counter()
    extra: dict[str, Usage] = {}  # model use outside the conversation (a judge's)

    def record(
        status: Literal["scored", "error"],
        termination: str,
        steps: int,
        messages: list[Message],
        error: str | None,
        score: Score | None = None,
    ) -> EpisodeRecord:
        return EpisodeRecord(
            sample_id=key.sample_id,
            condition=key.condition,
            epoch=key.epoch,
            seed=seed,
            status=status,
            termination=termination,
            steps=steps,
            messages=messages,
            score=score,
            metadata=sample.metadata,
            chance=sample.chance,
            error=error,
            usage=_usage_by_role(messages, extra),
            started_at=started,
            duration_s=time.perf_counter() - clock,
        )

    try:
        setup = built.benchmark.setup(sample, key.condition, seed)
        transcript = await run_episode(built.agent, setup, context)
        ended, steps, messages = transcript.termination, transcript.steps, transcript.messages
        extra.update(transcript.usage)
        if ended.unscored:  # an infrastructure error, or a player's interruption
            error = redact(transcript.error or str(ended).replace("_", " "))
            return record("error", ended, steps, messages, error)
        score = built.benchmark.score(sample, transcript)
        return record("scored", ended, steps, messages, None, score)
    except RunAborted:
        raise
    except Exception as exc:
        detail = redact("".join(traceback.format_exception_only(exc)).strip())
        return record("error", Termination.INFRASTRUCTURE_ERROR, 0, [], detail)


def _usage_by_role(messages: list[Message], extra: dict[str, Usage]) -> dict[str, Usage]:
    totals: dict[str, Usage] = dict(extra)
    for message in messages:
        if message.usage is not None:
            totals[message.role] = totals.get(message.role, Usage()) + message.usage
    return totals


async def drain(queue: asyncio.Queue[Event]) -> list[Event]:
    """The next event, and every other one already waiting (an executor's `events`)."""
    return [await queue.get(), *waiting(queue)]


def waiting(queue: asyncio.Queue[Event]) -> list[Event]:
    """Every event already in the queue, without waiting (what an executor's `stop` returns)."""
    found = []
    while not queue.empty():
        found.append(queue.get_nowait())
    return found
