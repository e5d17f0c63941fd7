"""TAC throughput with the baseline agents: episodes per second on one core.

Runs the full suite (48 samples x 2 conditions x 3 epochs = 288 episodes) for each
baseline through the real runner and run store (a fresh SQLite file per round),
the same path as `deedbench run`, and prints episodes per second.

    python bench/tac_throughput.py [--rounds 15]

Target (issue 2): at least 2,000 episodes/s. Reference: Inspect AI running the
upstream TAC task with its mock model takes 6-7 s for 156 samples (about 25/s).

`--workers-cli` asks instead when `--workers 2` pays (issue 26): the real `deedbench run`
command, each in a fresh process, with `--workers 1` and `--workers 2`, alternating, for
runs whose work per episode is cheap (TAC's random baseline: 528 and 4,992 episodes) and
dearer (the retail service desk's oracle, which plays and scores each task: 552 and
4,968 episodes); wall time of the whole command (start-up, workers, summary) and the
machine's load, median and range of --rounds. Model runs are measured by
bench/concurrency.py --cli.

    python bench/tac_throughput.py --workers-cli [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
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


# (label, arguments of `deedbench run`): cheap and dearer episodes, a small and a large run
WORKER_RUNS = [
    ("tac random, 528", ["tac", "--agent", "baseline/random", "--condition", "base",
                         "--epochs", "11"]),
    ("tac random, 4,992", ["tac", "--agent", "baseline/random", "--epochs", "52"]),
    ("retail oracle, 552", ["retail", "--agent", "baseline/oracle", "--epochs", "6"]),
    ("retail oracle, 4,968", ["retail", "--agent", "baseline/oracle", "--epochs", "54"]),
]  # fmt: skip


def workers_cli(rounds: int) -> None:
    """`deedbench run` with --workers 1 and 2, alternating, in fresh processes."""
    env = {k: v for k, v in os.environ.items() if k != "DEEDBENCH_STORE"}
    entry = [sys.executable, "-c", "from deedbench.cli.main import main; main()", "run"]
    print(f"`deedbench run` wall time, --workers 1 vs 2, {rounds} rounds, median (range)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, arguments in WORKER_RUNS:
            walls: dict[int, list[float]] = {1: [], 2: []}
            loads = []
            for index in range(rounds):
                for workers in (1, 2) if index % 2 == 0 else (2, 1):
                    store = Path(tmp) / f"w{workers}-{index}.db"
                    command = [*entry, *arguments, "--workers", str(workers)]
                    command += ["--store", str(store), "--run-id", "w"]
                    loads.append(os.getloadavg()[0])
                    start = time.perf_counter()
                    subprocess.run(command, check=True, env=env, capture_output=True)
                    walls[workers].append(time.perf_counter() - start)
                    store.unlink()
            one, two = (statistics.median(walls[w]) for w in (1, 2))
            print(
                f"  {label}: --workers 1 {one:.2f} s ({min(walls[1]):.2f}-{max(walls[1]):.2f}), "
                f"--workers 2 {two:.2f} s ({min(walls[2]):.2f}-{max(walls[2]):.2f}): "
                f"{one / two:.2f}x; load average {min(loads):.1f}-{max(loads):.1f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--workers-cli", action="store_true", help="--workers 1 vs 2")
    args = parser.parse_args()
    if args.workers_cli:
        workers_cli(args.rounds)
        return
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
