"""Executors beyond this machine's processes: episodes on a Ray cluster (`ray`).

The engine's executors (`deedbench.engine.InProcessExecutor`, `ProcessExecutor`) need
nothing but deedbench; the ones here need an optional extra, imported only when one is
started, with an install hint when it is missing.
"""

from deedbench.executors.ray import RayExecutor
from deedbench.executors.ray_guard import RayNotInstalled, require_ray
from deedbench.executors.ray_pool import RayPool

__all__ = ["RayExecutor", "RayNotInstalled", "RayPool", "require_ray"]
