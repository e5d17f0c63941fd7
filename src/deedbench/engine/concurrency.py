"""Running coroutines side by side when one failure dooms them all."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

from deedbench.errors import RunAborted

__all__ = ["gather_or_abort"]

_T = TypeVar("_T")


async def gather_or_abort(coroutines: Iterable[Coroutine[Any, Any, _T]]) -> list[_T]:
    """Run coroutines concurrently; their results in order.

    A RunAborted in any one cancels the rest and is raised as itself, not inside an
    exception group, so the caller can report its reason as it is.
    """
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(coroutine) for coroutine in coroutines]
    except BaseExceptionGroup as failures:
        aborted = next((e for e in failures.exceptions if isinstance(e, RunAborted)), None)
        if aborted is not None:
            raise aborted from None
        raise
    return [task.result() for task in tasks]
