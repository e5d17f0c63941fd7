"""The benchmark registry: names found through the ``deedbench.benchmarks`` entry-point
group, imported only when used, and ``python/MODULE:ATTR`` for a class on the path (the
working folder included).

A package adds a benchmark without editing deedbench by declaring, in its
pyproject.toml, ``[project.entry-points."deedbench.benchmarks"] NAME = "module:Class"``
(the class's `name` must be NAME). deedbench's own are listed once, in `BUILTIN` (as its
executors and model providers are), not as entry points of its pyproject.toml: installed
metadata lists a group's entry points sorted by name, while `deedbench list` shows
deedbench's in this order, and a source tree run with PYTHONPATH has no metadata at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from deedbench.engine import Benchmark, plugins
from deedbench.engine.python_specs import use_working_folder
from deedbench.errors import BenchmarkError

__all__ = [
    "BUILTIN",
    "GROUP",
    "benchmark_class",
    "benchmarks",
    "load_benchmark",
    "reading_class",
]

GROUP = "deedbench.benchmarks"
_PYTHON = "python/"
BUILTIN = {
    "tac": "deedbench.benchmarks.tac:TacBenchmark",
    "retail": "deedbench.benchmarks.retail.benchmark:RetailBenchmark",
    "taubench-retail": "deedbench.benchmarks.taubench.retail:TaubenchRetailBenchmark",
    "taubench-airline": "deedbench.benchmarks.taubench.airline:TaubenchAirlineBenchmark",
    "tau2-airline": "deedbench.benchmarks.tau2.airline.benchmark:Tau2AirlineBenchmark",
    "tau2-retail": "deedbench.benchmarks.tau2.retail.benchmark:Tau2RetailBenchmark",
    "tau2-telecom": "deedbench.benchmarks.tau2.telecom.benchmark:Tau2TelecomBenchmark",
    "tau2-banking": "deedbench.benchmarks.tau2.banking.benchmark:Tau2BankingBenchmark",
}


def benchmarks() -> dict[str, str]:
    """Every registered benchmark, name -> "module:attr": deedbench's first, then the
    other packages' in name order (deedbench's own names are not theirs to take)."""
    return BUILTIN | plugins.entries(GROUP, BUILTIN)


@cache
def benchmark_class(name: str) -> type[Benchmark[Any]]:
    """The class of a registered benchmark, or of ``python/MODULE:ATTR``; BenchmarkError
    naming the valid ones for an unknown name."""
    if name.startswith(_PYTHON):
        return _python_class(name)
    registered = benchmarks()
    if name not in registered:
        raise BenchmarkError(
            f"unknown benchmark {name!r}. Valid benchmarks: {', '.join(sorted(registered))} "
            f"(or {_PYTHON}MODULE:ATTR)"
        )
    cls = _load(registered[name], f"benchmark {name!r} ({registered[name]})")
    if cls.name != name:
        raise BenchmarkError(
            f"benchmark {name!r} ({registered[name]}) is registered under another name than "
            f"its class's name {cls.name!r}"
        )
    return cls


def reading_class(name: str, *, allow_import: bool = False) -> type[Benchmark[Any]]:
    """The class of a benchmark that a store or a file names, for a command that reads it:
    deedbench's own at once; any other (``python/MODULE:ATTR``, another package's) only
    with `allow_import`, since reading a store never runs the code it names. Otherwise a
    `BenchmarkError` says which module it would import and how to allow it."""
    if name in BUILTIN or allow_import:
        return benchmark_class(name)
    if name.startswith(_PYTHON):
        module = name.removeprefix(_PYTHON).partition(":")[0]
        where = f"module {module!r}, from the working folder or Python's path"
    else:
        target = benchmarks().get(name)
        if target is None:
            return benchmark_class(name)  # unknown: its error names the valid ones
        where = f"module {target.partition(':')[0]!r} of another package"
    raise BenchmarkError(
        f"benchmark {name!r} is code: reading it would import {where}; reading a store or "
        "a file imports no code unless --allow-import is given"
    )


def load_benchmark(name: str, options: Mapping[str, str] | None = None) -> Benchmark[Any]:
    """The benchmark called `name`, built with its options."""
    return benchmark_class(name)(options)


def _python_class(spec: str) -> type[Benchmark[Any]]:
    """A class on the path, named as it is recorded: its `name` is the spec, so a run of
    it resumes, reports and exports by the spec."""
    target = spec.removeprefix(_PYTHON)
    if ":" not in target:
        raise BenchmarkError(f"benchmark {spec!r}: expected {_PYTHON}MODULE:ATTR")
    use_working_folder()  # as for python/ agents: a module beside the user is found
    cls = _load(target, f"benchmark {spec!r}")
    declared = getattr(cls, "name", None)  # a class on the path may not declare one
    namespace = {"name": spec, "declared_name": declared, "__module__": cls.__module__}
    return type(cls.__name__, (cls,), namespace)


def _load(target: str, what: str) -> type[Benchmark[Any]]:
    found = plugins.load(target, what, BenchmarkError)
    if not (isinstance(found, type) and issubclass(found, Benchmark)):
        raise BenchmarkError(f"{what} is not a Benchmark class")
    return found
