"""Episodes with a simulated user: who opens, and each way such an episode ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from deedbench.benchmarks.retail import RetailBenchmark
from deedbench.benchmarks.servicedesk import IdleAgent, OracleAgent
from deedbench.engine import (
    Agent,
    AgentContext,
    EpisodeSetup,
    EpisodeTranscript,
    ToolBox,
    run_episode,
    tool,
)
from deedbench.errors import ToolError
from deedbench.records import Message, Sample, Termination, ToolCall

CONTEXT = AgentContext(sample_id="s1", condition="default", epoch=1, seed=7)


@dataclass
class Desk:
    notes: list[str] = field(default_factory=list)


@tool
def note(desk: Desk, text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    desk.notes.append(text)
    return "noted"


@tool(ends_episode=True)
def hand_off(desk: Desk, summary: str) -> str:
    """Hand the customer to a human.

    Args:
        summary: What the human needs to know.
    """
    if not summary:
        raise ToolError("a summary is required")
    desk.notes.append(f"handed off: {summary}")
    return "Transfer successful"


class Turns:
    """An agent playing scripted turns (the last one forever) and recording what it saw."""

    def __init__(self, turns: Sequence[Message]) -> None:
        self.turns = list(turns)
        self.seen: list[list[Message]] = []

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        self.seen.append(list(messages))
        return self.turns[min(len(self.seen), len(self.turns)) - 1]


class Replies:
    """A user replying from a list (None ends the conversation), recording what it saw."""

    def __init__(self, replies: Sequence[str | None]) -> None:
        self.replies = list(replies)
        self.seen: list[list[Message]] = []

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        self.seen.append(list(messages))
        text = self.replies[min(len(self.seen), len(self.replies)) - 1]
        return None if text is None else Message(role="user", content=text)


def say(text: str) -> Message:
    return Message(role="assistant", content=text)


def calls(name: str, call_id: str = "c1", **kwargs: Any) -> Message:
    arguments = json.dumps(kwargs)
    return Message(
        role="assistant", tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)]
    )


def episode(
    agent: Agent,
    user: Replies | None,
    *,
    opening: Sequence[Message] = (),
    max_steps: int = 30,
) -> tuple[EpisodeTranscript, Desk]:
    desk = Desk()
    setup = EpisodeSetup(
        messages=[Message(role="system", content="policy"), *opening],
        toolbox=ToolBox([note, hand_off], desk),
        user=user,
        max_steps=max_steps,
    )
    return asyncio.run(run_episode(agent, setup, CONTEXT)), desk


def roles(transcript: EpisodeTranscript) -> list[str]:
    return [m.role for m in transcript.messages]


# --- who opens -------------------------------------------------------------------------------


def test_the_user_opens_when_there_is_no_user_message() -> None:
    user = Replies(["hello, i need help", None])
    agent = Turns([say("How can I help?")])
    transcript, _ = episode(agent, user)
    assert [m.role for m in user.seen[0]] == ["system"]
    assert [m.role for m in agent.seen[0]] == ["system", "user"]
    assert agent.seen[0][1].content == "hello, i need help"
    assert roles(transcript) == ["system", "user", "assistant"]
    assert transcript.termination is Termination.USER_STOPPED
    assert transcript.steps == 1


def test_the_user_does_not_open_when_a_user_message_is_there() -> None:
    user = Replies([None])
    agent = Turns([say("Hi!")])
    transcript, _ = episode(agent, user, opening=[Message(role="user", content="hi")])
    assert [m.content for m in agent.seen[0]] == ["policy", "hi"]
    assert len(user.seen) == 1  # asked only after the agent's turn
    assert roles(transcript) == ["system", "user", "assistant"]


def test_a_user_with_nothing_to_say_ends_the_episode_before_the_agent_acts() -> None:
    agent = Turns([say("never said")])
    transcript, _ = episode(agent, Replies([None]))
    assert transcript.termination is Termination.USER_STOPPED
    assert transcript.steps == 0
    assert agent.seen == []
    assert roles(transcript) == ["system"]


def test_the_user_is_not_asked_after_tool_results() -> None:
    user = Replies(["please note this", None])
    agent = Turns([calls("note", text="x"), say("Noted.")])
    transcript, desk = episode(agent, user)
    assert roles(transcript) == ["system", "user", "assistant", "tool", "assistant"]
    assert len(user.seen) == 2  # the opening and after "Noted."
    assert desk.notes == ["x"]


# --- transfers ------------------------------------------------------------------------------


def test_a_successful_transfer_ends_the_episode_as_transferred() -> None:
    user = Replies(["i want a person"])
    agent = Turns([calls("hand_off", summary="wants a person"), say("still here?")])
    transcript, desk = episode(agent, user)
    assert transcript.termination is Termination.TRANSFERRED
    assert transcript.termination == "transferred"
    assert transcript.steps == 1
    assert roles(transcript) == ["system", "user", "assistant", "tool"]
    assert transcript.messages[-1].content == "Transfer successful"
    assert len(agent.seen) == 1
    assert len(user.seen) == 1  # the user is not asked after the hand-off
    assert desk.notes == ["handed off: wants a person"]


def test_a_failed_transfer_does_not_end_the_episode() -> None:
    user = Replies(["i want a person", None])
    agent = Turns([calls("hand_off", summary=""), say("Sorry, let me try again later.")])
    transcript, desk = episode(agent, user)
    assert transcript.messages[3].error
    assert transcript.termination is Termination.USER_STOPPED
    assert transcript.steps == 2
    assert desk.notes == []


def test_a_tool_that_does_not_end_episodes_does_not_transfer() -> None:
    user = Replies(["note it", None])
    agent = Turns([calls("note", text="a"), say("done")])
    transcript, _ = episode(agent, user)
    assert transcript.termination is Termination.USER_STOPPED


def test_a_transfer_ends_the_episode_after_the_rest_of_its_turn() -> None:
    turn = Message(
        role="assistant",
        tool_calls=[
            ToolCall(id="a", name="hand_off", arguments=json.dumps({"summary": "s"})),
            ToolCall(id="b", name="note", arguments=json.dumps({"text": "after"})),
        ],
    )
    transcript, desk = episode(Turns([turn, say("more")]), Replies(["help"]))
    assert transcript.termination is Termination.TRANSFERRED
    assert roles(transcript) == ["system", "user", "assistant", "tool", "tool"]
    assert desk.notes == ["handed off: s", "after"]


# --- max steps ------------------------------------------------------------------------------


def test_max_steps_ends_an_endless_conversation() -> None:
    user = Replies(["go on"])
    agent = Turns([say("tell me more")])
    transcript, _ = episode(agent, user, max_steps=5)
    assert transcript.termination is Termination.MAX_STEPS
    assert transcript.termination == "max_steps"
    assert transcript.steps == 5
    assert len(agent.seen) == 5
    assert roles(transcript) == ["system"] + ["user", "assistant"] * 5 + ["user"]


def test_max_steps_counts_tool_turns_too() -> None:
    agent = Turns([calls("note", text="again")])
    transcript, desk = episode(agent, Replies(["start"]), max_steps=3)
    assert transcript.termination is Termination.MAX_STEPS
    assert transcript.steps == 3
    assert desk.notes == ["again"] * 3


# --- with the retail benchmark's scripted customer -------------------------------------------


def retail_episode(bench: RetailBenchmark, template: str, agent: Agent) -> EpisodeTranscript:
    task = next(t for t in bench.tasks.values() if t.template == template)
    sample = Sample(id=task.id, input="", metadata={})
    context = AgentContext(task.id, "default", 1, 0)
    return asyncio.run(run_episode(agent, bench.setup(sample, "default", 0), context))


def test_the_retail_customer_opens_with_its_first_request() -> None:
    bench = RetailBenchmark()
    transcript = retail_episode(bench, "cancel", IdleAgent())
    task = next(t for t in bench.tasks.values() if t.template == "cancel")
    assert transcript.messages[0].role == "system"
    assert transcript.messages[1].role == "user"
    assert transcript.messages[1].content == task.instructions.wants[0].say


def test_an_idle_agent_is_left_by_the_retail_customer_before_max_steps() -> None:
    bench = RetailBenchmark()
    for template in ("cancel", "exchange", "transfer", "info"):
        transcript = retail_episode(bench, template, IdleAgent())
        assert transcript.termination is Termination.USER_STOPPED, template
        assert transcript.steps < 30, template


def test_the_oracle_transfer_in_retail_ends_as_transferred() -> None:
    bench = RetailBenchmark()
    transcript = retail_episode(bench, "transfer", OracleAgent(bench.task, bench.domain))
    assert transcript.termination is Termination.TRANSFERRED
    last_call = transcript.messages[-2].tool_calls[0]
    assert last_call.name == "transfer_to_human_agents"
    assert transcript.messages[-1].role == "tool"
    assert not transcript.messages[-1].error


class _UserDown:
    """A model-played user whose endpoint fails on its second reply."""

    def __init__(self) -> None:
        self.replies = 0

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        self.replies += 1
        if self.replies > 1:
            from deedbench.errors import InfrastructureError

            raise InfrastructureError("the user's endpoint answered 503")
        return Message(role="user", content="hello")


def test_a_users_infrastructure_failure_keeps_the_conversation() -> None:
    """The user's failure ends the episode as an infrastructure error with what was said
    kept (before, it escaped the loop and the record lost every message); so does an
    interruption of either side, as `INTERRUPTED`."""
    from deedbench.engine.half_duplex import HalfDuplex
    from deedbench.errors import Interrupted

    async def talk(messages: Sequence[Message], *_: Any) -> Message:
        return Message(role="assistant", content="how can I help?")

    from deedbench.agents import FunctionAgent

    agent = FunctionAgent(talk)
    for half_duplex in (None, HalfDuplex(is_agent_stop=lambda m: False)):
        setup = EpisodeSetup(
            messages=[Message(role="system", content="s")],
            toolbox=ToolBox([note], Desk()),
            user=_UserDown(),
            half_duplex=half_duplex,
        )
        if half_duplex is not None:
            setup.messages.append(Message(role="assistant", content="Hi!"))
        transcript = asyncio.run(run_episode(agent, setup, CONTEXT))
        assert transcript.termination == Termination.INFRASTRUCTURE_ERROR
        assert transcript.error == "the user's endpoint answered 503"
        assert [m.content for m in transcript.messages if m.role != "system"][-2:] == [
            "hello",
            "how can I help?",
        ]

    async def stopped(*_: Any) -> Message:
        raise Interrupted("Ctrl-C")

    setup = EpisodeSetup(
        messages=[Message(role="system", content="s"), Message(role="user", content="hi")],
        toolbox=ToolBox([note], Desk()),
    )
    transcript = asyncio.run(run_episode(FunctionAgent(stopped), setup, CONTEXT))
    assert (transcript.termination, transcript.error) == (Termination.INTERRUPTED, "Ctrl-C")
    assert len(transcript.messages) == 2
