"""Other tools' formats, both ways. Inspect AI: deedbench's benchmarks as Inspect tasks,
runs as Inspect logs, and logs of the upstream `inspect_evals/tac` task as deedbench runs.
τ²: its result files as runs (`tau2_import`), runs as a leaderboard submission
(`tau2_export`).

The Inspect modules need the optional `inspect` extra. This module imports nothing of
Inspect, so deedbench without it still starts; `require_inspect()` turns a missing
install into one clear message.
"""

from __future__ import annotations

from importlib.util import find_spec

from deedbench.errors import InspectNotInstalled

__all__ = ["INSTALL_HINT", "require_inspect"]

INSTALL_HINT = "pip install 'deedbench[inspect]'"


def require_inspect() -> None:
    """Raise `InspectNotInstalled`, naming the install command, unless Inspect is importable."""
    if find_spec("inspect_ai") is None:
        raise InspectNotInstalled(f"Inspect AI is not installed; install it with: {INSTALL_HINT}")
