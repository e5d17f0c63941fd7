"""Other tools' formats, both ways. Inspect AI: deedbench's benchmarks as Inspect tasks,
runs as Inspect logs, and logs of the upstream `inspect_evals/tac` task as deedbench runs.
τ²: its result files as runs (`tau2_import`), runs as a leaderboard submission
(`tau2_export`).

The Inspect modules need the optional `inspect` extra. This module imports nothing of
Inspect, so deedbench without it still starts; `require_inspect()` turns a missing
install into one clear message.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from deedbench.errors import InspectNotInstalled as _InspectNotInstalled

__all__ = ["INSTALL_HINT", "require_inspect"]

INSTALL_HINT = "pip install 'deedbench[inspect]'"


def require_inspect() -> None:
    """Raise `InspectNotInstalled`, naming the install command, unless Inspect is importable."""
    if find_spec("inspect_ai") is None:
        raise _InspectNotInstalled(f"Inspect AI is not installed; install it with: {INSTALL_HINT}")


# Names this package listed before each name got one home (issue 27, commit 4ce4b4d),
# kept importable from here for a release: each warns, naming its home. Not in __all__.
_MOVED = {
    "InspectNotInstalled": "deedbench.errors",
}


def __getattr__(name: str) -> Any:
    """A name that moved, from its home, with a DeprecationWarning naming that home."""
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"importing {name} from {__name__} is deprecated: import it from {home}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(import_module(home), name)
