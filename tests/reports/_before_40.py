"""A store of a few thousand episodes whose every figure the code before issue 40 printed
(kept in tests/reports/data/before-40-*.json, made by data/make_before_40.py with that
code), built here the same way by whichever deedbench is imported: TAC's random and
relevance baselines, 10 epochs each (960 episodes each: chance tests, clusters, flips,
contrasts between conditions and runs), and the retail desk's reckless baseline, 2 epochs
(184 episodes: attribution, pass^k); then, through the store, error records and model
calls with token usage (one answered by the response cache) in place of some records, as
make_format1 does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deedbench.engine import RunStore
from deedbench.records import Usage

RUNS = {"rnd": "tac", "rel": "tac", "reckless": "retail"}
REPORTS = [
    "report rnd --json",
    "report rel --json",
    "report reckless --json",
    "report rnd --csv",
    "compare rnd rel --json",
    "report rnd",
    "report reckless",
    "compare rnd rel",
]
CLI = [sys.executable, "-c", "from deedbench.cli.main import main; main()"]


def build(out: Path) -> None:
    def run(*args: str) -> None:
        subprocess.run([*CLI, *args, "--store", str(out)], check=True, stdout=subprocess.DEVNULL)

    run("run", "tac", "-a", "baseline/random", "--epochs", "10", "--run-id", "rnd")
    run("run", "tac", "-a", "baseline/relevance", "--epochs", "10", "--run-id", "rel")
    run("run", "retail", "-a", "baseline/reckless", "--epochs", "2", "--run-id", "reckless")
    with RunStore(out) as store:
        for run_id in ("rnd", "reckless"):
            records = list(store.episodes(run_id))
            for i, record in enumerate(records[5::97]):
                store.add(
                    run_id,
                    record.model_copy(
                        update={
                            "status": "error",
                            "termination": "error",
                            "score": None,
                            "error": f"model call failed after {i + 3} attempts: timed out",
                            "messages": record.messages[:2],
                        }
                    ),
                )
            for record in records[7::31]:
                messages = list(record.messages)
                turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
                paid = Usage(input_tokens=1200, output_tokens=80, cached_input_tokens=200, calls=1)
                hit = Usage(input_tokens=1500, output_tokens=40, calls=1, cache_hits=1)
                messages[turns[0]] = messages[turns[0]].model_copy(update={"usage": paid})
                messages[turns[-1]] = messages[turns[-1]].model_copy(update={"usage": hit})
                total = (paid + hit).model_copy(update={"timeouts": 1})
                store.add(
                    run_id,
                    record.model_copy(update={"messages": messages, "usage": {"assistant": total}}),
                )


def report(out: Path, command: str) -> str:
    """What the command prints (JSON compacted; the store's path as STORE)."""
    found = subprocess.run(
        [*CLI, *command.split(), "--store", str(out)],
        check=True,
        capture_output=True,
        text=True,
        env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"},
    )
    if command.endswith("--json"):
        return json.dumps(json.loads(found.stdout), separators=(",", ":")) + "\n"
    return found.stdout.replace(str(out), "STORE")
