"""TAC throughput with the baseline agents: episodes per second on one core.

Runs the full suite (48 samples x 2 conditions x 3 epochs = 288 episodes) for each
baseline through the real runner and run store (a fresh SQLite file per round),
the same path as `deedbench run`, and prints episodes per second.

    python bench/tac_throughput.py [--rounds 15]

Target (issue 2): at least 2,000 episodes/s. Reference: Inspect AI running the
upstream TAC task with its mock model takes 6-7 s for 156 samples (about 25/s).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from pathlib import Path

from deedbench.agents import resolve_agent
from deedbench.benchmarks import load_benchmark
from deedbench.engine import RunStore, new_run_config, run

TARGET = 2000.0


def one_round(agent_name: str, folder: Path, round_index: int) -> tuple[int, float]:
    bench = load_benchmark("tac")
    agent = resolve_agent(f"baseline/{agent_name}", bench)
    config = new_run_config(
        run_id=f"bench-{agent_name}-{round_index}",
        benchmark=bench,
        agent=f"baseline/{agent_name}",
        agent_params={},
        conditions=list(bench.conditions),
        epochs=3,
        seed=round_index,
        samples=bench.samples(),
    )
    with RunStore(folder / f"{agent_name}-{round_index}.db") as store:
        store.create_run(config)
        start = time.perf_counter()
        done = asyncio.run(run(config, bench, agent, store, concurrency=16))
        store.flush()
        elapsed = time.perf_counter() - start
        assert store.count(config.run_id) == {"scored": done} and done == 288
    return done, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(f"TAC full suite, 288 episodes per round, {args.rounds} rounds after a warm-up round")
    print(f"{'agent':<12}{'median/s':>10}{'min/s':>8}{'max/s':>8}{'ms/episode':>12}{'target':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for agent_name in ("random", "relevance", "welfare", "refuse"):
            one_round(agent_name, Path(tmp), -1)  # warm-up: imports, caches
            rates = []
            for i in range(args.rounds):
                gc.collect()
                n, elapsed = one_round(agent_name, Path(tmp), i)
                rates.append(n / elapsed)
            median = statistics.median(rates)
            verdict = "ok" if median >= TARGET else "MISSED"
            print(
                f"{agent_name:<12}{median:>10.0f}{min(rates):>8.0f}{max(rates):>8.0f}"
                f"{1000 / median:>12.3f}{verdict:>8}"
            )


if __name__ == "__main__":
    main()
