"""τ²'s result files (its ``Results``), read and written as τ² reads and writes them.

A result file is one JSON object (``info``, ``tasks``, ``simulations``), or τ²'s
folder format: ``results.json`` holding the rest with a ``simulation_index``, and
one file per simulation in ``simulations/``. `read_results` takes either (the
folder, its ``results.json``, or the single file) and checks what τ²'s own loader
checks: the index names exactly the simulation files present; and what deedbench
relies on: each task id is listed once (tasks are looked up by id, so a second one
would silently stand for the first), and every timestamp is a date and time (ISO
8601, as τ² writes them) that is not in the future (an imported run is listed by
its file's timestamp). Errors name the file and the field.

Only what deedbench reads is typed; every other field of τ²'s models is kept as
it came (``extra="allow"``), so a file read and written back loses nothing.
Messages stay τ²'s dicts here: `simulation_messages` turns them into deedbench's,
and `tau2_messages` deedbench's into τ²'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deedbench.benchmarks.tau2.tasks import messages_from_tau2
from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, read_text
from deedbench.records import Message, Termination

__all__ = [
    "RESULTS_FILE",
    "SIMULATIONS_DIR",
    "TAU2_ENDINGS",
    "Tau2EnvironmentInfo",
    "Tau2Info",
    "Tau2Party",
    "Tau2Results",
    "Tau2Simulation",
    "read_results",
    "simulation_messages",
    "task_num_actions",
    "tau2_messages",
    "write_results",
]

RESULTS_FILE = "results.json"
SIMULATIONS_DIR = "simulations"

TAU2_ENDINGS: dict[str, Termination] = {
    "agent_stop": Termination.AGENT_FINISHED,
    "user_stop": Termination.USER_STOPPED,
    "max_steps": Termination.MAX_STEPS,
    "too_many_errors": Termination.TOO_MANY_TOOL_ERRORS,
    "agent_error": Termination.AGENT_ERROR,
    "user_error": Termination.USER_ERROR,
    "infrastructure_error": Termination.INFRASTRUCTURE_ERROR,
    "context_window_exceeded": Termination.CONTEXT_EXCEEDED,
}
"""deedbench's name for τ²'s termination reasons; τ²'s ``timeout`` and
``unexpected_error`` have none and are kept as τ² names them."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Tau2Party(_Open):
    """τ²'s ``AgentInfo`` / ``UserInfo``: which implementation, which model, its arguments."""

    implementation: str
    llm: str | None = None
    llm_args: dict[str, Any] | None = None


class Tau2EnvironmentInfo(_Open):
    domain_name: str
    policy: str = ""


class Tau2Info(_Open):
    """τ²'s ``Info``: how the run was made."""

    git_commit: str = ""
    num_trials: int
    max_steps: int
    max_errors: int
    user_info: Tau2Party
    agent_info: Tau2Party
    environment_info: Tau2EnvironmentInfo
    seed: int | None = None
    retrieval_config: str | None = None
    retrieval_config_kwargs: dict[str, Any] | None = None
    audio_native_config: dict[str, Any] | None = None

    @property
    def domain(self) -> str:
        return self.environment_info.domain_name

    @property
    def solo(self) -> bool:
        """τ²'s solo mode (its ``is_solo_mode``): the solo agent and the dummy user."""
        return (
            self.agent_info.implementation == "llm_agent_solo"
            and self.user_info.implementation == "dummy_user"
        )


class Tau2Simulation(_Open):
    """τ²'s ``SimulationRun``; `messages` are τ²'s message dicts."""

    id: str
    task_id: str
    start_time: str = ""
    end_time: str = ""
    duration: float = 0.0
    termination_reason: str
    agent_cost: float | None = None
    user_cost: float | None = None
    reward_info: dict[str, Any] | None = None
    messages: list[dict[str, Any]] | None = None
    ticks: list[Any] | None = None
    trial: int | None = None
    seed: int | None = None
    mode: str = "half_duplex"

    @property
    def voice(self) -> bool:
        """A full-duplex (voice) simulation, whose conversation is in its ticks."""
        return self.mode == "full_duplex" or self.ticks is not None


class Tau2Results(_Open):
    """τ²'s ``Results``: how the run was made, the tasks as they were, the simulations."""

    timestamp: str | None = None
    info: Tau2Info
    tasks: list[dict[str, Any]]
    simulations: list[Tau2Simulation] = Field(default_factory=list)
    simulation_index: list[dict[str, Any]] | None = None

    @property
    def voice(self) -> bool:
        return self.info.audio_native_config is not None or any(s.voice for s in self.simulations)


def read_results(path: Path) -> Tau2Results:
    """A τ² result file, either format (see the module's docstring)."""
    meta_path, sims_dir = _where(path)
    meta = _load(meta_path)
    if not isinstance(meta, dict):
        raise BenchmarkError(f"{meta_path}: not a τ² result file (expected a JSON object)")
    meta.pop("format_version", None)
    if sims_dir.is_dir():
        files = sorted(sims_dir.glob("*.json"))
        index = meta.get("simulation_index")
        if isinstance(index, list):
            listed = {str(e.get("id")) for e in index if isinstance(e, dict)}
            present = {f.stem for f in files}
            problems = []
            if listed - present:
                problems.append(f"missing simulation files: {sorted(listed - present)}")
            if present - listed:
                problems.append(f"simulation files not in its index: {sorted(present - listed)}")
            if problems:
                raise BenchmarkError(f"{meta_path}: " + "; ".join(problems))
        meta["simulations"] = [_load(f) for f in files]
    try:
        results = Tau2Results.model_validate(meta)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BenchmarkError(
            f"{meta_path}: not a τ² result file: field {where}: {first['msg']}"
        ) from None
    problem = _problem(results)
    if problem is not None:
        raise BenchmarkError(f"{meta_path}: not a τ² result file: {problem}")
    return results


def _problem(results: Tau2Results) -> str | None:
    """What deedbench cannot take in a file τ²'s models accept: a task id listed twice,
    a timestamp that is no date and time or lies in the future."""
    seen: dict[str, int] = {}
    for number, task in enumerate(results.tasks):
        task_id = str(task.get("id"))
        if task_id in seen:
            return (
                f"field tasks: task id {task_id!r} is listed twice (tasks.{seen[task_id]} and "
                f"tasks.{number}); a result file holds each task once"
            )
        seen[task_id] = number
    stamps = [("timestamp", results.timestamp)]
    for number, sim in enumerate(results.simulations):
        stamps += [
            (f"simulations.{number}.start_time", sim.start_time),
            (f"simulations.{number}.end_time", sim.end_time),
        ]
    for field, text in stamps:
        if not text:
            continue
        found = _problem_with_time(text)
        if found is not None:
            return f"field {field}: {text[:40]!r} {found}"
    return None


def _problem_with_time(text: str) -> str | None:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return "is no date and time (ISO 8601, as τ² writes them)"
    now = datetime.now(UTC) if when.tzinfo else datetime.now()
    if when > now + timedelta(days=1):  # a day for time zones and skewed clocks
        return "is in the future"
    return None


def _where(path: Path) -> tuple[Path, Path]:
    """The metadata file and the simulations folder, as τ²'s ``Results`` resolves them."""
    if path.is_dir():
        meta = path / RESULTS_FILE
        if not meta.is_file():
            raise BenchmarkError(
                f"{path}: no {RESULTS_FILE} in this folder (τ²'s folder format holds "
                f"{RESULTS_FILE} and {SIMULATIONS_DIR}/); give a τ² result file or such a folder"
            )
        return meta, path / SIMULATIONS_DIR
    return path, path.parent / SIMULATIONS_DIR


def _load(path: Path) -> Any:
    try:
        return parse_json(read_text(path))  # a FIFO, a device, over the cap: a UsageError
    except FileNotFoundError:
        raise BenchmarkError(f"{path}: no such τ² result file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BenchmarkError(f"{path}: cannot read a τ² result file: {exc}") from None


def write_results(
    results: Tau2Results, path: Path, format: Literal["json", "dir"] = "json"
) -> None:
    """Write `results` as τ²'s ``Results.save`` does: one file, or the folder format
    (`path` the folder, or its ``results.json``) with its index."""
    if format == "json":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(results.model_dump_json(indent=2), encoding="utf-8")
        return
    meta_path = path / RESULTS_FILE if path.suffix != ".json" else path
    sims_dir = meta_path.parent / SIMULATIONS_DIR
    sims_dir.mkdir(parents=True, exist_ok=True)
    index = [
        {
            "id": s.id,
            "task_id": s.task_id,
            "trial": s.trial,
            "reward": (s.reward_info or {}).get("reward"),
            "termination_reason": s.termination_reason,
            "agent_cost": s.agent_cost,
            "duration": s.duration,
        }
        for s in results.simulations
    ]
    meta = results.model_copy(update={"simulation_index": index})
    text = meta.model_dump_json(indent=2, exclude={"simulations"})
    meta_path.write_text(text, encoding="utf-8")
    for simulation in results.simulations:
        target = sims_dir / f"{simulation.id}.json"
        target.write_text(simulation.model_dump_json(indent=2), encoding="utf-8")


def task_num_actions(task: dict[str, Any]) -> int:
    """τ²'s ``task_num_actions`` of a task as its result file holds it: the gold actions of
    both sides, -1 for a task whose only gold action is a transfer (what τ²'s metrics sort
    tasks by before taking a mean)."""
    criteria = task.get("evaluation_criteria") or {}
    gold = criteria.get("actions") or []
    if len(gold) == 1 and "transfer" in str(gold[0].get("name", "")).lower():
        return -1
    return sum(a.get("requestor", "assistant") in ("assistant", "user") for a in gold)


def simulation_messages(simulation: Tau2Simulation) -> list[Message]:
    """A half-duplex simulation's messages as deedbench's (τ²'s trajectory: no system
    prompt), each tool result keeping what τ² recorded."""
    return messages_from_tau2(simulation.messages or [])


def tau2_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """deedbench's messages as τ²'s trajectory: the system prompt left out, a message of
    tool calls with ``content`` null when it says nothing, each call's side
    (``requestor``) and each result's."""
    found: list[dict[str, Any]] = []
    for index, message in enumerate(m for m in messages if m.role != "system"):
        if message.role == "tool":
            found.append(
                {
                    "id": message.tool_call_id or "",
                    "role": "tool",
                    "content": message.content,
                    "requestor": message.requestor or "assistant",
                    "error": message.error,
                    "turn_idx": index,
                }
            )
            continue
        side = "user" if message.role == "user" else "assistant"
        calls = [
            {"id": c.id, "name": c.name, "arguments": c.args or {}, "requestor": side}
            for c in message.tool_calls
        ]
        found.append(
            {
                "role": message.role,
                "content": message.content or (None if calls else message.content),
                "tool_calls": calls or None,
                "turn_idx": index,
                "usage": _usage(message),
            }
        )
    return found


def _usage(message: Message) -> dict[str, int] | None:
    usage = message.usage
    if usage is None:
        return None
    return {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens}
