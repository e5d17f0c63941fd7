"""One τ² episode's environment: the desk's side and the customer's, run as τ² runs them.

τ²'s ``Environment`` holds two toolkits, the agent's and the user's, each over its
database (τ³'s banking gives both the same one). A call is run as it came: no
argument is checked first, any exception the tool raises becomes the result
``Error: <message>``, whatever it returns is written by `to_json_str`, and after
every successful call the two sides are synchronised (telecom's phone follows the
network). A task may also call any method of either toolkit to set its world up
(``initialization_actions``) or to check it (``env_assertions``).

This module does the same on deedbench's worlds, and the three replays τ²'s
evaluator makes: a task's start (its data updates and set-up calls), a recorded
trajectory (only the calls of tools that change state; hallucinated tools are
skipped), and the gold actions (a gold action that raises is skipped, without a
synchronisation after each, as τ² does). Databases are compared, and hashed, by
τ²'s rule: the sha256 of their JSON with sorted keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.convention import to_json_str
from deedbench.engine import Tool
from deedbench.records import Message, ToolCall

__all__ = [
    "ReplayMismatch",
    "Requestor",
    "SkippedGoldAction",
    "Tau2Environment",
    "db_hash",
    "same_db",
    "trajectory_calls",
]

Requestor = Literal["assistant", "user"]


class ReplayMismatch(ValueError):
    """A replayed call that changes state answered other than the trajectory records."""


@dataclass(frozen=True)
class SkippedGoldAction:
    """A gold action that raised, which τ²'s evaluator skips (its error, as the tool said)."""

    index: int
    name: str
    requestor: Requestor
    arguments: dict[str, Any]
    error: str


@dataclass
class Tau2Environment:
    """The desk's and the customer's toolkits over their worlds, in one state."""

    domain: Domain
    agent_world: DeskWorld
    user_world: DeskWorld | None = None
    solo: bool = False
    replay_notes: list[str] = field(default_factory=list)
    """Calls whose replayed result differed from the recorded one, in a lenient replay."""

    def __post_init__(self) -> None:
        domain = self.domain
        self.agent: Any = domain.bind(self.agent_world) if domain.bind else self.agent_world
        self.user: Any = None
        if self.user_world is not None:
            bind = domain.bind_user
            self.user = bind(self.user_world) if bind else self.user_world
        self.agent_tools: dict[str, Tool[..., Any]] = {t.name: t for t in domain.agent_tools}
        self.user_tools: dict[str, Tool[..., Any]] = {t.name: t for t in domain.user_tools}

    # --- calls ----------------------------------------------------------------------------

    def make_tool_call(self, name: str, requestor: Requestor, arguments: Mapping[str, Any]) -> Any:
        """τ²'s ``make_tool_call``: run a tool for whoever asked (no synchronisation)."""
        if requestor == "user":
            if self.solo:
                raise ValueError("User tool calls are not allowed in solo mode")
            return self._use(self.user_tools, self.user, name, arguments)
        if self.solo and self.user is not None and name in self.user_tools:
            return self._use(self.user_tools, self.user, name, arguments)
        return self._use(self.agent_tools, self.agent, name, arguments)

    def _use(
        self,
        tools: Mapping[str, Tool[..., Any]],
        state: Any,
        name: str,
        arguments: Mapping[str, Any],
    ) -> Any:
        if state is None:
            raise ValueError("User tools not available")
        found = tools.get(name)
        if found is None:
            raise ValueError(f"Tool '{name}' not found.")
        return found.function(state, **arguments)

    def respond(self, call: ToolCall, requestor: Requestor) -> Message:
        """τ²'s ``get_response``: the call's result as the caller reads it, synchronising
        the sides after a call that succeeded.

        Arguments that are not a JSON object (which τ²'s model client cannot even
        represent) are an error result here, and the call changes nothing.
        """
        error = False
        arguments = call.args
        response: Any
        if arguments is None:
            response, error = f"Error: the arguments are not a JSON object: {call.arguments}", True
        else:
            try:
                response = self.make_tool_call(call.name, requestor, arguments)
                self.sync()
            except Exception as exc:  # τ²: every exception is the result "Error: ..."
                response, error = f"Error: {exc}", True
        return Message(
            role="tool",
            content=to_json_str(response),
            tool_call_id=call.id,
            tool_name=call.name,
            error=error,
            requestor="user" if requestor == "user" else None,
        )

    def sync(self) -> None:
        if self.domain.sync is not None:
            self.domain.sync(self.agent, self.user)

    def has_tool(self, name: str) -> bool:
        return name in self.agent_tools or name in self.user_tools

    def mutates(self, name: str) -> bool:
        """Whether τ²'s replay runs a call of this tool again (the desk's tool first)."""
        found = self.agent_tools.get(name) or self.user_tools.get(name)
        return True if found is None else found.writes

    # --- set-up and assertions ------------------------------------------------------------

    def run_function(self, env_type: Requestor, name: str, arguments: Mapping[str, Any]) -> Any:
        """τ²'s ``run_env_function_call``: any method of either toolkit, then a sync."""
        toolkit = self.user if env_type == "user" else self.agent
        result = getattr(toolkit, name)(**arguments)
        self.sync()
        return result

    def assertion(
        self, env_type: Requestor, name: str, arguments: Mapping[str, Any], expected: bool
    ) -> bool:
        """τ²'s ``run_env_assertion`` without raising: whether the function gave `expected`."""
        result = self.run_function(env_type, name, arguments)
        if not isinstance(result, bool):
            raise ValueError(f"Function {name} returned {type(result)} instead of bool")
        return result == expected

    # --- replays --------------------------------------------------------------------------

    def replay(self, messages: Sequence[Message], *, strict: bool = True) -> None:
        """Run again every call of `messages` that changes state, as τ²'s ``set_state`` does
        (a tool no side has is skipped, as the live call changed nothing), then sync.

        Strict, a result other than the recorded one raises `ReplayMismatch`; lenient, it
        is noted in `replay_notes` and the replay goes on.
        """
        for call, requestor, recorded in trajectory_calls(messages):
            if not self.has_tool(call.name) or not self.mutates(call.name):
                continue
            answer = self.respond(call, requestor)
            if _loaded(answer.content) != _loaded(recorded.content):
                note = (
                    f"replayed {call.name} ({requestor}, call {call.id}) answered "
                    f"{answer.content!r}, recorded {recorded.content!r}"
                )
                if strict:
                    raise ReplayMismatch(note)
                self.replay_notes.append(note)
        self.sync()

    def run_gold(self, actions: Iterable[Any]) -> list[SkippedGoldAction]:
        """τ²'s gold replay: each action for its requestor, no sync between them; an action
        that raises is skipped (what it changed before raising stays changed)."""
        skipped = []
        for index, action in enumerate(actions):
            try:
                self.make_tool_call(action.name, action.requestor, action.arguments)
            except Exception as exc:
                skipped.append(
                    SkippedGoldAction(
                        index, action.name, action.requestor, dict(action.arguments), str(exc)
                    )
                )
        return skipped

    def copy(self) -> Tau2Environment:
        """An independent environment in this one's state."""
        agent = self.agent_world.copy()
        user: DeskWorld | None = None
        if self.user_world is self.agent_world:
            user = agent
        elif self.user_world is not None:
            user = self.user_world.copy()
        return Tau2Environment(self.domain, agent, user, self.solo)


def _loaded(content: str) -> Any:
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return content


def trajectory_calls(
    messages: Sequence[Message],
) -> Iterator[tuple[ToolCall, Requestor, Message]]:
    """Every tool call of a trajectory with who made it and its recorded result, checked
    as τ²'s replay checks them: each call's result follows it, with the call's id.

    System messages and deedbench's dropped calls are not part of τ²'s trajectory.
    """
    pending: list[tuple[ToolCall, Requestor]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            if not pending:
                raise ValueError(
                    "Tool message not expected. Tool messages should always follow a tool call."
                )
            call, requestor = pending.pop(0)
            if call.id != message.tool_call_id:
                raise ValueError(f"Tool call id mismatch. Got {call.id} and {message.tool_call_id}")
            yield call, requestor, message
            continue
        if pending:
            raise ValueError(f"Tool message expected. Got {message.role} message.")
        if message.role in ("assistant", "user") and message.tool_calls:
            who: Requestor = "user" if message.role == "user" else "assistant"
            pending = [(call, who) for call in message.tool_calls]
    if pending:
        raise ValueError("Tool message expected. Got None.")


def db_hash(world: DeskWorld) -> str:
    """τ²'s database hash: sha256 of its JSON, keys sorted, other values as ``str``."""
    return hashlib.sha256(world.json_text().encode()).hexdigest()


def same_db(a: DeskWorld | None, b: DeskWorld | None, known: dict[Any, str] | None = None) -> bool:
    """Whether two databases have the same τ² hash. Worlds over one shared base are
    compared by what either changed, which is the same test and far cheaper.

    `known` keeps the JSON texts of `b`'s entries between calls, for a `b` that never
    changes again (a task's gold end state, compared with every trajectory's).
    """
    if a is None or b is None:
        return a is b
    if a.base is not b.base:
        return db_hash(a) == db_hash(b)
    memo: dict[Any, str] = {} if known is None else known

    def text_of_b(key: Any, value: Any) -> str:
        found = memo.get(key)
        if found is None:
            found = memo[key] = _text(value)
        return found

    touched_a, touched_b = a.touched(), b.touched()
    for table in touched_a.keys() | touched_b.keys():
        for key in touched_a.get(table, set()) | touched_b.get(table, set()):
            if _text(a.get(table, key)) != text_of_b((table, key), b.get(table, key)):
                return False
    reached_a, reached_b = a.values_reached(), b.values_reached()
    for name in reached_a.keys() | reached_b.keys():
        left = reached_a.get(name, a.base[name])
        right = reached_b.get(name, b.base[name])
        if left is right:
            continue
        if isinstance(left, list) and isinstance(right, list):
            # a list's text is its items' texts joined, so compare item by item, skipping
            # the records both still share (lists are copied record by record)
            if len(left) != len(right) or not all(
                x is y or _text(x) == text_of_b((name, i), y)
                for i, (x, y) in enumerate(zip(left, right, strict=True))
            ):
                return False
        elif _text(left) != text_of_b(name, right):
            return False
    return True


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
