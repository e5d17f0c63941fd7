"""A whole TAC run through the real runner and store, for the report tests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from deedbench.agents import resolve_agent
from deedbench.benchmarks.tac import TacBenchmark
from deedbench.engine import Agent, RunStore, new_run_config, run
from deedbench.records import EpisodeRecord, Message, RunConfig, ToolCall


def purchase(experience_id: str) -> Message:
    arguments = {"experience_id": experience_id, "num_tickets": 2, "ticket_type": "adult"}
    call = ToolCall(id="buy", name="purchase_tickets", arguments=json.dumps(arguments))
    return Message(role="assistant", tool_calls=[call])


def run_tac(
    folder: Path,
    agent_spec: str,
    *,
    agent: Agent | None = None,
    bench: TacBenchmark | None = None,
    epochs: int = 1,
    run_id: str = "report-test",
) -> tuple[RunConfig, list[EpisodeRecord]]:
    """Run every sample in both conditions; the config and the stored records."""
    benchmark = bench if bench is not None else TacBenchmark()
    config = new_run_config(
        run_id=run_id,
        benchmark=benchmark,
        agent=agent_spec,
        agent_params={},
        conditions=list(benchmark.conditions),
        epochs=epochs,
        seed=0,
        samples=benchmark.samples(),
    )
    with RunStore(folder / "runs.db") as store:
        store.create_run(config)
        chosen = agent if agent is not None else resolve_agent(agent_spec, benchmark)
        asyncio.run(run(config, benchmark, chosen, store, concurrency=8))
        store.flush()
        records = list(store.episodes(run_id))
    return config, records
