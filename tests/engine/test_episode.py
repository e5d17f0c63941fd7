"""The episode loop: each way an episode ends, multiple calls per turn, recovery from errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from deedbench.agents import FunctionAgent
from deedbench.engine import (
    AgentContext,
    EpisodeSetup,
    EpisodeTranscript,
    ToolBox,
    run_episode,
    tool,
)
from deedbench.errors import ContextExceeded, InfrastructureError, ToolError
from deedbench.records import Message, Termination, ToolCall

CONTEXT = AgentContext(sample_id="s1", condition="plain", epoch=1, seed=42)


@dataclass
class Notebook:
    lines: list[str] = field(default_factory=list)


@tool
def write(book: Notebook, text: str) -> str:
    """Write a line.

    Args:
        text: The line.
    """
    if text == "forbidden":
        raise ToolError("that line may not be written")
    book.lines.append(text)
    return f"wrote line {len(book.lines)}"


def call(call_id: str, text: str | None = None, *, name: str = "write") -> ToolCall:
    arguments = "{}" if text is None else json.dumps({"text": text})
    return ToolCall(id=call_id, name=name, arguments=arguments)


def turn(*calls: ToolCall, content: str = "") -> Message:
    return Message(role="assistant", content=content, tool_calls=list(calls))


class Script:
    """An agent function that plays scripted turns and records what it was shown."""

    def __init__(self, turns: Sequence[Message | str | Exception]) -> None:
        self.turns = list(turns)
        self.seen: list[list[Message]] = []
        self.contexts: list[AgentContext] = []
        self.tools: list[Sequence[dict[str, Any]]] = []

    def __call__(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message | str:
        self.seen.append(list(messages))
        self.contexts.append(context)
        self.tools.append(tools)
        step = self.turns[len(self.seen) - 1]
        if isinstance(step, Exception):
            raise step
        return step


class ScriptedUser:
    """Replies from a list, then returns None to end the conversation."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.calls = 0

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        self.calls += 1
        if not self.replies:
            return None
        return Message(role="user", content=self.replies.pop(0))


def setup(
    user: ScriptedUser | None = None, *, max_steps: int = 30, max_tool_errors: int = 10
) -> EpisodeSetup:
    return EpisodeSetup(
        messages=[Message(role="system", content="sys"), Message(role="user", content="hi")],
        toolbox=ToolBox([write], Notebook()),
        user=user,
        max_steps=max_steps,
        max_tool_errors=max_tool_errors,
    )


def play(script: Script, episode: EpisodeSetup) -> EpisodeTranscript:
    return asyncio.run(run_episode(FunctionAgent(script), episode, CONTEXT))


def roles(transcript: EpisodeTranscript) -> list[str]:
    return [m.role for m in transcript.messages]


def test_text_turn_without_user_finishes() -> None:
    script = Script([turn(call("a", "one")), "done"])
    episode = setup()
    result = play(script, episode)
    assert result.termination is Termination.AGENT_FINISHED
    assert result.steps == 2
    assert result.error is None
    assert roles(result) == ["system", "user", "assistant", "tool", "assistant"]
    assert result.messages[-1].content == "done"
    assert result.state is episode.toolbox.state
    assert result.state.lines == ["one"]
    # The setup's own message list is not mutated by the loop.
    assert len(episode.messages) == 2


def test_agent_sees_conversation_tools_and_context() -> None:
    script = Script([turn(call("a", "one")), "done"])
    play(script, setup())
    assert [m.role for m in script.seen[0]] == ["system", "user"]
    assert [m.role for m in script.seen[1]] == ["system", "user", "assistant", "tool"]
    assert script.contexts == [CONTEXT, CONTEXT]
    assert [t["function"]["name"] for t in script.tools[0]] == ["write"]


def test_user_replies_then_stops() -> None:
    user = ScriptedUser(["go on"])
    script = Script(["first answer", "second answer"])
    result = play(script, setup(user))
    assert result.termination is Termination.USER_STOPPED
    assert result.steps == 2
    assert user.calls == 2
    assert roles(result) == ["system", "user", "assistant", "user", "assistant"]
    assert result.messages[3].content == "go on"
    # The agent's second turn saw the user's reply.
    assert script.seen[1][-1].content == "go on"


def test_user_is_not_asked_while_the_agent_uses_tools() -> None:
    user = ScriptedUser([])
    script = Script([turn(call("a", "x")), turn(call("b", "y")), "done"])
    result = play(script, setup(user))
    assert result.termination is Termination.USER_STOPPED
    assert user.calls == 1
    assert result.state.lines == ["x", "y"]


def test_max_steps() -> None:
    script = Script([turn(call(f"c{i}", f"line {i}")) for i in range(10)])
    result = play(script, setup(max_steps=3))
    assert result.termination is Termination.MAX_STEPS
    assert result.steps == 3
    assert len(script.seen) == 3  # the agent is not asked a fourth time
    assert result.state.lines == ["line 0", "line 1", "line 2"]
    assert roles(result)[-1] == "tool"


def test_max_steps_counts_agent_turns_not_user_replies() -> None:
    user = ScriptedUser(["more"] * 10)
    script = Script(["a", "b", "c", "d"])
    result = play(script, setup(user, max_steps=2))
    assert result.termination is Termination.MAX_STEPS
    assert result.steps == 2
    assert roles(result)[2:] == ["assistant", "user", "assistant", "user"]


def test_too_many_consecutive_tool_errors() -> None:
    script = Script([turn(call(f"c{i}", name="nope")) for i in range(10)])
    result = play(script, setup(max_tool_errors=3))
    assert result.termination is Termination.TOO_MANY_TOOL_ERRORS
    assert result.steps == 3
    errors = [m for m in result.messages if m.role == "tool"]
    assert len(errors) == 3
    assert all(m.error for m in errors)


def test_errors_within_one_turn_count_towards_the_limit() -> None:
    script = Script([turn(call("a", "forbidden"), call("b", "forbidden"), call("c", name="no"))])
    result = play(script, setup(max_tool_errors=3))
    assert result.termination is Termination.TOO_MANY_TOOL_ERRORS
    assert result.steps == 1


def test_successful_call_resets_the_error_count() -> None:
    bad = turn(call("bad", "forbidden"))
    good = turn(call("good", "fine"))
    script = Script([bad, bad, good, bad, bad, good, "done"])
    result = play(script, setup(max_tool_errors=3))
    assert result.termination is Termination.AGENT_FINISHED
    assert result.steps == 7
    assert result.state.lines == ["fine", "fine"]

    # Without the reset, the same errors in a row do end the episode.
    script = Script([bad, bad, bad, good, "done"])
    result = play(script, setup(max_tool_errors=3))
    assert result.termination is Termination.TOO_MANY_TOOL_ERRORS
    assert result.steps == 3


def test_infrastructure_error_ends_episode_with_its_message() -> None:
    script = Script([turn(call("a", "one")), InfrastructureError("provider returned 503")])
    result = play(script, setup())
    assert result.termination is Termination.INFRASTRUCTURE_ERROR
    assert result.error == "provider returned 503"
    assert result.steps == 1
    # The conversation so far is kept.
    assert roles(result) == ["system", "user", "assistant", "tool"]
    assert result.state.lines == ["one"]


@pytest.mark.parametrize(
    ("truncated_by", "termination"),
    [("length", Termination.OUTPUT_TRUNCATED), ("content_filter", Termination.CONTENT_FILTERED)],
)
def test_a_reply_cut_short_ends_the_episode_with_its_own_termination(
    truncated_by: Literal["length", "content_filter"], termination: Termination
) -> None:
    """Not a finished answer, and never handed to the user as one."""
    user = ScriptedUser(["go ahead"])
    cut = Message(role="assistant", content="The best option is", truncated_by=truncated_by)
    result = play(Script([turn(call("a", "one")), cut]), setup(user))
    assert result.termination is termination
    assert result.steps == 2
    assert result.messages[-1] == cut
    assert user.calls == 0


def test_tool_calls_in_a_reply_cut_short_still_run() -> None:
    cut = turn(call("a", "one"))
    cut.truncated_by = "length"
    result = play(Script([cut, "done"]), setup())
    assert result.termination is Termination.AGENT_FINISHED
    assert result.state.lines == ["one"]


def test_a_prompt_over_the_context_window_ends_the_episode_with_what_happened() -> None:
    script = Script([turn(call("a", "one")), ContextExceeded("over the context window")])
    result = play(script, setup())
    assert result.termination is Termination.CONTEXT_EXCEEDED
    assert result.error == "over the context window"
    assert result.steps == 1
    assert roles(result) == ["system", "user", "assistant", "tool"]
    assert result.state.lines == ["one"]


def test_a_user_over_the_context_window_ends_the_episode_too() -> None:
    class Overflowing(ScriptedUser):
        async def reply(self, messages: Sequence[Message]) -> Message | None:
            raise ContextExceeded("the user's prompt is over the context window")

    result = play(Script(["first answer"]), setup(Overflowing([])))
    assert result.termination is Termination.CONTEXT_EXCEEDED
    assert result.steps == 1


def test_other_agent_exceptions_propagate() -> None:
    """Only InfrastructureError is absorbed by the loop; the runner records the rest."""
    script = Script([ValueError("agent bug")])
    with pytest.raises(ValueError, match="agent bug"):
        play(script, setup())


def test_several_calls_in_one_turn_run_in_order() -> None:
    script = Script(
        [turn(call("c1", "first"), call("c2", "second"), call("c3", "third"), content="x"), "ok"]
    )
    result = play(script, setup())
    assert result.termination is Termination.AGENT_FINISHED
    assert result.steps == 2
    assert result.state.lines == ["first", "second", "third"]
    tool_messages = result.messages[3:6]
    assert [m.tool_call_id for m in tool_messages] == ["c1", "c2", "c3"]
    assert [m.content for m in tool_messages] == ["wrote line 1", "wrote line 2", "wrote line 3"]
    assert roles(result) == ["system", "user", "assistant", "tool", "tool", "tool", "assistant"]


def test_a_failing_call_does_not_stop_the_others_in_its_turn() -> None:
    script = Script([turn(call("c1", "forbidden"), call("c2", "kept")), "ok"])
    result = play(script, setup())
    first, second = result.messages[3:5]
    assert (first.tool_call_id, first.error) == ("c1", True)
    assert (second.tool_call_id, second.error) == ("c2", False)
    assert result.state.lines == ["kept"]


def test_agent_recovers_after_tool_error() -> None:
    script = Script(
        [
            turn(call("c1", name="wirte")),
            turn(ToolCall(id="c2", name="write", arguments='{"txt": "oops"}')),
            turn(call("c3", "hello")),
            "all done",
        ]
    )
    result = play(script, setup())
    assert result.termination is Termination.AGENT_FINISHED
    assert result.steps == 4
    error_1, error_2 = result.messages[3], result.messages[5]
    assert error_1.error and "unknown tool 'wirte'" in error_1.content
    assert error_2.error and "unexpected argument 'txt'" in error_2.content
    # The agent was shown the error observation before its next turn.
    assert script.seen[1][-1] == error_1
    assert script.seen[2][-1] == error_2
    assert result.messages[7].error is False
    assert result.state.lines == ["hello"]


class _Stopper:
    """Says `lines` in turn, `finished` after one holding ###STOP###."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        self.finished = False

    async def reply(self, messages: Sequence[Message]) -> Message:
        line = self.lines.pop(0)
        self.finished = "###STOP###" in line
        return Message(role="user", content=line)


@pytest.mark.parametrize("opening_stops", [True, False])
def test_a_stop_in_the_opening_message_ends_it_only_when_the_setup_says_so(
    opening_stops: bool,
) -> None:
    """τ-bench's agent answers the opening message whatever it holds (`opening_stops`)."""
    episode = EpisodeSetup(
        messages=[Message(role="system", content="sys")],
        toolbox=ToolBox([write], Notebook()),
        user=_Stopper(["hi ###STOP###", "bye ###STOP###"]),
        opening_stops=opening_stops,
    )
    result = play(Script(["hello"]), episode)
    assert result.termination is Termination.USER_STOPPED
    assert roles(result) == (
        ["system", "user"] if opening_stops else ["system", "user", "assistant", "user"]
    )
