"""Labelled cases for failure attribution: episodes of the retail desk with faults injected
into the simulated customer or into the task, and clean controls.

Each case runs a whole episode offline (the oracle agent, or the idle one for an agent's
own failure) and carries the fault kind injected into it (`Case.injected`). These labels
are the attribution's authors' own: a regression check of its behaviour, not a measure of
it (`bench/attribution.py` measures it on labels it did not write). `Case.found` holds
the user's and the task's faults the failure was put down to (its causes), and
`Case.seen` every user or task fault found, a cause or not. Used by
tests/benchmarks/servicedesk/test_attribution.py.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deedbench.benchmarks.retail import RetailBenchmark
from deedbench.benchmarks.servicedesk import Action, DeskTask, ScriptedUser
from deedbench.engine import AgentContext, run_episode
from deedbench.records import Attribution, Message


class _Stopper(ScriptedUser):
    """Ends the conversation at the agent's first proposal of a change (its question)."""

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        last = next((m for m in reversed(messages) if m.role == "assistant"), None)
        if last is not None and "?" in last.content and _proposes(last):
            return None
        return await super().reply(messages)


class _Inventor(ScriptedUser):
    """Opens with an order id that neither its instruction nor anyone gave it."""

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        found = await super().reply(messages)
        if found is not None and not any(m.role == "user" for m in messages):
            found = found.model_copy(
                update={"content": f"{found.content} my order number is #W0000001."}
            )
        return found


class _Refuser(ScriptedUser):
    """Says no to every proposal of a change, the changes it asked for included."""

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        found = await super().reply(messages)
        if found is not None and found.content.startswith("yes, please go ahead"):
            return found.model_copy(update={"content": "no, please don't do that."})
        return found


def _proposes(message: Message) -> bool:
    return (
        re.search(r"\b(?:shall i|proceed|confirm|go ahead)\b", message.content.lower()) is not None
    )


USERS: dict[str, tuple[type[ScriptedUser], str]] = {
    "early_stop": (_Stopper, "user.early_stop"),
    "invented_detail": (_Inventor, "user.invented_detail"),
    "refused_wanted": (_Refuser, "user.refused_wanted"),
}


def _raising(task: DeskTask) -> DeskTask:
    extra = Action(name="cancel_pending_order", kwargs={"order_id": "#W0000000", "reason": "x"})
    return task.model_copy(update={"id": f"{task.id}+raises", "actions": [*task.actions, extra]})


def _unsupported(task: DeskTask) -> DeskTask:
    outputs = [*task.outputs, "PURPLE-ELEPHANT-42"]
    return task.model_copy(update={"id": f"{task.id}+output", "outputs": outputs})


TASKS: dict[str, tuple[Callable[[DeskTask], DeskTask], str]] = {
    "gold_raises": (_raising, "task.gold_raises"),
    "output_unsupported": (_unsupported, "task.output_unsupported"),
}


@dataclass
class Case:
    """One labelled episode and what attribution found in it."""

    name: str
    task: str
    injected: set[str]
    found: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)
    party: str | None = None
    attribution: Attribution | None = None


def cases(tasks: int = 6) -> list[Case]:
    """For each of the first `tasks` built-in tasks that write: the clean oracle and the idle
    agent (controls), each injected user, each injected task fault (oracle agent)."""
    base = RetailBenchmark()
    chosen = [t for t in base.tasks.values() if t.writes][:tasks]
    made: list[Case] = []
    for task in chosen:
        made.append(_run(base, task, "oracle", None, "clean", set()))
        made.append(_run(base, task, "idle", None, "idle agent", set()))
        for name, (user, kind) in USERS.items():
            made.append(_run(base, task, "oracle", user, name, {kind}))
        for name, (change, kind) in TASKS.items():
            made.append(_run(base, change(task), "oracle", None, name, {kind}))
    return made


def _run(
    base: RetailBenchmark,
    task: DeskTask,
    agent: str,
    user: type[ScriptedUser] | None,
    name: str,
    injected: set[str],
) -> Case:
    bench = base if task.id in base.tasks else RetailBenchmark(tasks=[task])
    sample = next(s for s in bench.samples() if s.id == task.id)
    setup = bench.setup(sample, "default", 0)
    if user is not None:
        setup.user = user(task.instructions, bench.domain)
    context = AgentContext(sample.id, "default", 1, 0)
    transcript = asyncio.run(run_episode(bench.baselines()[agent](), setup, context))
    score = bench.score(sample, transcript)
    attribution = score.attribution
    assert attribution is not None
    found = {f.kind for f in attribution.faults if f.cause and f.party in ("user", "task")}
    seen = {f.kind for f in attribution.faults if f.party in ("user", "task")}
    return Case(name, task.id, injected, found, seen, attribution.party, attribution)
