"""Every stored episode, replayed through the seam, is the episode that was stored: the
same messages, ending and score (reward, procedure verdicts, attribution), on TAC, the
desk, τ-bench and all four τ² domains, from the agent's side and from the user's."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from deedbench.agents import FunctionAgent
from deedbench.benchmarks import load_benchmark
from deedbench.engine import AgentContext, RunStore
from deedbench.environment import Environment
from deedbench.records import EpisodeRecord, Message, ToolCall

from ._replay import TAU2, TAUBENCH, recorded_run, replay, same

# Each case loads its benchmark twice (the run's, the seam's: built apart on purpose), about
# a second for a τ² domain; the τ² cases take 2-4 s each on the shared 2-core machine.
CASES = [
    ("tac", {}, ("random", "relevance", "welfare", "refuse"), 16),
    ("tac", {"nudge": "2"}, ("refuse",), 12),
    ("retail", {}, ("oracle", "reckless", "idle"), 12),
    ("taubench-airline", {"data": str(TAUBENCH / "airline")}, ("oracle", "reckless"), 8),
    ("tau2-airline", {"data": str(TAU2)}, ("oracle", "reckless", "idle"), 8),
    ("tau2-telecom", {"data": str(TAU2)}, ("oracle", "idle"), 8),
    ("tau2-retail", {"data": str(TAU2)}, ("oracle",), 8),
    ("tau2-banking", {"data": str(TAU2)}, ("oracle",), 6),
]


def test_the_shared_data_is_there() -> None:
    """The cases below need τ²'s and τ-bench's data beside the checkout: they fail, never
    skip, where it is missing."""
    assert (TAU2 / "data" / "tau2" / "domains" / "airline" / "db.json").is_file()
    assert (TAUBENCH / "airline").is_dir()


@pytest.mark.parametrize(
    ("name", "options", "baselines", "limit"), CASES, ids=[f"{c[0]}{c[1] and '+'}" for c in CASES]
)
def test_replayed_agent_turns_score_as_stored(
    tmp_path: Path, name: str, options: dict[str, str], baselines: Sequence[str], limit: int | None
) -> None:
    bench = load_benchmark(name, options)
    environment = Environment(name, options=options, player="outside/replay")
    with RunStore(tmp_path / "runs.db") as store:
        for baseline in baselines:
            agent = bench.baselines()[baseline]()
            _, records = recorded_run(bench, agent, f"baseline/{baseline}", store, limit=limit)
            assert records and all(r.status == "scored" for r in records)

            asyncio.run(_check(environment, records))


async def _check(environment: Environment, records: Sequence[EpisodeRecord]) -> None:
    for record in records:
        same(await replay(environment, record), record)


def _customer(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], _: AgentContext
) -> Message:
    """A deterministic model playing the customer (it sees its own prompt and the agent's
    words as the other side): it asks, runs its first tool once if it has one, thanks, stops."""
    own = [m for m in messages if m.role == "assistant"]
    if not own:
        return Message(role="assistant", content="Hi, I need help with my account.")
    if tools and not any(m.tool_calls for m in own):
        name = tools[0]["function"]["name"]
        return Message(role="assistant", content="", tool_calls=[ToolCall(id="u1", name=name)])
    if len(own) < 4:
        return Message(role="assistant", content="Yes, please go ahead.")
    return Message(role="assistant", content="Thank you. ###STOP###")


@pytest.mark.parametrize("name", ["tau2-airline", "tau2-telecom", "retail"])
def test_replayed_user_turns_score_as_stored(tmp_path: Path, name: str) -> None:
    """A run whose customer was a model (a function here) replays from the user's side,
    the agent rebuilt from its spec, to the same records."""
    options = {"data": str(TAU2)} if name.startswith("tau2") else {}
    bench = load_benchmark(name, options | {"user": "llm:python/tests.environment:customer"})
    bench.use_user_model(FunctionAgent(_customer))
    environment = Environment(
        name, options=options, play="user", player="outside/replay", partner="baseline/oracle"
    )
    with RunStore(tmp_path / "runs.db") as store:
        agent = bench.baselines()["oracle"]()
        _, records = recorded_run(bench, agent, "baseline/oracle", store, limit=6)
        assert any(m.role == "user" and m.tool_calls for r in records for m in r.messages) == (
            name == "tau2-telecom"
        )

        asyncio.run(_check(environment, records))
