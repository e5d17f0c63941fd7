"""`deedbench validate tau2-<domain>`: every task's gold trajectory, scored by τ²'s rules.

For each task, the gold actions are played as a conversation (each by its requestor,
the required information said, the customer's stop) and scored by the evaluator.
A task passes when that gold trajectory scores 1. Gold actions that raise are
listed as problems: τ²'s evaluator skips them, so the task may still score 1 (τ²
issue #499: retail has 18 in 15 tasks, task 105's only action among them), but
whatever they were meant to change is not in the expected database. A task judged
on NL assertions is noted as needing a judge (its verdicts are taken as met here).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.evaluator import evaluate
from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.records import Fault, Message, ToolCall

__all__ = [
    "Tau2TaskCheck",
    "gold_conversation",
    "validate_tasks",
]


def __getattr__(name: str) -> str:
    """``GREETING`` used to hold τ²'s greeting: it is read from the user's τ² source now
    (`Tau2Prompts.greeting`); this gives deedbench's own wording."""
    if name == "GREETING":
        warnings.warn(
            "deedbench.benchmarks.tau2.validate.GREETING is deprecated and holds deedbench's "
            "own wording: τ²'s is read from the user's τ² source "
            "(Tau2Benchmark.texts.prompts.greeting)",
            DeprecationWarning,
            stacklevel=2,
        )
        return OWN_PROMPTS.greeting
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Tau2TaskCheck(BaseModel):
    """`deedbench validate tau2-<domain> --json`: one object per task."""

    task: str
    reward: float | None
    reward_breakdown: dict[str, float] = Field(default_factory=dict)
    raising_gold_actions: list[str] = Field(default_factory=list)
    needs_judge: bool = False
    problems: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    """What is wrong with the task itself (`tau2.attribution`), each a problem too."""


def gold_conversation(
    data: Tau2Data, task: Tau2Task, solo: bool = False, greeting: str = OWN_PROMPTS.greeting
) -> list[Message]:
    """The task's gold actions as a finished conversation, tool results included."""
    environment = data.start(task, solo)
    messages = task.history()
    if not messages and not solo:
        messages = [
            Message(role="assistant", content=greeting),
            Message(role="user", content="I need some help."),
        ]
    for number, action in enumerate(task.gold):
        role = "assistant" if solo else action.requestor
        call = ToolCall.decoded(f"gold_{number}", action.name, dict(action.arguments))
        messages.append(Message(role=role, content="", tool_calls=[call]))
        messages.append(environment.respond(call, "assistant" if solo else action.requestor))
    criteria = task.evaluation_criteria
    infos = list(criteria.communicate_info or []) if criteria is not None else []
    messages.append(Message(role="assistant", content=" ".join(["Done.", *infos])))
    if not solo:
        messages.append(Message(role="user", content="Thanks. ###STOP###"))
    return messages


def _all_met(messages: Sequence[Message], assertions: list[str]) -> list[NLAssertionCheck]:
    return [NLAssertionCheck(nl_assertion=a, met=True, justification="assumed") for a in assertions]


def validate_tasks(
    data: Tau2Data,
    tasks: list[Tau2Task],
    solo: bool = False,
    faults: Callable[[Tau2Task], list[Fault]] | None = None,
) -> list[Tau2TaskCheck]:
    """Each task's check; `faults` finds what is wrong with a task itself (the problems
    it adds beside gold actions that raise and a gold trajectory scoring below 1)."""
    checks = []
    for task in tasks:
        ending = "agent_stop" if solo else "user_stop"
        try:
            found = evaluate(
                data, task, gold_conversation(data, task, solo), ending, solo=solo, judge=_all_met
            )
        except Exception as exc:  # a task τ²'s evaluator cannot score on its own gold
            checks.append(
                Tau2TaskCheck(
                    task=task.id,
                    reward=None,
                    problems=[f"the gold trajectory cannot be scored: {type(exc).__name__}: {exc}"],
                )
            )
            continue
        raising = [f"{s.name} (gold action #{s.index}): {s.error}" for s in found.skipped_gold]
        problems = [f"gold action raises, τ² skips it: {line}" for line in raising]
        if found.reward.reward < 1.0:
            failed = ", ".join(found.reward.failed_components()) or "the reward"
            problems.append(f"the gold trajectory scores {found.reward.reward:g} ({failed} fails)")
        found_faults = faults(task) if faults is not None else []
        listed = ("task.gold_raises", "task.gold_fails")  # problems already
        problems += [f"{f.kind}: {f.excerpt}" for f in found_faults if f.kind not in listed]
        notes = []
        if task.needs_judge:
            notes.append("judged on NL assertions: needs a judge (-T judge=SPEC) to be scored")
        breakdown = {str(k): v for k, v in (found.reward.reward_breakdown or {}).items()}
        checks.append(
            Tau2TaskCheck(
                task=task.id,
                reward=found.reward.reward,
                reward_breakdown=breakdown,
                raising_gold_actions=raising,
                needs_judge=task.needs_judge,
                problems=problems,
                notes=notes,
                faults=found_faults,
            )
        )
    return checks
