"""Trajectories built from a task's gold actions, right and wrong, for scoring both ways.

Each case is what `reference_driver.py` reads: τ²'s messages without tool results
(each side computes its own), the termination reason, and the judge's scripted
verdicts. `trajectory` turns a case into deedbench's messages, the tool results
computed by deedbench's environment, for deedbench's evaluator.

Variants of one task: the gold trajectory; one write dropped; the actions
reversed; extra calls (a read, a repeated write); an argument dropped from one
call (malformed); a tool nobody has; the user's actions made by the agent, or
left out; stopped halfway by the agent; ended by max steps; the required
information left unsaid, or said with commas; the judge saying no.
"""

from __future__ import annotations

import random
from typing import Any

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.tasks import GoldAction, Tau2Task
from deedbench.records import Message, ToolCall

GREETING = "Hi! How can I help you today?"

__all__ = ["GREETING", "trajectory", "variants"]


def _call_message(action: GoldAction, number: int, requestor: str | None = None) -> dict[str, Any]:
    role = requestor or action.requestor
    return {
        "role": role,
        "content": None,
        "tool_calls": [
            {"id": f"call_{number}", "name": action.name, "arguments": dict(action.arguments)}
        ],
    }


def _conversation(
    task: Tau2Task,
    actions: list[GoldAction],
    *,
    say: str | None,
    requestors: dict[int, str] | None = None,
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": "I need some help with my account."},
    ]
    for number, action in enumerate(actions):
        messages.append(_call_message(action, number, (requestors or {}).get(number)))
    if say is not None:
        messages.append({"role": "assistant", "content": say})
    messages.append({"role": "user", "content": "Thanks, that's all. ###STOP###"})
    return messages


def _said(task: Tau2Task, commas: bool = False) -> str:
    criteria = task.evaluation_criteria
    infos = list(criteria.communicate_info or []) if criteria is not None else []
    if commas:
        infos = [",".join(info) if len(info) < 6 else info[:3] + "," + info[3:] for info in infos]
    return "Done. " + " ".join(infos) if infos else "Done."


def variants(task: Tau2Task, seed: int = 0, solo: bool = False) -> list[dict[str, Any]]:
    """The cases built from `task` (ids ``<task>/<variant>``)."""
    rng = random.Random(f"{seed}/{task.id}")
    gold = task.gold
    criteria = task.evaluation_criteria
    n_nl = len(criteria.nl_assertions or []) if criteria is not None else 0
    said = _said(task)
    built: dict[str, dict[str, Any]] = {}

    def add(name: str, messages: list[dict[str, Any]], **extra: Any) -> None:
        case = {"id": f"{task.id}/{name}", "task": task.raw, "messages": messages, "solo": solo}
        case.update(extra)
        if solo:
            case["messages"] = [m for m in case["messages"] if m["role"] != "user"]
        built[name] = case

    add("gold", _conversation(task, gold, say=said))
    if n_nl:
        add("judge-says-no", _conversation(task, gold, say=said), nl=[True] * (n_nl - 1) + [False])
    writes = [i for i, a in enumerate(gold) if a.requestor == "assistant"]
    if writes:
        dropped = rng.choice(writes)
        add(
            "dropped",
            _conversation(task, [a for i, a in enumerate(gold) if i != dropped], say=said),
        )
    if len(gold) > 1:
        add("reversed", _conversation(task, gold[::-1], say=said))
        add("half", _conversation(task, gold[: len(gold) // 2], say=said), termination="agent_stop")
    if gold:
        extra = rng.choice(gold)
        add("extra", _conversation(task, [*gold, extra], say=said))
        broken = rng.randrange(len(gold))
        malformed = []
        for i, action in enumerate(gold):
            if i == broken and action.arguments:
                arguments = dict(action.arguments)
                arguments.pop(rng.choice(sorted(arguments)))
                action = action.model_copy(update={"arguments": arguments})
            malformed.append(action)
        add("malformed", _conversation(task, malformed, say=said))
        ghost = GoldAction(action_id="ghost", name="do_what_i_mean", arguments={"x": 1})
        add("hallucinated", _conversation(task, [ghost, *gold], say=said))
        add("max-steps", _conversation(task, gold, say=said), termination="max_steps")
        if rng.random() < 0.34:  # τ²'s other endings, each scored 0 before any replay
            errors = [ghost] * 10
            ending = "too_many_errors"
            add("too-many-errors", _conversation(task, errors, say=None), termination=ending)
            add("user-error", _conversation(task, gold, say=said), termination="user_error")
            add("agent-error", _conversation(task, gold[:1], say=None), termination="agent_error")
    user_side = [i for i, a in enumerate(gold) if a.requestor == "user"]
    if user_side and not solo:
        add("user-omits", _conversation(task, [a for a in gold if a.requestor != "user"], say=said))
        add(
            "agent-does-user-part",
            _conversation(task, gold, say=said, requestors={i: "assistant" for i in user_side}),
        )
    if criteria is not None and criteria.communicate_info:
        add("unsaid", _conversation(task, gold, say="Done."))
        add("commas", _conversation(task, gold, say=_said(task, commas=True)))
    return list(built.values())


def trajectory(data: Tau2Data, task: Tau2Task, case: dict[str, Any]) -> list[Message]:
    """The case as deedbench's messages, after the task's opening conversation, with the
    tool results deedbench's environment gives."""
    environment = data.start(task, bool(case.get("solo")))
    messages = task.history()
    for raw in case["messages"]:
        calls = [
            ToolCall.decoded(c["id"], c["name"], c["arguments"])
            for c in raw.get("tool_calls") or []
        ]
        messages.append(
            Message(role=raw["role"], content=raw.get("content") or "", tool_calls=calls)
        )
        requestor = "user" if raw["role"] == "user" else "assistant"
        messages.extend(environment.respond(call, requestor) for call in calls)
    return messages
