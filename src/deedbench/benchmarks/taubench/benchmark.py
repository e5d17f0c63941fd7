"""τ-bench's own tasks on deedbench's engine, for any of its domains (`--data DIR`).

The world, tools, scoring and baselines are the desk's over the domain; only the
data comes from DIR: the domain's tables, tasks and policy, in a tau-bench clone as
its users have it or a converted copy (`layout`). reward_tau reproduces τ-bench's
reward exactly; the procedure verdicts and the canonical outcome are deedbench's
additions. One
module per benchmark (`retail.py`, `airline.py`) names it and sets its domain.

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

from pydantic import BaseModel, Field

from deedbench.benchmarks.servicedesk import (
    DeskTask,
    DeskWorld,
    FailedGoldAction,
    ServiceDeskBenchmark,
    Tables,
    TauToolBox,
    replay_transcript,
)
from deedbench.benchmarks.servicedesk.benchmark import USER_OPTION
from deedbench.benchmarks.taubench.layout import LAYOUTS, TaubenchFiles, locate
from deedbench.benchmarks.taubench.tasks import load_taubench_tasks, parse_selection
from deedbench.engine import Option, ToolBox
from deedbench.errors import BenchmarkError
from deedbench.files import read_text
from deedbench.records import Fault
from deedbench.scoring.procedure import (
    AFTER_TRANSFER,
    AUTHENTICATION,
    ONE_CHANGE_PER_ORDER,
    ONE_USER,
    check_procedure,
)
from deedbench.scoring.state import tau_hash

__all__ = [
    "GOLD_RULES",
    "LOOPS",
    "OPTIONS",
    "TaubenchBenchmark",
    "TaubenchTaskCheck",
]

GOLD_RULES = (AUTHENTICATION, ONE_USER, ONE_CHANGE_PER_ORDER, AFTER_TRANSFER)
LOOPS = ("taubench", "deedbench")
OPTIONS = (
    Option("split", "which tasks file: test (default), dev, train", default="test"),
    Option("tasks", "which task indexes, e.g. 0,5,9-12", parse=parse_selection),
    USER_OPTION,
    Option(
        "loop",
        "taubench (default): a turn's first tool call runs, no tool-error limit, as "
        "τ-bench's agent; deedbench: every call runs, 10 failed calls in a row end it",
        default=LOOPS[0],
        choices=LOOPS,
    ),
)
"""The options every τ-bench benchmark takes besides ``data``, which names its domain's files."""


class TaubenchTaskCheck(BaseModel):
    """`deedbench validate taubench-retail --json`: one object per task."""

    index: int
    task: str
    gold_hash_tau: str
    gold_errors: list[FailedGoldAction]
    violations: list[str]
    problems: list[str]
    notes: list[str] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    """What is wrong with the task itself (`servicedesk.attribution`), each a problem too."""


class TaubenchBenchmark(ServiceDeskBenchmark):
    """τ-bench's tasks over `domain`; a subclass sets `name`, `description`, `domain` and
    `option_specs` (``data`` and `OPTIONS`)."""

    data_option = "data"
    opening_stops = False  # τ-bench's agent answers the opening message whatever it says

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.taubench_loop = self.values["loop"] == "taubench"
        self.max_tool_errors = None if self.taubench_loop else 10

    def toolbox(self, world: DeskWorld) -> ToolBox[DeskWorld]:
        return TauToolBox(self.domain.agent_tools, world, taubench_loop=self.taubench_loop)

    @cached_property
    def files(self) -> TaubenchFiles:
        """Where `--data` keeps the domain's tables, tasks and policy (`layout.LAYOUTS`)."""
        if self.values["data"] is None:
            raise BenchmarkError(f"{self.name} needs --data DIR: " + "; ".join(LAYOUTS))
        path: Path = self.values["data"]
        return locate(path, self.domain.name)

    def load_base(self) -> Tables:
        return self.domain.load(self.files.tables)

    def load_tasks(self) -> list[DeskTask]:
        return load_taubench_tasks(
            self.files,
            self.values["split"],
            self.base["users"],
            self.values["tasks"],
            self.domain,
        )

    def load_policy(self) -> str:
        if self.files.policy is None:
            raise BenchmarkError(
                f"{self.files.tables}: no policy.md (or wiki.md) with the policy text"
            )
        return read_text(self.files.policy)

    def validate(self) -> list[TaubenchTaskCheck]:  # type: ignore[override]
        """Gold actions that fail, and gold action lists that break a procedure rule
        that needs no dialogue (identification first, one customer, one change per
        order, nothing after a hand-off); consent needs a conversation, which gold
        action lists do not have."""
        domain = self.domain
        applies = domain.procedure.rules
        rules = [r for r in GOLD_RULES if applies is None or r in applies]
        checks = []
        for task in self.tasks.values():
            tools = domain.agent_tools
            gold, errors, transcript = replay_transcript(self.base, task.actions, tools)
            found = check_procedure(transcript, domain.procedure_spec, rules=rules)
            if domain.policy_check is not None:  # the domain's own rules need no dialogue
                found += domain.policy_check(transcript, DeskWorld(self.base))
            violations = [str(v) for v in found]
            problems = [f"gold action #{e.index} {e.name}: {e.error}" for e in errors]
            faults = self.scorer.attribution.task_faults(task)
            listed = ("task.gold_raises", "task.gold_breaks_policy")  # errors and violations
            problems += [f"{f.kind}: {f.excerpt}" for f in faults if f.kind not in listed]
            checks.append(
                TaubenchTaskCheck(
                    index=int(task.id.removeprefix("task-")),
                    task=task.id,
                    gold_hash_tau=tau_hash(gold),
                    gold_errors=errors,
                    violations=violations,
                    problems=problems + violations,
                    faults=faults,
                )
            )
        return checks
