"""What each module and package says it exports (httpx's test_exported_members is the model).

Every module of deedbench declares `__all__`, naming only what it has; every package's
`__all__` includes each public class, function or constant its own modules put in its
namespace, so nothing public is exported by accident or hidden by omission.
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import deedbench

MODULES = sorted(
    ["deedbench"] + [m.name for m in pkgutil.walk_packages(deedbench.__path__, "deedbench.")]
)
PACKAGES = [name for name in MODULES if hasattr(importlib.import_module(name), "__path__")]


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_what_it_exports(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list | tuple), f"{name} declares no __all__"
    assert len(set(exported)) == len(exported), f"{name}.__all__ names something twice"
    missing = [item for item in exported if not hasattr(module, item)]
    assert missing == [], f"{name}.__all__ names what it does not have: {missing}"


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_exports_every_public_name_of_its_own(name: str) -> None:
    package = importlib.import_module(name)
    own = sorted(
        key
        for key, value in vars(package).items()
        if not key.startswith("_")
        and not isinstance(value, types.ModuleType)
        and str(getattr(value, "__module__", "")).startswith(f"{name}.")
    )
    hidden = [key for key in own if key not in package.__all__]
    assert hidden == [], f"{name} shows {hidden} without listing them in __all__"


def test_the_check_catches_a_hidden_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A public name added to a package and left out of __all__ fails the test above."""
    import deedbench.stats
    from deedbench.stats.rates import rate

    monkeypatch.setattr(deedbench.stats, "rate_again", rate, raising=False)
    with pytest.raises(AssertionError, match="rate_again"):
        test_a_package_exports_every_public_name_of_its_own("deedbench.stats")
