"""Make format1.db, a store of the release before format 2 (main bf97f7b), and its reports.

    git worktree add ../release bf97f7b
    PYTHONPATH=../release/src python tests/engine/data/make_format1.py OUT.db

Runs of TAC (random, 2 epochs; relevance) and retail (reckless) on a few samples, a
scanner audit, then, through that release's own store, an error record and model calls
with token usage (one answered by the response cache) in place of two records.
"""

import sqlite3
import subprocess
import sys
from pathlib import Path

import deedbench
from deedbench.engine import RunStore
from deedbench.records import FORMAT, Usage

assert FORMAT == 1, f"run this with the release before format 2 on PYTHONPATH: {deedbench.__file__}"
out = Path(sys.argv[1])
out.unlink(missing_ok=True)
CLI = [sys.executable, "-c", "from deedbench.cli.main import main; main()"]


def run(*args: str) -> None:
    subprocess.run([*CLI, *args, "--store", str(out)], check=True, stdout=subprocess.DEVNULL)


run("run", "tac", "-a", "baseline/random", "--limit", "3", "--epochs", "2", "--run-id", "tac-rnd")
run("run", "tac", "-a", "baseline/relevance", "--limit", "3", "--epochs", "1", "--run-id=tac-rel")
run("run", "retail", "-a", "baseline/reckless", "--limit", "3", "--run-id", "retail-reckless")
run("audit", "tac-rnd")
with RunStore(out) as store:
    records = list(store.episodes("tac-rnd"))
    broken = records[0].model_copy(
        update={
            "status": "error",
            "termination": "error",
            "score": None,
            "error": "model call failed after 3 attempts: connection refused (port 9)",
            "messages": records[0].messages[:2],
        }
    )
    store.add("tac-rnd", broken)
    used = records[1]
    messages = list(used.messages)
    turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    paid = Usage(input_tokens=1200, output_tokens=80, cached_input_tokens=200, calls=1)
    hit = Usage(input_tokens=1500, output_tokens=40, calls=1, cache_hits=1)
    messages[turns[0]] = messages[turns[0]].model_copy(update={"usage": paid})
    messages[turns[-1]] = messages[turns[-1]].model_copy(update={"usage": hit})
    total = (paid + hit).model_copy(update={"timeouts": 1})
    usage = {"assistant": total}
    store.add("tac-rnd", used.model_copy(update={"messages": messages, "usage": usage}))
with sqlite3.connect(out) as db:
    db.execute("VACUUM")
    db.execute("PRAGMA journal_mode=DELETE")
