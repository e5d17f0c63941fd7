"""The scripted customer: plays a task's structured instructions, deterministically.

It reads only what a customer would (the agent's replies, `conversation`) plus, to know when its
goal is met, which of its requested changes the transcript shows done. It says
yes only to a proposal that uses its request's kind of change and names its ids
(the domain's verbs and key ids), no to anything else, answers the questions its
domain's customers answer, and stops when it has what it came for (or after
repeating itself too often).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.task import (
    FORBIDDEN,
    INFO,
    TRANSFER,
    Action,
    UserInstructions,
    Want,
)
from deedbench.benchmarks.servicedesk.tau_toolbox import conversation
from deedbench.records import Message, answered_calls
from deedbench.scoring.outputs import outputs_compat

__all__ = ["MAX_REPEATS", "ScriptedUser", "action_done"]

MAX_REPEATS = 3
_PROPOSES = re.compile(
    r"\b(confirm|proceed|shall i|should i|would you like me to|do you want me to|go ahead|"
    r"yes or no|yes/no|is that (right|correct|ok))"
)
_REFUSES = re.compile(r"\b(cannot|can't|can not|unable|not able|not possible|not allowed|sorry)\b")


def _names(text: str, value: str) -> bool:
    """Whether `text` names `value` as a whole token ("329 Willow" is not in "1329 Willow")."""
    pattern = r"(?<![\w#])#?" + re.escape(value.lower().lstrip("#")) + r"(?!\w)"
    return re.search(pattern, text) is not None


def _same(call_arguments: dict[str, object], action: Action) -> bool:
    for key, value in action.kwargs.items():
        got = call_arguments.get(key)
        if isinstance(value, list) and isinstance(got, list):
            if sorted(map(str, value)) != sorted(map(str, got)):
                return False
        elif got != value:
            return False
    return True


def action_done(messages: Sequence[Message], action: Action, *, count_failed: bool = False) -> bool:
    """Whether the transcript shows this change made by a successful call
    (or, with `count_failed`, attempted at all)."""
    for answered in answered_calls(messages):
        call = answered.call
        if call.name == action.name and (count_failed or not answered.failed):
            arguments = call.args
            if arguments is not None and _same(arguments, action):
                return True
    return False


class ScriptedUser:
    """A customer of `domain`'s desk, who talks as its customers do (`Domain.customer`)."""

    def __init__(self, instructions: UserInstructions, domain: Domain) -> None:
        self.instructions = instructions
        self.domain = domain
        words = "|".join(re.escape(w) for w in domain.talk.asks_identity)
        self._asks_identity = re.compile(rf"\b({words})")

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        text = self._next(messages)
        return None if text is None else Message(role="user", content=text)

    def _done(self, want: Want, messages: Sequence[Message], replies: list[str]) -> bool:
        if want.action is not None:
            return action_done(messages, want.action)
        if want.kind == INFO:
            return outputs_compat(want.expects, replies)
        if want.kind == FORBIDDEN:  # settled once the agent has turned the request down
            asked = [
                i for i, m in enumerate(messages) if m.role == "user" and m.content == want.say
            ]
            return bool(asked) and any(
                m.role == "assistant" and _REFUSES.search(m.content.lower())
                for m in messages[asked[0] + 1 :]
            )
        return False  # transfer: only the hand-off itself ends it

    def _next(self, messages: Sequence[Message]) -> str | None:
        ins = self.instructions
        said = [m.content for m in messages if m.role == "user"]
        seen = conversation(messages)
        replies = [m.content for m in seen if m.role == "assistant"]
        pending = [w for w in ins.wants if not self._done(w, messages, replies)]
        if not said:
            return pending[0].say if pending else None
        if not pending:
            return None
        want = pending[0]
        if said.count(want.say) + sum(s.startswith("as i said") for s in said) > MAX_REPEATS:
            return None  # the customer gives up
        if not seen or seen[-1].role != "assistant" or messages[-1].role == "user":
            return None
        text = seen[-1].content.lower()
        introduction = self.domain.introduction(ins)
        if introduction not in said and self._asks_identity.search(text):
            return introduction
        if want.action is not None and _PROPOSES.search(text):
            verbs = self.domain.talk.verbs.get(want.action.name.split("_")[0], ("",))
            if any(re.search(rf"\b{v}", text) for v in verbs) and all(
                _names(text, v) for v in self.domain.keys(want.action)
            ):
                return "yes, please go ahead."
            return f"no, that's not what i asked for. {want.say}"
        answer = self._answer(want, text)
        if answer is not None and answer not in said:
            return answer
        if want.say not in said:
            return want.say
        if want.kind == TRANSFER:
            return "as i said, i'd like to speak to a human agent about this."
        return f"as i said, {want.say}"

    def _answer(self, want: Want, text: str) -> str | None:
        action = want.action
        if action is None or not text.rstrip().endswith("?"):
            return None
        for answer in self.domain.talk.answers:
            if answer.asks.search(text) and answer.needs in action.kwargs:
                return answer.reply(action.kwargs)
        return None
