"""The episode loop: agent, tools and an optional simulated user, until something ends it."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from deedbench.engine.messages import Message
from deedbench.engine.termination import Termination
from deedbench.engine.tools import ToolBox

__all__ = [
    "Agent",
    "AgentContext",
    "ContextExceeded",
    "EpisodeSetup",
    "EpisodeTranscript",
    "InfrastructureError",
    "RunAborted",
    "Termination",
    "User",
    "gather_or_abort",
    "run_episode",
]

T = TypeVar("T")


class RunAborted(Exception):
    """A failure that dooms every episode alike (bad credentials, a rejected request).

    The runner stops the whole run instead of recording one error per episode.
    """


async def gather_or_abort(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines concurrently; their results in order.

    A RunAborted in any one cancels the rest and is raised as itself, not inside an
    exception group, so the caller can report its reason as it is.
    """
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(coroutine) for coroutine in coroutines]
    except BaseExceptionGroup as failures:
        aborted = next((e for e in failures.exceptions if isinstance(e, RunAborted)), None)
        if aborted is not None:
            raise aborted from None
        raise
    return [task.result() for task in tasks]


class ContextExceeded(Exception):
    """The conversation no longer fits the model's context window (the provider said so).

    Only this episode is doomed, and asking again would overflow again: it ends with
    `Termination.CONTEXT_EXCEEDED` and is scored on what happened until then.
    """


class InfrastructureError(Exception):
    """A failure outside the agent's control (a provider outage, a dead connection).

    Episodes that end this way are kept out of every rate and run again on resume.
    """


@dataclass(frozen=True)
class AgentContext:
    """What an agent may know about the episode it is in, besides the conversation."""

    sample_id: str
    condition: str
    epoch: int
    seed: int


class Agent(Protocol):
    """Given the conversation and the tool specs, return the next assistant message.

    The one protocol every agent implements, model-backed or not. Raise
    `InfrastructureError` for failures that are not the agent's own doing.
    """

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message: ...


class User(Protocol):
    """A simulated user: answers the agent, or returns None to end the conversation.

    A user whose `finished` attribute is true after a reply ends the conversation
    with that reply kept (an LLM user's goodbye carrying its stop token).
    """

    async def reply(self, messages: Sequence[Message]) -> Message | None: ...


@dataclass
class EpisodeSetup:
    """Everything a benchmark hands the engine to run one episode."""

    messages: list[Message]
    toolbox: ToolBox
    user: User | None = None
    max_steps: int = 30
    max_tool_errors: int | None = 10  # consecutive failed calls that end it; None: no limit


@dataclass
class EpisodeTranscript:
    """What happened: the full conversation and why it stopped."""

    messages: list[Message]
    termination: Termination
    steps: int
    error: str | None = None
    state: Any = field(default=None, repr=False)


async def run_episode(
    agent: Agent, setup: EpisodeSetup, context: AgentContext
) -> EpisodeTranscript:
    """Alternate agent turns, tool results and user replies until the episode ends.

    With a simulated user and no user message yet, the user opens. The toolbox runs
    each turn (`ToolBox.take_turn`: which calls run, whether the turn speaks to the
    user, whether it ends the episode, such as a transfer to a human).
    `max_tool_errors` counts consecutive failed tool calls; a successful call resets it.
    A reply the provider cut short with no tool call ends the episode with its own
    termination (it is no answer to give a user, and no refusal), and so does a prompt
    over the context window, from the agent or from a model-played user.
    """
    messages = list(setup.messages)
    toolbox = setup.toolbox
    specs = toolbox.specs()
    steps = 0
    failed_in_a_row = 0

    def end(reason: Termination, error: str | None = None) -> EpisodeTranscript:
        return EpisodeTranscript(messages, reason, steps, error, toolbox.state)

    async def user_turn(user: User) -> bool:
        """Let the user speak; False when the conversation is over."""
        reply = await user.reply(messages)
        if reply is not None:
            messages.append(reply)
        return reply is not None and not getattr(user, "finished", False)

    user = setup.user
    opens = not any(m.role == "user" for m in messages)  # with a user, the user opens
    try:
        if user is not None and opens and not await user_turn(user):
            return end(Termination.USER_STOPPED)
        while True:
            if steps >= setup.max_steps:
                return end(Termination.MAX_STEPS)
            try:
                turn = await agent.next_turn(messages, specs, context)
            except InfrastructureError as exc:
                return end(Termination.INFRASTRUCTURE_ERROR, str(exc))
            steps += 1
            outcome = toolbox.take_turn(turn)
            messages.append(outcome.turn)
            messages.extend(outcome.results)
            for result in outcome.results:
                failed_in_a_row = failed_in_a_row + 1 if result.error else 0
            if outcome.ends is not None:
                return end(outcome.ends)
            if not outcome.hands_over:
                limit = setup.max_tool_errors
                if limit is not None and failed_in_a_row >= limit:
                    return end(Termination.TOO_MANY_TOOL_ERRORS)
                continue
            if outcome.turn.truncated_by == "length":
                return end(Termination.OUTPUT_TRUNCATED)
            if outcome.turn.truncated_by == "content_filter":
                return end(Termination.CONTENT_FILTERED)
            if user is None:
                return end(Termination.AGENT_FINISHED)
            if not await user_turn(user):
                return end(Termination.USER_STOPPED)
    except ContextExceeded as exc:
        return end(Termination.CONTEXT_EXCEEDED, str(exc))
