"""Where `deedbench report RUN --json` spends its time, stage by stage, in one process.

Each stage is timed once, in the order the command runs them: importing the CLI, the
engine and the summary, reading the run's episode summaries, tallying them, importing
numpy, computing the statistics, writing the JSON. Make a big store first, e.g. with
`python bench/scale.py --reading 20000 --commands runs --keep STORE` (whose runs
are `big` and `big2`), or use any store you have.

    python bench/report_stages.py STORE RUN_ID
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    store, run_id = Path(sys.argv[1]), sys.argv[2]
    marks = [time.perf_counter()]

    def mark(label: str) -> None:
        marks.append(time.perf_counter())
        print(f"{label:<24} {marks[-1] - marks[-2]:6.3f} s")

    import deedbench.cli.main  # noqa: F401  (what the command imports first)

    mark("import the CLI")
    from deedbench.engine import RunStore
    from deedbench.reports.cost import PriceTable
    from deedbench.reports.summary import RunTally

    mark("import engine, summary")
    with RunStore(store) as runs:
        config = runs.get_run(run_id)
        if config is None:
            raise SystemExit(f"{store} has no run {run_id!r}")
        summaries = list(runs.summaries(run_id))
    mark(f"read {len(summaries):,} summaries")
    tally = RunTally(config)
    for record in summaries:
        tally.add(record)
    mark("tally them")
    import numpy  # noqa: F401

    mark("import numpy")
    summary = tally.summary(PriceTable.load())
    mark("the statistics")
    summary.model_dump_json(indent=2)
    mark("the JSON")
    print(f"{'total':<24} {marks[-1] - marks[0]:6.3f} s")


if __name__ == "__main__":
    main()
