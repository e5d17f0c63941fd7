"""Memory and time that must not grow with the size of a run: planning it, showing one episode.

1. Planning: `deedbench run tac --agent baseline/random` with plans of 96, 9,600 and
   96,000 episodes (--epochs 1, 100, 1000), each stopped with SIGINT once --stop-after
   episodes are stored (or run to the end when the plan is smaller): the peak RSS of the
   process. Then `--epochs 10000000 --limit 1`, which earlier versions accepted (and grew
   until the kernel killed them): refused before anything is written, or not.
2. show: a run of 48 samples x 2 conditions x --show-epochs epochs (20,064 episodes with
   the default 209) of the random baseline, then `deedbench show RUN SAMPLE --epoch 100`
   --repeat times: wall time and peak RSS of each.

Every command is the real CLI in a child process under a 2 GB address-space limit (so a
version that does grow fails fast instead of taking the shared machine down). Run it with
PYTHONPATH pointing at another checkout's src to measure that version the same way.

    python bench/scale.py [--stop-after 2000] [--show-epochs 209] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

LIMIT_BYTES = 2_000_000_000
CLI = "from deedbench.cli.main import main; main()"


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit_memory,
        # Ctrl-C for the child: Python's handler, not an ignored SIGINT a background shell
        # may pass down.
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, float, str, float]:
    """Exit code, peak RSS in MB, stderr and CPU seconds (user + system) of a child, reaped
    here to read its rusage."""
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, err, usage.ru_utime + usage.ru_stime


def stored(store: Path, run_id: str) -> int:
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            query = "SELECT COUNT(*) FROM episodes WHERE run_id = ?"
            return int(db.execute(query, (run_id,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def planning(folder: Path, stop_after: int) -> None:
    print("planning: peak RSS of `deedbench run tac --agent baseline/random --epochs E`")
    for epochs in (1, 100, 1000):
        store, run_id = folder / f"plan-{epochs}.db", f"plan-{epochs}"
        planned = 96 * epochs
        started = time.perf_counter()
        process = start(
            "run", "tac", "--agent", "baseline/random", "--epochs", str(epochs),
            "--run-id", run_id, "--store", str(store),
        )  # fmt: skip
        stop = min(planned, stop_after)
        while process.poll() is None and stored(store, run_id) < stop:
            time.sleep(0.05)
        if process.poll() is None and stop < planned:
            process.send_signal(signal.SIGINT)
        code, peak, err, _ = finish(process)
        seconds = time.perf_counter() - started
        print(
            f"  {planned:>6,} planned: {stored(store, run_id):,} stored in {seconds:.1f} s, "
            f"exit {code}, peak RSS {peak:.0f} MB"
            + (f"; {err.strip().splitlines()[-1]}" if code not in (0, 130) else "")
        )
    store = folder / "absurd.db"
    started = time.perf_counter()
    process = start(
        "run", "tac", "--agent", "baseline/random", "--epochs", "10000000", "--limit", "1",
        "--run-id", "absurd", "--store", str(store),
    )  # fmt: skip
    try:
        code, peak, err, _ = finish(process)
    finally:
        if process.poll() is None:
            process.kill()
    seconds = time.perf_counter() - started
    said = [line.strip(" │") for line in err.splitlines() if any(c.isalpha() for c in line)]
    print(
        f"  --epochs 10000000 --limit 1: exit {code} after {seconds:.1f} s, peak RSS "
        f"{peak:.0f} MB, store written: {store.exists()}; {said[-1] if said else ''}"
    )


def show(folder: Path, epochs: int, repeat: int) -> None:
    store, run_id = folder / "show.db", "big"
    started = time.perf_counter()
    process = start(
        "run", "tac", "--agent", "baseline/random", "--epochs", str(epochs),
        "--run-id", run_id, "--store", str(store),
    )  # fmt: skip
    code, _, err, _ = finish(process)
    assert code == 0, err
    episodes = stored(store, run_id)
    print(
        f"show: a run of {episodes:,} episodes ({store.stat().st_size / 1e6:.0f} MB store, "
        f"made in {time.perf_counter() - started:.0f} s); "
        f"`deedbench show {run_id} seville_bullfight_base --epoch 100`:"
    )
    walls, peaks = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        process = start(
            "show", run_id, "seville_bullfight_base", "--epoch", "100", "--store", str(store)
        )
        code, peak, err, _ = finish(process)
        assert code == 0, err
        walls.append(time.perf_counter() - started)
        peaks.append(peak)
    print(
        f"  wall {statistics.median(walls):.2f} s median ({min(walls):.2f} to "
        f"{max(walls):.2f}), peak RSS {statistics.median(peaks):.0f} MB median"
    )


def grown(folder: Path, episodes: int, baseline: Path) -> Path:
    """A store holding runs `big` and `big2` of about `episodes` episodes each: the baseline
    run's 96 records copied into every epoch by SQL (fast, and the same for any version),
    in format 1, so a version of format 2 migrates it when it first opens it."""
    epochs = -(-episodes // 96)
    store = folder / f"read-{episodes}.db"
    shutil.copy(baseline, store)
    with closing(sqlite3.connect(store)) as db:
        for run_id in ("big", "big2"):
            db.execute(
                "INSERT INTO runs SELECT ?, created_at, json_set(config_json, '$.run_id', ?, "
                "'$.epochs', ?) FROM runs WHERE run_id = 'seed'",
                (run_id, run_id, epochs),
            )
            db.execute(
                "WITH RECURSIVE n(e) AS (SELECT 1 UNION ALL SELECT e + 1 FROM n WHERE e < ?) "
                "INSERT INTO episodes SELECT ?, sample_id, condition, n.e, status, outcome, "
                "json_set(record_json, '$.epoch', n.e) FROM episodes, n "
                "WHERE run_id = 'seed' ORDER BY n.e, episodes.rowid",
                (epochs, run_id),
            )
        if db.execute("PRAGMA user_version").fetchone()[0] >= 2:  # summaries made on open
            db.execute("DELETE FROM episode_summaries")
            db.execute("PRAGMA user_version = 1")
        db.commit()
    return store


def measure(*args: str) -> tuple[str, float, float, float]:
    """Outcome, wall seconds, CPU seconds and peak RSS (MB) of one command."""
    started = time.perf_counter()
    code, peak, err, cpu = finish(start(*args))
    seconds = time.perf_counter() - started
    if code == 0:
        return "ok", seconds, cpu, peak
    said = [line.strip(" │") for line in err.splitlines() if line.strip(" │")]
    return f"exit {code}: {said[-1][:80] if said else ''}", seconds, cpu, peak


def reading(
    folder: Path, sizes: list[int], only: set[str] | None, keep: Path | None = None
) -> None:
    """Every reading command on runs of each size: wall time and peak RSS; `keep`: where
    to leave the last size's store (migrated) for other scripts to read."""
    baseline = folder / "baseline.db"
    code, _, err, _ = finish(
        start("run", "tac", "--agent", "baseline/random", "--epochs", "1", "--run-id", "seed",
              "--store", str(baseline))
    )  # fmt: skip
    assert code == 0, err
    with closing(sqlite3.connect(baseline)) as db:
        (size,) = db.execute("SELECT AVG(LENGTH(record_json)) FROM episodes").fetchone()
    print(f"reading: TAC random-baseline records ({size / 1000:.1f} KB of JSON each)")
    for episodes in sizes:
        store = grown(folder, episodes, baseline)
        where = ("--store", str(store))
        epochs = -(-episodes // 96)
        commands = {
            "open (migrate)": ("runs", *where),
            "runs": ("runs", *where),
            "report": ("report", "big", *where),
            "report --json": ("report", "big", "--json", *where),
            "report --csv": ("report", "big", "--csv", *where),
            "report --html": ("report", "big", "--html", str(folder / "r.html"), *where),
            "compare": ("compare", "big", "big2", *where),
            "show": ("show", "big", "seville_bullfight_base", "--epoch", "2", *where),
            "export jsonl": ("export", "big", "-o", str(folder / "e.jsonl"), *where),
            "export csv": ("export", "big", "--format", "csv", "-o", str(folder / "e.csv"), *where),
            "export inspect": (
                "export",
                "big",
                "--format",
                "inspect",
                "-o",
                str(folder / "logs"),
                *where,
            ),
            "run (end summary)": ("run", "tac", "--run-id", "big", *where),
        }
        print(f"  {epochs * 96:,} episodes per run ({store.stat().st_size / 1e6:.0f} MB store)")
        for name, args in commands.items():
            if only is not None and name not in only:
                continue
            outcome, seconds, cpu, peak = measure(*args)
            print(
                f"    {name:<18} {seconds:7.2f} s wall {cpu:7.2f} s CPU {peak:6.0f} MB  {outcome}",
                flush=True,
            )
        if keep is not None and episodes == sizes[-1]:
            shutil.move(store, keep)
        else:
            store.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop-after", type=int, default=2000)
    parser.add_argument("--show-epochs", type=int, default=209)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--reading", type=str, default=None, help="only the reading section, at these sizes "
        "(comma-separated episode counts, e.g. 1000,5000,10000,20000,100000)"
    )  # fmt: skip
    parser.add_argument("--commands", type=str, default=None, help="reading: only these")
    parser.add_argument("--keep", type=Path, help="reading: keep the last size's store here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.reading:
            only = set(args.commands.split(",")) if args.commands else None
            sizes = [int(n) for n in args.reading.split(",")]
            reading(Path(tmp), sizes, only, args.keep)
            return
        planning(Path(tmp), args.stop_after)
        show(Path(tmp), args.show_epochs, args.repeat)


if __name__ == "__main__":
    main()
