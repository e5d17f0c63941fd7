"""Replaying a stored episode through the seam: the recorded turns of one side answered to
the turns an `Environment`'s rollout asks for, and the record it gives back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deedbench.engine import Agent, AgentContext, RunStore, plan_run, run
from deedbench.engine.seat import Turn
from deedbench.environment import Environment
from deedbench.records import EpisodeRecord, Message, RunConfig

# tests/environment/<this file>: parents[2] is the checkout, its parent holds `shared`.
SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TAU2 = SHARED / "tau2"
TAUBENCH = SHARED / "taubench"


def recorded_run(
    bench: Any,
    agent: Agent,
    spec: str,
    store: RunStore,
    *,
    limit: int | None = None,
    conditions: Sequence[str] | None = None,
) -> tuple[RunConfig, list[EpisodeRecord]]:
    """A run of `agent` on `bench` through deedbench's own driver, and its records."""
    import asyncio

    config = plan_run(bench, spec, limit=limit, conditions=conditions, seed=7)
    asyncio.run(run(config, bench, agent, store, concurrency=4))
    return config, list(store.episodes(config.run_id))


def opening(environment: Environment, record: EpisodeRecord) -> int:
    """How many messages the episode's setup gave before anyone spoke."""
    sample = environment.built.samples[record.sample_id]
    setup = environment.benchmark.setup(sample, record.condition, record.seed)
    return len(setup.messages)


def side_turns(record: EpisodeRecord, side: str, start: int) -> list[Message]:
    """The turns one side took in a record, as the answers its seat gave: the agent's own
    messages; a model-played user's messages made assistant messages again."""
    if side == "agent":
        return [m for m in record.messages[start:] if m.role == "assistant"]
    return [
        m.model_copy(update={"role": "assistant"})
        for m in record.messages[start:]
        if m.role == "user"
    ]


async def replay(environment: Environment, record: EpisodeRecord) -> EpisodeRecord:
    """The record `record`'s episode gives when its side's recorded turns are played into
    the environment's seat, in order."""
    turns = side_turns(record, environment.play, opening(environment, record))
    rollout = environment.open(record.sample_id, record.condition, record.epoch, record.seed)
    step = await rollout.start()
    while isinstance(step, Turn):
        assert turns, f"{record.sample_id}: the seam asked for more turns than were recorded"
        step = await rollout.act(turns.pop(0))
    assert not turns, f"{record.sample_id}: {len(turns)} recorded turns were never asked for"
    return step


def same(replayed: EpisodeRecord, stored: EpisodeRecord) -> None:
    """The replayed episode is the stored one: its messages, ending, steps and score."""
    where = f"{stored.sample_id}/{stored.condition}/{stored.epoch}"
    assert replayed.termination == stored.termination, where
    assert replayed.steps == stored.steps, where
    assert replayed.messages == stored.messages, where
    assert replayed.status == stored.status, where
    assert replayed.score == stored.score, where


def context_of(record: EpisodeRecord) -> AgentContext:
    return AgentContext(record.sample_id, record.condition, record.epoch, record.seed)
