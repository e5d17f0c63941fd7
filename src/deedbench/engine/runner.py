"""The run's driver: plans the episodes lazily, hands them to an executor, writes the store.

`drive` is the one writer of a run. Under the run's lock, which its `Launch` holds, it
refreshes the lock's heartbeat, pulls episode keys one at a time from the plan, skipping
those already scored, keeps at most the executor's capacity in flight, and commits each
new model answer as it arrives and each finished episode in batches. Memory follows the
concurrency, never the number of planned episodes. However the run ends (finished,
aborted, cancelled by a signal, a worker lost), what already finished is flushed before
the lock is released.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator

from deedbench.engine.cache import CacheEntry
from deedbench.engine.executor import (
    Aborted,
    Answered,
    EpisodeJob,
    Event,
    Executor,
    Finished,
    Lost,
    Recipe,
)
from deedbench.engine.run_locks import HEARTBEAT_SECONDS
from deedbench.engine.store import RunStore
from deedbench.errors import ExecutorError, RunAborted
from deedbench.records import EpisodeKey, EpisodeRecord, RunConfig, episode_seed

__all__ = ["drive", "pending_keys"]


def pending_keys(config: RunConfig, store: RunStore) -> Iterator[EpisodeKey]:
    """The run's episodes the store does not hold scored, in plan order, one at a time: the
    store is asked once per (epoch, condition), about that slice only."""
    for epoch in range(1, config.epochs + 1):
        for condition in config.conditions:
            done = store.scored_samples(config.run_id, condition, epoch)
            for sample_id in config.sample_ids:
                if sample_id not in done:
                    yield EpisodeKey(sample_id, condition, epoch)


async def drive(
    config: RunConfig,
    store: RunStore,
    executor: Executor,
    recipe: Recipe,
    on_record: Callable[[EpisodeRecord], None] | None = None,
) -> int:
    """The driver under the run's lock, which its caller (`Launch`) holds: episodes pulled
    from the plan, at most the executor's capacity in flight, what comes back stored.
    The caller flushes the store at the end."""
    keys = pending_keys(config, store)
    in_flight: set[EpisodeKey] = set()
    started = 0

    async def submit_more(paced: bool = False) -> None:
        nonlocal started
        while len(in_flight) < executor.capacity and (key := next(keys, None)) is not None:
            seed = episode_seed(config.seed, key)
            cached: tuple[CacheEntry, ...] = ()
            if recipe.uses_cache:
                cached = tuple(store.responses_for(seed))
            executor.submit(EpisodeJob(config.run_id, recipe, key, seed, cached))
            in_flight.add(key)
            started += 1
            if paced:
                # Filling the executor, let each episode start, and its first request go
                # out, before the next is built: else a hundred episodes build their
                # requests before the first is sent (0.34 s, measured), the server idle
                # meanwhile. (Refills are a few at a time; a pause each would cost the
                # baselines' short episodes a pass of the event loop apiece.)
                await asyncio.sleep(0)

    def take(events: Iterable[Event]) -> Exception | None:
        """Store what the events bring (answers first: an episode's answers come before
        its record); return the first failure among them."""
        events = list(events)
        store.add_responses(e.entry for e in events if isinstance(e, Answered))
        failure: Exception | None = None
        for event in events:
            if isinstance(event, Finished):
                store.add(config.run_id, event.record, event.json)
                in_flight.discard(event.record.key)
                if on_record is not None:
                    on_record(event.record)
            elif isinstance(event, Aborted) and failure is None:
                failure = RunAborted(event.reason)
            elif isinstance(event, Lost) and failure is None:
                failure = ExecutorError(event.reason)
        return failure

    try:
        await submit_more(paced=True)
        beat = time.monotonic() + HEARTBEAT_SECONDS
        while in_flight:
            events: list[Event] = []
            try:
                async with asyncio.timeout(max(0.0, beat - time.monotonic())):
                    events = await executor.events()
            except TimeoutError:
                pass
            if time.monotonic() >= beat:
                store.heartbeat(config.run_id)
                store.flush()  # records never wait longer than a heartbeat for their batch
                beat = time.monotonic() + HEARTBEAT_SECONDS
            failure = take(events)
            if failure is not None:
                raise failure
            await submit_more()
    except BaseException:
        take(await executor.stop())
        raise
    return started
