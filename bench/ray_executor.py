"""The Ray executor against the local one: TAC episodes of a model agent at a loopback server.

2,016 episodes (TAC's 48 samples x 2 conditions x 21 epochs, three calls each) through the
fake server (deedbench.testing.serve, its own process) answering after `--latency`
seconds, at `--concurrency` episodes and calls in flight: once in this process
(`InProcessExecutor`), once on a Ray cluster started here (`ray.init`, as `deedbench run
--executor ray` does with no address) with `--workers` worker actors, calls capped by the
pool's limits actor; and, for the same parallelism, in `--workers` local worker
processes (`ProcessExecutor`). Printed for each: wall time from start (Ray's start and the workers'
builds included) and from "ready" (the run prepared where it runs), against the ideal
(calls x latency / concurrency), and the driver process's CPU per episode in the driver
(`engine.runner.drive`: what the one writer costs: receiving, validating and storing
records and answers,
following the streams). Then the same at latency 0 with `--fast-epochs`, where the
difference per episode between Ray and the local worker processes is what Ray adds (the
actor round trips per call and per episode).

Each measurement is repeated --rounds times (the machine is shared), and the median and
range of the driver's CPU per episode are printed for each executor, with Ray's ratio to
the local worker processes' in the same round.

    python bench/ray_executor.py [--latency 0.2] [--concurrency 100] [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from concurrency import CALLS_PER_EPISODE, cpu_seconds, serve
from deedbench.benchmarks import load_benchmark
from deedbench.engine import (
    Executor,
    InProcessExecutor,
    ProcessExecutor,
    RunStore,
    new_run_config,
)
from deedbench.engine.runner import drive
from deedbench.executors.ray import RayExecutor
from deedbench.recipes import RunRecipe
from deedbench.records import AgentSettings, GenerationParams, RunConfig


def config_for(label: str, url: str, epochs: int) -> RunConfig:
    bench = load_benchmark("tac")
    settings = AgentSettings(
        base_url=url,
        params=GenerationParams(temperature=0.7, timeout=30),
        max_attempts=10,
        retry_initial_wait=0.2,
    )
    return new_run_config(
        run_id=label,
        benchmark=bench,
        agent="openai-compatible/fake",
        agent_params=settings.model_dump(),
        conditions=list(bench.conditions),
        epochs=epochs,
        seed=0,
        samples=bench.samples(),
    )


def timed(config: RunConfig, store_path: Path, executor: Executor) -> dict[str, Any]:
    recipe = RunRecipe(config, cache=False)
    marks: dict[str, float] = {}

    async def go(store: RunStore) -> None:
        async with executor:
            await executor.prepare(recipe)
            marks["ready"] = time.perf_counter()
            marks["cpu"] = time.process_time()
            with store.lock_run(config.run_id):  # as `Launch` holds it
                await drive(config, store, executor, recipe)
            marks["cpu"] = time.process_time() - marks["cpu"]

    with RunStore(store_path) as store:
        store.create_run(config)
        machine = cpu_seconds()
        start = time.perf_counter()
        asyncio.run(go(store))
        end = time.perf_counter()
        machine = cpu_seconds() - machine
        counts = store.count(config.run_id)
    return {
        "wall": end - start,
        "from_ready": end - marks["ready"],
        "driver_cpu": marks["cpu"],
        "machine_cores": machine / (end - start),
        "counts": counts,
    }


def measure(
    label: str, latency: float, epochs: int, args: argparse.Namespace, tmp: Path
) -> dict[str, dict[str, Any]]:
    results = {}
    for kind in ("local", "processes", "ray"):
        process, url = serve(latency, 0.0)
        try:
            config = config_for(f"{label}-{kind}", url, epochs)
            executor: Executor
            if kind == "local":
                executor = InProcessExecutor(args.concurrency)
            elif kind == "processes":
                modules = RunRecipe(config).modules
                executor = ProcessExecutor(args.workers, args.concurrency, preload=modules)
            else:
                executor = RayExecutor(args.concurrency, address="local", workers=args.workers)
            results[kind] = result = timed(config, tmp / f"{label}-{kind}.db", executor)
        finally:
            process.terminate()
            process.communicate()
        episodes = config.planned_episodes
        ideal = episodes * CALLS_PER_EPISODE * latency / args.concurrency
        where = {
            "local": "1 process",
            "processes": f"--workers {args.workers}",
            "ray": f"Ray, {args.workers} workers",
        }[kind]
        against = f", ideal {ideal:.2f} s ({result['from_ready'] / ideal:.2f}x)" if ideal else ""
        print(
            f"{label} {where}: {episodes} episodes, wall {result['wall']:.2f} s, from ready "
            f"{result['from_ready']:.2f} s{against}; driver CPU in execute "
            f"{1000 * result['driver_cpu'] / episodes:.2f} ms per episode; machine busy "
            f"{result['machine_cores']:.1f} cores; stored {result['counts']}",
            flush=True,
        )
    per_episode = (results["ray"]["from_ready"] - results["processes"]["from_ready"]) / episodes
    cpu = {kind: result["driver_cpu"] / episodes for kind, result in results.items()}
    print(
        f"{label}: Ray adds {1000 * per_episode:.2f} ms of wall time per episode (from ready) "
        f"to {args.workers} local worker processes; driver CPU per episode: Ray "
        f"{1000 * cpu['ray']:.2f} ms, --workers {args.workers} {1000 * cpu['processes']:.2f} ms "
        f"({cpu['ray'] / cpu['processes']:.2f}x), one process {1000 * cpu['local']:.2f} ms",
        flush=True,
    )
    for result in results.values():
        result["episodes"] = episodes
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=21, help="x 96 episodes")
    parser.add_argument("--fast-epochs", type=int, default=10, help="at latency 0")
    parser.add_argument("--rounds", type=int, default=3, help="each measurement repeated")
    args = parser.parse_args()
    rounds: dict[str, list[dict[str, dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for round_ in range(args.rounds):
            print(f"round {round_ + 1} of {args.rounds}", flush=True)
            for label, latency, epochs in (
                (f"latency {args.latency:g}s", args.latency, args.epochs),
                ("latency 0", 0.0, args.fast_epochs),
            ):
                rounds.setdefault(label, []).append(
                    measure(f"{label}, round {round_ + 1}", latency, epochs, args, tmp)
                )
    for label, measured in rounds.items():
        print(f"{label}, {len(measured)} rounds: median (range)")
        for kind in ("local", "processes", "ray"):
            cpu = [1000 * r[kind]["driver_cpu"] / r[kind]["episodes"] for r in measured]
            ready = [r[kind]["from_ready"] for r in measured]
            print(
                f"  {kind}: driver CPU {spread(cpu)} ms per episode; from ready {spread(ready)} s"
            )
        ratios = [r["ray"]["driver_cpu"] / r["processes"]["driver_cpu"] for r in measured]
        print(f"  driver CPU, Ray / --workers {args.workers}: {spread(ratios)}x")


def spread(values: list[float]) -> str:
    """The median and range of repeated figures."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


if __name__ == "__main__":
    main()
