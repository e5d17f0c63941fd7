"""Rescoring τ-bench result files: its reward recomputed and checked, procedure verdicts added.

Each record (`task_id`, `trial`, `reward`, `info`, `traj`) becomes a deedbench
transcript: the tool-calling agent's messages as they are, or, for τ-bench's
``act`` and ``react`` agents, each ``Action: {json}`` read as τ-bench's parser
reads it and each ``API output: ...`` as the tool result it was. The transcript's
turns are replayed on a fresh world through `TauToolBox` (`replay_turns`), it ends
as τ-bench's run ended (the customer's stop token after a reply, a transfer, or
neither), and the desk's own scorer gives `reward_tau` and its components, so a
rescored record and a live episode are scored by one piece of code.

`reproduced` means the recomputed reward equals the recorded reward and every
recorded component (`r_actions`, `r_outputs`) equals its recomputed value; every
record that differs is listed with what differs. τ-bench did not always check the
database of tasks with required outputs: files recorded before it did (such as
τ-bench's own gpt-4o airline results) score those tasks by their outputs alone,
and the report says how many records that older rule explains. A record whose
run crashed (``info.error``, no trajectory) is listed as crashed; a record that
cannot be read is listed as malformed; the rest of the file is rescored either way.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.retail import RETAIL
from deedbench.benchmarks.servicedesk import (
    RESPOND,
    STOP,
    TAU_ENDINGS,
    DeskScorer,
    DeskTask,
    Domain,
    Tables,
    replay_turns,
)
from deedbench.benchmarks.taubench.tasks import taubench_task
from deedbench.engine import EpisodeTranscript, TurnOutcome
from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, read_text
from deedbench.records import Attribution, Message, Termination, ToolCall

__all__ = [
    "API_OUTPUT",
    "REACT_MARKER",
    "SCORE_RULES",
    "RecordVerdict",
    "RescoreReport",
    "domain_for",
    "merged_folder",
    "rescore_file",
    "trajectory",
]

SCORE_RULES = frozenset({"outcome", "outputs", "reward_tau"})  # evidence that is no violation
REACT_MARKER = "\n#Available tools\n"  # τ-bench's act/react prompt: wiki, this, the tools
API_OUTPUT = "API output: "


class RecordVerdict(BaseModel):
    """One record, rescored. `status`: rescored, crashed (τ-bench's run failed and kept no
    trajectory) or malformed (the record cannot be read; `error` says why)."""

    index: int
    task_id: int | None
    trial: int | None
    status: Literal["rescored", "crashed", "malformed"] = "rescored"
    error: str | None = None
    recorded_reward: float | None = None
    recorded_r_actions: float | None = None
    recorded_r_outputs: float | None = None
    ended: bool | None = None  # the trajectory ended as τ-bench's runs end (stop or transfer)
    r_actions: float | None = None
    r_outputs: float | None = None  # None for a task without required outputs
    reward_tau: float | None = None  # τ-bench's current rule
    reward_older_rule: float | None = None  # a task with outputs scored by its outputs alone
    reproduced: bool = False
    differs: list[str] = Field(default_factory=list)  # "reward", "r_actions", "r_outputs"
    observations: int = 0  # recorded tool outputs compared with the recomputed ones
    observations_differ: int = 0
    outcome_canonical: float | None = None
    violations: list[str] = Field(default_factory=list)
    attribution: Attribution | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def explained_by_older_rule(self) -> bool:
        """Differs under the current rule, equals the record under the older one."""
        return (
            bool(self.differs)
            and self.differs == ["reward"]
            and self.reward_older_rule == self.recorded_reward
        )


class RescoreReport(BaseModel):
    """`rules` counts passing trajectories (reward 1) that broke each rule at least once."""

    records: int
    rescored: int
    crashed: int
    malformed: int
    reproduced: int
    output_tasks: int  # rescored records of tasks with required outputs
    older_rule: int  # differing records that τ-bench's older outputs-only rule explains
    never_ended: int  # rescored trajectories that ended without a stop or a transfer
    observations: int
    observations_differ: int
    passing: int
    passing_with_violations: int
    rules: dict[str, int]
    failures: dict[str, int] = Field(default_factory=dict)
    """The records that failed (recomputed reward 0), by whose failure each was."""
    fault_kinds: dict[str, int] = Field(default_factory=dict)
    """How many of those records each kind of fault was found in."""
    verdicts: list[RecordVerdict]

    @property
    def differing(self) -> list[RecordVerdict]:
        return [v for v in self.verdicts if v.status == "rescored" and not v.reproduced]

    def regime(self) -> str | None:
        """What the file says about the rule it was scored by, for tasks with outputs."""
        if self.older_rule:
            return (
                f"this file was scored by τ-bench's older rule, which did not check the "
                f"database of tasks with required outputs: that rule explains {self.older_rule} "
                f"of the {len(self.differing)} records that differ; reward_tau follows the "
                "current rule (database x outputs)"
            )
        if self.output_tasks:
            return (
                f"the current rule (database x outputs) and τ-bench's older one (outputs "
                f"alone) agree on all {self.output_tasks} records of tasks with required outputs"
            )
        return None


def domain_for(directories: Sequence[Path]) -> Domain:
    """τ-bench's domain whose data the folders hold, told apart by their data files."""
    if any((d / "flights.json").exists() for d in directories):
        return AIRLINE
    if any((d / "orders.json").exists() for d in directories):
        return RETAIL
    raise BenchmarkError(
        f"{', '.join(map(str, directories))}: no τ-bench retail (orders.json) or airline "
        "(flights.json) data"
    )


def rescore_file(path: Path, directories: Sequence[Path], domain: Domain) -> RescoreReport:
    """`directories` are searched in order for each data file (τ-bench's older users
    file in one folder, the unchanged flights and reservations in another)."""
    try:
        records = parse_json(read_text(path))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BenchmarkError(f"{path}: cannot read a τ-bench result file: {exc}") from None
    if not isinstance(records, list):
        raise BenchmarkError(f"{path}: expected a JSON list of result records")
    with tempfile.TemporaryDirectory(prefix="deedbench-data-") as scratch:
        base = domain.load(merged_folder(directories, Path(scratch)))
    rescorer = _Rescorer(base, domain)
    verdicts = [rescorer.verdict(number, record) for number, record in enumerate(records)]
    rescored = [v for v in verdicts if v.status == "rescored"]
    passing = [v for v in rescored if v.recorded_reward == 1.0]
    broke = [v for v in passing if v.violations]
    rules = Counter(
        rule for verdict in broke for rule in {v.split(":")[0] for v in verdict.violations}
    )
    failed = [v.attribution for v in rescored if v.reward_tau == 0.0 and v.attribution]
    failures = Counter(a.party for a in failed if a.party is not None)
    kinds = Counter(kind for a in failed for kind in {f.kind for f in a.faults})
    return RescoreReport(
        records=len(verdicts),
        rescored=len(rescored),
        crashed=sum(v.status == "crashed" for v in verdicts),
        malformed=sum(v.status == "malformed" for v in verdicts),
        reproduced=sum(v.reproduced for v in rescored),
        output_tasks=sum(v.r_outputs is not None for v in rescored),
        older_rule=sum(v.explained_by_older_rule for v in rescored),
        never_ended=sum(v.ended is False for v in rescored),
        observations=sum(v.observations for v in rescored),
        observations_differ=sum(v.observations_differ for v in rescored),
        passing=len(passing),
        passing_with_violations=len(broke),
        rules=dict(rules.most_common()),
        failures=dict(failures.most_common()),
        fault_kinds=dict(kinds.most_common()),
        verdicts=verdicts,
    )


class _Rescorer:
    """Rescores records against one base world; each task's gold actions are replayed
    once, however many records share them."""

    def __init__(self, base: Tables, domain: Domain) -> None:
        self.base = base
        self.domain = domain
        self.scorer = DeskScorer(base, domain, scripted_user=False)  # τ-bench's users: models
        self.tasks: dict[str, DeskTask] = {}

    def verdict(self, index: int, record: Any) -> RecordVerdict:
        try:
            return self._verdict(index, record)
        except (KeyError, TypeError, ValueError, AttributeError, BenchmarkError) as exc:
            reason = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            return RecordVerdict(
                index=index,
                task_id=_int(record, "task_id"),
                trial=_int(record, "trial"),
                status="malformed",
                error=reason,
            )

    def _verdict(self, index: int, record: dict[str, Any]) -> RecordVerdict:
        info = record["info"]
        verdict = RecordVerdict(
            index=index,
            task_id=int(record["task_id"]),
            trial=int(record.get("trial", 0)),
            recorded_reward=float(record["reward"]),
        )
        traj = record["traj"]
        if "error" in info or not traj:
            verdict.status = "crashed"
            verdict.error = str(info.get("error", "no trajectory"))
            return verdict
        recorded = (info.get("reward_info") or {}).get("info") or {}
        verdict.recorded_r_actions = _float(recorded.get("r_actions"))
        verdict.recorded_r_outputs = _float(recorded.get("r_outputs"))
        task = self._task(info["task"], index, int(record["task_id"]))
        recorded_messages, observed = trajectory(traj)
        tools = self.domain.agent_tools
        world, messages, outcomes = replay_turns(self.base, recorded_messages, tools)
        termination = _ending(messages, outcomes)
        score = self.scorer.score_task(
            task, EpisodeTranscript(messages, termination, len(outcomes), state=world)
        )
        values = score.values
        verdict.ended = termination in TAU_ENDINGS
        verdict.r_actions = values["outcome_tau"]
        verdict.r_outputs = values["outputs_compat"] if task.outputs else None
        verdict.reward_tau = values["reward_tau"]
        older = float(verdict.ended) * values["outputs_compat"]
        verdict.reward_older_rule = older if task.outputs else values["reward_tau"]
        verdict.outcome_canonical = values["outcome_canonical"]
        verdict.violations = [
            f"{e.rule}: {e.excerpt}" for e in score.evidence if e.rule not in SCORE_RULES
        ]
        verdict.attribution = score.attribution
        verdict.observations, verdict.observations_differ = _compare(observed, outcomes)
        if verdict.reward_tau != verdict.recorded_reward:
            verdict.differs.append("reward")
        for name, mine, theirs in (
            ("r_actions", verdict.r_actions, verdict.recorded_r_actions),
            ("r_outputs", verdict.r_outputs, verdict.recorded_r_outputs),
        ):
            if theirs is not None and mine != theirs:
                verdict.differs.append(name)
        verdict.reproduced = not verdict.differs
        return verdict

    def _task(self, raw: dict[str, Any], index: int, task_id: int) -> DeskTask:
        """The record's task (its gold actions as recorded), shared by records that agree."""
        key = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:16]
        if key not in self.tasks:
            where = f"record {index}: task"
            task = taubench_task(where, raw, self.base["users"], self.domain, task_id)
            self.tasks[key] = task.model_copy(update={"id": f"{task.id}@{key}"})
        return self.tasks[key]


def trajectory(traj: Sequence[dict[str, Any]]) -> tuple[list[Message], list[str | None]]:
    """A τ-bench trajectory as the messages of a deedbench conversation (system, user
    and assistant turns; a replay adds the tool results), and the tool result recorded
    for each turn that called a tool (None where the record shows none)."""
    react = any(
        m.get("role") == "system" and REACT_MARKER in str(m.get("content") or "") for m in traj
    )
    return _react(traj) if react else _tool_calling(traj)


def _tool_calling(traj: Sequence[dict[str, Any]]) -> tuple[list[Message], list[str | None]]:
    """τ-bench's tool-calling agent: a message's first tool call is its action (τ-bench
    keeps no other), and a message without one is a reply."""
    messages: list[Message] = []
    observed: list[str | None] = []
    for number, m in enumerate(traj):
        role, text = m.get("role"), _text(m)
        if role == "assistant":
            calls = m.get("tool_calls") or []
            function = calls[0].get("function") if calls else None
            if function is None:  # a reply; τ-bench passes even a null text on
                null = m.get("content") is None
                messages.append(Message(role="assistant", content=text, content_null=null))
                continue
            call = ToolCall(
                id=calls[0].get("id") or f"call_{number}",
                name=function.get("name") or "",
                arguments=function.get("arguments") or "",
            )
            messages.append(Message(role="assistant", content=text, tool_calls=[call]))
            observed.append(None)
        elif role == "tool" and observed and observed[-1] is None:
            observed[-1] = text
        elif role in ("user", "system"):
            messages.append(Message(role=role, content=text))
    return messages, observed


def _react(traj: Sequence[dict[str, Any]]) -> tuple[list[Message], list[str | None]]:
    """τ-bench's act/react agents: the action is the JSON after the last ``Action:``
    (text that is not JSON is a reply with that text, τ-bench's own fallback); a tool's
    result comes back as a user turn ``API output: ...``."""
    messages: list[Message] = []
    observed: list[str | None] = []
    awaiting_output = False
    for number, m in enumerate(traj):
        role, text = m.get("role"), _text(m)
        if role == "assistant":
            action = text.split("Action:")[-1].strip()
            try:
                parsed = json.loads(action)
                name, arguments = parsed["name"], parsed["arguments"]
            except json.JSONDecodeError:
                name, arguments = RESPOND, {"content": action}
            call = ToolCall(id=f"act_{number}", name=str(name), arguments=json.dumps(arguments))
            messages.append(Message(role="assistant", content=text, tool_calls=[call]))
            observed.append(None)
            awaiting_output = name != RESPOND
        elif role == "user" and awaiting_output:
            observed[-1] = text.removeprefix(API_OUTPUT)
            awaiting_output = False
        elif role in ("user", "system"):
            messages.append(Message(role=role, content=text))
    return messages, observed


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _ending(messages: Sequence[Message], outcomes: Sequence[TurnOutcome]) -> Termination:
    """How the recorded run ended. τ-bench's run is done after a transfer, or when the
    user answers a reply with the stop token; it stops there, so only the last turn
    can end it. Anything else (the step limit) is not done."""
    if not outcomes:
        return Termination.MAX_STEPS
    last = outcomes[-1]
    if last.ends is not None:
        return last.ends
    if last.hands_over:
        turn = max(i for i, m in enumerate(messages) if m.role == "assistant")
        answer = next((m for m in messages[turn + 1 :] if m.role == "user"), None)
        if answer is not None and STOP in answer.content:
            return Termination.USER_STOPPED
    return Termination.MAX_STEPS


def _compare(observed: Sequence[str | None], outcomes: Sequence[TurnOutcome]) -> tuple[int, int]:
    """How many recorded tool results there were, and how many the replay did not give."""
    given = [o.results[0].content for o in outcomes if o.turn.tool_calls and o.results]
    pairs = [(seen, mine) for seen, mine in zip(observed, given, strict=False) if seen is not None]
    return len(pairs), sum(seen != mine for seen, mine in pairs)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _int(record: Any, key: str) -> int | None:
    try:
        return int(record[key])
    except (KeyError, TypeError, ValueError):
        return None


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
