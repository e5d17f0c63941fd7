"""A run's summary for the viewer: computed away from the pages, and kept between runs.

A summary is `deedbench report --json`'s: the run's kinds of episode and two integers
per episode (`RunTally.stored`, a store of format 3), or, in a store of an earlier format,
every stored episode's summary read once; and every rate with its intervals. From kinds it
is summarized on a thread of the server (a million episodes: about a second of CPU and
tens of MB for a moment). From summaries its cost grows with the run (100,000 episodes:
seconds of CPU and the figures of every episode in memory at once), so:

- a run of at most `IN_PROCESS` stored episodes is summarized on a thread of the server,
  where it takes milliseconds; a bigger one in a child process forked by the fork server
  (`engine.workers.start_fork_server`: a fresh interpreter, none of the server's threads
  or connections), which reads the store read-only itself, sends back the summary's JSON
  and exits, so its memory goes with it and the server's stays flat, and the pages never
  wait for its CPU;
- a summary once computed is kept in a small SQLite file of the user's cache
  (`SummaryCache`), keyed by what it was computed from (the run's configuration, its
  stored records and audits, the price table, this deedbench's version), so a finished
  run's figures show at once whenever the viewer is started again, and a run that
  changed is summarized anew. The store itself is never written.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from deedbench.errors import StoreError
from deedbench.records import RunConfig
from deedbench.reports.cost import PriceTable
from deedbench.reports.summary import RunSummary, RunTally
from deedbench.version import __version__
from deedbench.view.source import StoreReader

__all__ = ["IN_PROCESS", "Summarized", "Summarizer", "SummaryCache", "default_cache", "summarize"]

IN_PROCESS = 5_000  # runs with at most this many stored episodes are summarized in the server


@dataclass(frozen=True)
class Summarized:
    """A run's summary and the number of stored episodes it was computed from."""

    summary: RunSummary
    episodes: int
    seconds: float  # how long computing it took


def summarize(
    reader: StoreReader, config: RunConfig, prices: PriceTable, audits: bool
) -> Summarized:
    """The run's summary from the store, as `report --json` computes it: from the run's
    kinds of episode where the store keeps them, else from every episode's summary."""
    started = time.monotonic()
    if reader.counted:
        tally = RunTally.stored(config, reader)
    else:
        records = (record for _, record in reader.light_records(config.run_id))
        tally = RunTally.of(config, records)
    found = reader.audits(config.run_id) if audits else []
    summary = tally.summary(prices, audits=found)
    return Summarized(summary, tally.added, time.monotonic() - started)


class Summarizer:
    """Computes summaries off the request threads: small runs here, big ones in a child
    process each; what a child found corrupt is said through the reader, as if it had
    read it."""

    def __init__(self, reader: StoreReader, prices: PriceTable) -> None:
        self.reader = reader
        self.prices = prices
        self._threads = ThreadPoolExecutor(2, thread_name_prefix="deedbench-view-summary")
        self._children: set[BaseProcess] = set()
        self._lock = threading.Lock()
        self._big = threading.Lock()  # one big run summarized at a time
        self._closed = False

    def submit(self, config: RunConfig, stored: int, audits: bool) -> Future[Summarized]:
        if stored <= IN_PROCESS:
            return self._threads.submit(summarize, self.reader, config, self.prices, audits)
        if self.reader.counted:  # from kinds, a big run at a time: its arrays are megabytes
            return self._threads.submit(self._one_big, config, audits)
        return self._threads.submit(self._in_child, config, audits)

    def _one_big(self, config: RunConfig, audits: bool) -> Summarized:
        with self._big:
            return summarize(self.reader, config, self.prices, audits)

    def close(self) -> None:
        """Stop what is being computed: a child that reads a big run is ended, not
        waited for (a small run's summary is let finish: milliseconds)."""
        with self._lock:
            self._closed = True
            for child in self._children:
                child.terminate()
        self._threads.shutdown(wait=True, cancel_futures=True)

    def _in_child(self, config: RunConfig, audits: bool) -> Summarized:
        from deedbench.engine.workers import start_fork_server

        context = start_fork_server([__name__])
        receiving, sending = context.Pipe(duplex=False)
        child = context.Process(
            target=_child,
            args=(sending, self.reader.path, config, self.prices, audits),
            name="deedbench-view-summary",
            daemon=True,
        )
        with self._lock:
            if self._closed:
                raise StoreError("the viewer is stopping")
            child.start()
            self._children.add(child)
        sending.close()
        try:
            answer = receiving.recv()
        except EOFError:
            raise StoreError(
                f"summarizing run {config.run_id!r} failed: its process ended without an answer"
            ) from None
        finally:
            receiving.close()
            child.join()
            with self._lock:
                self._children.discard(child)
        if isinstance(answer, str):
            raise StoreError(answer)
        text, episodes, seconds, corrupt = answer
        for message in corrupt:
            self.reader.report_corrupt(message)
        return Summarized(RunSummary.model_validate_json(text), episodes, seconds)


def _child(
    answer: Connection, path: Path, config: RunConfig, prices: PriceTable, audits: bool
) -> None:
    """A child's whole life: summarize the run and send back its JSON (or why not)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops it
    corrupt: list[str] = []
    try:
        done = summarize(StoreReader(path, on_corrupt=corrupt.append), config, prices, audits)
    except StoreError as exc:
        answer.send(str(exc))
    else:
        answer.send((done.summary.model_dump_json(), done.episodes, done.seconds, corrupt))
    answer.close()


class SummaryCache:
    """Summaries kept on disk between runs of the viewer, one per store and run: the last
    one computed. `path` None keeps nothing; a cache that cannot be used is said once
    through `on_problem` and then left alone, since figures can always be computed."""

    def __init__(self, path: Path | None, on_problem: Callable[[str], None]) -> None:
        self.path = path
        self._on_problem = on_problem

    @staticmethod
    def key(config: RunConfig, contents: str, prices: PriceTable) -> str:
        """What a summary was computed from: the run, its stored records and audits
        (`Activity.contents`), the prices and the code."""
        text = "\n".join(
            [config.model_dump_json(), contents, prices.model_dump_json(), __version__]
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, store: Path, run_id: str, key: str) -> Summarized | None:
        row = self._use(
            "SELECT summary_json, episodes, seconds FROM summaries "
            "WHERE store = ? AND run_id = ? AND key = ?",
            (str(store.resolve()), run_id, key),
        )
        if not row:
            return None
        text, episodes, seconds = row[0]
        return Summarized(RunSummary.model_validate_json(text), episodes, seconds)

    def put(self, store: Path, run_id: str, key: str, summarized: Summarized) -> None:
        self._use(
            "INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?, ?)",
            (
                str(store.resolve()),
                run_id,
                key,
                summarized.summary.model_dump_json(),
                summarized.episodes,
                summarized.seconds,
            ),
        )

    def forget(self, store: Path, run_id: str) -> None:
        """Drop the run's kept summary (a deleted run's figures go with it)."""
        if self.path is not None and self.path.exists():
            self._use(
                "DELETE FROM summaries WHERE store = ? AND run_id = ?",
                (str(store.resolve()), run_id),
            )

    def _use(self, sql: str, args: tuple[object, ...]) -> list[tuple[str, int, float]]:
        path = self.path
        if path is None:
            return []
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            made = not path.exists()
            with closing(sqlite3.connect(path, timeout=5)) as db, db:
                if made:
                    os.chmod(path, 0o600)  # figures of the user's runs: theirs alone
                db.execute(
                    "CREATE TABLE IF NOT EXISTS summaries (store TEXT, run_id TEXT, key TEXT, "
                    "summary_json TEXT, episodes INTEGER, seconds REAL, "
                    "PRIMARY KEY (store, run_id))"
                )
                return db.execute(sql, args).fetchall()
        except (OSError, sqlite3.Error, ValueError) as exc:
            self.path = None
            self._on_problem(
                f"cannot keep figures in {path} ({exc}): they are computed each time the "
                "viewer starts"
            )
            return []


def default_cache() -> Path:
    """Where the viewer keeps summaries: `$XDG_CACHE_HOME/deedbench`, else ~/.cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "deedbench" / "view-summaries.db"
