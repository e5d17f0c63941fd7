"""``python/MODULE:ATTR`` specs (agents and benchmarks) import from the folder deedbench
runs in, as ``python -m`` would: the ``deedbench`` console script puts its own bin folder
first on `sys.path`, not the working folder, so ``python/cheapest:cheapest`` beside
cheapest.py would otherwise fail until PYTHONPATH=. was set.

Every process that rebuilds a run calls `import_target` too (forked workers share the
driver's working folder; Ray workers on the driver's machine enter it, and other nodes get
the module through Ray's ``py_modules``), so the folder means the same there.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import Any

__all__ = ["import_target", "use_working_folder"]


def use_working_folder() -> None:
    """Put the working folder first on `sys.path`, where ``python -m`` puts it (once)."""
    folder = os.getcwd()
    if folder not in sys.path and "" not in sys.path:
        sys.path.insert(0, folder)


def import_target(target: str) -> Any:
    """The object ``MODULE:ATTR`` names; ImportError or AttributeError as Python raises them."""
    use_working_folder()
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)
