"""Checking service-desk tasks before they ship (`deedbench validate retail`).

For each task: its gold actions replay without errors; a task that needs a change
reaches a state other than the untouched world; the oracle, with the scripted
customer, passes every check (outcome, outputs and every procedure rule); the
idle agent fails every task that needs a change.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from deedbench.benchmarks.retail.benchmark import RetailBenchmark
from deedbench.benchmarks.retail.replay import GoldError, replay
from deedbench.benchmarks.retail.tasks import RetailTask
from deedbench.benchmarks.retail.world import RetailWorld
from deedbench.engine import Agent, AgentContext, Sample, run_episode
from deedbench.scoring import Score
from deedbench.scoring.state import worlds_equal_canonical

__all__ = ["TaskCheck", "check_task", "run_baseline", "validate_benchmark"]


class TaskCheck(BaseModel):
    """One task's verdict, and every reason it fails."""

    task: str
    template: str
    gold_errors: list[GoldError]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def run_baseline(bench: RetailBenchmark, task: RetailTask, name: str) -> Score:
    """One episode of a named baseline with the scripted customer, scored."""
    return _episode(bench, task, bench.baselines()[name]())


def _episode(bench: RetailBenchmark, task: RetailTask, agent: Agent) -> Score:
    sample = Sample(id=task.id, input="", metadata={})
    setup = bench.setup(sample, "default", 0)
    transcript = asyncio.run(run_episode(agent, setup, AgentContext(task.id, "default", 1, 0)))
    return bench.score(sample, transcript)


def check_task(bench: RetailBenchmark, task: RetailTask) -> TaskCheck:
    problems: list[str] = []
    domain = bench.domain
    gold, errors = replay(bench.base, task.actions, domain.tools)
    problems += [f"gold action #{e.index} {e.name} fails: {e.error}" for e in errors]
    untouched = RetailWorld(bench.base)
    if task.writes and worlds_equal_canonical(gold, untouched, domain.unordered):
        problems.append("the gold actions change nothing")
    oracle = run_baseline(bench, task, "oracle")
    if oracle.values["reward_verified"] != 1.0 or oracle.values["reward_tau"] != 1.0:
        reasons = "; ".join(f"{e.rule}: {e.excerpt}" for e in oracle.evidence) or oracle.outcome
        problems.append(f"the oracle does not pass: {reasons}")
    if task.writes:
        idle = run_baseline(bench, task, "idle")
        if idle.values["reward_tau"] or idle.values["reward_verified"]:
            problems.append("the idle agent passes a task that needs a change")
    return TaskCheck(task=task.id, template=task.template, gold_errors=errors, problems=problems)


def validate_benchmark(bench: RetailBenchmark) -> list[TaskCheck]:
    return [check_task(bench, task) for task in bench.tasks.values()]
