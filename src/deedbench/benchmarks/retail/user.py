"""The scripted customer: plays a task's structured instructions, deterministically.

It reads only what a customer would (the agent's replies, `conversation`) plus, to know when its
goal is met, which of its requested changes the transcript shows done. It says
yes only to a proposal that names its own request's kind of change and ids, no to
anything else,
answers the questions its instructions cover, and stops when it has what it
came for (or after repeating itself too often).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deedbench.benchmarks.retail.tasks import Action, UserInstructions, Want
from deedbench.benchmarks.retail.tau_toolbox import conversation
from deedbench.engine import Message
from deedbench.scoring.outputs import outputs_compat

__all__ = ["ScriptedUser", "action_done", "key_values"]

MAX_REPEATS = 3
_ASKS_IDENTITY = re.compile(
    r"\b(e-?mail|zip|postal code|your name|full name|user id|verify|identify)"
)
_PROPOSES = re.compile(
    r"\b(confirm|proceed|shall i|should i|would you like me to|do you want me to|go ahead|"
    r"yes or no|yes/no|is that (right|correct|ok))"
)
_ASKS_REASON = re.compile(r"\breason\b")
_ASKS_PAYMENT = re.compile(r"\b(payment|refund|pay with|card|gift card|paypal)\b")
_ASKS_ADDRESS = re.compile(r"\baddress\b")
_REFUSES = re.compile(r"\b(cannot|can't|can not|unable|not able|not possible|not allowed|sorry)\b")
_ASKS_OPTION = re.compile(r"\b(option|size|colou?r|which item|variant|replace it with)\b")


# What a proposal must say to be about the wanted change, by the write tool's first word
# ("cancel_pending_order": cancel). The ids alone would let a customer agree to a
# cancellation of the order it wanted to return.
_VERBS = {
    "cancel": ("cancel",),
    "return": ("return",),
    "exchange": ("exchange", "swap", "replace"),
    "modify": ("modify", "change", "update", "switch", "replace", "swap"),
    "update": ("update", "change", "modify", "switch", "add"),
    "book": ("book", "reserve"),
    "send": ("send", "issue", "certificate", "compensat"),
}

RETAIL_KEYS = ("order_id", "item_ids", "new_item_ids", "payment_method_id", "address1", "zip")


def key_values(action: Action, keys: Sequence[str] = RETAIL_KEYS) -> list[str]:
    """The ids a proposal must name for the customer to recognise its request."""
    values: list[str] = []
    for key in keys:
        value = action.kwargs.get(key)
        if isinstance(value, list):
            values += [str(v) for v in value]
        elif value is not None:
            values.append(str(value))
    return values


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
    failed = (
        set()
        if count_failed
        else {m.tool_call_id for m in messages if m.role == "tool" and m.error}
    )
    for message in messages:
        for call in message.tool_calls:
            if call.name == action.name and call.id not in failed:
                arguments = call.parsed_arguments()
                if arguments is not None and _same(arguments, action):
                    return True
    return False


class ScriptedUser:
    """`keys` maps a write tool to the arguments a proposal must name (the domain's key
    ids); tools not listed use the retail keys."""

    def __init__(
        self, instructions: UserInstructions, keys: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.instructions = instructions
        self.keys = keys or {}

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        text = self._next(messages)
        return None if text is None else Message(role="user", content=text)

    def _done(self, want: Want, messages: Sequence[Message], replies: list[str]) -> bool:
        if want.action is not None:
            return action_done(messages, want.action)
        if want.kind == "info":
            return outputs_compat(want.expects, replies)
        if want.kind == "forbidden":  # settled once the agent has turned the request down
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
        introduction = ins.introduce()
        if introduction not in said and _ASKS_IDENTITY.search(text):
            return introduction
        if want.action is not None and _PROPOSES.search(text):
            keys = self.keys.get(want.action.name, RETAIL_KEYS)
            verbs = _VERBS.get(want.action.name.split("_")[0], ("",))
            if any(re.search(rf"\b{v}", text) for v in verbs) and all(
                _names(text, v) for v in key_values(want.action, keys)
            ):
                return "yes, please go ahead."
            return f"no, that's not what i asked for. {want.say}"
        answer = self._answer(want, text)
        if answer is not None and answer not in said:
            return answer
        if want.say not in said:
            return want.say
        if want.kind == "transfer":
            return "as i said, i'd like to speak to a human agent about this."
        return f"as i said, {want.say}"

    def _answer(self, want: Want, text: str) -> str | None:
        action = want.action
        if action is None or not text.rstrip().endswith("?"):
            return None
        kwargs = action.kwargs
        if _ASKS_REASON.search(text) and "reason" in kwargs:
            return f"the reason is: {kwargs['reason']}"
        if _ASKS_OPTION.search(text) and "new_item_ids" in kwargs:
            return "i'd like item " + " and item ".join(kwargs["new_item_ids"]) + " instead"
        if _ASKS_PAYMENT.search(text) and "payment_method_id" in kwargs:
            return f"please use {kwargs['payment_method_id']}"
        if _ASKS_ADDRESS.search(text) and "address1" in kwargs:
            fields = ("address1", "address2", "city", "state", "zip", "country")
            return "the address is " + ", ".join(str(kwargs[f]) for f in fields)
        return None
