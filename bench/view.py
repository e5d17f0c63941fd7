"""`deedbench view` over 1,000, 10,000 and 100,000 episodes: time to the first page and to
a run's page, and the server's peak memory.

For each size a store holds sixteen finished runs, as the issue-26 store did: one big
run of the random baseline (48 samples x 2 conditions x E epochs: 1,056, 10,080 and
100,032 episodes) and fifteen of 96 episodes. They are made synthetically: one run of 96
episodes with the real CLI, whose records SQLite copies (epoch by epoch for the big run,
under another run id for the small ones), summaries and all, as `deedbench run` would
have stored them. Then `deedbench view` serves the store in a child process (under a
2 GB address-space limit, with a figures cache of its own) and headless Chromium (Debian's
/usr/bin/chromium, through Playwright) loads, in a fresh tab each:

- the runs list: until its 16 rows are shown ("first page"), and until every row shows
  its rates (no "computing…");
- the big run's page: until its episode list shows rows, and until its figures (the
  summary tables and charts) are drawn.

That is done three times per size: two cold starts (nothing computed, an empty cache:
the big run's summary is computed once), one opening the runs list first and one the
big run's page first, then a warm one (the server started again over the first's
cache: its figures kept). Memory: the server's peak RSS (VmHWM) at the end of each start, and the
biggest peak of a process it started (the child that summarizes a big run, sampled
every 50 ms), which exits once done.

    python bench/view.py [--sizes 1000,10000,100000]

Run it with PYTHONPATH pointing at another checkout's src to measure that version.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import select
import signal
import sqlite3
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

from scale import finish, start

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
SMALL_RUNS = 15
ALL_RATES = """() => {
  const rows = [...document.querySelectorAll("tr.run-row")];
  return rows.length > 0 && rows.every((r) => !r.textContent.includes("computing"));
}"""


def make_seed(folder: Path) -> Path:
    """One run of 96 episodes, made by the real CLI."""
    seed = folder / "seed.db"
    process = start(
        "run", "tac", "--agent", "baseline/random", "--epochs", "1", "--run-id", "seed",
        "--store", str(seed),
    )  # fmt: skip
    code, _, err, _ = finish(process)
    assert code == 0, err
    return seed


def make_store(seed: Path, path: Path, epochs: int) -> int:
    """The seed's store with its run copied to `big` (epochs 1..`epochs`) and to
    SMALL_RUNS runs of one epoch; returns the big run's episode count."""
    path.write_bytes(seed.read_bytes())
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN")
        db.execute(
            "CREATE TEMP TABLE n AS WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL "
            "SELECT k + 1 FROM n WHERE k < ?) SELECT k FROM n",
            (max(epochs, SMALL_RUNS),),
        )
        db.execute("CREATE TEMP TABLE e AS SELECT * FROM episodes ORDER BY rowid")
        db.execute("CREATE TEMP TABLE s AS SELECT * FROM episode_summaries ORDER BY rowid")
        db.execute("DELETE FROM episodes")
        db.execute("DELETE FROM episode_summaries")
        config = db.execute("SELECT config_json FROM runs").fetchone()[0]
        db.execute("DELETE FROM runs")
        runs = [("big", epochs, "2026-01-01T00:00:00+00:00")] + [
            (f"small-{i:02d}", 1, f"2026-01-02T00:00:{i:02d}+00:00") for i in range(SMALL_RUNS)
        ]
        for run_id, count, created in runs:
            db.execute(
                "INSERT INTO runs VALUES (?, ?, json_set(?, '$.run_id', ?, '$.epochs', ?, "
                "'$.created_at', ?))",
                (run_id, created, config, run_id, count, created),
            )
            for table, column in (("e", "record_json"), ("s", "summary_json")):
                rest = "status, outcome" if table == "e" else "status"
                target = "episodes" if table == "e" else "episode_summaries"
                db.execute(
                    f"INSERT INTO {target} SELECT ?, sample_id, condition, epoch + k, {rest}, "
                    f"json_set({column}, '$.epoch', epoch + k) FROM n, {table} "
                    "WHERE k < ? ORDER BY k, " + table + ".rowid",
                    (run_id, count),
                )
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (big,) = db.execute("SELECT COUNT(*) FROM episodes WHERE run_id = 'big'").fetchone()
    return int(big)


def status(pid: int, field: str) -> float:
    """A field of /proc/PID/status in MB (0 once the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Descendants(threading.Thread):
    """The biggest RSS any process below `pid` reached, sampled every 50 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            parents: dict[int, int] = {}
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    except OSError:
                        continue
                    parents[int(entry.name)] = int(stat[1])
            below = {self.pid}
            for _ in range(4):  # server > fork server > summarizing child
                below |= {p for p, parent in parents.items() if parent in below}
            for pid in below - {self.pid}:
                self.peak = max(self.peak, status(pid, "VmRSS"))


def timed(page: Page, url: str, first: str, then: str) -> tuple[float, float]:
    """Seconds from navigation until `first`, then `then` (JavaScript predicates)."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(first, timeout=900_000, polling=50)
    one = time.perf_counter() - started
    page.wait_for_function(then, timeout=900_000, polling=50)
    return one, time.perf_counter() - started


def measure(browser: Browser, store: Path, cache: Path, order: tuple[str, str]) -> dict[str, float]:
    """One start of `deedbench view` over `store`: the two loads above in this order
    ("list", "run"), and its memory."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    server = start("view", "--port", "0", "--store", str(store))
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 120)
        found = re.search(r"http://\S+/", server.stdout.readline() if ready else "")
        assert found, "deedbench view did not start"
        url = found.group(0)
        children = Descendants(server.pid)
        children.start()
        figures: dict[str, float] = {}
        for load in order:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            if load == "list":
                rows = f"() => document.querySelectorAll('tr.run-row').length === {SMALL_RUNS + 1}"
                figures["listed"], figures["rates"] = timed(page, url, rows, ALL_RATES)
            else:
                figures["episodes"], figures["figures"] = timed(
                    page,
                    url + "runs/big",
                    "() => document.querySelector('.episode-row') !== null",
                    "() => document.querySelector('#figures #summary') !== null",
                )
            page.close()
        figures["server"] = status(server.pid, "VmHWM")
        children.done.set()
        children.join()
        figures["child"] = children.peak
    finally:
        server.send_signal(signal.SIGINT)
        finish(server)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        seed = make_seed(folder)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        print(
            "size | start | runs list: 16 rows / every rate | big run: episodes / figures "
            "| server peak | biggest child"
        )
        for size in sizes:
            store = folder / f"view-{size}.db"
            started = time.perf_counter()
            big = make_store(seed, store, math.ceil(size / 96))
            made = time.perf_counter() - started
            print(
                f"# {big:,} episodes in the big run, {store.stat().st_size / 1e6:.0f} MB "
                f"store (made in {made:.0f} s)"
            )
            for kind, cache, order in (
                ("cold, list first", folder / f"cache-{size}", ("list", "run")),
                ("cold, run first", folder / f"cache-{size}-run", ("run", "list")),
                ("warm, list first", folder / f"cache-{size}", ("list", "run")),
            ):
                f = measure(browser, store, cache, order)
                print(
                    f"{big:,} | {kind} | {f['listed']:.2f} / {f['rates']:.2f} s | "
                    f"{f['episodes']:.2f} / {f['figures']:.2f} s | {f['server']:.0f} MB | "
                    f"{f['child']:.0f} MB"
                )
            store.unlink()
        browser.close()


if __name__ == "__main__":
    main()
