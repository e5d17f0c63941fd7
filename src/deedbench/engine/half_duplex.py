"""The half-duplex episode: agent, user and both sides' tools, one message at a time.

Where the user has tools of their own (τ²'s dual control: a phone the agent asks
them to operate), the conversation follows τ²'s protocol, which this loop keeps:

- a message is never empty: an empty one ends the episode as an infrastructure error
  (τ²'s messages raise on being empty, and its runner retries the simulation, then
  records ``infrastructure_error``; here it is kept out of every rate and run again
  on resume);
- a message with both text and tool calls is, with `HalfDuplex.enforce_protocol`
  (τ²'s ``--enforce-communication-protocol``), its sender's error (`AGENT_ERROR`,
  `USER_ERROR`); without it, as in τ² by default, its calls are run and its text goes
  nowhere;
- a message with tool calls goes to the environment, which runs every call for its
  sender (`HalfDuplex.agent_tools` or `user_tools`) and answers the sender alone;
- a text message goes to the other party; an agent message `is_agent_stop` ends the
  episode (`AGENT_FINISHED`), and so does the user's reply when the user says it
  is `finished` (`USER_STOPPED`);
- each message passed (the agent's, the user's, a batch of tool results) is one
  step; when the next message is not for the environment, `max_steps` steps end it
  (`MAX_STEPS`) and so do `max_errors` failed calls in all, on either side
  (`TOO_MANY_TOOL_ERRORS`): a limit reached overrides a stop in the same step, as
  in τ²;
- in solo mode there is no user: the agent must act through tools, and a text
  message that is not a stop ends it as the agent's error.

The conversation may start anywhere (a task's opening conversation): whoever the
last message is for speaks next. The agent never sees the user's tool calls or
their results (`Message.visible_to_agent`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from deedbench.engine.agent import Agent, AgentContext, User, failure
from deedbench.engine.tools import ToolBox
from deedbench.errors import ContextExceeded, InfrastructureError
from deedbench.records import Message, Termination

__all__ = ["HalfDuplex", "run_half_duplex"]

_Party = Literal["agent", "user", "agent_tools", "user_tools"]


@dataclass
class HalfDuplex:
    """The rules of a half-duplex episode and the user's own tools."""

    is_agent_stop: Callable[[Message], bool]
    user_tools: ToolBox[Any] | None = None
    max_errors: int = 10
    solo: bool = False
    stop_tool: str | None = None
    """A tool whose call is the agent's stop (τ²'s solo ``done``): the message is recorded
    as `stop_text` instead, with no calls."""
    stop_text: str = "###STOP###"
    enforce_protocol: bool = False
    """Whether a message with both text and tool calls ends the episode (see above)."""
    tool_choice: str | None = None
    """What the agent's model requests ask of its tools (`AgentContext.tool_choice`): τ²
    sends ``"auto"``, its solo agent ``"required"``; None sends nothing."""


def _next(message: Message) -> _Party:
    """Whom the last message of a conversation is for."""
    if message.role == "assistant":
        return "agent_tools" if message.tool_calls else "user"
    if message.role == "user":
        return "user_tools" if message.tool_calls else "agent"
    if message.role == "tool":
        return "user" if message.requestor == "user" else "agent"
    return "agent"  # only the system prompt: the agent opens (solo mode)


def _malformed(message: Message, rules: HalfDuplex) -> tuple[Termination, str] | None:
    """How a message that breaks the protocol ends the episode (None: it does not)."""
    text = bool(message.content.strip())
    sender = "user" if message.role == "user" else "agent"
    if not message.tool_calls and not text:
        return Termination.INFRASTRUCTURE_ERROR, f"the {sender} sent an empty message"
    if message.tool_calls and text and rules.enforce_protocol:
        error = Termination.USER_ERROR if sender == "user" else Termination.AGENT_ERROR
        return error, f"the {sender} sent both text and tool calls"
    return None


async def run_half_duplex(
    agent: Agent,
    messages: list[Message],
    agent_tools: ToolBox[Any],
    user: User | None,
    rules: HalfDuplex,
    max_steps: int,
    context: AgentContext,
) -> tuple[Termination, int, str | None]:
    """Run the conversation in `messages` (extended in place) to its end: the
    termination, the steps taken and the error, if any."""
    specs = agent_tools.specs()
    if rules.tool_choice is not None:
        context = replace(context, tool_choice=rules.tool_choice)
    steps = 0
    errors = 0
    ended: Termination | None = None
    detail: str | None = None
    party: _Party = _next(messages[-1]) if messages else "agent"
    if messages and messages[-1].role == "assistant" and rules.is_agent_stop(messages[-1]):
        return Termination.AGENT_FINISHED, 0, None
    try:
        while ended is None:
            if party == "user":
                if user is None:
                    return Termination.AGENT_ERROR, steps, "there is no user to speak to"
                reply = await user.reply(messages)
                if reply is None:
                    return Termination.USER_STOPPED, steps, None
                messages.append(reply)
                party = "user_tools" if reply.tool_calls else "agent"
                problem = _malformed(reply, rules)
                if problem is not None:
                    ended, detail = problem
                elif not reply.tool_calls and getattr(user, "finished", False):
                    ended = Termination.USER_STOPPED
            elif party == "agent":
                view = [m for m in messages if m.visible_to_agent]
                turn = await agent.next_turn(view, specs, context)
                if rules.stop_tool and any(c.name == rules.stop_tool for c in turn.tool_calls):
                    turn = turn.model_copy(update={"content": rules.stop_text, "tool_calls": []})
                messages.append(turn)
                party = "agent_tools" if turn.tool_calls else "user"
                problem = _malformed(turn, rules)
                if rules.is_agent_stop(turn):
                    ended = Termination.AGENT_FINISHED
                if problem is not None:
                    ended, detail = problem
                elif turn.truncated_by == "length" and not turn.tool_calls:
                    ended = Termination.OUTPUT_TRUNCATED
                elif turn.truncated_by == "content_filter" and not turn.tool_calls:
                    ended = Termination.CONTENT_FILTERED
                elif ended is None and rules.solo and not turn.tool_calls:
                    ended, detail = Termination.AGENT_ERROR, "the agent spoke in solo mode"
            else:
                toolbox = agent_tools if party == "agent_tools" else rules.user_tools
                if toolbox is None:
                    return Termination.USER_ERROR, steps, "the user has no tools"
                outcome = toolbox.take_turn(messages[-1])
                results = outcome.results
                if party == "user_tools":  # answered to the user alone, whatever the toolbox
                    results = [r.model_copy(update={"requestor": "user"}) for r in results]
                messages.extend(results)
                errors += sum(1 for result in results if result.error)
                party = "agent" if party == "agent_tools" else "user"
            steps += 1
            if party in ("agent_tools", "user_tools"):
                continue
            if steps >= max_steps:
                ended = Termination.MAX_STEPS
            if errors >= rules.max_errors:
                ended = Termination.TOO_MANY_TOOL_ERRORS
    except ContextExceeded as exc:
        return Termination.CONTEXT_EXCEEDED, steps, str(exc)
    except InfrastructureError as exc:  # the agent's or the user's, the conversation kept
        return failure(exc), steps, str(exc)
    return ended, steps, detail
