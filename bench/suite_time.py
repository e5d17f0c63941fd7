"""Where the test suite's time goes: the README's test command, timed, with the slowest
tests and the time by folder.

    python bench/suite_time.py              # the whole suite, as .ci/run runs it
    python bench/suite_time.py --fast       # the fast tier (not reference, not browser, not slow)
    python bench/suite_time.py --cold       # first with an empty reference cache, then warm
    python bench/suite_time.py -- tests/benchmarks/tau2   # any pytest arguments after --

It runs ``python -m pytest -n 3 -rs`` (the README's command) in a child process, from the
checkout, and reads pytest's JUnit XML: each test's time is its setup, call and teardown
together, summed over both workers (so the folders add up to more than the wall time).
It prints pytest's closing line, the wall and CPU time of the run, the slowest 20 tests
and the total by folder. `--cold` first runs with ``DEEDBENCH_REFERENCE_CACHE`` pointed
at an empty folder (τ²'s answers made again, τ²'s Python environment reused), then again
with that folder warm, and prints the ratio of the two wall times.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAST = "not reference and not browser and not slow"


def run(pytest_args: list[str], env: dict[str, str], label: str) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        junit = Path(scratch) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-n", "3", "-rs", f"--junitxml={junit}"]
        command += pytest_args
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        lines = done.stdout.strip().splitlines()
        closing = lines[-1] if lines else "(pytest printed nothing)"
        print(f"== {label}: {' '.join(command[1:])}")
        print(f"   {closing}")
        code = done.returncode
        print(f"   wall {wall:.1f} s, CPU {cpu:.1f} s (pytest and its workers), exit {code}")
        skips = [line for line in lines if line.startswith("SKIPPED")]
        for line in skips:
            print(f"   {line}")
        for line in lines:
            if line.startswith("../shared is not beside"):
                print(f"   {line}")
        if junit.is_file():
            report(junit)
        if done.returncode not in (0, 5):
            tail = "\n".join(lines[-40:]) + "\n" + done.stderr[-2000:]
            print(tail)
    return wall


def report(junit: Path) -> None:
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        cases.append((float(case.get("time", 0.0)), name))
    cases.sort(reverse=True)
    print(f"   {len(cases)} tests; the slowest 20 (setup + call + teardown, s):")
    for seconds, name in cases[:20]:
        print(f"   {seconds:8.2f}  {name}")
    folders: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for seconds, name in cases:
        parts = name.split("::")[0].split(".")  # folders, the module, a class
        parts = parts[1:] if parts[0] == "tests" else parts
        module = next((i for i, part in enumerate(parts) if part.startswith("test_")), len(parts))
        folder = "/".join(["tests", *parts[:module]])
        folders[folder] += seconds
        counts[folder] += 1
    total = sum(folders.values())
    print(f"   by folder (test time summed over the workers: {total:.1f} s):")
    for folder, seconds in sorted(folders.items(), key=lambda item: -item[1]):
        print(f"   {seconds:8.1f}  {100 * seconds / total:5.1f}%  {counts[folder]:5d}  {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help=f'only the fast tier (-m "{FAST}")')
    parser.add_argument("--cold", action="store_true", help="first with an empty reference cache")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    pytest_args = list(args.pytest_args) + (["-m", FAST] if args.fast else [])
    env = {**os.environ}
    if not args.cold:
        run(pytest_args, env, "warm" if not args.fast else "fast tier")
        return
    with tempfile.TemporaryDirectory() as cache:
        cold = run(pytest_args, {**env, "DEEDBENCH_REFERENCE_CACHE": cache}, "cold reference cache")
        warm = run(pytest_args, {**env, "DEEDBENCH_REFERENCE_CACHE": cache}, "warm reference cache")
    print(f"== cold / warm wall: {cold / warm:.2f}x")


if __name__ == "__main__":
    main()
