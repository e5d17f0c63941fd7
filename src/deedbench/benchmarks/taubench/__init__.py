"""τ-bench compatibility: τ-bench's own tasks and data on deedbench's engine.

`tasks.py` loads τ-bench's tasks for any domain, `benchmark.py` runs them on the
desk (`TaubenchBenchmark`), one module per benchmark names it over its domain
(`retail.py`, `airline.py`), and `rescore.py` replays and rescores τ-bench's
result files.
"""

from deedbench.benchmarks.taubench.airline import TaubenchAirlineBenchmark
from deedbench.benchmarks.taubench.benchmark import TaubenchBenchmark, TaubenchTaskCheck
from deedbench.benchmarks.taubench.rescore import (
    RecordVerdict,
    RescoreReport,
    domain_for,
    rescore_file,
)
from deedbench.benchmarks.taubench.retail import TaubenchRetailBenchmark

__all__ = [
    "RecordVerdict",
    "RescoreReport",
    "TaubenchAirlineBenchmark",
    "TaubenchBenchmark",
    "TaubenchRetailBenchmark",
    "TaubenchTaskCheck",
    "domain_for",
    "rescore_file",
]
