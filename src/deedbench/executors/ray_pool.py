"""A driver's workers on a Ray cluster (`RayPool`): it starts them and the limits actor,
prepares each run's recipe on every worker, sends them jobs in batches, follows their
streams of events, and runs again elsewhere the episodes of a worker that died. `ray.py`
says what runs where, and why.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from deedbench.engine.cache import CacheEntry
from deedbench.engine.executor import (
    Aborted,
    Answered,
    EpisodeJob,
    Event,
    Finished,
    Lost,
    Recipe,
)
from deedbench.errors import ExecutorError, RunAborted
from deedbench.executors.ray_guard import require_ray
from deedbench.executors.ray_limits import Limits
from deedbench.executors.ray_shipping import key_variables, py_modules
from deedbench.executors.ray_worker import Worker
from deedbench.records import EpisodeRecord
from deedbench.secrets import redact
from deedbench.version import __version__

__all__ = ["MAX_LOSSES", "PoolClient", "RayPool"]

MAX_LOSSES = 3  # workers an episode may see die before the run stops
_START_SECONDS = 180.0  # for the workers to start (a runtime environment is set up first)
_PING_SECONDS = 10.0


@dataclass(eq=False)
class PoolClient:
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
    client: PoolClient
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
    sends everything its episodes produce over one stream, in batches (`Worker.events`),
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
        self._clients: dict[str, PoolClient] = {}  # by recipe name: where orphan answers go
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
        modules = py_modules(self.ship)
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
            ray.remote(Limits)
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
        worker = ray.remote(Worker).options(
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
            boxed = self._recipes[recipe.name] = [self.ray.put((recipe, key_variables(recipe)))]
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

    def submit(self, job: EpisodeJob, boxed: list[Any], client: PoolClient) -> None:
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

    def abandon(self, client: PoolClient) -> None:
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
