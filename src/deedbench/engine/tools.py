"""Tools as typed Python functions, with schemas derived from their signatures.

A tool is a plain function whose first parameter is the state it acts on (the
world of one episode) and whose other parameters are what the agent supplies.
Its JSON Schema comes from the type hints and the docstring's ``Args:`` section,
once, when the tool is defined. Every call an agent makes is checked against
that schema before the function runs; whatever is wrong becomes a tool error the
agent can read, never an exception that ends the episode.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, get_type_hints, overload

import typing_extensions
from pydantic import ConfigDict, TypeAdapter, ValidationError, create_model

from deedbench.errors import ToolError
from deedbench.records import Message, Termination, ToolCall

__all__ = ["Side", "Tool", "ToolBox", "ToolKind", "TurnOutcome", "tool"]

ToolKind = Literal["read", "write", "think", "generic"]
"""What a tool does, as τ² classifies tools: reads, writes, only thinks, or something else
(a hand-off). Whether it changes the world is `Tool.writes`, usually the same as ``write``
(τ²'s hand-off is generic and changes nothing; τ³'s unlocking is generic and does)."""

Side = Literal["agent", "user"]
"""Whose tool it is: the agent's, or the simulated user's own (τ²'s dual control: the
customer's phone), which acts on the user's state and which, in a conversation, the agent
is not shown."""

_P = ParamSpec("_P")
_R = TypeVar("_R")
_W = typing_extensions.TypeVar("_W", default=Any)
"""An episode's world; its default (PEP 696) lets code that writes a plain `ToolBox` pass
mypy's strict checks, as before the world was a type parameter."""


@dataclass(frozen=True, eq=False)
class Tool(Generic[_P, _R]):
    """A tool: its function, its derived schema and its role, stated once where it is
    defined (what it does, whose it is, what a proposal of its change must name), so that
    everything that sorts tools (a procedure's writes, the user's side) reads it here.

    Typed by its function's signature, and callable with it (the world first), so a
    decorated tool keeps the signature it was written with.
    """

    name: str
    description: str
    function: Callable[_P, _R]
    parameters: dict[str, Any]
    writes: bool
    validator: TypeAdapter[Any] = field(repr=False)
    ends_episode: bool = False
    kind: ToolKind = "read"
    listed: bool = True
    """Whether agents are shown it; an unlisted tool exists and can be called once the
    agent learns of it (τ³'s discoverable tools)."""
    side: Side = "agent"
    """Whose tool it is: the agent's or the simulated user's own."""
    keys: tuple[str, ...] = ()
    """The arguments that say what a change of this tool acts on (an order, a loan), which
    a request for consent must name; only a tool that writes has them."""

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return self.function(*args, **kwargs)

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        """A tool defined as a method (τ²'s toolkits keep a side's tools on a class over
        its database) is the tool on the class, and a bound method on an instance, so the
        toolkit's own methods call one another as methods."""
        if instance is None:
            return self
        return self.function.__get__(instance, owner)

    @cached_property
    def spec(self) -> dict[str, Any]:
        """The OpenAI-style function specification given to agents (built once)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@overload
def tool(function: Callable[_P, _R], /) -> Tool[_P, _R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    writes: bool | None = None,
    ends_episode: bool = False,
    kind: ToolKind | None = None,
    listed: bool = True,
    side: Side = "agent",
    keys: tuple[str, ...] = (),
) -> Callable[[Callable[_P, _R]], Tool[_P, _R]]: ...


def tool(
    function: Callable[_P, _R] | None = None,
    /,
    *,
    name: str | None = None,
    writes: bool | None = None,
    ends_episode: bool = False,
    kind: ToolKind | None = None,
    listed: bool = True,
    side: Side = "agent",
    keys: tuple[str, ...] = (),
) -> Tool[_P, _R] | Callable[[Callable[_P, _R]], Tool[_P, _R]]:
    """Turn a function into a `Tool`; usable as ``@tool``, ``@tool(kind="write",
    keys=("order_id",))`` or ``@tool(writes=True)``.

    `kind` defaults to ``write`` for a tool that writes, else ``read``; `writes` defaults to
    whether the kind is ``write``. A tool with `ends_episode` (a hand-off to a human) ends the
    episode when it succeeds; an unlisted one is not in the specs agents are shown; a user's
    one (`side`) is the simulated user's own. `keys` name arguments of a tool that writes; a
    `TypeError` says so when they are not, as it does when the function cannot be a tool.
    """

    def build(fn: Callable[_P, _R]) -> Tool[_P, _R]:
        changes = writes if writes is not None else kind == "write"
        made = _make_tool(fn, name or fn.__name__, changes, ends_episode)
        if keys and not changes:
            raise TypeError(f"tool {made.name!r} changes nothing, so it has no keys")
        unknown = [k for k in keys if k not in made.parameters["properties"]]
        if unknown:
            raise TypeError(f"tool {made.name!r}: keys {unknown} are none of its arguments")
        return dataclasses.replace(
            made,
            kind=kind or ("write" if changes else "read"),
            listed=listed,
            side=side,
            keys=keys,
        )

    return build(function) if function is not None else build


def _make_tool(fn: Callable[_P, _R], name: str, writes: bool, ends_episode: bool) -> Tool[_P, _R]:
    signature = inspect.signature(fn)
    hints = get_type_hints(fn)
    params = list(signature.parameters.values())
    if not params:
        raise TypeError(f"tool {name!r} must take the state it acts on as its first parameter")
    summary, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    for param in params[1:]:
        if param.name not in hints:
            raise TypeError(f"tool {name!r}: parameter {param.name!r} has no type hint")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], default)
    model = create_model(
        f"{name}_arguments",
        __config__=ConfigDict(extra="forbid", strict=True),
        **fields,
    )
    schema = model.model_json_schema()
    properties: dict[str, Any] = {}
    for pname, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        if pname in arg_docs:
            prop["description"] = arg_docs[pname]
        properties[pname] = prop
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": schema.get("required", []),
        "additionalProperties": False,
    }
    if "$defs" in schema:  # the nested models the properties' $refs point to
        parameters["$defs"] = schema["$defs"]
    return Tool(name, summary, fn, parameters, writes, TypeAdapter(model), ends_episode)


_ARG_LINE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and per-argument texts."""
    summary_lines: list[str] = []
    args: dict[str, str] = {}
    lines = doc.splitlines()
    i = 0
    while i < len(lines) and lines[i].strip() not in ("Args:", "Arguments:", "Returns:"):
        summary_lines.append(lines[i].strip())
        i += 1
    if i < len(lines) and lines[i].strip() in ("Args:", "Arguments:"):
        current: str | None = None
        for line in lines[i + 1 :]:
            if line and not line.startswith(" "):
                break
            match = _ARG_LINE.match(line.strip())
            if match and line.startswith("    ") and not line.startswith("     "):
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}"
    summary = " ".join(s for s in summary_lines if s).strip()
    return summary, args


def _describe_validation_error(tool_name: str, error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        kind = item["type"]
        if kind == "json_invalid":
            return f"Error: arguments for {tool_name} are not valid JSON ({item['msg']})."
        if kind == "model_type":
            return f"Error: arguments for {tool_name} must be a JSON object."
        if kind == "missing":
            problems.append(f"missing required argument '{where}'")
        elif kind == "extra_forbidden":
            problems.append(f"unexpected argument '{where}'")
        else:
            problems.append(f"argument '{where}': {item['msg']} (got {item.get('input')!r})")
    return f"Error: invalid arguments for {tool_name}: " + "; ".join(problems) + "."


@dataclass
class TurnOutcome:
    """What running one agent turn gave the episode.

    `turn` is the agent's message as the transcript records it (a benchmark may
    run fewer calls than the agent made, and says so in it), `results` the tool
    messages that follow it. `hands_over` is true when the turn speaks to the user,
    who answers next; `ends` names the termination when the turn ends the episode.
    """

    turn: Message
    results: list[Message] = field(default_factory=list)
    hands_over: bool = False
    ends: Termination | None = None


class ToolBox(Generic[_W]):
    """The tools of one episode, bound to that episode's state: its world, a `_W`.

    Every call is checked against its tool's schema before the tool runs, and
    every call of a turn runs, in order. Benchmarks that run tools by other rules
    (τ-bench's, for one) subclass it and override `take_turn` and `call`.

    A tool fits when its first parameter takes the world (``world: DeskWorld`` fits a
    ``ToolBox[DeskWorld]``, so does ``world: object``); a tool typed ``Tool[..., Any]``
    (a toolkit's method, whose first argument is made from the world) fits any.
    """

    def __init__(self, tools: Iterable[Tool[Concatenate[_W, ...], Any]], state: _W) -> None:
        self.tools = {t.name: t for t in tools}
        self.state = state
        self.ended_by: str | None = None  # the episode-ending tool that succeeded, if any

    def specs(self) -> list[dict[str, Any]]:
        return [t.spec for t in self.tools.values() if t.listed]

    def take_turn(self, turn: Message) -> TurnOutcome:
        """Run every call of the agent's turn; a turn without calls speaks to the user."""
        if not turn.tool_calls:
            return TurnOutcome(turn, hands_over=True)
        results = [self.call(call) for call in turn.tool_calls]
        ends = Termination.TRANSFERRED if self.ended_by is not None else None
        return TurnOutcome(turn, results, ends=ends)

    def call(self, call: ToolCall) -> Message:
        """Run one call; any problem with it comes back as an error message."""
        output, error = self._run(call)
        if not error and self.tools[call.name].ends_episode:
            self.ended_by = call.name
        return Message(
            role="tool", content=output, tool_call_id=call.id, tool_name=call.name, error=error
        )

    def _run(self, call: ToolCall) -> tuple[str, bool]:
        found = self.tools.get(call.name)
        if found is None:
            names = ", ".join(sorted(self.tools))
            return f"Error: unknown tool '{call.name}'. Available tools: {names}.", True
        blank = not call.arguments.strip()
        try:
            found.validator.validate_json("{}" if blank else call.arguments)
        except ValidationError as exc:
            return _describe_validation_error(call.name, exc), True
        arguments = {} if blank else call.args  # a JSON object: it passed the schema
        assert arguments is not None
        try:  # the tool gets the arguments as the agent sent them, once they passed
            result = found.function(self.state, **arguments)
        except ToolError as exc:
            return f"Error: {exc}", True
        return (result if isinstance(result, str) else json.dumps(result)), False
