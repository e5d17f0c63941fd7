"""`tau2-banking`: τ³'s banking_knowledge tasks (97), a bank with a knowledge base.

``-T retrieval=VARIANT`` chooses how the agent searches the knowledge base, as τ²'s
retrieval variants do; ``bm25`` (default) and the others that need no network are
offered, and the run records the one used (its options). τ²'s own default embeds the
knowledge base through a paid API when the environment is built; those variants
say so and are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.tau2.banking.domain import BankingDomain, banking_domain
from deedbench.benchmarks.tau2.banking.retrieval import (
    DEFAULT_RETRIEVAL_VARIANT,
    RETRIEVAL_VARIANTS,
)
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark, tau2_options
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.engine import Option

__all__ = ["Tau2BankingBenchmark"]


class Tau2BankingBenchmark(Tau2Benchmark):
    name = "tau2-banking"
    description = (
        "τ³-bench banking_knowledge: a bank whose procedures are in a knowledge base the "
        "agent searches; discoverable tools; τ²'s reward and procedure"
    )
    option_specs: ClassVar[tuple[Option, ...]] = tau2_options(
        Option(
            "retrieval",
            f"how the agent searches the knowledge base: {', '.join(RETRIEVAL_VARIANTS)} "
            f"(default {DEFAULT_RETRIEVAL_VARIANT}); τ²'s embedding variants need a paid API "
            "and are not offered",
            default=DEFAULT_RETRIEVAL_VARIANT,
            choices=RETRIEVAL_VARIANTS,
        ),
        splits=("base",),
    )

    @property
    def domain(self) -> BankingDomain:
        return banking_domain(self.values["retrieval"])

    def policy_text(self, folder: Path) -> str:
        return self.domain.policy(folder)

    def task_policy(self, task: Tau2Task) -> str:
        return self.domain.policy(self.folder, task)
