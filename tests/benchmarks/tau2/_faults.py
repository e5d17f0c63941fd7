"""Cases for failure attribution on τ²'s telecom (dual control): the scripted customer with a
device fault injected, and clean controls, each a whole episode with the oracle agent.

The labels are the attribution's authors' own: a regression check of its behaviour, not a
measure of it (`bench/attribution.py` measures it on labels it did not write). `Case.found`
holds the customer's and the task's faults the failure was put down to (its causes).
Used by tests/benchmarks/tau2/test_attribution.py."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.user import ScriptedTau2User
from deedbench.engine import AgentContext, run_episode
from deedbench.records import Message, ToolCall

from . import _reference


class _Meddler(ScriptedTau2User):
    """Turns wifi on and off on its phone before anyone asked, then goes on as scripted."""

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        if not any(m.role == "user" and m.tool_calls for m in messages):
            call = ToolCall.decoded("meddle", "toggle_wifi", {})
            return Message(role="user", content="", tool_calls=[call])
        return await super().reply(messages)


class _Promiser(ScriptedTau2User):
    """Says yes to each device action asked of it and never performs one."""

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        if self.pending and self.pending[0].name in messages[-1].content:
            self.pending.pop(0)
            return Message(role="user", content="Sure, I will do that now.")
        return await super().reply(messages)


USERS: dict[str, tuple[type[ScriptedTau2User], str]] = {
    "device_unrequested": (_Meddler, "user.unrequested"),
    "device_not_done": (_Promiser, "user.action_not_done"),
}


@dataclass
class Case:
    name: str
    task: str
    injected: set[str]
    found: set[str] = field(default_factory=set)
    party: str | None = None


def cases(tasks: int = 4) -> list[Case]:
    """For each of the first `tasks` telecom tasks where the customer acts on the phone: the
    clean oracle (a control) and each injected customer."""
    bench = load_benchmark("tau2-telecom", {"data": str(_reference.TAU2)})
    assert isinstance(bench, Tau2Benchmark)
    chosen = [t for t in bench.tasks.values() if any(a.requestor == "user" for a in t.gold)]
    made = []
    for task in chosen[:tasks]:
        made.append(_run(bench, task.id, None, "clean", set()))
        for name, (user, kind) in USERS.items():
            made.append(_run(bench, task.id, user, name, {kind}))
    return made


def _run(
    bench: Tau2Benchmark,
    task_id: str,
    user: type[ScriptedTau2User] | None,
    name: str,
    injected: set[str],
) -> Case:
    sample = next(s for s in bench.samples() if s.id == task_id)
    setup = bench.setup(sample, "default", 0)
    if user is not None:
        setup.user = user(bench.tasks[task_id])
    context = AgentContext(sample.id, "default", 1, 0)
    transcript = asyncio.run(run_episode(bench.baselines()["oracle"](), setup, context))
    score = bench.score(sample, transcript)
    attribution = score.attribution
    assert attribution is not None, score.outcome
    found = {f.kind for f in attribution.faults if f.cause and f.party in ("user", "task")}
    if score.values.get("reward", 0.0) >= 1.0:
        injected = set()  # the fault failed nothing: no cause, no party
    return Case(name, task_id, injected, found, attribution.party)
