"""TAC, Travel Agent Compassion (see ``benchmark.py``)."""

from deedbench.benchmarks.tac.benchmark import TacBenchmark

__all__ = ["TacBenchmark"]
