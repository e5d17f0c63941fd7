"""`tau2-telecom`: τ²'s telecom tasks, dual control (the customer operates a phone).

``-T policy=manual`` (default) or ``workflow`` chooses τ²'s tech-support policy (τ²
names the second domain ``telecom-workflow``); ``-T mode=solo`` runs the tasks with
a ticket and no customer, the agent using the phone's tools itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.tau2.benchmark import MODE_OPTION, Tau2Benchmark, tau2_options
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.benchmarks.tau2.telecom.domain import TELECOM, TELECOM_WORKFLOW
from deedbench.benchmarks.tau2.telecom.policy import policy
from deedbench.engine import Option

__all__ = [
    "POLICIES",
    "Tau2TelecomBenchmark",
]

POLICIES = ("manual", "workflow")


class Tau2TelecomBenchmark(Tau2Benchmark):
    name = "tau2-telecom"
    description = (
        "τ²-bench telecom: a customer's phone the agent can only reach through the customer "
        "(dual control); τ²'s reward and procedure"
    )
    option_specs: ClassVar[tuple[Option, ...]] = tau2_options(
        Option(
            "policy",
            "manual (default) or workflow: τ²'s tech-support policy",
            default="manual",
            choices=POLICIES,
        ),
        MODE_OPTION,
        splits=("base", "small", "train", "test", "full"),
    )

    @property
    def domain(self) -> Tau2Domain:
        return TELECOM_WORKFLOW if self.values["policy"] == "workflow" else TELECOM

    def policy_text(self, folder: Path) -> str:
        return policy(folder, self.values["policy"], self.solo)
