"""The worker actor of a Ray pool: it builds each run's recipe once, runs many of its
episodes at once on its own event loop, and sends back what they produce (answers, records,
endings) in batches over one stream. `ray.py` says how the driver uses it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import traceback
import uuid
from collections.abc import AsyncIterator
from typing import Any

from deedbench.engine.cache import CacheEntry, EpisodeCache
from deedbench.engine.executor import Built, EpisodeJob, Recipe, run_job
from deedbench.errors import ExecutorError, RunAborted
from deedbench.executors.ray_limits import RemoteLimits
from deedbench.records import EpisodeKey, RunConfig
from deedbench.secrets import redact
from deedbench.version import __version__

__all__ = ["Worker"]

# After the first event of a batch a worker waits this long for more before sending: little
# beside model calls of a second (an answer reaches the store that much later), and events
# then travel many to a message (at 10 ms the driver's CPU per episode was 1.4-2.0x local
# workers', at 50 ms 0.9-1.1x: BENCHMARKS.md, issue 26).
_BATCH_SECONDS = 0.05

# A job as `Worker.take` receives it: (attempt, run id, key, seed, cached answers).
_JobTuple = tuple[int, str, EpisodeKey, int, tuple[CacheEntry, ...]]


class Worker:
    """A Ray actor that runs episodes of any run the driver prepared, many at once, and
    sends what they produce back in batches over one stream (`events`)."""

    def __init__(self, limits: str, concurrency: int, cwd: str) -> None:
        import ray

        self.token = uuid.uuid4().hex  # this incarnation: a restarted actor gets a new one
        # by name: a handle among the arguments would keep them in the object store,
        # which Ray warns may not outlive a restart
        self.limits = RemoteLimits(ray.get_actor(limits), self.token)
        self.concurrency = concurrency
        if os.path.isdir(cwd):  # the driver's folder, where this node has it
            os.chdir(cwd)
        self.recipes: dict[str, Recipe] = {}
        self.built: dict[str, tuple[Built, EpisodeCache]] = {}
        self.attempts: dict[tuple[str, int], int] = {}  # (recipe, seed) -> attempt running it
        self.tasks: dict[str, dict[int, asyncio.Task[None]]] = {}  # run -> attempt -> task
        self.outbox: asyncio.Queue[tuple[str, Any, Any]] = asyncio.Queue()

    def ping(self) -> dict[str, Any]:
        import ray

        return {
            "token": self.token,
            "node": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "version": __version__,
        }

    def _where(self) -> str:
        return f"on Ray worker pid {os.getpid()} on host {socket.gethostname()}"

    async def _build(self, name: str, boxed: list[Any]) -> tuple[Built, EpisodeCache]:
        if name in self.built:
            return self.built[name]
        recipe, variables = await boxed[0]
        os.environ.update(variables)
        cache = EpisodeCache(lambda entry: self._answered(name, entry))
        built = recipe.build(cache, self.concurrency, limits=self.limits)
        config = getattr(recipe, "config", None)
        if isinstance(config, RunConfig) and built.benchmark.data_hash() != config.data_hash:
            raise ExecutorError(
                f"the data of run {config.run_id!r} ({config.benchmark_options or 'built in'}) "
                f"hashes to {built.benchmark.data_hash()} here, not {config.data_hash}: give "
                "every node the same data at the same path"
            )
        self.recipes[name] = recipe
        self.built[name] = (built, cache)
        return built, cache

    async def prepare(self, name: str, boxed: list[Any]) -> tuple[str, str | None]:
        try:
            await self._build(name, boxed)
        except RunAborted as exc:
            return "aborted", f"{exc} ({self._where()})"
        except Exception as exc:
            return "failed", f"{self._where()}: {redact(str(exc)) or type(exc).__name__}"
        return "ready", None

    def _emit(self, kind: str, attempt: Any, payload: Any) -> None:
        self.outbox.put_nowait((kind, attempt, payload))

    def _answered(self, name: str, entry: CacheEntry) -> None:
        attempt = self.attempts.get((name, entry.seed))
        if attempt is None:  # no episode of that seed here (never expected): by recipe
            self._emit("orphan", name, entry)
        else:
            self._emit("answer", attempt, entry)

    def take(self, name: str, boxed: list[Any], token: str, jobs: list[_JobTuple]) -> None:
        """Start these episodes of recipe `name`; jobs meant for an earlier incarnation of
        this actor are dropped (the driver runs them elsewhere when it sees it died)."""
        if token != self.token:
            return
        for attempt, run_id, key, seed, cached in jobs:
            task = asyncio.create_task(
                self._episode(name, boxed, attempt, run_id, key, seed, cached)
            )
            self.tasks.setdefault(run_id, {})[attempt] = task

    async def _episode(
        self,
        name: str,
        boxed: list[Any],
        attempt: int,
        run_id: str,
        key: EpisodeKey,
        seed: int,
        cached: tuple[CacheEntry, ...],
    ) -> None:
        """One episode; its answers, then ("finished", JSON), ("aborted", reason),
        ("failed", detail) or ("stopped", None) go to the outbox."""
        try:
            try:
                built, cache = await self._build(name, boxed)
            except RunAborted as exc:
                self._emit("aborted", attempt, str(exc))
                return
            except Exception as exc:
                detail = redact("".join(traceback.format_exception_only(exc)).strip())
                self._emit("failed", attempt, f"cannot build {name!r} {self._where()}: {detail}")
                return
            job = EpisodeJob(run_id, self.recipes[name], key, seed, cached)
            self.attempts[(name, seed)] = attempt
            cache.hold(seed, cached)
            try:
                record = await run_job(built, job)
            except RunAborted as exc:
                self._emit("aborted", attempt, str(exc))
            else:
                self._emit("finished", attempt, record.model_dump_json())
            finally:
                cache.release(seed)
                self.attempts.pop((name, seed), None)
        except asyncio.CancelledError:
            self._emit("stopped", attempt, None)
        finally:
            self.tasks.get(run_id, {}).pop(attempt, None)

    async def events(self) -> AsyncIterator[list[tuple[str, Any, Any]]]:
        """Everything the episodes produce, as one stream of batches: after the first event
        of a batch, what else arrives within `_BATCH_SECONDS` goes with it."""
        while True:
            batch = [await self.outbox.get()]
            await asyncio.sleep(_BATCH_SECONDS)
            while not self.outbox.empty():
                batch.append(self.outbox.get_nowait())
            yield batch

    def stop(self, run_ids: list[str]) -> None:
        """Cancel the episodes of these runs; each sends what it has, then "stopped"."""
        for run_id in run_ids:
            for task in list(self.tasks.get(run_id, {}).values()):
                task.cancel()

    async def close(self) -> None:
        for built, _ in self.built.values():
            await built.close()
        self.built.clear()
