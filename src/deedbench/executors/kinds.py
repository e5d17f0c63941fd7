"""Where a run's episodes run, by name: the one table `deedbench run`, `deedbench study`
and a study file read.

deedbench's own are ``local`` (this process), ``workers`` (local worker processes, forked
by a fork server) and ``ray`` (a Ray cluster). A package adds one without editing
deedbench: an entry point in the group ``deedbench.executors`` naming an `ExecutorKind`
subclass, whose `name` is the entry's. A kind makes one executor for a run and, if it can
share its resources among the runs of a study (call limits, a cluster's workers), one per
run of a study.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from typing import ClassVar

from deedbench.agents import SharedLimits
from deedbench.engine import Executor, InProcessExecutor, ProcessExecutor, RunStore, plugins
from deedbench.errors import ExecutorError
from deedbench.recipes import RunRecipe

__all__ = [
    "GROUP",
    "ExecutorKind",
    "LocalKind",
    "Placement",
    "RayKind",
    "WorkersKind",
    "executor_kind",
    "executor_kinds",
]

GROUP = "deedbench.executors"


@dataclass(frozen=True)
class Placement:
    """How wide a run goes: episodes (and model calls per endpoint) in flight, worker
    processes (None: the kind's default), and a cluster's address."""

    concurrency: int = 16
    workers: int | None = None
    address: str | None = None


class ExecutorKind(ABC):
    """One entry of the table: its name, where it runs (`where`, said in the progress
    line; `place`, said in a sentence), and the executors it makes."""

    name: ClassVar[str]
    where: ClassVar[str]
    place: ClassVar[str]

    def check(self) -> None:  # noqa: B027  # most kinds need nothing beyond deedbench
        """Raise ExecutorError when this kind cannot run here (an optional extra missing),
        before anything is planned or written."""

    def label(self, placement: Placement) -> str:
        """The progress bar's label."""
        return f"episodes ({self.where})"

    @abstractmethod
    def for_run(self, placement: Placement, recipe: RunRecipe, store: RunStore) -> Executor:
        """An executor, not started, for one run."""

    async def for_study(
        self,
        stack: AsyncExitStack,
        placement: Placement,
        recipes: Mapping[str, RunRecipe],
        store: RunStore,
    ) -> dict[str, Executor]:
        """A started executor per run of a study (entered on `stack`), sharing what the
        runs share: their calls' limits. By default the kind runs no study."""
        raise _no_study(self.name)

    @classmethod
    def studies(cls) -> bool:
        """Whether the kind runs studies (overrides `for_study`)."""
        return cls.for_study is not ExecutorKind.for_study


class LocalKind(ExecutorKind):
    """Episodes as tasks on this process's event loop."""

    name = "local"
    where = "this process"
    place = "in this process"

    def label(self, placement: Placement) -> str:
        return "episodes"

    def for_run(self, placement: Placement, recipe: RunRecipe, store: RunStore) -> Executor:
        return InProcessExecutor(placement.concurrency, lookup=store.response)

    async def for_study(
        self,
        stack: AsyncExitStack,
        placement: Placement,
        recipes: Mapping[str, RunRecipe],
        store: RunStore,
    ) -> dict[str, Executor]:
        limits = SharedLimits(placement.concurrency)
        return {
            run_id: await stack.enter_async_context(
                InProcessExecutor(placement.concurrency, lookup=store.response, limits=limits)
            )
            for run_id in recipes
        }


class WorkersKind(ExecutorKind):
    """Episodes in local worker processes sharing the concurrency (default: one per core)."""

    name = "workers"
    where = "worker processes"
    place = "in local worker processes"

    @staticmethod
    def count(placement: Placement) -> int:
        return placement.workers or os.cpu_count() or 1

    def label(self, placement: Placement) -> str:
        return f"episodes ({self.count(placement)} workers)"

    def for_run(self, placement: Placement, recipe: RunRecipe, store: RunStore) -> Executor:
        return ProcessExecutor(self.count(placement), placement.concurrency, preload=recipe.modules)


class RayKind(ExecutorKind):
    """Episodes on a Ray cluster (the ``ray`` extra): `placement.address`, else Ray's own
    default, else a local cluster started for the run."""

    name = "ray"
    where = "Ray"
    place = "on a Ray cluster"

    def check(self) -> None:
        from deedbench.executors.ray_guard import require_ray

        require_ray()

    def for_run(self, placement: Placement, recipe: RunRecipe, store: RunStore) -> Executor:
        from deedbench.executors.ray import RayExecutor
        from deedbench.executors.ray_shipping import modules_to_ship

        return RayExecutor(
            placement.concurrency,
            address=placement.address,
            workers=placement.workers,
            ship=modules_to_ship([recipe.config]),
        )

    async def for_study(
        self,
        stack: AsyncExitStack,
        placement: Placement,
        recipes: Mapping[str, RunRecipe],
        store: RunStore,
    ) -> dict[str, Executor]:
        from deedbench.executors.ray import RayExecutor
        from deedbench.executors.ray_pool import RayPool
        from deedbench.executors.ray_shipping import modules_to_ship

        pool = RayPool(
            address=placement.address,
            workers=placement.workers,
            concurrency=placement.concurrency,
            ship=modules_to_ship(recipe.config for recipe in recipes.values()),
        )
        stack.push_async_callback(pool.close)
        await pool.start()
        return {
            run_id: await stack.enter_async_context(RayExecutor(placement.concurrency, pool=pool))
            for run_id in recipes
        }


_BUILTIN: dict[str, type[ExecutorKind]] = {k.name: k for k in (LocalKind, WorkersKind, RayKind)}


def executor_kinds() -> dict[str, ExecutorKind]:
    """Every executor that loads, by name: deedbench's, then other packages' in name order
    (one that cannot be loaded is left out: `executor_kind` names it says why)."""
    kinds: dict[str, ExecutorKind] = {name: kind() for name, kind in _BUILTIN.items()}
    for name, target in plugins.entries(GROUP, _BUILTIN).items():
        with suppress(ExecutorError):
            kinds[name] = _load(name, target)
    return kinds


def executor_kind(name: str, *, study: bool = False) -> ExecutorKind:
    """The executor called `name` (that runs studies, if `study`); ExecutorError naming
    the valid ones otherwise. Of other packages' executors, only this one is loaded."""
    if name in _BUILTIN:
        kind: ExecutorKind = _BUILTIN[name]()
    else:
        installed = plugins.entries(GROUP, _BUILTIN)
        if name not in installed:
            valid = ", ".join([*_BUILTIN, *installed])
            raise ExecutorError(f"unknown executor {name!r}. Valid executors: {valid}")
        kind = _load(name, installed[name])
    if study and not kind.studies():
        raise _no_study(name)
    return kind


def _no_study(name: str) -> ExecutorError:
    studies = ", ".join(name for name, kind in executor_kinds().items() if kind.studies())
    return ExecutorError(f"the {name} executor runs one run at a time; a study runs on: {studies}")


def _load(name: str, target: str) -> ExecutorKind:
    kind = plugins.load(target, f"executor {name!r} ({target})", ExecutorError)
    if not (isinstance(kind, type) and issubclass(kind, ExecutorKind)) or kind.name != name:
        raise ExecutorError(
            f"executor {name!r} ({target}) is no ExecutorKind subclass named {name!r}"
        )
    return kind()
