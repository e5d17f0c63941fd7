"""τ-bench's own retail tasks on deedbench's engine (`deedbench run taubench-retail --data DIR`).

The world, tools, scoring and baselines are the retail benchmark's; only the data
comes from DIR: users.json, orders.json, products.json, tasks_<split>.json and the
policy (policy.md or wiki.md). reward_tau reproduces τ-bench's reward exactly; the
procedure verdicts and the canonical outcome are deedbench's additions.

An episode runs as τ-bench's tool-calling agent runs one (`TauToolBox`): tools take
whatever arguments the model sent, only a turn's first tool call runs, there is no
limit on tool errors, and an action τ-bench's run could not carry out ends the
episode. The option ``loop=deedbench`` runs every call of a turn and ends an
episode after 10 failed calls in a row, as deedbench's own desk does; the tools
and reward_tau stay τ-bench's.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from deedbench.benchmarks.retail.benchmark import RetailBenchmark
from deedbench.benchmarks.retail.replay import GoldError, replay_transcript
from deedbench.benchmarks.retail.tasks import RetailTask
from deedbench.benchmarks.retail.tau_toolbox import TauToolBox
from deedbench.benchmarks.retail.world import RetailWorld
from deedbench.benchmarks.taubench.domains import AIRLINE
from deedbench.benchmarks.taubench.tasks import load_taubench_tasks, parse_selection
from deedbench.engine import BenchmarkError, ToolBox
from deedbench.scoring.procedure import (
    AFTER_TRANSFER,
    AUTHENTICATION,
    ONE_CHANGE_PER_ORDER,
    ONE_USER,
    check_procedure,
)
from deedbench.scoring.state import tau_hash

__all__ = ["TaubenchAirlineBenchmark", "TaubenchRetailBenchmark", "TaubenchTaskCheck"]

GOLD_RULES = (AUTHENTICATION, ONE_USER, ONE_CHANGE_PER_ORDER, AFTER_TRANSFER)
LOOPS = ("taubench", "deedbench")


class TaubenchTaskCheck(BaseModel):
    """`deedbench validate taubench-retail --json`: one object per task."""

    index: int
    task: str
    gold_hash_tau: str
    gold_errors: list[GoldError]
    violations: list[str]
    problems: list[str]


class TaubenchRetailBenchmark(RetailBenchmark):
    name = "taubench-retail"
    description = "τ-bench's retail tasks (--data DIR), τ-bench's reward plus procedure verdicts"
    data_option = "data"
    option_help: ClassVar[dict[str, str]] = {
        "data": "a τ-bench retail folder: users/orders/products, tasks_<split>.json, policy",
        "split": "which tasks file: test (default), dev, train",
        "tasks": "which task indexes, e.g. 0,5,9-12",
        "user": "the simulated customer: scripted (default) or llm:AGENT-SPEC",
        "loop": "taubench (default): a turn's first tool call runs, no tool-error limit, "
        "as τ-bench's agent; deedbench: every call runs, 10 failed calls in a row end it",
    }

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        loop = self.options.get("loop", "taubench")
        if loop not in LOOPS:
            raise BenchmarkError(
                f"{self.name} option loop must be one of {', '.join(LOOPS)}; got {loop!r}"
            )
        self.taubench_loop = loop == "taubench"
        self.max_tool_errors = None if self.taubench_loop else 10

    def toolbox(self, world: RetailWorld) -> ToolBox:
        return TauToolBox(self.domain.tools, world, taubench_loop=self.taubench_loop)

    @property
    def directory(self) -> Path:
        if "data" not in self.options:
            raise BenchmarkError(f"{self.name} needs --data DIR (a τ-bench retail data folder)")
        return Path(self.options["data"])

    @cached_property
    def base(self) -> dict[str, Any]:
        return self.domain.load(self.directory)

    def load_tasks(self) -> list[RetailTask]:
        selection = self.options.get("tasks")
        return load_taubench_tasks(
            self.directory,
            self.options.get("split", "test"),
            self.base["users"],
            parse_selection(selection) if selection else None,
            frozenset(self.domain.procedure.write_tools),
        )

    def load_policy(self) -> str:
        for name in ("policy.md", "wiki.md"):
            path = self.directory / name
            if path.exists():
                return path.read_text(encoding="utf-8")
        raise BenchmarkError(f"{self.directory}: no policy.md (or wiki.md) with the policy text")

    def validate(self) -> list[TaubenchTaskCheck]:  # type: ignore[override]
        """Gold actions that fail, and gold action lists that break a procedure rule
        that needs no dialogue (identification first, one customer, one change per
        order, nothing after a hand-off); consent needs a conversation, which gold
        action lists do not have."""
        domain = self.domain
        rules = [
            r for r in GOLD_RULES if domain.procedure_rules is None or r in domain.procedure_rules
        ]
        checks = []
        for task in self.tasks.values():
            gold, errors, transcript = replay_transcript(self.base, task.actions, domain.tools)
            found = check_procedure(transcript, domain.procedure, rules=rules)
            if domain.policy_check is not None:  # the domain's own rules need no dialogue
                found += domain.policy_check(transcript, self.base)
            violations = [str(v) for v in found]
            problems = [f"gold action #{e.index} {e.name}: {e.error}" for e in errors]
            checks.append(
                TaubenchTaskCheck(
                    index=int(task.id.removeprefix("task-")),
                    task=task.id,
                    gold_hash_tau=tau_hash(gold.snapshot()),
                    gold_errors=errors,
                    violations=violations,
                    problems=problems + violations,
                )
            )
        return checks


class TaubenchAirlineBenchmark(TaubenchRetailBenchmark):
    """τ-bench's airline tasks: the same machinery over the airline domain."""

    name = "taubench-airline"
    description = "τ-bench's airline tasks (--data DIR), τ-bench's reward plus policy verdicts"
    option_help: ClassVar[dict[str, str]] = {
        **TaubenchRetailBenchmark.option_help,
        "data": "a τ-bench airline folder: users/flights/reservations, tasks_<split>.json, policy",
    }

    domain = AIRLINE
