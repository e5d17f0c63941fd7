"""τ²'s tasks: the schema its task files follow, read from a τ² data folder, by split.

A task gives the simulated user a scenario (free text, or τ²'s structured reason for
the call, what they know and what to do), may set the world up
(``initial_state``: data updates, set-up calls on either side, a conversation
already under way) and says how it is judged (``evaluation_criteria``): the gold
actions whose replay gives the expected databases, assertions on the final
environment, what the agent must say, assertions a judge reads, and which of
these the reward is the product of (``reward_basis``). ``user_tools`` restricts
the tools a user has (τ³'s banking). The models here are deedbench's; they accept
τ²'s files as they are, and `Tau2Task.raw` keeps each task as it was read, for
writing τ²'s own result files back.

Task files: ``tasks.json`` and ``split_tasks.json`` beside it (airline, retail,
telecom); banking's ``tasks/task_*.json``, one task a file, with no split file
(its one split is all of them).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from deedbench.benchmarks.tau2.data import read_data
from deedbench.errors import BenchmarkError
from deedbench.records import Message, ToolCall, Usage

__all__ = [
    "REWARD_TYPES",
    "EnvCall",
    "EvaluationCriteria",
    "GoldAction",
    "InitialState",
    "InitializationData",
    "Requestor",
    "RewardType",
    "StructuredInstructions",
    "Tau2Task",
    "UserScenario",
    "load_tasks",
    "messages_from_tau2",
]

RewardType = Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]
REWARD_TYPES: tuple[RewardType, ...] = (
    "DB",
    "ENV_ASSERTION",
    "NL_ASSERTION",
    "ACTION",
    "COMMUNICATE",
)

Requestor = Literal["assistant", "user"]


class StructuredInstructions(BaseModel):
    """τ²'s structured user instructions."""

    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str

    def __str__(self) -> str:
        tab = "\t"
        lines = [f"Domain: {self.domain}"]
        lines.append(f"Reason for call:\n{textwrap.indent(self.reason_for_call, tab)}")
        if self.known_info is not None:
            lines.append(f"Known info:\n{textwrap.indent(self.known_info, tab)}")
        if self.unknown_info is not None:
            lines.append(f"Unknown info:\n{textwrap.indent(self.unknown_info, tab)}")
        lines.append(f"Task instructions:\n{textwrap.indent(self.task_instructions, tab)}")
        return "\n".join(lines)


class UserScenario(BaseModel):
    """What the simulated user is told: a persona and the instructions."""

    persona: str | None = None
    instructions: StructuredInstructions | str

    def __str__(self) -> str:
        """The scenario as τ²'s user simulator reads it in its system prompt."""
        lines = []
        if self.persona is not None:
            lines += ["Persona:", textwrap.indent(self.persona, "\t")]
        lines += ["Instructions:", textwrap.indent(str(self.instructions), "\t")]
        return "\n".join(lines)


class GoldAction(BaseModel):
    """One call of a task's reference trajectory, by the agent or the user."""

    action_id: str = ""
    requestor: Requestor = "assistant"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None

    def matches(self, name: str, arguments: dict[str, Any]) -> bool:
        """τ²'s ``compare_with_tool_call``: the same tool, and equal values for the
        `compare_args` (all of the call's own arguments when None). Who made the call
        does not matter."""
        if self.name != name:
            return False
        keys = list(arguments) if self.compare_args is None else self.compare_args
        if not keys:
            return True
        return {k: v for k, v in arguments.items() if k in keys} == {
            k: v for k, v in self.arguments.items() if k in keys
        }


class EnvCall(BaseModel):
    """A call of any method of one side's toolkit: a set-up step, or an assertion."""

    env_type: Requestor
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    assert_value: bool = True
    message: str | None = None


class InitializationData(BaseModel):
    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class InitialState(BaseModel):
    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvCall] | None = None
    message_history: list[dict[str, Any]] | None = None


_DEFAULT_BASIS: list[RewardType] = ["DB", "COMMUNICATE"]


class EvaluationCriteria(BaseModel):
    actions: list[GoldAction] | None = None
    env_assertions: list[EnvCall] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardType] = Field(default_factory=lambda: _DEFAULT_BASIS.copy())


class Tau2Task(BaseModel):
    """One τ² task (unknown fields are kept in `raw` only)."""

    id: str
    description: dict[str, Any] | None = None
    user_scenario: UserScenario
    ticket: str | None = None
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
    issues: list[dict[str, Any]] | None = None
    required_documents: list[str] | None = None
    user_tools: list[str] | None = None
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @property
    def gold(self) -> list[GoldAction]:
        criteria = self.evaluation_criteria
        return list(criteria.actions or []) if criteria is not None else []

    @property
    def reward_basis(self) -> list[str]:
        criteria = self.evaluation_criteria
        return list(criteria.reward_basis) if criteria is not None else []

    @property
    def needs_judge(self) -> bool:
        """Whether the reward needs τ²'s LLM judge (NL assertions in the basis)."""
        criteria = self.evaluation_criteria
        return (
            criteria is not None
            and "NL_ASSERTION" in criteria.reward_basis
            and bool(criteria.nl_assertions)
        )

    def history(self) -> list[Message]:
        """The conversation the task starts with, as deedbench messages."""
        state = self.initial_state
        if state is None or not state.message_history:
            return []
        return messages_from_tau2(state.message_history)


def messages_from_tau2(items: list[dict[str, Any]]) -> list[Message]:
    """τ²'s messages (system, user, assistant, tool) as deedbench's: a tool call keeps its
    id and arguments, a tool result its requestor; the name of the tool a result answers
    comes from its call."""
    names: dict[str, str] = {}
    found: list[Message] = []
    for item in items:
        role = item.get("role")
        content = item.get("content") or ""
        if role == "tool":
            call_id = item.get("id")
            found.append(
                Message(
                    role="tool",
                    content=content,
                    tool_call_id=call_id,
                    tool_name=names.get(call_id or ""),
                    error=bool(item.get("error")),
                    requestor="user" if item.get("requestor") == "user" else None,
                )
            )
            continue
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown message role {role!r}")
        calls = []
        for raw in item.get("tool_calls") or []:
            arguments = raw.get("arguments")
            call = (
                ToolCall.decoded(raw.get("id", ""), raw["name"], arguments)
                if isinstance(arguments, dict)
                else ToolCall(id=raw.get("id", ""), name=raw["name"], arguments=str(arguments))
            )
            names[call.id] = call.name
            calls.append(call)
        found.append(Message(role=role, content=content, tool_calls=calls, usage=_usage(item)))
    return found


def _usage(item: dict[str, Any]) -> Usage | None:
    """A model's message's tokens, as τ² records them (``prompt_tokens``,
    ``completion_tokens``), for one call."""
    usage = item.get("usage")
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not (isinstance(prompt, int) and isinstance(completion, int)):
        return None
    return Usage(input_tokens=prompt, output_tokens=completion, calls=1)


def load_tasks(folder: Path, domain: str, split: str | None, benchmark: str) -> list[Tau2Task]:
    """The tasks of `split` (None: all), in their file's order.

    `folder` holds ``tasks.json`` and ``split_tasks.json``, or banking's ``tasks/``.
    Errors name the file, the task and the field.
    """
    task_dir = folder / "tasks"
    if task_dir.is_dir() and any(task_dir.glob("task_*.json")):
        what = f"{benchmark} task file"
        items = [(path, read_data(path, what)) for path in sorted(task_dir.glob("task_*.json"))]
        split_file = None
    else:
        path = folder / "tasks.json"
        loaded = read_data(path, f"{benchmark} tasks file")
        if isinstance(loaded, dict) and "tasks" in loaded:
            loaded = loaded["tasks"]
        if not isinstance(loaded, list):
            raise BenchmarkError(f"{benchmark} tasks file {path} must hold a list of tasks")
        items = [(path, item) for item in loaded]
        split_file = folder / "split_tasks.json"
    tasks = [_task(path, raw, index, benchmark) for index, (path, raw) in enumerate(items)]
    if split is None:
        return tasks
    if split_file is None or not split_file.is_file():
        if split == "base":
            return tasks
        raise BenchmarkError(f"{benchmark} has one split, base (all its tasks); got {split!r}")
    splits = read_data(split_file, f"{benchmark} split file")
    if not isinstance(splits, dict) or split not in splits:
        valid = ", ".join(splits) if isinstance(splits, dict) else "none"
        raise BenchmarkError(f"{benchmark}: no split {split!r} in {split_file}; valid: {valid}")
    chosen = set(splits[split])
    return [task for task in tasks if task.id in chosen]


def _task(path: Path, raw: Any, index: int, benchmark: str) -> Tau2Task:
    if not isinstance(raw, dict):
        raise BenchmarkError(f"{benchmark} {path}: task #{index} is not an object")
    try:
        task = Tau2Task.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        name = raw.get("id", f"#{index}")
        raise BenchmarkError(
            f"{benchmark} {path}: task {name}: field {where}: {first['msg']}"
        ) from None
    if task.initial_state is not None and task.initial_state.message_history:
        try:
            task.history()
        except (ValueError, KeyError) as exc:
            raise BenchmarkError(
                f"{benchmark} {path}: task {task.id}: field initial_state.message_history: {exc}"
            ) from None
    task.raw = raw
    return task
