"""Rescoring τ-bench result files: τ-bench's reward reproduced, procedure verdicts added.

Each record (`task_id`, `trial`, `reward`, `info.reward_info`, `traj`) is replayed:
the trajectory's tool calls run in order on a fresh world; the gold world comes from
the task's gold actions (`info.task.actions`); `r_actions` is hash equality,
`r_outputs` τ-bench's substring rule over the agent's replies. Each recomputed
component is checked against the recorded one, and the transcript goes through
deedbench's procedure rules and canonical outcome.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from deedbench.benchmarks.retail.domain import Domain
from deedbench.benchmarks.retail.replay import replay
from deedbench.benchmarks.retail.tasks import Action
from deedbench.benchmarks.retail.world import RetailWorld
from deedbench.engine import BenchmarkError, Message, ToolBox, ToolCall
from deedbench.scoring.outputs import outputs_compat
from deedbench.scoring.state import worlds_equal_canonical, worlds_equal_tau

__all__ = ["RecordVerdict", "RescoreReport", "merged_folder", "rescore_file"]


class RecordVerdict(BaseModel):
    task_id: int
    trial: int
    recorded_reward: float
    r_actions: float | None
    r_outputs: float | None
    recorded_r_actions: float | None
    recorded_r_outputs: float | None
    reproduced: bool
    reward_tau: float
    outcome_canonical: float
    violations: list[str]


class RescoreReport(BaseModel):
    """`rules` counts passing trajectories (reward 1) that broke each rule at least once."""

    records: int
    reproduced: int
    passing: int
    passing_with_violations: int
    rules: dict[str, int]
    verdicts: list[RecordVerdict]


def _messages(traj: Iterable[dict[str, Any]]) -> list[Message]:
    """τ-bench's OpenAI-format trajectory as deedbench messages."""
    out = []
    for m in traj:
        role = m.get("role")
        content = m.get("content") or ""
        if role == "assistant":
            calls = [
                ToolCall(
                    id=c.get("id") or f"call_{n}",
                    name=(c.get("function") or {}).get("name", ""),
                    arguments=(c.get("function") or {}).get("arguments") or "{}",
                )
                for n, c in enumerate(m.get("tool_calls") or [])
            ]
            out.append(Message(role="assistant", content=content, tool_calls=calls))
        elif role == "tool":
            out.append(
                Message(
                    role="tool",
                    content=content,
                    tool_call_id=m.get("tool_call_id"),
                    tool_name=m.get("name"),
                    error=content.startswith("Error"),
                )
            )
        elif role in ("user", "system"):
            out.append(Message(role=role, content=content))
    return out


def _replay_calls(base: dict[str, Any], messages: Sequence[Message], domain: Domain) -> RetailWorld:
    world = domain.world_class(base)
    box = ToolBox(domain.tools, world)
    for message in messages:
        for call in message.tool_calls:
            if call.name in box.tools:
                box.call(call)
    return world


def rescore_file(path: Path, directories: Sequence[Path], domain: Domain) -> RescoreReport:
    """`directories` are searched in order for each data file (τ-bench's older users
    file in one folder, the unchanged flights and reservations in another)."""
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read a τ-bench result file: {exc}") from None
    if not isinstance(records, list):
        raise BenchmarkError(f"{path}: expected a JSON list of result records")
    with tempfile.TemporaryDirectory(prefix="deedbench-data-") as scratch:
        base = domain.load(merged_folder(directories, Path(scratch)))
    verdicts = []
    for number, record in enumerate(records):
        try:
            verdicts.append(_rescore(record, base, domain))
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchmarkError(f"{path}: record {number}: malformed ({exc})") from None
    passing = [v for v in verdicts if v.recorded_reward == 1.0]
    broke = [v for v in passing if v.violations]
    rules = Counter(
        rule for verdict in broke for rule in {v.split(":")[0] for v in verdict.violations}
    )
    return RescoreReport(
        records=len(verdicts),
        reproduced=sum(v.reproduced for v in verdicts),
        passing=len(passing),
        passing_with_violations=len(broke),
        rules=dict(rules.most_common()),
        verdicts=verdicts,
    )


def _rescore(record: dict[str, Any], base: dict[str, Any], domain: Domain) -> RecordVerdict:
    info = record["info"]
    task = info["task"]
    reward_info = info.get("reward_info") or {}
    recorded = reward_info.get("info") or {}  # τ-bench keeps r_actions / r_outputs one level down
    actions = [Action.model_validate(a) for a in task.get("actions", [])]
    messages = _messages(record["traj"])
    final = _replay_calls(base, messages, domain)
    gold, _ = replay(base, actions, domain.tools, domain.world_class)
    replies = [m.content for m in messages if m.role == "assistant" and m.content]
    outputs = task.get("outputs") or []
    r_actions = float(worlds_equal_tau(final, gold))
    r_outputs = float(outputs_compat(outputs, replies)) if outputs else None
    recorded_actions = recorded.get("r_actions")
    recorded_outputs = recorded.get("r_outputs")
    reproduced = (recorded_actions is None or float(recorded_actions) == r_actions) and (
        recorded_outputs is None or float(recorded_outputs) == r_outputs
    )
    reward = r_actions if recorded_actions is not None else 1.0
    reward *= r_outputs if recorded_outputs is not None and r_outputs is not None else 1.0
    found = domain.violations(messages, base)
    violations = [str(v) for v in found]
    return RecordVerdict(
        task_id=int(record["task_id"]),
        trial=int(record.get("trial", 0)),
        recorded_reward=float(record["reward"]),
        r_actions=r_actions,
        r_outputs=r_outputs,
        recorded_r_actions=recorded_actions,
        recorded_r_outputs=recorded_outputs,
        reproduced=reproduced,
        reward_tau=reward,
        outcome_canonical=float(worlds_equal_canonical(final, gold, domain.unordered)),
        violations=violations,
    )


def merged_folder(directories: Sequence[Path], merged: Path) -> Path:
    """A folder holding, for each file name, the first of `directories` that has it
    (links made in `merged`, a scratch folder the caller removes)."""
    if len(directories) == 1:
        return directories[0]
    for directory in directories:
        for file in directory.glob("*"):
            if not (merged / file.name).exists():
                (merged / file.name).symlink_to(file.resolve())
    return merged
