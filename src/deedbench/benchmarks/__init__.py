"""The benchmarks deedbench ships, registered by name and imported only when used."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module

from deedbench.engine import Benchmark, BenchmarkError

__all__ = ["BENCHMARKS", "benchmark_class", "load_benchmark"]

BENCHMARKS = {
    "tac": ("deedbench.benchmarks.tac", "TacBenchmark"),
    "retail": ("deedbench.benchmarks.retail.benchmark", "RetailBenchmark"),
    "taubench-retail": ("deedbench.benchmarks.taubench.retail", "TaubenchRetailBenchmark"),
    "taubench-airline": ("deedbench.benchmarks.taubench.airline", "TaubenchAirlineBenchmark"),
}


def benchmark_class(name: str) -> type[Benchmark]:
    if name not in BENCHMARKS:
        raise BenchmarkError(
            f"unknown benchmark {name!r}. Valid benchmarks: {', '.join(sorted(BENCHMARKS))}"
        )
    module, attribute = BENCHMARKS[name]
    cls: type[Benchmark] = getattr(import_module(module), attribute)
    return cls


def load_benchmark(name: str, options: Mapping[str, str] | None = None) -> Benchmark:
    """The benchmark called `name`, built with its options."""
    return benchmark_class(name)(options)
