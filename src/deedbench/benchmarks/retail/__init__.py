"""Retail: a τ-bench-style customer-service domain, and deedbench's own retail desk.

The domain (`domain.py`, `RETAIL`): `tools.py` holds the 16 tools, faithful to
τ-bench's retail tools, `procedure.py` the policy's procedure, `world.py` the
loading of τ-bench's three tables. The benchmark (`benchmark.py`,
`deedbench run retail`) runs the domain on a world of deedbench's own
(`generate.py`) with the tasks the templates build (`templates.py`, `build.py`,
`tasks.json`) and `policy.md`.
"""

from deedbench.benchmarks.retail.benchmark import RetailBenchmark, builtin_tasks, policy_text
from deedbench.benchmarks.retail.domain import RETAIL
from deedbench.benchmarks.retail.generate import generate_world, write_world
from deedbench.benchmarks.retail.procedure import RETAIL_PROCEDURE
from deedbench.benchmarks.retail.tools import RETAIL_TOOLS
from deedbench.benchmarks.retail.world import load_retail_data

__all__ = [
    "RETAIL",
    "RETAIL_PROCEDURE",
    "RETAIL_TOOLS",
    "RetailBenchmark",
    "builtin_tasks",
    "generate_world",
    "load_retail_data",
    "policy_text",
    "write_world",
]
