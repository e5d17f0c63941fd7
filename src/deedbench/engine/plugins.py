"""Other packages' additions to deedbench: the entries of its entry-point groups
(``deedbench.benchmarks``, ``deedbench.providers``, ``deedbench.executors``), each group
read and each entry loaded the same way, whatever it adds."""

from __future__ import annotations

from collections.abc import Collection
from importlib import import_module
from importlib.metadata import entry_points

from deedbench.errors import DeedbenchError

__all__ = ["entries", "load"]


def entries(group: str, own: Collection[str]) -> dict[str, str]:
    """Other packages' entries of `group`, name -> "module:attr", in name order; the
    names deedbench uses itself (`own`) are not theirs to take."""
    found = {e.name: e.value for e in entry_points(group=group) if e.name not in own}
    return dict(sorted(found.items()))


def load(target: str, what: str, error: type[DeedbenchError]) -> object:
    """The object "module:attr" names; `error` saying which `what` failed and why when its
    module does not import (whatever it raises while it is imported: an ImportError, its
    own RuntimeError, even a `sys.exit`) or lacks the attribute. Only the entry asked for
    is loaded, so a broken one takes down nothing but what uses it."""
    module, _, attribute = target.partition(":")
    try:
        found: object = getattr(import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise error(f"{what} cannot be loaded: {exc}") from None
    except (Exception, SystemExit) as exc:  # another package's code at import
        raise error(f"{what} cannot be loaded: {type(exc).__name__}: {exc}") from None
    return found
