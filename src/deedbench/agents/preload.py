"""Heavy modules imported on a background thread while the CLI waits on other work.

The SDK of a model agent is imported while the CLI plans the run, and numpy (the closing
summary's arithmetic, 0.1 s) while worker processes run the episodes. Importing an
official SDK costs most of a second (openai's eager type modules and its
aiohttp transport), and the agent is built only after the store is opened, the benchmark
loaded and the run planned. Started as soon as the command line names a model agent,
the import overlaps that work where the main thread waits (reading files, the store's
commits); when the agent is built, Python's import lock makes it wait for the thread's
import to finish rather than import again, so the SDK is imported once either way.
"""

from __future__ import annotations

import importlib
import threading

from deedbench.agents.registry import MODEL_PROTOCOLS

__all__ = ["import_early", "import_sdk_early"]


def import_sdk_early(spec: str) -> threading.Thread | None:
    """Start importing the agent module and SDK of model spec `spec` on a daemon thread
    (None, and nothing started, for any other spec)."""
    protocol, _, model = spec.partition("/")
    if protocol not in MODEL_PROTOCOLS or not model:  # another package's provider: not ours
        return None
    module, _, package = MODEL_PROTOCOLS[protocol]
    return import_early(module, package)


def import_early(*names: str) -> threading.Thread:
    """Start importing `names`, in order, on a daemon thread."""
    thread = threading.Thread(target=_import, args=names, name="deedbench-import", daemon=True)
    thread.start()
    return thread


def _import(*names: str) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # a missing or broken SDK is reported when the agent is built
            return
