"""An executor kind from outside deedbench, as a package would register it under the
``deedbench.executors`` entry point: episodes in this process, each run it made noted."""

from __future__ import annotations

from typing import ClassVar

from deedbench.engine import Executor, InProcessExecutor, RunStore
from deedbench.executors.kinds import ExecutorKind, Placement
from deedbench.recipes import RunRecipe

__all__ = ["InlineKind"]


class InlineKind(ExecutorKind):
    name = "inline"
    where = "inline"
    place = "inline"
    made: ClassVar[list[str]] = []  # the run ids it made an executor for

    def for_run(self, placement: Placement, recipe: RunRecipe, store: RunStore) -> Executor:
        InlineKind.made.append(recipe.config.run_id)
        return InProcessExecutor(placement.concurrency, lookup=store.response)
