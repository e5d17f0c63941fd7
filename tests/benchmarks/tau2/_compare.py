"""The same trajectories through deedbench and through τ², call by call.

A case is a task and the messages of a trajectory without tool results (each side
computes its own); `deedbench_calls` runs the calls on deedbench's environment
and gives, like τ²'s driver (`_reference.evaluate`), each call's result, whether
it failed and both databases' hashes after it. `differences` lists every place
the two disagree.
"""

from __future__ import annotations

from typing import Any

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.environment import db_hash
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.records import ToolCall


def deedbench_calls(data: Tau2Data, case: dict[str, Any]) -> dict[str, Any]:
    task = Tau2Task.model_validate(case["task"])
    task.raw = case["task"]
    env = data.start(task, bool(case.get("solo")))
    mode = case.get("hashes", "every")  # "every", "end", or the tools to hash after

    def hashes() -> dict[str, Any]:
        user = env.user_world
        return {"agent": db_hash(env.agent_world), "user": db_hash(user) if user else None}

    out: dict[str, Any] = {"id": case["id"], "start": hashes(), "calls": []}
    for message in case["messages"]:
        requestor = "user" if message["role"] == "user" else "assistant"
        for raw in message.get("tool_calls") or []:
            call = ToolCall.decoded(raw["id"], raw["name"], raw["arguments"])
            answer = env.respond(call, requestor)
            row: dict[str, Any] = {"content": answer.content, "error": answer.error}
            if mode == "every" or (isinstance(mode, list) and call.name in mode):
                row.update(hashes())
            out["calls"].append(row)
    out["end"] = hashes()
    return out


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """Every disagreement between deedbench's and τ²'s run of one case."""
    if "crash" in theirs:
        return [f"τ² could not run case {theirs['id']}: {theirs['crash']}"]
    found = []
    for what in ("start", "end"):
        if ours[what] != theirs[what]:
            found.append(f"{what} hashes: deedbench {ours[what]} τ² {theirs[what]}")
    if len(ours["calls"]) != len(theirs["calls"]):
        found.append(f"{len(ours['calls'])} calls against τ²'s {len(theirs['calls'])}")
    for number, (mine, other) in enumerate(zip(ours["calls"], theirs["calls"], strict=False)):
        for key in other:
            if mine.get(key) != other[key]:
                found.append(f"call #{number} {key}: deedbench {mine.get(key)!r} τ² {other[key]!r}")
    return found
