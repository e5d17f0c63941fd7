"""Time to score one service-desk episode, against τ-bench's approach measured in the same run.

deedbench: outcome (only the records either world touched, both rules), outputs
(both rules) and every procedure rule, with the task's gold world replayed once and
kept (cold: including that replay). τ-bench's approach, per score: reload the world
from its JSON files, replay the gold actions on it, and hash the whole gold and
final databases with `str()`.

    python bench/retail_scoring.py [--episodes 20]
    python bench/retail_scoring.py --data ../shared/taubench/retail     # τ-bench's world and tasks

Targets: under 5 ms per episode and at least 25x faster than τ-bench's approach (issue 4, on
deedbench's world), and at least 25x on τ-bench's retail world (issue 5).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from deedbench.benchmarks.retail import RETAIL_TOOLS, RetailBenchmark, load_retail_data, write_world
from deedbench.benchmarks.servicedesk import DeskScorer, DeskWorld, ServiceDeskBenchmark, replay
from deedbench.benchmarks.taubench import TaubenchRetailBenchmark
from deedbench.engine import AgentContext, EpisodeTranscript, run_episode
from deedbench.scoring.state import tau_hash


def transcripts(bench: ServiceDeskBenchmark, count: int) -> list[tuple[str, EpisodeTranscript]]:
    """Oracle episodes of the first `count` tasks that change the database."""
    oracle = bench.baselines()["oracle"]()
    chosen = [t for t in bench.tasks.values() if t.writes][:count]
    result = []
    for task in chosen:
        sample = next(s for s in bench.samples() if s.id == task.id)
        setup = bench.setup(sample, "default", 0)
        context = AgentContext(task.id, "default", 1, 0)
        result.append((task.id, asyncio.run(run_episode(oracle, setup, context))))
    return result


def tau_bench_style(
    directory: Path, bench: ServiceDeskBenchmark, task_id: str, final: DeskWorld
) -> bool:
    base = load_retail_data(directory)
    gold, _ = replay(base, bench.tasks[task_id].actions, RETAIL_TOOLS)
    return tau_hash(gold.snapshot()) == tau_hash(final.snapshot())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--data", type=Path, help="a τ-bench retail folder (default: own world)")
    args = parser.parse_args()
    bench: ServiceDeskBenchmark = (
        TaubenchRetailBenchmark({"data": str(args.data), "split": "test"})
        if args.data
        else RetailBenchmark()
    )
    episodes = transcripts(bench, args.episodes)
    with tempfile.TemporaryDirectory() as tmp:
        write_world(bench.base, Path(tmp))
        cold, warm, tau = [], [], []
        for task_id, transcript in episodes:
            task = bench.tasks[task_id]
            scorer = DeskScorer(bench.base, bench.domain)
            start = time.perf_counter()
            first = scorer.score(task, transcript)
            cold.append(time.perf_counter() - start)
            start = time.perf_counter()
            again = scorer.score(task, transcript)
            warm.append(time.perf_counter() - start)
            start = time.perf_counter()
            same = tau_bench_style(Path(tmp), bench, task_id, transcript.state)
            tau.append(time.perf_counter() - start)
            assert first.values == again.values and bool(first.values["outcome_tau"]) == same
    size = len(json.dumps(bench.base)) / 1e6
    ms = {
        name: 1000 * statistics.median(v)
        for name, v in (("cold", cold), ("warm", warm), ("tau", tau))
    }
    world = f"τ-bench's retail world ({args.data})" if args.data else "deedbench's retail world"
    print(
        f"{len(episodes)} oracle episodes of write tasks on {world}, "
        f"{size:.1f} MB of JSON; medians:"
    )
    print(f"  deedbench, gold world kept:      {ms['warm']:.3f} ms per episode")
    print(f"  deedbench, gold replayed first:  {ms['cold']:.3f} ms per episode")
    print(f"  τ-bench approach (reload+rehash): {ms['tau']:.1f} ms per episode")
    kept, cold_ratio = ms["tau"] / ms["warm"], ms["tau"] / ms["cold"]
    print(f"  speed-up: {kept:.0f}x kept, {cold_ratio:.0f}x cold (target: 25x and < 5 ms)")


if __name__ == "__main__":
    main()
