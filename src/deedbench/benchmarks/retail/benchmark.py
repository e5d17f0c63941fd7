"""The retail service desk (`deedbench run retail`): the desk over deedbench's own world.

The world is generated from a seed (`generate.py`), the tasks are the shipped
`tasks.json` (built by `build.py` from the templates) and the policy is
`policy.md`; everything else is the desk's (`ServiceDeskBenchmark`).
"""

from __future__ import annotations

import json
from importlib import resources

from deedbench.benchmarks.retail.domain import RETAIL
from deedbench.benchmarks.retail.generate import generate_world
from deedbench.benchmarks.servicedesk import DeskTask, ServiceDeskBenchmark, Tables

__all__ = ["WORLD_SEED", "RetailBenchmark", "builtin_tasks", "policy_text"]

WORLD_SEED = 0


def policy_text() -> str:
    return resources.files("deedbench.benchmarks.retail").joinpath("policy.md").read_text()


def builtin_tasks() -> list[DeskTask]:
    text = resources.files("deedbench.benchmarks.retail").joinpath("tasks.json").read_text()
    return [DeskTask.model_validate(t) for t in json.loads(text)]


class RetailBenchmark(ServiceDeskBenchmark):
    name = "retail"
    description = "Service desk (retail): outcome, outputs and procedure, with a simulated customer"
    domain = RETAIL

    def load_base(self) -> Tables:
        """Generated on first use: `list` needs none."""
        return generate_world(seed=WORLD_SEED)

    def load_tasks(self) -> list[DeskTask]:
        return builtin_tasks()

    def load_policy(self) -> str:
        return policy_text()
