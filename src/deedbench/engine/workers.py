"""Local worker processes: one run's episodes spread over cores, the driver its one writer.

A model agent spends about 2 ms of CPU per call inside the provider's SDK (building the
request, HTTP, decoding), so one process with a hundred calls in flight is CPU-bound on
one core long before the provider is the limit. Workers spread that over cores.

Each worker builds the run's recipe when the driver prepares it, gets `EpisodeJob`s
over its own pipe (the recipe pickled only once per worker), runs them (up to its share
of the concurrency at once) with the benchmark and agent the recipe built, and sends
back each new model answer the moment it arrives and each finished record (as JSON,
which the driver stores as it is). It never opens the store: the driver owns the only
connection and commits everything.

Workers are forked by multiprocessing's fork server, never by the driver. The fork server
is a fresh interpreter (started like `spawn`: no SQLite connection, no thread, no event
loop of the driver's), which imports deedbench and what the recipe needs (the provider's
SDK: `preload`) once, then forks each worker from that clean state; the worker rebuilds
the benchmark and agent from the job's picklable recipe. Forking the driver would copy
its SQLite connections and lock state (the bug this design replaces: forked workers that
outlived a killed parent wrote through inherited connection state, and half of what was
committed vanished), its threads' locks (a progress bar, a server in tests) and its event
loop. `spawn` copies none of those either, but makes every worker import the SDK itself:
about a second of CPU each, which cost a two-worker `deedbench run` of 576 episodes 2 to 3
s of wall time on a 2-core machine, against well under one with the fork server
(BENCHMARKS.md). The environment the workers see is the driver's when the executor
started (passed along: the fork server may be older); working folder and sys.path come
with every worker, as with `spawn`.

Workers end when the driver ends, however it ends: a driver that stops the run sends
each a stop (they cancel their episodes, flush what they have and say so); a driver that
dies closes their job pipes, whose other end only the worker holds (EOF: they exit at
once). The fork server exits when the driver's process does, and on Linux the kernel then
kills its children too (`PR_SET_PDEATHSIG`). Workers ignore SIGINT and SIGTERM: a Ctrl-C
or a `kill` of the whole process group reaches the driver, which stops them in order.
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from deedbench.engine.cache import CacheEntry, EpisodeCache
from deedbench.engine.executor import (
    Aborted,
    Answered,
    Built,
    EpisodeJob,
    Event,
    Executor,
    Finished,
    Lost,
    Recipe,
    drain,
    run_job,
    waiting,
)
from deedbench.errors import ExecutorError, RunAborted
from deedbench.records import EpisodeKey, EpisodeRecord
from deedbench.secrets import redact

__all__ = ["ProcessExecutor", "start_fork_server"]

_STOP = "stop"  # the driver's last message to a worker
_PR_SET_PDEATHSIG = 1


@dataclass
class _Worker:
    """The driver's side of one worker."""

    name: str
    process: BaseProcess
    jobs: Connection
    results: Connection
    share: int
    running: set[EpisodeKey] = field(default_factory=set)
    done: bool = False  # said it stopped, or is gone
    ready: asyncio.Future[None] | None = None  # while it builds the recipe being prepared
    recipes: set[str] = field(default_factory=set)  # the recipes it has been sent


class ProcessExecutor(Executor):
    """Jobs run by `workers` local processes, each with its share of `concurrency`.

    `preload` names modules the fork server imports before forking workers (a recipe's
    `modules`); the fork server is one per driver process, so the first executor's preload
    is the one it has. A worker that dies while the run goes on is reported as `Lost` (the
    driver stops the run; resume runs the rest). `stop_seconds` bounds how long stopping
    waits for workers to finish cancelling before they are killed.
    """

    def __init__(
        self,
        workers: int,
        concurrency: int,
        *,
        preload: Sequence[str] = (),
        stop_seconds: float = 10.0,
    ) -> None:
        if workers < 1:
            raise ValueError("a process executor needs at least one worker")
        base, extra = divmod(concurrency, workers)
        self.shares = [max(1, base + (index < extra)) for index in range(workers)]
        self.capacity = sum(self.shares)
        self._preload = preload
        self._stop_seconds = stop_seconds
        self._workers: list[_Worker] = []
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._all_done = asyncio.Event()
        self._stopping = False

    async def start(self) -> None:
        if os.name != "posix":  # the driver watches the workers' pipes with add_reader
            raise ExecutorError("worker processes need a POSIX system (Linux, macOS)")
        context = start_fork_server(self._preload)
        loop = asyncio.get_running_loop()
        environment = dict(os.environ)
        for index, share in enumerate(self.shares):
            jobs_in, jobs_out = context.Pipe(duplex=False)
            results_in, results_out = context.Pipe(duplex=False)
            name = f"deedbench-worker-{index}"
            process = context.Process(
                target=_serve, args=(jobs_in, results_out, environment, share), name=name
            )
            process.daemon = True  # also ended when the driver exits normally
            process.start()
            jobs_in.close()  # only the worker holds these ends: its exit (or the
            results_out.close()  # driver's) is an EOF on the other side
            worker = _Worker(name, process, jobs_out, results_in, share)
            self._workers.append(worker)
            loop.add_reader(results_in.fileno(), self._read, worker)

    async def prepare(self, recipe: Recipe) -> None:
        loop = asyncio.get_running_loop()
        for worker in self._workers:
            worker.ready = loop.create_future()
            try:
                worker.jobs.send(("prepare", recipe))
            except OSError as exc:
                raise ExecutorError(f"{worker.name} cannot take jobs: {exc}") from None
            worker.recipes.add(recipe.name)
        ready = [worker.ready for worker in self._workers if worker.ready is not None]
        for outcome in await asyncio.gather(*ready, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome  # the first worker's failure (they all build the same)

    def submit(self, job: EpisodeJob) -> None:
        open_ = [w for w in self._workers if not w.done and len(w.running) < w.share]
        if not open_:
            raise ExecutorError("no worker can take a job: they have all stopped")
        worker = max(open_, key=lambda w: w.share - len(w.running))
        message: object = job
        if job.recipe.name in worker.recipes:  # the recipe is pickled once per worker
            message = ("job", job.run_id, job.recipe.name, job.key, job.seed, job.cached)
        try:
            worker.jobs.send(message)
            worker.recipes.add(job.recipe.name)
        except OSError as exc:
            raise ExecutorError(f"{worker.name} cannot take jobs: {exc}") from None
        worker.running.add(job.key)

    async def events(self) -> list[Event]:
        return await drain(self._queue)

    async def stop(self) -> list[Event]:
        self._stopping = True
        for worker in self._workers:
            if not worker.done:
                try:
                    worker.jobs.send(_STOP)
                except OSError:
                    self._gone(worker)
        self._check_done()
        try:
            async with asyncio.timeout(self._stop_seconds):
                await self._all_done.wait()
        except TimeoutError:
            for worker in self._workers:
                if not worker.done:
                    worker.process.kill()
        return waiting(self._queue)

    async def close(self) -> None:
        if not self._stopping:
            await self.stop()
        loop = asyncio.get_running_loop()
        for worker in self._workers:
            loop.remove_reader(worker.results.fileno())
            worker.process.join(self._stop_seconds)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.jobs.close()
            worker.results.close()

    def _read(self, worker: _Worker) -> None:
        """Take every message the worker has sent (called by the event loop)."""
        try:
            while worker.results.poll():
                kind, payload = worker.results.recv()
                self._take(worker, kind, payload)
        except (EOFError, OSError):
            self._gone(worker)

    def _take(self, worker: _Worker, kind: str, payload: Any) -> None:
        if kind == "answer":
            self._queue.put_nowait(Answered(payload))
        elif kind == "finished":
            record = EpisodeRecord.model_validate_json(payload)
            worker.running.discard(record.key)
            self._queue.put_nowait(Finished(record, payload))
        elif kind == "ready":
            self._settle(worker, None)
        elif kind == "aborted":
            key, reason = payload
            if key is None:  # building the recipe being prepared
                self._settle(worker, RunAborted(reason))
                return
            worker.running.discard(key)
            self._queue.put_nowait(Aborted(reason))
        elif kind == "failed":
            if not self._settle(worker, ExecutorError(payload)):
                self._queue.put_nowait(Lost(f"{worker.name}: {payload}"))
        elif kind == "stopped":
            worker.done = True
            self._check_done()

    def _gone(self, worker: _Worker) -> None:
        asyncio.get_running_loop().remove_reader(worker.results.fileno())
        if worker.done:
            return
        worker.done = True
        if not self._stopping:
            worker.process.join(1.0)  # it closed its pipe: it has exited, or is about to
            code = worker.process.exitcode
            lost = ExecutorError(f"{worker.name} exited (code {code}) while starting")
            if not self._settle(worker, lost):
                self._queue.put_nowait(
                    Lost(
                        f"{worker.name} exited (code {code}) with {len(worker.running)} "
                        "episodes in flight"
                    )
                )
        self._check_done()

    def _settle(self, worker: _Worker, failure: Exception | None) -> bool:
        """End the worker's part in `prepare`; False when it was not preparing."""
        if worker.ready is None or worker.ready.done():
            return False
        if failure is None:
            worker.ready.set_result(None)
        else:
            worker.ready.set_exception(failure)
        return True

    def _check_done(self) -> None:
        if all(worker.done for worker in self._workers):
            self._all_done.set()


def start_fork_server(preload: Sequence[str]) -> Any:
    """Start this process's fork server, unless it runs already, importing this module and
    `preload`; returns the forkserver context. The CLI calls it as soon as it knows the
    run has workers, so that the server's imports (the SDK: most of a second) overlap the
    driver's planning on another core; the executor's start calls it again (a no-op)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, *preload])  # no effect once the server runs
    forkserver.ensure_running()
    return context


def _serve(jobs: Connection, results: Connection, environment: dict[str, str], share: int) -> None:
    """A worker process's life: run jobs until the driver says stop or goes away."""
    _end_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(environment)
    asyncio.run(_Jobs(jobs, results, share).serve())


def _end_with_parent() -> None:
    """On Linux, have the kernel kill this worker when the fork server (which follows the
    driver) exits."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it exited before the kernel was told to follow it
        os._exit(0)


class _Jobs:
    """The worker's side: its inbox, the recipes it has built, its episodes in flight."""

    def __init__(self, jobs: Connection, results: Connection, share: int) -> None:
        self.jobs = jobs
        self.results = results
        self.share = share
        self.built: dict[str, Built] = {}
        self.cache = EpisodeCache(self.answered)

    def send(self, kind: str, payload: object) -> None:
        try:
            self.results.send((kind, payload))
        except OSError:  # the driver is gone: nobody is left to give results to
            os._exit(0)

    def answered(self, entry: CacheEntry) -> None:
        self.send("answer", entry)

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[object] = asyncio.Queue()

        def listen() -> None:
            while True:
                try:
                    message: object = self.jobs.recv()
                except (EOFError, OSError):  # the driver died: stop at once
                    os._exit(0)
                except Exception as exc:  # a job that cannot be unpickled here
                    message = f"cannot read a job: {exc}"
                loop.call_soon_threadsafe(inbox.put_nowait, message)
                if message == _STOP:
                    return

        threading.Thread(target=listen, name="deedbench-jobs", daemon=True).start()
        tasks: set[asyncio.Task[None]] = set()
        recipes: dict[str, Recipe] = {}
        while (message := await inbox.get()) != _STOP:
            if isinstance(message, str):
                self.send("failed", message)
                continue
            if isinstance(message, tuple) and message[0] == "prepare":
                recipes[message[1].name] = message[1]
                self.prepare(message[1])
                continue
            if isinstance(message, tuple):  # a job whose recipe came before
                _, run_id, name, key, seed, cached = message
                message = EpisodeJob(run_id, recipes[name], key, seed, cached)
            assert isinstance(message, EpisodeJob)
            recipes[message.recipe.name] = message.recipe
            task = asyncio.create_task(self.run(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for built in self.built.values():
            await built.close()
        self.send("stopped", None)

    def build(self, recipe: Recipe) -> Built:
        if recipe.name not in self.built:
            self.built[recipe.name] = recipe.build(self.cache, self.share)
        return self.built[recipe.name]

    def prepare(self, recipe: Recipe) -> None:
        try:
            self.build(recipe)
        except RunAborted as exc:  # a key missing in this process's environment, say
            self.send("aborted", (None, str(exc)))
        except Exception as exc:
            self.send("failed", redact(str(exc)) or type(exc).__name__)
        else:
            self.send("ready", None)

    async def run(self, job: EpisodeJob) -> None:
        try:
            built = self.build(job.recipe)
        except RunAborted as exc:
            self.send("aborted", (job.key, str(exc)))
            return
        except Exception as exc:
            detail = redact("".join(traceback.format_exception_only(exc)).strip())
            self.send("failed", f"cannot build {job.recipe.name!r}: {detail}")
            return
        self.cache.hold(job.seed, job.cached)
        try:
            record = await run_job(built, job)
        except RunAborted as exc:
            self.send("aborted", (job.key, str(exc)))
            return
        finally:
            self.cache.release(job.seed)
        # As JSON: half the CPU of pickling a pydantic record on both sides, and the
        # driver stores the text it receives (bench/concurrency.py).
        self.send("finished", record.model_dump_json())
