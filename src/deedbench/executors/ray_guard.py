"""Ray, imported only when a Ray executor starts: without it, `RayNotInstalled` says what to
install, so deedbench itself needs no Ray (the ``ray`` extra)."""

from __future__ import annotations

from types import ModuleType

from deedbench.errors import ExecutorError

__all__ = ["INSTALL_HINT", "RayNotInstalled", "require_ray"]

INSTALL_HINT = "the Ray executor needs Ray: pip install 'deedbench[ray]'"


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
