"""Precision and recall of failure attribution, per fault kind, on labelled episodes.

The labelled set (tests/benchmarks/servicedesk/_faults.py, tests/benchmarks/tau2/_faults.py):
episodes of deedbench's retail desk with a fault injected into the scripted customer (an
early stop, a made-up order id, a no to the change it asked for) or into the task (a gold
action that raises, a required output nothing can produce), τ²'s telecom with a customer
who touches the phone unasked or promises and never does, and clean controls (the oracle
and the idle agent with the clean customer). A kind found where it was not injected is a
false positive; a control blamed on the user or the task is counted apart.

    python bench/attribution.py [--tasks 12] [--telecom-tasks 8]

Then, on real data: every failure of τ-bench's own gpt-4o airline records, by whose it is.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.benchmarks.servicedesk import _faults as desk
from tests.benchmarks.tau2 import _faults as telecom

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.taubench import rescore_file

SHARED = Path(__file__).resolve().parents[2] / "shared"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12, help="retail desk tasks")
    parser.add_argument("--telecom-tasks", type=int, default=8, help="τ² telecom tasks")
    args = parser.parse_args()
    clock = time.perf_counter()
    labelled = [(c.name, c.injected, c.found) for c in desk.cases(args.tasks)]
    if (SHARED / "tau2").is_dir():
        labelled += [(c.name, c.injected, c.found) for c in telecom.cases(args.telecom_tasks)]
    seconds = time.perf_counter() - clock
    kinds = sorted({k for _, injected, found in labelled for k in injected | found})
    print(f"{len(labelled)} labelled episodes ({seconds:.1f} s)")
    print(f"{'fault kind':28} {'injected':>8} {'found':>6} {'TP':>4} {'FP':>4} {'FN':>4} "
          f"{'precision':>9} {'recall':>7}")  # fmt: skip
    for kind in kinds:
        tp = sum(kind in i and kind in f for _, i, f in labelled)
        fp = sum(kind not in i and kind in f for _, i, f in labelled)
        fn = sum(kind in i and kind not in f for _, i, f in labelled)
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / (tp + fn) if tp + fn else float("nan")
        print(
            f"{kind:28} {tp + fn:8} {tp + fp:6} {tp:4} {fp:4} {fn:4} {precision:9.3f} {recall:7.3f}"
        )
    controls = [found for _, injected, found in labelled if not injected]
    blamed = sum(bool(found) for found in controls)
    print(f"clean controls blamed on the user or the task: {blamed} of {len(controls)}")
    records = SHARED / "taubench" / "trajectories"
    if records.is_dir():
        report = rescore_file(
            records / "gpt-4o-airline.json",
            [records / "airline-2024-11", SHARED / "taubench" / "airline"],
            AIRLINE,
        )
        failed = sum(report.failures.values())
        split = ", ".join(f"{party} {n}" for party, n in report.failures.items())
        print(f"τ-bench's gpt-4o airline records: {failed} failures, whose: {split}")
        kinds_found = Counter({k: v for k, v in report.fault_kinds.items() if "agent." not in k})
        print("  user and task faults in them: " + ", ".join(
            f"{k} {v}" for k, v in kinds_found.most_common()
        ))  # fmt: skip


if __name__ == "__main__":
    main()
