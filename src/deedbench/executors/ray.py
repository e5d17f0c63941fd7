"""Episodes on a Ray cluster, with the driver still the one writer of every run.

The design of issue 12 holds unchanged: the driver (`engine.runner.execute`) plans, owns
the only store connection and commits everything; this executor only runs `EpisodeJob`s
somewhere else. What runs where:

- **Workers** are Ray actors (`_Worker`), by default one per CPU of the cluster, spread
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
- **Per-endpoint limits across the cluster**: one `_Limits` actor (on the driver's
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
install.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import logging
import os
import socket
import subprocess
import sys
import sysconfig
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from deedbench.agents.limiter import AdaptiveLimiter
from deedbench.engine import (
    Built,
    CacheEntry,
    EpisodeCache,
    EpisodeJob,
    EpisodeKey,
    EpisodeRecord,
    Executor,
    ExecutorError,
    Recipe,
    RunAborted,
    RunConfig,
    redact,
)
from deedbench.engine.executor import (
    Aborted,
    Answered,
    Event,
    Finished,
    Lost,
    drain,
    run_job,
    waiting,
)
from deedbench.engine.python_specs import use_working_folder
from deedbench.version import __version__

__all__ = ["RayExecutor", "RayNotInstalled", "RayPool", "modules_to_ship", "require_ray"]

INSTALL_HINT = "the Ray executor needs Ray: pip install 'deedbench[ray]'"
MAX_LOSSES = 3  # workers an episode may see die before the run stops
_START_SECONDS = 180.0  # for the workers to start (a runtime environment is set up first)
_PING_SECONDS = 10.0
# After the first event of a batch a worker waits this long for more before sending: little
# beside model calls of a second (an answer reaches the store that much later), and events
# then travel many to a message (at 10 ms the driver's CPU per episode was 1.4-2.0x local
# workers', at 50 ms 0.9-1.1x: BENCHMARKS.md, issue 26).
_BATCH_SECONDS = 0.05

# A job as `_Worker.take` receives it: (attempt, run id, key, seed, cached answers).
_JobTuple = tuple[int, str, EpisodeKey, int, tuple[CacheEntry, ...]]


class RayNotInstalled(ExecutorError):
    """Ray is needed and missing; the message says what to install."""


def require_ray() -> ModuleType:
    """The `ray` module, or RayNotInstalled with the install hint."""
    try:
        import ray
    except ModuleNotFoundError as exc:
        if exc.name != "ray":
            raise
        raise RayNotInstalled(INSTALL_HINT) from None
    return ray


def modules_to_ship(configs: Iterable[RunConfig]) -> list[str]:
    """The modules of the runs' `python/MODULE:ATTR` agents, model-played users and
    benchmarks."""
    names = []
    for config in configs:
        user = config.user.spec if config.user is not None else ""
        for spec in (config.agent, user, config.benchmark):
            prefix, _, rest = spec.partition("/")
            if prefix == "python" and ":" in rest:
                names.append(rest.partition(":")[0])
    return list(dict.fromkeys(names))


def _py_modules(names: Sequence[str]) -> list[str]:
    """What Ray must upload for `names` to import on every node: each top-level package
    folder (or single-file module) that is not installed, i.e. not under site-packages or
    the standard library. Installed ones must be installed on the nodes too."""
    use_working_folder()  # where python/ specs are found (engine.python_specs)
    installed = [Path(p).resolve() for p in sysconfig.get_paths().values()]
    paths = []
    for name in names:
        top = name.partition(".")[0]
        if top == "deedbench":
            continue
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue  # the worker's import error will say so, naming the node
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        locations = list(spec.submodule_search_locations or [])
        path = Path(locations[0] if locations else spec.origin).resolve()
        if not any(path.is_relative_to(root) for root in installed):
            paths.append(str(path))
    return list(dict.fromkeys(paths))


def _key_variables(recipe: Recipe) -> dict[str, str]:
    """The API-key variables a run's agents read, with the driver's values where set."""
    config = getattr(recipe, "config", None)
    if not isinstance(config, RunConfig):
        return {}
    return {v: os.environ[v] for v in config.key_variables if os.environ.get(v)}


def _endpoint(protocol: str, base_url: str | None) -> str:
    return f"{protocol} {base_url or ''}"


# --- the limits actor and its stand-ins in the workers ------------------------------------


class _Limits:
    """A Ray actor: one AIMD limiter per endpoint for the whole cluster, its slots granted
    one call at a time and recorded per worker incarnation (`holder`)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self.held: dict[str, dict[str, int]] = {}
        self.gone: set[str] = set()

    def _limiter(self, endpoint: str) -> AdaptiveLimiter:
        if endpoint not in self.limiters:
            self.limiters[endpoint] = AdaptiveLimiter(self.cap)
        return self.limiters[endpoint]

    async def acquire(self, endpoint: str, holder: str) -> bool:
        """Wait for a slot; False for a worker already declared dead (it gets none)."""
        if holder in self.gone:
            return False
        limiter = self._limiter(endpoint)
        await limiter.acquire()
        if holder in self.gone:  # it died while waiting
            await limiter.release()
            return False
        counts = self.held.setdefault(holder, {})
        counts[endpoint] = counts.get(endpoint, 0) + 1
        return True

    async def release(self, endpoint: str, holder: str, successes: int) -> None:
        counts = self.held.get(holder, {})
        limiter = self._limiter(endpoint)
        if counts.get(endpoint, 0) > 0:
            counts[endpoint] -= 1
            await limiter.release()
        for _ in range(successes):
            await limiter.succeeded()

    async def rate_limited(self, endpoint: str) -> None:
        await self._limiter(endpoint).rate_limited()

    async def forget(self, holder: str) -> None:
        """A worker died: give back every slot it held."""
        self.gone.add(holder)
        for endpoint, count in self.held.pop(holder, {}).items():
            for _ in range(count):
                await self._limiter(endpoint).release()

    def state(self) -> dict[str, dict[str, int]]:
        """Per endpoint: the cap, the current allowance, its lowest, the calls in flight."""
        return {
            endpoint: {
                "cap": limiter.cap,
                "limit": limiter.limit,
                "lowest": limiter.lowest,
                "in_flight": limiter.in_flight,
            }
            for endpoint, limiter in self.limiters.items()
        }


class _RemoteLimiter:
    """What a model agent in a worker sees as its endpoint's limiter: slots from `_Limits`.

    A success is counted here and sent with the next slot given back (one message less
    per call); a 429 is sent at once.
    """

    def __init__(self, limits: Any, endpoint: str, holder: str) -> None:
        self._limits = limits
        self._endpoint = endpoint
        self._holder = holder
        self._successes = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if not await self._limits.acquire.remote(self._endpoint, self._holder):
            raise ExecutorError("this Ray worker was replaced; its episodes run elsewhere")
        try:
            yield
        finally:
            successes, self._successes = self._successes, 0
            self._limits.release.remote(self._endpoint, self._holder, successes)

    async def rate_limited(self) -> None:
        self._limits.rate_limited.remote(self._endpoint)

    async def succeeded(self) -> None:
        self._successes += 1


@dataclass
class _RemoteLimits:
    """The worker's `CallLimits`: a `_RemoteLimiter` per endpoint."""

    limits: Any
    holder: str
    limiters: dict[str, _RemoteLimiter] = field(default_factory=dict)

    def limiter(self, protocol: str, base_url: str | None) -> _RemoteLimiter:
        endpoint = _endpoint(protocol, base_url)
        if endpoint not in self.limiters:
            self.limiters[endpoint] = _RemoteLimiter(self.limits, endpoint, self.holder)
        return self.limiters[endpoint]


# --- the worker actor ---------------------------------------------------------------------


class _Worker:
    """A Ray actor that runs episodes of any run the driver prepared, many at once, and
    sends what they produce back in batches over one stream (`events`)."""

    def __init__(self, limits: str, concurrency: int, cwd: str) -> None:
        import ray

        self.token = uuid.uuid4().hex  # this incarnation: a restarted actor gets a new one
        # by name: a handle among the arguments would keep them in the object store,
        # which Ray warns may not outlive a restart
        self.limits = _RemoteLimits(ray.get_actor(limits), self.token)
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


# --- the driver's side --------------------------------------------------------------------


@dataclass(eq=False)
class _Client:
    """One `RayExecutor` as its pool sees it: where its events go, its episodes in flight."""

    put: Callable[[Event], None]
    stopping: bool = False
    flights: set[int] = field(default_factory=set)
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.idle.set()


@dataclass(eq=False)
class _Flight:
    """One episode being run: its job, the answers it has sent (which go with it when it
    runs again), the workers it lost, and the worker incarnation it is on."""

    attempt: int
    job: EpisodeJob
    boxed: list[Any]
    client: _Client
    cached: list[CacheEntry]
    losses: int = 0
    member: _Member | None = None
    token: str = ""
    sent: bool = False


@dataclass(eq=False)
class _Member:
    """The driver's view of one worker actor."""

    index: int
    handle: Any
    up: bool = False
    token: str = ""
    node: str = ""
    host: str = ""
    pid: int = 0
    load: int = 0  # jobs in flight on it, of every run
    reviving: asyncio.Task[None] | None = None
    reader: asyncio.Task[None] | None = None
    flights: dict[int, _Flight] = field(default_factory=dict)
    outbox: list[_Flight] = field(default_factory=list)  # assigned, not sent yet


class RayPool:
    """A driver's workers on a Ray cluster and the call limits they share, for every run
    the driver executes (one `RayExecutor` per run draws on it).

    `address` is Ray's: None connects where `ray.init` would ($RAY_ADDRESS, else a cluster
    `ray start` started on this machine, else a new local one), "local" always starts a
    new one. `workers` defaults to one per CPU of the cluster; `concurrency` caps calls in
    flight per endpoint across all of them; `ship` names modules to upload when they are
    not installed (`modules_to_ship`).

    What the driver pays per episode is kept to a few messages shared by many episodes:
    jobs go to a worker in one `take` call per worker and event-loop turn, and each worker
    sends everything its episodes produce over one stream, in batches (`_Worker.events`),
    instead of one Ray call and one stream per episode (BENCHMARKS.md, issue 26: the driver's
    CPU per episode fell from 1.6-1.9 ms to 0.37-0.42 ms, local workers' 0.35-0.41 ms).
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int | None = None,
        concurrency: int = 16,
        ship: Sequence[str] = (),
        lost_after: float = 60.0,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError("a Ray pool needs at least one worker")
        self.address = address
        self.requested = workers
        self.concurrency = max(1, concurrency)
        self.ship = list(ship)
        self.lost_after = lost_after
        self.members: list[_Member] = []
        self.limits: Any = None
        self._ray: ModuleType | None = None
        self._started_ray = False
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._changed: asyncio.Condition | None = None
        self._recipes: dict[str, list[Any]] = {}
        self._clients: dict[str, _Client] = {}  # by recipe name: where orphan answers go
        self._flights: dict[int, _Flight] = {}  # by attempt
        self._attempts = itertools.count(1)
        self._homeless: list[_Flight] = []  # no live worker to take them
        self._watch: asyncio.Task[None] | None = None
        self._flushing = False
        self._closing = False
        self.finished_on: dict[str, int] = {}  # episodes finished per node, of every run

    @property
    def ray(self) -> ModuleType:
        if self._ray is None:
            raise ExecutorError("the Ray pool is not started")
        return self._ray

    async def start(self) -> None:
        ray = self._ray = require_ray()
        self._changed = asyncio.Condition()
        self._closing = False
        modules = _py_modules(self.ship)
        if not ray.is_initialized():
            try:
                ray.init(
                    address=self.address,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                    # local folders are uploaded only for a whole job (Ray's rule)
                    runtime_env={"py_modules": modules} if modules else None,
                )
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = self.address or "the default address"
                raise ExecutorError(f"cannot connect to a Ray cluster at {where}: {exc}") from None
            self._started_ray = True
            self._watchdog = _watch_local_cluster(ray)
        elif modules:
            raise ExecutorError(
                f"Ray was connected before the pool started, so {', '.join(modules)} cannot "
                "be shipped to its workers: install it on every node, or let deedbench "
                "connect to the cluster"
            )
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        limits_name = f"deedbench-limits-{uuid.uuid4().hex}"
        self.limits = (
            ray.remote(_Limits)
            .options(
                name=limits_name,
                num_cpus=0,
                max_concurrency=100_000,
                max_restarts=-1,
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=True),
            )
            .remote(self.concurrency)
        )
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        count = self.requested or max(1, int(cpus))
        worker = ray.remote(_Worker).options(
            num_cpus=min(1.0, cpus / count),
            scheduling_strategy="SPREAD",
            max_restarts=-1,
            max_task_retries=0,
            max_concurrency=100_000,
        )
        for index in range(count):
            handle = worker.remote(limits_name, self.concurrency, os.getcwd())
            self.members.append(_Member(index, handle))
        try:
            async with asyncio.timeout(_START_SECONDS):
                infos = await asyncio.gather(*(m.handle.ping.remote() for m in self.members))
        except TimeoutError:
            raise ExecutorError(
                f"{count} Ray workers did not start within {_START_SECONDS:.0f} s (the "
                f"cluster has {cpus:g} CPUs; each worker takes {min(1.0, cpus / count):g})"
            ) from None
        except ray.exceptions.RayError as exc:
            raise ExecutorError(f"Ray workers could not start: {_first_line(exc)}") from None
        for member, info in zip(self.members, infos, strict=True):
            if info["version"] != __version__:
                raise ExecutorError(
                    f"deedbench {info['version']} is installed on host {info['host']}, "
                    f"{__version__} here: install the same version on every node"
                )
            self._up(member, info)

    @property
    def nodes(self) -> set[str]:
        """The nodes that live workers are on."""
        return {m.node for m in self.members if m.up}

    async def prepare(self, recipe: Recipe) -> list[Any]:
        """Put the recipe (and its key variables) in the object store once, and have every
        live worker build it: a bad spec, a missing key or module or different data on a
        node fails here, before the run writes anything."""
        boxed = self._recipes.get(recipe.name)
        if boxed is None:
            boxed = self._recipes[recipe.name] = [self.ray.put((recipe, _key_variables(recipe)))]
        members = [m for m in self.members if m.up]
        outcomes = await asyncio.gather(
            *(m.handle.prepare.remote(recipe.name, boxed) for m in members),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise ExecutorError(f"a Ray worker failed to prepare the run: {outcome}")
            kind, detail = outcome
            if kind == "aborted":
                raise RunAborted(detail)
            if kind == "failed":
                raise ExecutorError(str(detail))
        return boxed

    def submit(self, job: EpisodeJob, boxed: list[Any], client: _Client) -> None:
        """Run one job to its end, on another worker each time its worker dies; `client`
        receives its events."""
        self._clients.setdefault(job.recipe.name, client)
        flight = _Flight(next(self._attempts), job, boxed, client, list(job.cached))
        self._flights[flight.attempt] = flight
        client.flights.add(flight.attempt)
        client.idle.clear()
        self._assign(flight)

    async def stop(self, run_ids: Iterable[str]) -> None:
        """Cancel the episodes of these runs on every live worker."""
        chosen = sorted(set(run_ids))
        members = [m for m in self.members if m.up]
        await asyncio.gather(
            *(m.handle.stop.remote(chosen) for m in members), return_exceptions=True
        )

    def abandon(self, client: _Client) -> None:
        """Forget the client's episodes still in flight: what they send now is dropped."""
        for attempt in list(client.flights):
            flight = self._flights.get(attempt)
            if flight is not None:
                self._drop(flight)
        self._homeless = [f for f in self._homeless if f.client is not client]

    async def limit_state(self) -> dict[str, dict[str, int]]:
        """The limits actor's view of each endpoint (for tests and benchmarks)."""
        state: dict[str, dict[str, int]] = await self.limits.state.remote()
        return state

    async def close(self) -> None:
        if self._ray is None:
            return
        ray = self._ray
        self._closing = True
        tasks = [m.reviving for m in self.members if m.reviving is not None]
        tasks += [m.reader for m in self.members if m.reader is not None]
        if self._watch is not None:
            tasks.append(self._watch)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        members = [m for m in self.members if m.up]
        await asyncio.gather(*(m.handle.close.remote() for m in members), return_exceptions=True)
        for member in self.members:
            ray.kill(member.handle)
        if self.limits is not None:
            ray.kill(self.limits)
        self.members.clear()
        self._flights.clear()
        self._homeless.clear()
        if self._started_ray:
            ray.shutdown()
        self._ray = None
        if self._watchdog is not None:  # it ends what ray.shutdown left, then exits
            watchdog, self._watchdog = self._watchdog, None
            assert watchdog.stdin is not None
            watchdog.stdin.close()
            with suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(watchdog.wait, 10.0)

    # how a job reaches a worker, and its events come back

    def _assign(self, flight: _Flight) -> None:
        """Put the flight in the outbox of the live worker with the fewest jobs (sent at
        the end of this event-loop turn), or wait for one to come back."""
        live = [m for m in self.members if m.up]
        if not live:
            self._homeless.append(flight)
            if self._watch is None or self._watch.done():
                self._watch = asyncio.get_running_loop().create_task(self._wait_for_workers())
            return
        member = min(live, key=lambda m: m.load)
        member.load += 1
        member.flights[flight.attempt] = flight
        member.outbox.append(flight)
        flight.member, flight.token, flight.sent = member, member.token, False
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Send each worker the jobs assigned to it since the last turn: one call per
        worker and recipe."""
        self._flushing = False
        for member in self.members:
            if not member.outbox or not member.up:
                continue
            outbox, member.outbox = member.outbox, []
            by_recipe: dict[str, list[_Flight]] = {}
            for flight in outbox:
                by_recipe.setdefault(flight.job.recipe.name, []).append(flight)
                flight.sent = True
            for name, flights in by_recipe.items():
                jobs = [
                    (f.attempt, f.job.run_id, f.job.key, f.job.seed, tuple(f.cached))
                    for f in flights
                ]
                member.handle.take.remote(name, flights[0].boxed, member.token, jobs)

    async def _read(self, member: _Member, token: str) -> None:
        """Follow one worker incarnation's stream of events until it dies."""
        ray = self.ray
        try:
            async for item in member.handle.events.remote():
                for event in await item:
                    self._take(member, event)
        except ray.exceptions.RayTaskError as exc:  # deedbench's own code failed there
            self._fail(member, f"a Ray worker failed: {_first_line(exc)}")
        except ray.exceptions.RayError as exc:
            if not self._closing:
                self._down(member, token, exc)

    def _take(self, member: _Member, event: tuple[str, Any, Any]) -> None:
        kind, attempt, payload = event
        if kind == "orphan":
            client = self._clients.get(attempt)
            if client is not None:
                client.put(Answered(payload))
            return
        flight = self._flights.get(attempt)
        if flight is None or flight.member is not member:
            return  # an attempt given up on (its worker was declared dead, or stopped)
        if kind == "answer":
            flight.cached.append(payload)
            flight.client.put(Answered(payload))
            return
        if kind == "finished":
            flight.client.put(Finished(EpisodeRecord.model_validate_json(payload), payload))
            self.finished_on[member.node] = self.finished_on.get(member.node, 0) + 1
        elif kind == "aborted":
            flight.client.put(Aborted(payload))
        elif kind == "failed":
            flight.client.put(Lost(str(payload)))
        self._drop(flight)  # finished, aborted, failed or stopped

    def _drop(self, flight: _Flight) -> None:
        """The flight is over: off its worker, out of its client's count."""
        self._flights.pop(flight.attempt, None)
        member = flight.member
        if member is not None and member.flights.pop(flight.attempt, None) is not None:
            member.load -= 1
            if not flight.sent:
                member.outbox.remove(flight)
        flight.member = None
        client = flight.client
        client.flights.discard(flight.attempt)
        if not client.flights:
            client.idle.set()

    def _fail(self, member: _Member, reason: str) -> None:
        """The worker's stream broke on deedbench's own code: its episodes are lost."""
        for flight in list(member.flights.values()):
            self._drop(flight)
            flight.client.put(Lost(reason))

    def _down(self, member: _Member, token: str, exc: Exception) -> None:
        """The worker incarnation `token` failed its stream: count it dead (once), free its
        call slots, make sure it is gone, run its episodes elsewhere with the answers they
        sent, and wait for Ray to bring it back."""
        if member.token != token or not member.up:
            return
        member.up = False
        self.limits.forget.remote(token)
        if isinstance(exc, self.ray.exceptions.ActorUnavailableError):  # maybe alive
            self.ray.kill(member.handle, no_restart=False)
        member.reviving = asyncio.get_running_loop().create_task(self._revive(member))
        flights = list(member.flights.values())
        member.flights.clear()
        member.outbox.clear()
        member.load = 0
        for flight in flights:
            self._flights.pop(flight.attempt, None)
            flight.member = None
            if flight.sent:
                flight.losses += 1
            if flight.client.stopping:
                self._drop(flight)
            elif flight.losses >= MAX_LOSSES:
                self._drop(flight)
                key = flight.job.key
                flight.client.put(
                    Lost(
                        f"episode {key.sample_id}/{key.condition}/epoch {key.epoch} was lost "
                        f"with {flight.losses} Ray workers that died running it; last: "
                        f"{_first_line(exc)}"
                    )
                )
            else:
                flight.client.flights.discard(flight.attempt)
                flight.attempt = next(self._attempts)  # what the old attempt sends is dropped
                flight.client.flights.add(flight.attempt)
                self._flights[flight.attempt] = flight
                self._assign(flight)

    async def _wait_for_workers(self) -> None:
        """Episodes wait for a live worker; after `lost_after` seconds without one, they
        are lost."""
        assert self._changed is not None
        deadline = time.monotonic() + self.lost_after
        async with self._changed:
            while self._homeless and not any(m.up for m in self.members):
                try:
                    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                        await self._changed.wait()
                except TimeoutError:
                    break
        homeless, self._homeless = self._homeless, []
        for flight in homeless:
            if any(m.up for m in self.members):
                self._assign(flight)
            else:
                self._drop(flight)
                flight.client.put(Lost(f"no Ray worker was alive for {self.lost_after:.0f} s"))

    def _up(self, member: _Member, info: dict[str, Any]) -> None:
        member.token, member.node, member.host = info["token"], info["node"], info["host"]
        member.pid, member.up = info["pid"], True
        reader = asyncio.get_running_loop().create_task(self._read(member, member.token))
        member.reader = reader
        if self._homeless:
            homeless, self._homeless = self._homeless, []
            for flight in homeless:
                self._assign(flight)

    async def _revive(self, member: _Member) -> None:
        assert self._changed is not None
        ray = self.ray
        while True:
            try:
                async with asyncio.timeout(_PING_SECONDS):
                    info = await member.handle.ping.remote()
            except (TimeoutError, ray.exceptions.RayError):
                await asyncio.sleep(0.5)
                continue
            if info["token"] == member.token:  # the old incarnation still answers
                await asyncio.sleep(0.5)
                continue
            async with self._changed:
                self._up(member, info)
                member.reviving = None
                self._changed.notify_all()
            return


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
        self._client = _Client(self._queue.put_nowait)
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


def _watch_local_cluster(ray: ModuleType) -> subprocess.Popen[bytes] | None:
    """When `ray.init` has just started a new local cluster, a watchdog process that ends
    the cluster's processes when this process ends, however it ends (`_watchdog.py` says
    why a process of its own); None when `ray.init` connected to a running cluster, or off
    Linux (it reads /proc)."""
    if not sys.platform.startswith("linux"):
        return None
    try:  # Ray says whether it started the node only on its (private) node object
        from ray._private import worker

        node: Any = worker._global_node
        started, session = bool(node.head), str(node.get_session_dir_path())
    except (ImportError, AttributeError):
        return None
    if not started:
        return None
    told = {
        "driver": os.getpid(),
        "session": session,
        "programs": [
            os.path.realpath(sys.executable),
            os.path.dirname(os.path.realpath(str(ray.__file__))) + os.sep,
        ],
    }
    watchdog = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_watchdog.py"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C to the driver's terminal does not reach it
    )
    assert watchdog.stdin is not None
    watchdog.stdin.write(json.dumps(told).encode() + b"\n")
    watchdog.stdin.flush()
    return watchdog


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return redact(lines[0] if lines else type(exc).__name__)
