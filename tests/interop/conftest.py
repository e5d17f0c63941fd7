"""Fixtures shared by the log tests: a scripted TAC run (both conditions, two epochs, one
infrastructure error) and its export as Inspect logs. Inspect is imported inside them,
so this folder's tests without Inspect still collect."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deedbench.records import EpisodeRecord, RunConfig


@pytest.fixture(scope="module")
def deedbench_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[RunConfig, list[EpisodeRecord]]:
    """A TAC run with both conditions, two epochs and one infrastructure error."""
    from deedbench.agents import FunctionAgent
    from deedbench.benchmarks import load_benchmark
    from deedbench.engine import RunStore, new_run_config, run
    from deedbench.errors import InfrastructureError

    from ._support import BROKEN, SAMPLE_IDS, function_agent

    scripted = function_agent()

    async def turn(messages, tools, context):  # type: ignore[no-untyped-def]
        if (context.sample_id, context.condition) == (BROKEN, "welfare"):
            raise InfrastructureError("provider returned 503")
        return await scripted.next_turn(messages, tools, context)

    bench = load_benchmark("tac")
    config = new_run_config(
        run_id="scripted",
        benchmark=bench,
        agent="function",
        agent_params={},
        conditions=["base", "welfare"],
        epochs=2,
        seed=0,
        samples=[s for s in bench.samples() if s.id in SAMPLE_IDS],
    )
    with RunStore(tmp_path_factory.mktemp("store") / "runs.db") as store:
        store.create_run(config)
        asyncio.run(run(config, bench, FunctionAgent(turn), store))
        return config, list(store.episodes("scripted"))


@pytest.fixture(scope="module")
def exported(
    deedbench_run: tuple[RunConfig, list[EpisodeRecord]], tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    from deedbench.interop.write_log import write_inspect_logs

    config, records = deedbench_run
    return write_inspect_logs(config, records, tmp_path_factory.mktemp("exported"))
