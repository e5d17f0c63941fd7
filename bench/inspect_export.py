"""`deedbench export --format inspect` at scale, against Inspect's own writing and reading.

For each size (default 1,000, 5,000 and 20,000 episodes: TAC's 48 samples x 2 conditions
x 11, 52 and 209 epochs of `baseline/random`, made with the real CLI), each in a child
process whose peak RSS is read from `wait4`, --repeat times:

- **export**: `deedbench export RUN --format inspect -o DIR` (the real CLI: start-up,
  reading the store, converting, writing): wall time and peak RSS.
- **Inspect write, same logs**: Inspect's `write_eval_log` of the very samples deedbench
  wrote, log by log as deedbench split them (each log read, then written and timed): what
  Inspect's API costs for the same output, the reference for the export's ratio.
- **Inspect write, one log**: the same samples, one `write_eval_log` per condition (all
  samples of a condition in one `EvalLog`, as the export wrote before issue 26): Inspect's
  API on a whole log, quadratic in its samples (`ZipLogFile.buffer_sample`).
- **Inspect read**: `read_eval_log` of each exported log, one at a time.
- **import**: `deedbench import inspect` of the exported logs (the real CLI), which joins
  the parts of a condition back into one run (it holds the run's records, as it always
  did: its memory grows with the run).

Times in the Inspect rows are the timed calls only (no start-up, no reading before a
write); the export and import rows are whole commands. Printed: the median and the range
of the repeats, per episode, and the export's ratio to Inspect's write of the same logs.
`--src PATH` measures another checkout's deedbench (its `src` folder, on PYTHONPATH) for
the export and import rows, e.g. the code before issue 26:
`git archive HEAD src | tar -x -C /tmp/old`, then `--src /tmp/old/src`.

    python bench/inspect_export.py [--sizes 1000,5000,20000] [--repeat 3] [--src PATH]
        [--whole-max 20000] [--no-inspect-rows]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = "from deedbench.cli.main import main; main()"
SAMPLES = 96  # TAC: 48 samples x 2 conditions


def child(kind: str, paths: list[str], out: str) -> None:
    """One measured task in this (child) process; prints the seconds its timed calls took."""
    from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

    seconds = 0.0
    if kind == "write-same":
        for index, path in enumerate(paths):
            log = read_eval_log(path)
            started = time.perf_counter()
            write_eval_log(log, f"{out}/{index}.eval", format="eval")
            seconds += time.perf_counter() - started
            del log
    elif kind == "write-whole":
        by_task: dict[str, EvalLog] = {}
        for path in paths:
            log = read_eval_log(path)
            whole = by_task.setdefault(log.eval.task, log)
            if whole is not log:
                (whole.samples or []).extend(log.samples or [])
        for index, log in enumerate(by_task.values()):
            started = time.perf_counter()
            write_eval_log(log, f"{out}/{index}.eval", format="eval")
            seconds += time.perf_counter() - started
    elif kind == "read":
        for path in paths:
            started = time.perf_counter()
            log = read_eval_log(path)
            seconds += time.perf_counter() - started
            del log
    print(json.dumps({"seconds": seconds}))


def run_child(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """`args` in a child, reaped here with wait4 for its own peak RSS and CPU."""
    started = time.perf_counter()
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stderr is not None
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    raise_for(process.returncode, args, err)
    figures = {
        "wall": wall,
        "rss_mb": usage.ru_maxrss / 1024,
        "cpu": usage.ru_utime + usage.ru_stime,
    }
    last = out.strip().splitlines()[-1] if out.strip() else ""
    if last.startswith("{"):
        figures |= json.loads(last)
    return figures


def raise_for(code: int | None, args: list[str], err: str) -> None:
    if code:
        raise SystemExit(f"{' '.join(args[:6])}... exited {code}:\n{err[-2000:]}")


def cli(*args: str) -> list[str]:
    """The deedbench command line run in a child process."""
    return [sys.executable, "-c", CLI, *args]


def summary(values: list[float], unit: str, scale: float = 1.0) -> str:
    """Median and range of the repeats."""
    scaled = [v * scale for v in values]
    middle = statistics.median(scaled)
    if len(scaled) == 1:
        return f"{middle:.2f} {unit}"
    return f"{middle:.2f} {unit} ({min(scaled):.2f}-{max(scaled):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", help="another deedbench's src folder for export and import")
    parser.add_argument(
        "--whole-max", type=int, default=20_000, help="largest size for 'Inspect write, one log'"
    )
    parser.add_argument(
        "--inspect-rows",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="measure Inspect's own write and read too (--no-inspect-rows: export only)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.paths, args.out)
        return
    env = {k: v for k, v in os.environ.items() if k != "DEEDBENCH_STORE"}
    measured_env = dict(env)
    if args.src:
        measured_env["PYTHONPATH"] = str(Path(args.src).resolve())
    me = [sys.executable, str(Path(__file__).resolve())]
    print(f"deedbench measured from: {args.src or 'this checkout'}; repeats: {args.repeat}")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for size in (int(s) for s in args.sizes.split(",")):
            epochs = -(-size // SAMPLES)
            store, run_id = tmp / f"{size}.db", f"r{size}"
            made = run_child(
                cli("run", "tac", "--agent", "baseline/random", "--epochs", str(epochs),
                    "--run-id", run_id, "--store", str(store)),
                env,
            )  # fmt: skip
            episodes = SAMPLES * epochs
            print(f"\n{episodes:,} episodes ({epochs} epochs; store made in {made['wall']:.1f} s)")
            rows: dict[str, list[dict[str, float]]] = {}
            logs: list[str] = []
            for attempt in range(args.repeat):
                out = tmp / f"export-{size}-{attempt}"
                export = cli("export", run_id, "--format", "inspect", "-o", str(out),
                             "--store", str(store))  # fmt: skip
                rows.setdefault("export", []).append(run_child(export, measured_env))
                logs = sorted(str(p) for p in out.glob("*.eval"))
                kinds = ["write-same", "read"] if args.inspect_rows else []
                if args.inspect_rows and episodes <= args.whole_max:
                    kinds.insert(1, "write-whole")
                for kind in kinds:
                    written = tmp / f"{kind}-{size}-{attempt}"
                    written.mkdir()
                    rows.setdefault(kind, []).append(
                        run_child([*me, "--child", kind, "--out", str(written), *logs], env)
                    )
                    shutil.rmtree(written)
                imported = tmp / f"import-{size}-{attempt}.db"
                back = cli("import", "inspect", *logs, "--store", str(imported))
                rows.setdefault("import", []).append(run_child(back, measured_env))
                imported.unlink()
                if attempt < args.repeat - 1:
                    shutil.rmtree(out)
            sizes = [Path(p).stat().st_size for p in logs]
            print(
                f"  export wrote {len(logs)} logs, {sum(sizes) / 1e6:.1f} MB "
                f"(largest {max(sizes) / 1e6:.1f} MB)"
            )
            labels = {
                "export": "deedbench export (whole command)",
                "write-same": "Inspect write_eval_log, same logs",
                "write-whole": "Inspect write_eval_log, one log per condition",
                "read": "Inspect read_eval_log of the exported logs",
                "import": "deedbench import inspect (whole command)",
            }
            for kind, results in rows.items():
                key = "wall" if kind in ("export", "import") else "seconds"
                times = [r[key] for r in results]
                print(
                    f"  {labels[kind]}: {summary(times, 's')}, "
                    f"{summary(times, 'ms/episode', 1000 / episodes)}; "
                    f"peak RSS {summary([r['rss_mb'] for r in results], 'MB')}"
                )
            if "write-same" in rows:
                ratios = [
                    e["wall"] / w["seconds"]
                    for e, w in zip(rows["export"], rows["write-same"], strict=True)
                ]
                print(f"  export / Inspect's write of the same logs: {summary(ratios, 'x')}")
            store.unlink()


if __name__ == "__main__":
    main()
