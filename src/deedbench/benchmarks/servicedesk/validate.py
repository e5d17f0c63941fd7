"""Checking a desk's tasks before they ship (`deedbench validate retail`).

For each task: its gold actions replay without errors; a task that needs a change
reaches a state other than the untouched world; the oracle, with the scripted
customer, passes every check (outcome, outputs and every procedure rule); the
idle agent fails every task that needs a change. Validation reads a desk through
`Desk`, what it needs of one, so it never imports the benchmark that calls it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from pydantic import BaseModel, Field

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.replay import FailedGoldAction, replay
from deedbench.benchmarks.servicedesk.task import DeskTask
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.engine import Agent, AgentContext, EpisodeSetup, EpisodeTranscript, run_episode
from deedbench.records import Fault, Sample, Score
from deedbench.scoring.state import worlds_equal_canonical

__all__ = ["Desk", "TaskCheck", "check_task", "run_baseline", "validate_benchmark"]


class Desk(Protocol):
    """What validation needs of a desk benchmark (`ServiceDeskBenchmark` has it)."""

    tasks: dict[str, DeskTask]

    @property
    def domain(self) -> Domain: ...

    @property
    def base(self) -> Tables: ...

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup[DeskWorld]: ...

    def score(self, sample: Sample, transcript: EpisodeTranscript[DeskWorld]) -> Score: ...

    def baselines(self) -> dict[str, Callable[[], Agent]]: ...


class TaskCheck(BaseModel):
    """One task's verdict, and every reason it fails."""

    task: str
    template: str
    gold_errors: list[FailedGoldAction]
    problems: list[str]
    notes: list[str] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    """What is wrong with the task itself (`attribution`), each a problem too."""

    @property
    def ok(self) -> bool:
        return not self.problems


def run_baseline(desk: Desk, task: DeskTask, name: str) -> Score:
    """One episode of a named baseline with the scripted customer, scored."""
    return _episode(desk, task, desk.baselines()[name]())


def _episode(desk: Desk, task: DeskTask, agent: Agent) -> Score:
    sample = Sample(id=task.id, input="", metadata={})
    setup = desk.setup(sample, "default", 0)
    transcript = asyncio.run(run_episode(agent, setup, AgentContext(task.id, "default", 1, 0)))
    return desk.score(sample, transcript)


def check_task(desk: Desk, task: DeskTask) -> TaskCheck:
    problems: list[str] = []
    domain = desk.domain
    gold, errors = replay(desk.base, task.actions, domain.agent_tools)
    problems += [f"gold action #{e.index} {e.name} fails: {e.error}" for e in errors]
    untouched = DeskWorld(desk.base)
    if task.writes and worlds_equal_canonical(gold, untouched, domain.unordered):
        problems.append("the gold actions change nothing")
    oracle = run_baseline(desk, task, "oracle")
    found = oracle.attribution.faults if oracle.attribution else []
    faults = [f for f in found if f.party == "task" and not f.cause]  # the task's own
    problems += [f"{f.kind}: {f.excerpt}" for f in faults if f.kind != "task.gold_raises"]
    if oracle.values["reward_verified"] != 1.0 or oracle.values["reward_tau"] != 1.0:
        reasons = "; ".join(f"{e.rule}: {e.excerpt}" for e in oracle.evidence) or oracle.outcome
        problems.append(f"the oracle does not pass: {reasons}")
    if task.writes:
        idle = run_baseline(desk, task, "idle")
        if idle.values["reward_tau"] or idle.values["reward_verified"]:
            problems.append("the idle agent passes a task that needs a change")
    return TaskCheck(
        task=task.id, template=task.template, gold_errors=errors, problems=problems, faults=faults
    )


def validate_benchmark(desk: Desk) -> list[TaskCheck]:
    return [check_task(desk, task) for task in desk.tasks.values()]
