"""Model-free agents for any service desk, for proving the scoring offline.

- `oracle`: performs the gold actions with the proper dialogue: identifies the
  customer (as the domain's customers identify themselves), describes each
  change with its key ids, waits for a yes, then acts.
- `reckless`: performs the same actions without describing them or asking.
- `idle`: only chats; it never calls a tool.

Oracle and reckless read the task's answer key; they measure the scoring, not skill.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.task import FORBIDDEN, INFO, TRANSFER, Action, DeskTask
from deedbench.benchmarks.servicedesk.tau_toolbox import TRANSFER_TOOL
from deedbench.benchmarks.servicedesk.user import action_done
from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall, answered_calls
from deedbench.scoring.affirmation import classify_reply

__all__ = ["IdleAgent", "OracleAgent"]


def _call(context: AgentContext, messages: Sequence[Message], name: str, **kwargs: Any) -> Message:
    call_id = f"call_{context.epoch}_{len(messages)}"
    return Message(
        role="assistant", tool_calls=[ToolCall(id=call_id, name=name, arguments=json.dumps(kwargs))]
    )


def _say(text: str) -> Message:
    return Message(role="assistant", content=text)


def _proposal(action: Action, keys: Sequence[str]) -> str:
    words = action.name.replace("_", " ")
    details = "; ".join(f"{k}: {v}" for k, v in action.kwargs.items())
    return f"I can {words} ({details}). That concerns {', '.join(keys)}. Shall I proceed? (yes/no)"


class OracleAgent:
    """Knows each task's gold actions; `ask_first=False` makes it reckless."""

    def __init__(
        self, tasks: Callable[[str], DeskTask], domain: Domain, ask_first: bool = True
    ) -> None:
        self.tasks = tasks
        self.domain = domain
        self.ask_first = ask_first

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        task = self.tasks(context.sample_id)
        ins = task.instructions
        calls = [a.call for a in answered_calls(messages) if not a.failed]
        said = " ".join(m.content for m in messages if m.role == "user")
        identity = self.domain.identity(ins)
        looked_up = any(c.name in self.domain.procedure.auth_tools for c in calls)
        if identity.introduction(ins) not in said and not looked_up:
            ways = ", or ".join(i.asked_as for i in self.domain.talk.identities.values())
            return _say(f"I can help with that. First, please tell me {ways}.")
        if identity.lookup is not None and not looked_up:
            found = self.domain.lookup_arguments(ins)
            return _call(context, messages, identity.lookup, **found)
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        last_said = next((m.content for m in reversed(messages) if m.role == "assistant"), "")
        for want in ins.wants:
            action = want.action
            if want.kind == TRANSFER:
                return _call(
                    context,
                    messages,
                    TRANSFER_TOOL,
                    summary=f"Customer request: {want.say}",
                )
            if want.kind == FORBIDDEN:  # the customer only needs to hear a refusal
                if not any(m.role == "assistant" and "cannot" in m.content for m in messages):
                    return _say(
                        "I'm sorry, that order has already been processed or delivered, so it "
                        "cannot be cancelled under our policy."
                    )
                continue
            if want.kind == INFO:
                if not any(
                    all(e in m.content for e in want.expects)
                    for m in messages
                    if m.role == "assistant"
                ):
                    return _say("Here is what you asked about: " + "; ".join(want.expects) + ".")
                continue
            # a gold action that fails (τ-bench has some) is tried once, not forever
            if action is None or action_done(messages, action, count_failed=True):
                continue
            proposal = _proposal(action, self.domain.keys(action))
            if not self.ask_first or (last_said == proposal and classify_reply(last_user) == "yes"):
                return _call(context, messages, action.name, **action.kwargs)
            return _say(proposal)
        return _say("Is there anything else I can help you with?")


class IdleAgent:
    """Chats politely and never does anything."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        return _say("I understand. Could you tell me a bit more about what you need?")
