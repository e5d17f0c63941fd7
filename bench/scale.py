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


def finish(process: subprocess.Popen[str]) -> tuple[int, float, str]:
    """Exit code, peak RSS in MB and stderr of a child, reaped here to read its rusage."""
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, err


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
        code, peak, err = finish(process)
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
        code, peak, err = finish(process)
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
    code, _, err = finish(process)
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
        code, peak, err = finish(process)
        assert code == 0, err
        walls.append(time.perf_counter() - started)
        peaks.append(peak)
    print(
        f"  wall {statistics.median(walls):.2f} s median ({min(walls):.2f} to "
        f"{max(walls):.2f}), peak RSS {statistics.median(peaks):.0f} MB median"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop-after", type=int, default=2000)
    parser.add_argument("--show-epochs", type=int, default=209)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        planning(Path(tmp), args.stop_after)
        show(Path(tmp), args.show_epochs, args.repeat)


if __name__ == "__main__":
    main()
