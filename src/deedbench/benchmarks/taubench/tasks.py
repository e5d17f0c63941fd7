"""Loading τ-bench's own tasks: selection, checks with file and task index, and the
structured instructions deedbench's scripted customer needs.

τ-bench gives each task free-text instructions for an LLM user. The scripted
customer needs structure, which the gold actions supply: who the customer is
(from the users table), the changes they want (the gold write actions, in order),
the answers they expect (the required outputs), and whether they need a human.
The free text is kept for a model-played customer. What a want is called and how
the customer identifies themselves come from the domain (`Domain.kinds`,
`Customer.identities`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from deedbench.benchmarks.servicedesk import (
    FORBIDDEN,
    INFO,
    TRANSFER,
    TRANSFER_TOOL,
    Action,
    DeskTask,
    Domain,
    UserInstructions,
    Want,
)
from deedbench.benchmarks.taubench.layout import TaubenchFiles, read_python_tasks
from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, read_text

__all__ = ["load_taubench_tasks", "parse_selection", "taubench_task"]


def parse_selection(text: str) -> list[int]:
    """`0,5,9-12` -> [0, 5, 9, 10, 11, 12]."""
    chosen: list[int] = []
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not match:
            raise ValueError(f"{part!r} is not an index or a range like 9-12")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low:
            raise ValueError(f"range {part!r} runs backwards")
        chosen += [i for i in range(low, high + 1) if i not in chosen]
    return chosen


def _say(action: Action) -> str:
    kwargs = action.kwargs
    words = action.name.replace("_", " ")
    details = ", ".join(f"{k} {v}" for k, v in kwargs.items() if k != "reason")
    reason = f" because it's {kwargs['reason']}" if "reason" in kwargs else ""
    return f"i'd like you to {words}: {details}{reason}"


def _identify_by(domain: Domain, instruction: str) -> str:
    """The first of the domain's ways whose cue the instruction uses, else its default
    (the first way without a cue)."""
    ways = domain.talk.identities
    text = instruction.lower()
    cued = (name for name, way in ways.items() if way.cue is not None and way.cue in text)
    return next(cued, next(name for name, way in ways.items() if way.cue is None))


def taubench_task(
    where: str, raw: Any, users: dict[str, Any], domain: Domain, index: int = 0
) -> DeskTask:
    """One τ-bench task object (``user_id``, ``actions``, ``instruction``, ``outputs``);
    `where` names it in errors, `index` is its position when the object has none."""
    if not isinstance(raw, dict):
        raise BenchmarkError(f"{where}: expected an object")
    user_id = raw.get("user_id")
    if not isinstance(user_id, str) or user_id not in users:
        raise BenchmarkError(f"{where}: field user_id: unknown user {user_id!r}")
    user = users[user_id]
    if not isinstance(raw.get("actions", []), list):
        raise BenchmarkError(f"{where}: a malformed action list (field actions must be a list)")
    try:
        actions = [Action.model_validate(a) for a in raw.get("actions", [])]
    except ValidationError as exc:
        problem = exc.errors()[0]
        loc = ".".join(str(p) for p in problem["loc"])
        raise BenchmarkError(f"{where}: a malformed action ({loc}: {problem['msg']})") from None
    outputs = raw.get("outputs") or []
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        raise BenchmarkError(f"{where}: field outputs must be a list of strings")
    writes = domain.procedure_spec.write_tools
    wants = [
        Want(kind=domain.kind(a.name), say=_say(a), action=a) for a in actions if a.name in writes
    ]
    if outputs:
        wants.append(
            Want(kind=INFO, say="and can you tell me what i asked about?", expects=outputs)
        )
    if any(a.name == TRANSFER_TOOL for a in actions):
        wants.append(Want(kind=TRANSFER, say="i'd like to talk to a human agent please"))
    if not wants:  # nothing to change or learn: the request is settled once answered
        wants.append(Want(kind=FORBIDDEN, say=str(raw.get("instruction", ""))[:300] or "hello"))
    instruction = str(raw.get("instruction", ""))
    address = user.get("address") or {}
    return DeskTask(
        id=f"task-{raw.get('index', index)}",
        template="taubench",
        instructions=UserInstructions(
            identity={
                "user_id": user_id,
                "first_name": user["name"]["first_name"],
                "last_name": user["name"]["last_name"],
                "zip": str(address.get("zip", "")),
                "email": str(user.get("email", "")),
            },
            identify_by=_identify_by(domain, instruction),
            wants=wants,
            free_text=instruction,
        ),
        actions=actions,
        outputs=outputs,
    )


def load_taubench_tasks(
    files: TaubenchFiles,
    split: str,
    users: dict[str, Any],
    selection: list[int] | None,
    domain: Domain,
) -> list[DeskTask]:
    """The domain's write tools among a task's gold calls become the changes the
    customer asks for."""
    file = files.tasks_file(split)
    if files.clone:
        raw: Any = read_python_tasks(file, split)
    else:
        try:
            raw = parse_json(read_text(file))
        except json.JSONDecodeError as exc:
            raise BenchmarkError(f"{file}: not valid JSON: {exc}") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BenchmarkError(f"{file}: cannot be read: {exc}") from None
    if not isinstance(raw, list):
        raise BenchmarkError(f"{file}: expected a list of tasks")
    indexes = selection if selection is not None else list(range(len(raw)))
    missing = [i for i in indexes if i >= len(raw)]
    if missing:
        raise BenchmarkError(
            f"{file}: option tasks names {missing}, but the file has {len(raw)} tasks"
        )
    return [taubench_task(f"{file}: task {i}", raw[i], users, domain, i) for i in indexes]
