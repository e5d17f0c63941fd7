"""What each module and package says it exports (httpx's test_exported_members is the model).

Every module of deedbench declares `__all__`, naming only what it has; every package's
`__all__` includes each public class, function or constant its own modules put in its
namespace, and every module's `__all__` includes each public class, function, constant,
type alias or type variable it defines at its top level (what is not meant for other modules
is named with a leading underscore), so nothing public is exported by accident or hidden by
omission.
"""

from __future__ import annotations

import ast
import importlib
import inspect
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


def _top_level_names(source: str) -> list[str]:
    """The names a module's source binds at its top level by def, class or assignment."""
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


def _own_public_names(name: str) -> list[str]:
    """The public names a module defines itself: classes and functions whose home it is, and
    the constants, type aliases and type variables it assigns."""
    module = importlib.import_module(name)
    own: set[str] = set()
    for key in _top_level_names(inspect.getsource(module)):
        if key.startswith("_") or not hasattr(module, key):
            continue
        value = getattr(module, key)
        if isinstance(value, types.ModuleType):
            continue
        if (inspect.isclass(value) or inspect.isroutine(value)) and value.__module__ != name:
            continue  # an alias of a name whose home is elsewhere
        own.add(key)
    return sorted(own)


@pytest.mark.parametrize("name", MODULES)
def test_a_module_exports_every_public_name_it_defines(name: str) -> None:
    module = importlib.import_module(name)
    hidden = [key for key in _own_public_names(name) if key not in module.__all__]
    assert hidden == [], f"{name} defines {hidden} without listing them in __all__"


def test_the_check_catches_a_hidden_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A public name added to a package and left out of __all__ fails the test above."""
    import deedbench.stats
    from deedbench.stats.rates import rate

    monkeypatch.setattr(deedbench.stats, "rate_again", rate, raising=False)
    with pytest.raises(AssertionError, match="rate_again"):
        test_a_package_exports_every_public_name_of_its_own("deedbench.stats")


def test_the_module_check_catches_a_hidden_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A public name defined in a module and left out of its __all__ fails the module test."""
    import deedbench.stats.rates

    source = inspect.getsource(deedbench.stats.rates) + "\n\nRATE_AGAIN = 1\n"
    monkeypatch.setattr(deedbench.stats.rates, "RATE_AGAIN", 1, raising=False)
    monkeypatch.setattr(inspect, "getsource", lambda module: source)
    with pytest.raises(AssertionError, match="RATE_AGAIN"):
        test_a_module_exports_every_public_name_it_defines("deedbench.stats.rates")
