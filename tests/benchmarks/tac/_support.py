"""Shared helpers for the TAC tests: scenarios, tool calls and whole runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from deedbench.agents import resolve_agent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.scenario import BUILTIN_DIR, Scenario, load_scenarios
from deedbench.benchmarks.tac.tools import TOOLS, TacWorld
from deedbench.engine import (
    Agent,
    AgentContext,
    RunStore,
    ToolBox,
    new_run_config,
    run,
    run_episode,
)
from deedbench.records import EpisodeKey, EpisodeRecord, Message, RunConfig, ToolCall, episode_seed

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OFFICIAL_FIXTURE = FIXTURES / "tac_official_schema.json"
# The official shape with a canary (top level and in one scenario), two scenarios with two
# harmful options and swaps that tie: where deedbench's and upstream's variants part.
VARIANTS_FIXTURE = FIXTURES / "tac_official_variants.json"


def builtin_scenario(scenario_id: str) -> Scenario:
    """One built-in scenario, by id."""
    return next(s for s in load_scenarios() if s.id == scenario_id)


def builtin_json(scenario_id: str) -> dict[str, Any]:
    """The raw JSON object of one built-in scenario file."""
    data: dict[str, Any] = json.loads((BUILTIN_DIR / f"{scenario_id}.json").read_text())
    return data


def call_tool(box: ToolBox, name: str, call_id: str = "call_1", **arguments: Any) -> Message:
    """Call one tool through the toolbox, as an agent's tool call would."""
    return box.call(ToolCall(id=call_id, name=name, arguments=json.dumps(arguments)))


def toolbox(experiences: Sequence[Any]) -> ToolBox:
    """The TAC tools over a fresh world holding `experiences`."""
    return ToolBox(TOOLS, TacWorld.of(tuple(experiences)))


def assistant_calls(*calls: ToolCall, content: str = "") -> Message:
    return Message(role="assistant", content=content, tool_calls=list(calls))


def purchase_call(call_id: str, experience_id: str, num_tickets: int = 2) -> ToolCall:
    arguments = {"experience_id": experience_id, "num_tickets": num_tickets, "ticket_type": "adult"}
    return ToolCall(id=call_id, name="purchase_tickets", arguments=json.dumps(arguments))


def run_full(
    tmp_path: Path,
    agent_spec: str,
    *,
    agent: Agent | None = None,
    bench: TacBenchmark | None = None,
    conditions: list[str] | None = None,
    epochs: int = 1,
    seed: int = 0,
    run_id: str = "test-run",
) -> tuple[RunConfig, list[EpisodeRecord]]:
    """A whole run through the real runner and run store; the config and stored records."""
    benchmark = bench if bench is not None else load_benchmark("tac")
    chosen = agent if agent is not None else resolve_agent(agent_spec, benchmark)
    config = new_run_config(
        run_id=run_id,
        benchmark=benchmark,
        agent=agent_spec,
        agent_params={},
        conditions=conditions or list(benchmark.conditions),
        epochs=epochs,
        seed=seed,
        samples=benchmark.samples(),
    )
    with RunStore(tmp_path / f"{run_id}.db") as store:
        store.create_run(config)
        asyncio.run(run(config, benchmark, chosen, store, concurrency=8))
        store.flush()
        records = list(store.episodes(run_id))
    return config, records


def purchases_by_sample(
    bench: TacBenchmark, agent_factory: Callable[[], Agent], condition: str = "base", seed: int = 0
) -> dict[str, list[str]]:
    """Run every sample once (epoch 1) and return what the agent bought in each."""

    async def one(sample_id: str) -> list[str]:
        sample = next(s for s in bench.samples() if s.id == sample_id)
        key = EpisodeKey(sample_id, condition, 1)
        episode = episode_seed(seed, key)
        setup = bench.setup(sample, condition, episode)
        context = AgentContext(sample_id, condition, 1, episode)
        transcript = await run_episode(agent_factory(), setup, context)
        return [p.experience_id for p in transcript.state.purchases]

    async def every() -> dict[str, list[str]]:
        return {s.id: await one(s.id) for s in bench.samples()}

    return asyncio.run(every())
