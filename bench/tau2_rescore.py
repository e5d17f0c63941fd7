"""`deedbench rescore tau2` of a big τ² result file: simulations a second, CPU and peak
memory, against τ²'s own re-grader on the same simulations (issue 40).

The file: τ²'s own code (tests/benchmarks/tau2/_reference.py, in τ²'s reference
environment) evaluates `--tasks` telecom tasks, `--trials` trials each (the gold
trajectory, a chatty one, broken variants: tests/benchmarks/tau2/test_rescore.py's
cases) and saves them as a τ² result file; its simulations are then repeated, each
copy under an id of its own, up to `--simulations` (27,500 by default: 240 MB, the size
of the file the issue names, whose 74,000 simulations were shorter). Then, each in a
child process (peak RSS from its rusage):

- `deedbench rescore tau2 FILE --data DATA --json` on the whole file (and, with
  `--before SRC`, the same command of another checkout, e.g. main before issue 40);
- τ²'s re-grader (`../shared/tau2/offline/rescore.py`: `compute_simulation_rewards`,
  what `tau2 evaluate-trajs` runs) and deedbench on the file's first `--sample`
  simulations and on twice as many, so each side's rate per simulation is its CPU time
  for the second half (interpreter start and imports cancel out; CPU seconds, since the
  machine is shared and wall time on it moves by several times).

    python bench/tau2_rescore.py [--simulations 27500] [--sample 200] [--before SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.benchmarks.tau2 import _reference
from tests.benchmarks.tau2.test_rescore import _cases, _domain_data

from deedbench.benchmarks.tau2.telecom import TELECOM

CLI = "from deedbench.cli.main import main; main()"
REGRADER = _reference.TAU2 / "offline" / "rescore.py"


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of a child."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command[:4])} failed: {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def deedbench(path: Path, src: Path | None = None) -> tuple[float, float, float]:
    env = {"PYTHONPATH": str(src)} if src is not None else None
    data = str(_reference.DATA)
    return run(
        [sys.executable, "-c", CLI, "rescore", "tau2", str(path), "--data", data, "--json"], env
    )


def tau2(path: Path) -> tuple[float, float, float]:
    env = {
        "PYTHONPATH": f"{_reference.SOURCE}{os.pathsep}{_reference.TAU2 / 'offline' / 'stubs'}",
        "TAU2_DATA_DIR": str(_reference.DATA),
    }
    return run([str(_reference._venv()), str(REGRADER), str(path)], env)


def make_file(folder: Path, tasks: int, trials: int, simulations: int) -> tuple[Path, Path]:
    """The big file and the small one τ² made, in `folder`."""
    small = folder / "telecom-small.json"
    cases = _cases(_domain_data(TELECOM), tasks, "issue-40", trials)
    _reference.results_file("telecom", cases, {"path": str(small), "num_trials": trials})
    base = json.loads(small.read_text(encoding="utf-8"))
    made = base["simulations"]
    rng = random.Random(40)
    copies = []
    for number in range(simulations):
        one = dict(made[number % len(made)])
        one["id"] = f"{one['id']}-{number}"
        copies.append(one)
    rng.shuffle(copies)
    big = folder / "telecom-big.json"
    with big.open("w", encoding="utf-8") as out:
        json.dump({**base, "simulations": copies}, out)
    return small, big


def head(big: Path, count: int, folder: Path) -> Path:
    whole = json.loads(big.read_text(encoding="utf-8"))
    path = folder / f"telecom-{count}.json"
    path.write_text(json.dumps({**whole, "simulations": whole["simulations"][:count]}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--simulations", type=int, default=27_500)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--before", type=Path, help="another checkout's src, run the same way")
    parser.add_argument("--folder", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    missing = _reference.missing()
    if missing is not None:
        raise SystemExit(f"τ²'s re-grader cannot run here: {missing}")
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        began = time.perf_counter()
        _, big = make_file(folder, args.tasks, args.trials, args.simulations)
        print(
            f"file: {args.simulations:,} telecom simulations ({args.tasks} tasks x "
            f"{args.trials} trials made by τ², repeated), {big.stat().st_size / 1e6:,.0f} MB, "
            f"made in {time.perf_counter() - began:.0f} s",
            flush=True,
        )
        for label, src in (("deedbench", None), ("before", args.before)):
            if label == "before" and src is None:
                continue
            wall, cpu, peak = deedbench(big, src)
            print(
                f"{label} rescore tau2, whole file: {wall:.1f} s wall, {cpu:.1f} s CPU, peak "
                f"{peak:,.0f} MB; {args.simulations / wall:,.0f} simulations a second "
                f"({args.simulations / cpu:,.0f} a CPU second)",
                flush=True,
            )
        one, two = head(big, args.sample, folder), head(big, 2 * args.sample, folder)
        rates = {}
        for name, side in (("τ² re-grader", tau2), ("deedbench", deedbench)):
            first, second = side(one), side(two)
            cpu = second[1] - first[1]
            rates[name] = args.sample / max(cpu, 1e-9)
            print(
                f"{name}: {args.sample} then {2 * args.sample} simulations: {first[0]:.1f} s / "
                f"{second[0]:.1f} s wall, {first[1]:.1f} / {second[1]:.1f} s CPU: "
                f"{rates[name]:,.1f} simulations a CPU second beyond start-up",
                flush=True,
            )
        print(f"deedbench / τ², per CPU second: {rates['deedbench'] / rates['τ² re-grader']:,.0f}x")


if __name__ == "__main__":
    main()
