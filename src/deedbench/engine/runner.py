"""The async runner: every (sample, condition, epoch) of a run, with bounded concurrency."""

from __future__ import annotations

import asyncio
import platform
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from deedbench import __version__
from deedbench.engine.benchmark import Benchmark
from deedbench.engine.episode import (
    Agent,
    AgentContext,
    RunAborted,
    Termination,
    gather_or_abort,
    run_episode,
)
from deedbench.engine.messages import Message, Usage
from deedbench.engine.records import EpisodeRecord, RunConfig
from deedbench.engine.sample import EpisodeKey, Sample, episode_seed
from deedbench.engine.secrets import redact
from deedbench.engine.store import RunStore

__all__ = ["new_run_config", "run"]


def new_run_config(
    *,
    run_id: str,
    benchmark: Benchmark,
    agent: str,
    agent_params: dict[str, Any],
    conditions: list[str],
    epochs: int,
    seed: int,
    samples: list[Sample],
    user: dict[str, Any] | None = None,
) -> RunConfig:
    """The configuration recorded for a new run."""
    return RunConfig(
        run_id=run_id,
        benchmark=benchmark.name,
        benchmark_options=benchmark.options,
        data_hash=benchmark.data_hash(),
        agent=agent,
        agent_params=agent_params,
        user=user or {},
        conditions=conditions,
        epochs=epochs,
        seed=seed,
        sample_ids=[s.id for s in samples],
        report=benchmark.report,
        deedbench_version=__version__,
        python_version=platform.python_version(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


async def run(
    config: RunConfig,
    benchmark: Benchmark,
    agent: Agent,
    store: RunStore,
    *,
    concurrency: int = 16,
    on_record: Callable[[EpisodeRecord], None] | None = None,
    shard: tuple[int, int] | None = None,
) -> list[EpisodeKey]:
    """Run the episodes of `config` that the store does not hold scored yet.

    Returns the keys that were attempted. Records are flushed even when the run
    is cancelled, so an interrupted run resumes where it stopped. `shard` (index,
    count) limits the run to every count-th episode of the plan, starting at index,
    so that several processes can share one run (see `engine.workers`).
    """
    samples = {s.id: s for s in benchmark.samples()}
    done = store.scored_keys(config.run_id)
    keys = config.episode_keys()
    if shard is not None:
        index, count = shard
        if not 0 <= index < count:
            raise ValueError(f"shard {index} of {count} does not exist")
        keys = keys[index::count]
    todo = [key for key in keys if key not in done]
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(key: EpisodeKey) -> None:
        async with limit:
            record = await _run_one(benchmark, agent, samples[key.sample_id], key, config.seed)
        store.add(config.run_id, record)
        if on_record is not None:
            on_record(record)

    try:
        await gather_or_abort(one(key) for key in todo)
    finally:
        store.flush()
    return todo


async def _run_one(
    benchmark: Benchmark, agent: Agent, sample: Sample, key: EpisodeKey, run_seed: int
) -> EpisodeRecord:
    seed = episode_seed(run_seed, key)
    context = AgentContext(key.sample_id, key.condition, key.epoch, seed)
    started = time.time()
    clock = time.perf_counter()
    common = {
        "sample_id": key.sample_id,
        "condition": key.condition,
        "epoch": key.epoch,
        "seed": seed,
        "metadata": sample.metadata,
        "chance": sample.chance,
        "started_at": started,
    }
    try:
        setup = benchmark.setup(sample, key.condition, seed)
        transcript = await run_episode(agent, setup, context)
        broken = transcript.termination is Termination.INFRASTRUCTURE_ERROR
        return EpisodeRecord(
            **common,
            status="error" if broken else "scored",
            termination=transcript.termination,
            steps=transcript.steps,
            messages=transcript.messages,
            score=None if broken else benchmark.score(sample, transcript),
            error=redact(transcript.error or "infrastructure error") if broken else None,
            usage=_usage_by_role(transcript.messages),
            duration_s=time.perf_counter() - clock,
        )
    except RunAborted:
        raise
    except Exception as exc:  # a crash in an agent, tool or scorer is recorded, never lost
        detail = redact("".join(traceback.format_exception_only(exc)).strip())
        return EpisodeRecord(
            **common,
            status="error",
            termination=Termination.INFRASTRUCTURE_ERROR,
            steps=0,
            messages=[],
            error=detail,
            duration_s=time.perf_counter() - clock,
        )


def _usage_by_role(messages: list[Message]) -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for message in messages:
        if message.usage is not None:
            totals[message.role] = totals.get(message.role, Usage()) + message.usage
    return totals
