"""The half-duplex loop: τ²'s protocol, its limits and its endings."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from deedbench.agents.function import FunctionAgent
from deedbench.engine import AgentContext, EpisodeSetup, HalfDuplex, ToolBox, run_episode, tool
from deedbench.errors import ToolError
from deedbench.records import Message, Termination, ToolCall

CONTEXT = AgentContext("s", "default", 0, 0)


@tool
def ping(state: Any) -> str:
    """Answer pong."""
    return "pong"


@tool
def fail(state: Any) -> str:
    """Always fails."""
    raise ToolError("no")


class Script:
    """A user saying its lines in order, then stopping."""

    def __init__(self, *lines: Message) -> None:
        self.lines = list(lines)
        self.finished = False
        self.seen: list[list[Message]] = []

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        self.seen.append(list(messages))
        line = self.lines.pop(0)
        self.finished = "###STOP###" in line.content and not line.tool_calls
        return line


def said(text: str) -> Message:
    return Message(role="user", content=text)


def calls(role: str, *names: str) -> Message:
    found = [ToolCall.decoded(f"{role}{i}", n, {}) for i, n in enumerate(names)]
    return Message(role=role, content="", tool_calls=found)  # type: ignore[arg-type]


def episode(
    agent_turns: list[Message], user: Script | None, max_steps: int = 200, **rules: Any
) -> Any:
    turns = list(agent_turns)
    seen: list[list[Message]] = []

    def agent(messages: Sequence[Message], tools: Any, context: Any) -> Message:
        seen.append(list(messages))
        return turns.pop(0)

    setup = EpisodeSetup(
        messages=[Message(role="system", content="p")]
        + ([] if rules.get("solo") else [Message(role="assistant", content="Hi!")]),
        toolbox=ToolBox([ping, fail], None),
        user=user,
        max_steps=max_steps,
        half_duplex=HalfDuplex(
            is_agent_stop=lambda m: "###STOP###" in m.content,
            user_tools=ToolBox([ping], None),
            **rules,
        ),
    )
    return asyncio.run(run_episode(FunctionAgent(agent), setup, CONTEXT)), seen


def test_user_tool_calls_are_answered_to_the_user_and_hidden_from_the_agent() -> None:
    user = Script(calls("user", "ping"), said("it says pong"), said("bye ###STOP###"))
    transcript, seen = episode([Message(role="assistant", content="ok")], user)
    assert transcript.termination == Termination.USER_STOPPED
    roles = [(m.role, m.requestor) for m in transcript.messages[2:]]
    assert roles == [
        ("user", None),
        ("tool", "user"),
        ("user", None),
        ("assistant", None),
        ("user", None),
    ]
    assert user.seen[1][-1].content == "pong"  # the user read its own result
    agent_view = seen[0]
    assert all(m.visible_to_agent for m in agent_view)
    assert [m.content for m in agent_view][-1] == "it says pong"
    assert transcript.steps == 5  # every message passed is a step, the results too


def test_text_with_tool_calls_is_the_senders_error_only_when_enforced() -> None:
    """τ²'s --enforce-communication-protocol; without it (τ²'s default) the calls run."""
    both = Message(role="assistant", content="hi", tool_calls=[ToolCall.decoded("c", "ping", {})])
    strict, _ = episode([both], Script(said("help")), enforce_protocol=True)
    assert strict.termination == Termination.AGENT_ERROR
    assert strict.error == "the agent sent both text and tool calls"
    stop = Message(role="assistant", content="done ###STOP###")
    lenient, _ = episode([both, stop], Script(said("help")))
    assert lenient.termination == Termination.AGENT_FINISHED
    assert [m.content for m in lenient.messages if m.role == "tool"] == ["pong"]
    user_both = Message(role="user", content="hm", tool_calls=[ToolCall.decoded("u", "ping", {})])
    mixed, _ = episode([], Script(user_both), enforce_protocol=True)
    assert mixed.termination == Termination.USER_ERROR


def test_an_empty_message_is_an_infrastructure_error_in_either_mode() -> None:
    """τ²'s messages raise on being empty whatever the flag: its runner retries the
    simulation and then records infrastructure_error."""
    for enforced in (False, True):
        empty, _ = episode([], Script(said("")), enforce_protocol=enforced)
        assert empty.termination == Termination.INFRASTRUCTURE_ERROR
        assert empty.error == "the user sent an empty message"
        silent, _ = episode([Message(role="assistant", content=" ")], Script(said("help")))
        assert silent.termination == Termination.INFRASTRUCTURE_ERROR


def test_failed_calls_are_counted_in_all_not_in_a_row() -> None:
    turns = [calls("assistant", "fail", "ping", "fail")] * 3 + [calls("assistant", "fail")] * 5
    transcript, _ = episode(turns, Script(said("help")), max_errors=7)
    assert transcript.termination == Termination.TOO_MANY_TOOL_ERRORS
    assert sum(1 for m in transcript.messages if m.role == "tool" and m.error) == 7


def test_a_limit_reached_with_a_stop_overrides_it() -> None:
    # greeting, user, agent stop: the stop is the 2nd step; max_steps=2 makes it max_steps
    stop = Message(role="assistant", content="done ###STOP###")
    transcript, _ = episode([stop], Script(said("help")), max_steps=2)
    assert transcript.termination == Termination.MAX_STEPS
    transcript, _ = episode([stop], Script(said("help")), max_steps=3)
    assert transcript.termination == Termination.AGENT_FINISHED


def test_solo_text_is_an_error_and_the_stop_tool_a_stop() -> None:
    transcript, _ = episode(
        [calls("assistant", "ping"), calls("assistant", "done")], None, solo=True, stop_tool="done"
    )
    assert transcript.termination == Termination.AGENT_FINISHED
    assert transcript.messages[-1].content == "###STOP###"
    assert not transcript.messages[-1].tool_calls
    spoke, _ = episode([Message(role="assistant", content="hello")], None, solo=True)
    assert spoke.termination == Termination.AGENT_ERROR
