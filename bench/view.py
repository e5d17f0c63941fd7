"""`deedbench view` over a 20,000-episode run: time to first paint and the server's memory.

A run of 48 samples x 2 conditions x --epochs epochs (20,064 with the default 209) of the
random baseline is made with the real CLI (as bench/scale.py does), then `deedbench view`
serves the store in a child process under a 2 GB address-space limit. Headless Chromium
(Debian's /usr/bin/chromium, through Playwright) opens the run's page --repeat times, the
first against a server that has read nothing yet, each in a fresh tab, and then the runs
list; for each load it reports

- first paint: the browser's first-contentful-paint (the page's frame, with its header);
- episodes: until the episode list shows its first rows;
- figures: until the summary, charts and tables are drawn (the first load computes the
  summary; later loads, and the runs list, reuse it while the run does not change);

the time of the poll each open page makes every second, and the server's resident memory
(VmRSS, sampled every 50 ms while pages load) and its peak (VmHWM) at the end.

    python bench/view.py [--epochs 209] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import select
import signal
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from scale import finish, start, stored

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
FIRST_PAINT = """() => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return paint ? paint.startTime : null;
}"""


def memory(pid: int, field: str) -> float:
    """A field of /proc/PID/status in MB (VmRSS now, VmHWM the peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise LookupError(field)


class Sampler(threading.Thread):
    """The server's VmRSS every 50 ms while it runs."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.samples, self.done = pid, [0.0], threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            self.samples.append(memory(self.pid, "VmRSS"))


def load(page: Page, url: str, selector_episodes: str, selector_figures: str) -> list[float]:
    """Seconds to first paint, to the episode list and to the figures."""
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector(selector_episodes, state="attached", timeout=600_000)
    episodes = time.perf_counter() - started
    page.wait_for_selector(selector_figures, state="attached", timeout=600_000)
    figures = time.perf_counter() - started
    paint = page.evaluate(FIRST_PAINT)
    return [paint / 1000 if paint is not None else float("nan"), episodes, figures]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=209)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store, run_id = Path(tmp) / "view.db", "big"
        started = time.perf_counter()
        process = start(
            "run", "tac", "--agent", "baseline/random", "--epochs", str(args.epochs),
            "--run-id", run_id, "--store", str(store),
        )  # fmt: skip
        code, _, err, _ = finish(process)
        assert code == 0, err
        episodes = stored(store, run_id)
        print(
            f"a run of {episodes:,} episodes ({store.stat().st_size / 1e6:.0f} MB store, made "
            f"in {time.perf_counter() - started:.0f} s), served by `deedbench view`:"
        )
        server = start("view", "--port", "0", "--store", str(store))
        try:
            assert server.stdout is not None
            ready, _, _ = select.select([server.stdout], [], [], 60)
            found = re.search(r"http://\S+/", server.stdout.readline() if ready else "")
            assert found, "deedbench view did not start"
            url = found.group(0)
            idle = memory(server.pid, "VmRSS")
            sampler = Sampler(server.pid)
            sampler.start()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                rows = []
                for _ in range(args.repeat):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    rows.append(load(page, url + "runs/" + run_id, ".episode-row", "#summary"))
                    page.close()
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                runs = load(page, url, "tr.run-row", "tr.run-row .cond-rate")
                page.close()
                browser.close()
            polls = []
            for _ in range(20):
                started = time.perf_counter()
                with urllib.request.urlopen(f"{url}api/runs/{run_id}/activity") as answer:
                    answer.read()
                polls.append(time.perf_counter() - started)
            sampler.done.set()
            sampler.join()
            for i, (paint, listed, figures) in enumerate(rows, start=1):
                print(
                    f"  run page, load {i}{' (cold)' if i == 1 else ''}: first paint "
                    f"{paint:.2f} s, episodes {listed:.2f} s, figures {figures:.2f} s"
                )
            print(
                f"  then the runs list: first paint {runs[0]:.2f} s, the run listed "
                f"{runs[1]:.2f} s, its rates {runs[2]:.2f} s"
            )
            poll = statistics.median(polls)
            print(f"  a poll (/api/runs/{run_id}/activity): {poll:.3f} s median")
            print(
                f"  server memory: {idle:.0f} MB idle before the first page, "
                f"{statistics.median(sampler.samples):.0f} MB median while serving, "
                f"{memory(server.pid, 'VmHWM'):.0f} MB peak"
            )
        finally:
            server.send_signal(signal.SIGINT)
            code, _, err, _ = finish(server)
        if code not in (0, 130):
            print(f"  the server exited {code}: {err.strip()[-500:]}", file=sys.stderr)


if __name__ == "__main__":
    main()
