"""The episode loop: agent, tools and an optional simulated user, until something ends it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from deedbench.engine.agent import Agent, AgentContext, User, failure
from deedbench.engine.half_duplex import HalfDuplex, run_half_duplex
from deedbench.engine.tools import ToolBox
from deedbench.errors import ContextExceeded, InfrastructureError
from deedbench.records import Message, Termination, Usage

__all__ = ["EpisodeSetup", "EpisodeTranscript", "converse", "run_episode"]

_W = TypeVar("_W", default=Any)  # default: as `tools._W`


@dataclass
class EpisodeSetup(Generic[_W]):
    """Everything a benchmark hands the engine to run one episode, whose world is a `_W`."""

    messages: list[Message]
    toolbox: ToolBox[_W]
    user: User | None = None
    max_steps: int = 30
    max_tool_errors: int | None = 10  # consecutive failed calls that end it; None: no limit
    opening_stops: bool = True
    """Whether a stop in the user's opening message ends the episode before the agent
    speaks (τ-bench never looks at the opening message: its agent answers it)."""
    half_duplex: HalfDuplex | None = None
    """τ²'s protocol, where the user may have tools of their own (`half_duplex.py`);
    `max_steps` then counts every message passed, `max_tool_errors` is unused."""
    after: Callable[[EpisodeTranscript[_W]], Awaitable[None]] | None = None
    """Model work on the finished episode before it is scored (τ²'s NL judge), which
    records what it found in the transcript's `annotations` and its cost in `usage`;
    an `InfrastructureError` from it makes the episode one (it runs again on resume)."""


@dataclass
class EpisodeTranscript(Generic[_W]):
    """What happened: the full conversation, why it stopped, and the world it left (a `_W`,
    typed so that a benchmark's scorer reads its own world without narrowing it)."""

    messages: list[Message]
    termination: Termination
    steps: int
    error: str | None = None
    # None only in a transcript built by hand for a scorer that reads no world (the engine
    # always passes its toolbox's); mypy cannot type a default that is None whatever _W is
    state: _W = field(default=None, repr=False)  # type: ignore[assignment]
    annotations: dict[str, Any] = field(default_factory=dict)
    """What the setup's `after` found (the judge's verdicts), for the scorer."""
    usage: dict[str, Usage] = field(default_factory=dict)
    """Model use outside the conversation (the judge's), by role."""


async def run_episode(
    agent: Agent, setup: EpisodeSetup[_W], context: AgentContext
) -> EpisodeTranscript[_W]:
    """Run the episode's conversation (`converse`), then the setup's `after`, if any."""
    transcript = await converse(agent, setup, context)
    if setup.after is None or transcript.termination.unscored:
        return transcript
    try:
        await setup.after(transcript)
    except InfrastructureError as exc:
        transcript.termination = Termination.INFRASTRUCTURE_ERROR
        transcript.error = str(exc)
    return transcript


async def converse(
    agent: Agent, setup: EpisodeSetup[_W], context: AgentContext
) -> EpisodeTranscript[_W]:
    """Alternate agent turns, tool results and user replies until the episode ends.

    With a simulated user and no user message yet, the user opens. The toolbox runs
    each turn (`ToolBox.take_turn`: which calls run, whether the turn speaks to the
    user, whether it ends the episode, such as a transfer to a human).
    `max_tool_errors` counts consecutive failed tool calls; a successful call resets it.
    A reply the provider cut short with no tool call ends the episode with its own
    termination (it is no answer to give a user, and no refusal), and so does a prompt
    over the context window, from the agent or from a model-played user. With
    `half_duplex` set, the episode follows that protocol instead (`run_half_duplex`).
    """
    messages = list(setup.messages)
    toolbox = setup.toolbox
    if setup.half_duplex is not None:
        reason, taken, error = await run_half_duplex(
            agent, messages, toolbox, setup.user, setup.half_duplex, setup.max_steps, context
        )
        return EpisodeTranscript(messages, reason, taken, error, toolbox.state)
    specs = toolbox.specs()
    steps = 0
    failed_in_a_row = 0

    def end(reason: Termination, error: str | None = None) -> EpisodeTranscript[_W]:
        return EpisodeTranscript(messages, reason, steps, error, toolbox.state)

    async def user_turn(user: User, can_stop: bool = True) -> bool:
        """Let the user speak; False when the conversation is over (an InfrastructureError
        from the user passes through)."""
        reply = await user.reply(messages)
        if reply is not None:
            messages.append(reply)
        return reply is not None and not (can_stop and getattr(user, "finished", False))

    user = setup.user
    opens = not any(m.role == "user" for m in messages)  # with a user, the user opens
    try:
        if user is not None and opens and not await user_turn(user, setup.opening_stops):
            return end(Termination.USER_STOPPED)
        while True:
            if steps >= setup.max_steps:
                return end(Termination.MAX_STEPS)
            turn = await agent.next_turn(messages, specs, context)
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
    except InfrastructureError as exc:
        return end(failure(exc), str(exc))
