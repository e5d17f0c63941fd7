"""Shared scoring pieces: state comparison and τ-bench's hash, procedure rules over a
transcript. The scores, evidence and metrics they produce are records
(`deedbench.records`).
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

from deedbench.scoring.procedure import ProcedureSpec, Violation, check_procedure
from deedbench.scoring.state import (
    OverlayState,
    TauTextual,
    canonical,
    diff,
    records_equal_tau,
    tau_hash,
    to_hashable,
    worlds_diff,
    worlds_equal_canonical,
    worlds_equal_tau,
)

__all__ = [
    "OverlayState",
    "ProcedureSpec",
    "TauTextual",
    "Violation",
    "canonical",
    "check_procedure",
    "diff",
    "records_equal_tau",
    "tau_hash",
    "to_hashable",
    "worlds_diff",
    "worlds_equal_canonical",
    "worlds_equal_tau",
]


# Names this package listed before each name got one home (issue 27, commit 4ce4b4d),
# kept importable from here for a release: each warns, naming its home. Not in __all__.
_MOVED = {
    "Evidence": "deedbench.records",
    "MetricSpec": "deedbench.records",
    "NO_CHOICE": "deedbench.records",
    "ReportSpec": "deedbench.records",
    "Score": "deedbench.records",
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
