"""Rebuild the shipped task file: generate tasks over the built-in world, keep the valid ones.

    python -m deedbench.benchmarks.retail.build [--per-template 8] [--seed 0]

Writes src/deedbench/benchmarks/retail/tasks.json and prints what it dropped and why.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from deedbench.benchmarks.retail.benchmark import WORLD_SEED, RetailBenchmark
from deedbench.benchmarks.retail.generate import generate_world
from deedbench.benchmarks.retail.templates import generate_tasks
from deedbench.benchmarks.servicedesk import DeskTask, DeskWorld, check_task

__all__ = ["TASK_FILE", "main"]

TASK_FILE = Path(__file__).with_name("tasks.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    base = generate_world(seed=WORLD_SEED)
    candidates = generate_tasks(DeskWorld(base), args.per_template, args.seed)
    bench = RetailBenchmark(tasks=candidates)
    kept: list[DeskTask] = []
    for task in candidates:
        check = check_task(bench, task)
        if check.ok:
            kept.append(task.model_copy(update={"id": f"retail-{len(kept):03d}-{task.template}"}))
        else:
            print(f"dropped {task.id}: {'; '.join(check.problems)}")
    TASK_FILE.write_text(
        json.dumps([t.model_dump(mode="json") for t in kept], indent=1) + "\n", encoding="utf-8"
    )
    print(f"kept {len(kept)} of {len(candidates)} tasks -> {TASK_FILE}")


if __name__ == "__main__":
    main()
