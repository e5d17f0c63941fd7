"""Episodes on a Ray cluster, with the driver still the one writer of every run.

The design of issue 12 holds unchanged: the driver (`engine.runner.execute`) plans, owns
the only store connection and commits everything; this executor only runs `EpisodeJob`s
somewhere else. What runs where:

- **Workers** are Ray actors (`Worker`), by default one per CPU of the cluster, spread
  over its nodes (`SPREAD`). Each builds a run's recipe once (from a reference to it in
  Ray's object store, fetched the first time a job of that run reaches it) and runs many
  episodes at once on its own event loop. Jobs reach a worker in batches (one `take`
  call per worker and turn of the driver's event loop), and each worker sends back
  everything its episodes produce over one stream (`events`): each new model answer
  the moment it is paid for, each finished record as JSON (which the driver stores as it
  is), gathered for `_BATCH_SECONDS` into one message. One Ray call and one stream per
  episode cost the driver 1.6 to 1.9 ms of CPU per episode, 4.5 to 6x local workers';
  batched, about the same as theirs (BENCHMARKS.md, issue 26). Workers never see the
  store: the job carries the answers the cache holds for its episode, selected by its
  seed, as with `ProcessExecutor`.
- **Faults**: a worker that dies (its process killed, its node gone) breaks its stream.
  Each episode it was running is run again on another worker, as a new attempt (what the
  old attempt still sends is dropped), with the answers its earlier attempts already
  sent added to the ones it carries, so nothing paid for is paid again; only the calls in
  flight at the death are. Ray restarts the actor (on another node if its own is gone),
  and it takes jobs again once it answers a ping (jobs addressed to the dead incarnation
  are refused by the new one). An episode lost with `MAX_LOSSES` workers, or a cluster
  with no live worker for `lost_after` seconds, stops the run (`Lost`); resume runs the
  rest. A record is stored only from the attempt the driver follows, under the episode's
  primary key, so the store never holds two records of one episode; a worker that merely
  looked dead (a network blip) is killed before its episodes run elsewhere.
- **A local cluster ends with the driver**: when `ray.init` started a new local cluster
  (no address, or "local"), a watchdog process (`_watchdog.py`) ends every process of
  it when the driver ends, even by SIGKILL; a cluster deedbench connected to is left
  running.
- **Per-endpoint limits across the cluster**: one `Limits` actor (on the driver's
  node) keeps the AIMD limiter of each endpoint (protocol and base URL) for every worker
  and every run the driver executes, and grants call slots one at a time: a model agent's
  call awaits a grant from it (one round trip) and gives the slot back with a message it
  does not wait for, carrying the successes since the last one; a 429 halves the
  endpoint's allowance for the whole cluster at once. Grants are recorded per worker
  incarnation, so the slots of a worker that died are given back when the driver sees
  it die. The alternative, fixed per-worker shares of `--concurrency` (what
  `ProcessExecutor` does), costs no message per call, but cannot give a cap smaller than
  the number of workers (a local model server that takes one request at a time, behind
  sixteen workers), leaves a busy worker's share idle while another waits, and backs off
  only the worker that met the 429. A central grant is exact and work-conserving; its
  price is one actor round trip per call (measured in BENCHMARKS.md: next to a model call
  of a second or more it is noise; at a loopback server answering at once it is most of
  what Ray adds per episode).
- **What reaches the workers**: the run's recipe (names and settings, never a live
  client), the values of the API-key variables the run names, taken from the driver's
  environment where set there (sent with the recipe in Ray's object store; never in the
  runtime environment, which Ray's dashboard shows), and the driver's working folder,
  which workers on the same machine enter, so relative data paths mean what they meant.
  An agent (or benchmark) given as `python/MODULE:ATTR` whose module is not installed (not under
  site-packages) is shipped with Ray's runtime environment (`py_modules`: its top-level
  package folder, or its file), given to `ray.init` (Ray uploads local folders for a
  whole job only; a process already connected to Ray gets a message to install the
  module on every node instead). Installed packages, deedbench among them (the same
  version, checked when the workers start), and data folders (the same path on every
  node, checked against the run's data hash when a recipe is prepared) must be present
  on every node; when they are not, preparing the run fails with a message that names
  the node and what is missing there.

Ray is imported only when a pool starts; without it, `RayNotInstalled` says what to
install. The parts, one module each: the import guard (`ray_guard.py`), what is shipped to
the workers (`ray_shipping.py`), the limits actor and its stand-ins in the workers
(`ray_limits.py`), the worker actor (`ray_worker.py`), the driver's pool of workers
(`ray_pool.py`) and, here, one run's executor on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from deedbench.engine.executor import EpisodeJob, Event, Executor, Recipe, drain, waiting
from deedbench.errors import ExecutorError
from deedbench.executors.ray_pool import PoolClient, RayPool

__all__ = ["RayExecutor"]


class RayExecutor(Executor):
    """One run's episodes on a Ray cluster: `concurrency` episodes in flight, on the
    workers of `pool` (shared with other runs of the same driver) or of a pool of its
    own, made from `address`, `workers` and `ship` (see `RayPool`), which then also caps
    the run's calls per endpoint at `concurrency`."""

    def __init__(
        self,
        concurrency: int = 16,
        *,
        pool: RayPool | None = None,
        address: str | None = None,
        workers: int | None = None,
        ship: Sequence[str] = (),
        stop_seconds: float = 10.0,
    ) -> None:
        self.capacity = max(1, concurrency)
        self._own = pool is None
        self.pool = pool or RayPool(
            address=address, workers=workers, concurrency=concurrency, ship=ship
        )
        self._stop_seconds = stop_seconds
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._client = PoolClient(self._queue.put_nowait)
        self._boxed: dict[str, list[Any]] = {}
        self._runs: set[str] = set()
        self._stopped = False

    async def start(self) -> None:
        if self._own:
            await self.pool.start()

    async def prepare(self, recipe: Recipe) -> None:
        self._boxed[recipe.name] = await self.pool.prepare(recipe)

    def submit(self, job: EpisodeJob) -> None:
        boxed = self._boxed.get(job.recipe.name)
        if boxed is None:
            raise ExecutorError(f"recipe {job.recipe.name!r} was not prepared on the Ray pool")
        self._runs.add(job.run_id)
        self.pool.submit(job, boxed, self._client)

    async def events(self) -> list[Event]:
        return await drain(self._queue)

    async def stop(self) -> list[Event]:
        self._stopped = self._client.stopping = True
        if self._client.flights:
            await self.pool.stop(self._runs)
            try:
                async with asyncio.timeout(self._stop_seconds):
                    await self._client.idle.wait()
            except TimeoutError:
                self.pool.abandon(self._client)
        return waiting(self._queue)

    async def close(self) -> None:
        if not self._stopped:
            await self.stop()
        if self._own:
            await self.pool.close()
