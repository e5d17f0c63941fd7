"""τ³ banking's discoverable tools: which a task's gold actions read (its read-log
allowlist), and what unlocking or giving one shows (τ²'s parse of the tool's docstring,
from the user's τ² source where there is one, `DOCS_KEY`)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from typing import Any

from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.shown import DOCS_KEY
from deedbench.engine import Tool

__all__ = ["read_log_allowlist", "set_read_log_allowlist"]

_ALLOWLIST = "read_log_allowlist"
_UNLOCKED = "agent_discoverable_tools"
_GIVEN = "user_discoverable_tools"


def read_log_allowlist(task: Any) -> set[str]:
    """τ²'s ``_derive_read_log_allowlist``: the discoverable tools the task's gold actions
    call through ``call_discoverable_agent_tool`` (their reads are logged too).

    `task` is a τ² task as a dict or a deedbench `Tau2Task`.
    """
    criteria = task.get("evaluation_criteria") if isinstance(task, dict) else None
    if not isinstance(task, dict):
        criteria = getattr(task, "evaluation_criteria", None)
    if criteria is None:
        return set()
    actions = criteria.get("actions") if isinstance(criteria, dict) else criteria.actions
    found: set[str] = set()
    for action in actions or []:
        name = action.get("name") if isinstance(action, dict) else action.name
        arguments = action.get("arguments") if isinstance(action, dict) else action.arguments
        if name == "call_discoverable_agent_tool":
            tool_name = (arguments or {}).get("agent_tool_name")
            if tool_name:
                found.add(tool_name)
    return found


def set_read_log_allowlist(world: DeskWorld, allowlist: Iterable[str] | None) -> None:
    """Give an episode's world its task's read-log allowlist (kept in its session, so
    every copy of the world and every toolkit over it sees it)."""
    world.session[_ALLOWLIST] = sorted(set(allowlist or []))


def _unlisted(cls: type) -> dict[str, Tool[..., Any]]:
    """A toolkit's discoverable tools (its unlisted ones), by name."""
    return {t.name: t for t in cls.tools() if not t.listed}  # type: ignore[attr-defined]


def _doc_info(world: DeskWorld, function: Any) -> dict[str, Any]:
    """τ²'s ``parse_discoverable_tool_docstring``: description, parameters, success text,
    from the docstring in the user's τ² source (`DOCS_KEY`) or, without one, deedbench's."""
    docs: dict[str, str] = world.session.get(DOCS_KEY, {})
    doc = docs.get(function.__name__) or inspect.getdoc(function) or ""
    parts = re.split(r"\n\s*Args:\s*\n", doc, maxsplit=1)
    parameters: dict[str, Any] = {}
    success = "Action completed successfully."
    if len(parts) > 1:
        rest = re.split(r"\n\s*Returns:\s*\n", parts[1], maxsplit=1)
        if len(rest) > 1:
            success = rest[1].strip().split("\n")[0].strip()
        pattern = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)
        for found in pattern.finditer(rest[0]):
            type_info = found.group(2) or "string"
            kind = re.sub(r",?\s*optional", "", type_info, flags=re.IGNORECASE).strip()
            parameters[found.group(1)] = {
                "type": kind or "string",
                "description": found.group(3).strip(),
                "required": "optional" not in type_info.lower(),
            }
    return {
        "name": function.__name__,
        "description": parts[0].strip(),
        "parameters": parameters,
        "success_message": success,
    }


def _format_for_agent(info: dict[str, Any]) -> str:
    lines = []
    for name, spec in info.get("parameters", {}).items():
        needed = " (required)" if spec.get("required", True) else " (optional)"
        lines.append(
            f"  - {name}: {spec.get('type', 'string')}{needed} - {spec.get('description', '')}"
        )
    params = "\n".join(lines) if lines else "  (no parameters)"
    return f"Tool: {info['name']}\nDescription: {info['description']}\nParameters:\n{params}"
