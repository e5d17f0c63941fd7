"""Time to score one τ² episode: deedbench's evaluator against τ²'s own evaluate_simulation,
on the same trajectories, measured in the same run.

The trajectories are each task's gold trajectory and its variants (dropped write,
reversed, extra call, ...) from the differential tests. τ²'s side runs in τ²'s own
Python (tests/benchmarks/tau2/_reference.py) and times each `evaluate_simulation`
call there; its database files are parsed once and deep-copied per construction
(as ../shared/tau2/offline/gold_eval.py does), which favours τ²: its own runs parse
them on every construction. deedbench's side is timed warm (each task's start state
made once, as a run makes it; the median of 5 evaluations of each trajectory) and cold
(the first evaluation of a task, which makes it). Both sides' verdicts are compared as
well: a speed figure on different answers would be no figure.

    DEEDBENCH_TAU2_VENV=/work/tau2-ref/venv python bench/tau2_scoring.py \
        [--domains airline retail telecom] [--tasks 20]

Target (issue 24): at least 100x faster than τ²'s evaluate_simulation per episode.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.benchmarks.tau2 import _reference
from tests.benchmarks.tau2._trajectories import trajectory, variants

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.evaluator import evaluate
from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.records import Message

REPEATS = 5
"""deedbench's side of one trajectory is the median of this many evaluations: each takes
well under a millisecond, so one timing is mostly noise (τ²'s, ~50x longer, is one)."""

DOMAINS = {
    "airline": ("airline", "AIRLINE", "airline"),
    "retail": ("retail", "RETAIL", "retail"),
    "telecom": ("telecom", "TELECOM", "telecom"),
    "banking": ("banking", "BANKING", "banking_knowledge"),
}


def _all_met(messages: object, assertions: list[str]) -> list[NLAssertionCheck]:
    return [
        NLAssertionCheck(nl_assertion=a, met=True, justification="scripted") for a in assertions
    ]


def _timed(
    data: Tau2Data, task: Tau2Task, messages: list[Message], ending: str
) -> tuple[float, dict[str, Any]]:
    clock = time.perf_counter()
    try:
        ours = evaluate(data, task, messages, ending, judge=_all_met).reward.tau2_json()
    except Exception as exc:  # where τ²'s raises too (tests/benchmarks/tau2/test_evaluator.py)
        ours = {"crash": f"{type(exc).__name__}: {exc}"}
    return time.perf_counter() - clock, ours


def measure(name: str, tasks: int) -> dict[str, float | int | str]:
    module, attr, tau2_name = DOMAINS[name]
    package = importlib.import_module(f"deedbench.benchmarks.tau2.{module}")
    domain = getattr(package, attr) if hasattr(package, attr) else package.banking_domain("bm25")
    data = Tau2Data(domain, _reference.domain_data(tau2_name), f"tau2-{name}", "base")
    chosen = list(data.tasks.values())[:tasks]
    cases = [{**case, "hashes": "none"} for task in chosen for case in variants(task)]
    env_kwargs = {"retrieval_variant": "no_knowledge"} if tau2_name == "banking_knowledge" else {}
    theirs = {r["id"]: r for r in _reference.evaluate(tau2_name, cases, env_kwargs)}
    cold: list[float] = []
    warm: list[float] = []
    agree = 0
    seen: set[str] = set()
    for case in cases:
        task = data.tasks[case["task"]["id"]]
        messages = trajectory(data, task, case)
        ending = case.get("termination", "user_stop")
        if task.id not in seen:  # the task's first episode makes its start state: cold
            seen.add(task.id)
            data._starts.clear()
            data._golds.clear()
            cold.append(_timed(data, task, messages, ending)[0])
        repeats = [_timed(data, task, messages, ending) for _ in range(REPEATS)]
        warm.append(statistics.median(seconds for seconds, _ in repeats))
        ours = repeats[0][1]
        other = theirs[case["id"]]
        expected = other["reward_info"] if "reward_info" in other else {"crash": other["crash"]}
        agree += json.dumps(ours, sort_keys=True) == json.dumps(expected, sort_keys=True)
    tau2 = [r["seconds"] for r in theirs.values() if "seconds" in r]
    return {
        "domain": name,
        "episodes": len(cases),
        "agree": agree,
        "tau2_ms": statistics.median(tau2) * 1000,
        "deedbench_warm_ms": statistics.median(warm) * 1000,
        "deedbench_cold_ms": statistics.median(cold) * 1000,
        "tasks": len(cold),
        "ratio_warm": statistics.median(tau2) / statistics.median(warm),
        "ratio_cold": statistics.median(tau2) / statistics.median(cold),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", nargs="+", default=["airline", "retail", "telecom"])
    parser.add_argument("--tasks", type=int, default=20)
    args = parser.parse_args()
    missing = _reference.missing()
    if missing is not None:
        raise SystemExit(f"τ²'s evaluator cannot run here: {missing}")
    print(
        f"{'domain':8} {'episodes':>8} {'agree':>6} {'τ² ms':>8} {'warm ms':>8} "
        f"{'cold ms':>8} {'x warm':>8} {'x cold':>8}"
    )
    for name in args.domains:
        row = measure(name, args.tasks)
        print(
            f"{row['domain']:8} {row['episodes']:>8} {row['agree']:>6} {row['tau2_ms']:>8.2f} "
            f"{row['deedbench_warm_ms']:>8.3f} {row['deedbench_cold_ms']:>8.3f} "
            f"{row['ratio_warm']:>8.0f} {row['ratio_cold']:>8.0f}"
        )


if __name__ == "__main__":
    main()
