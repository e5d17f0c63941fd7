"""What a simulated user did wrong, read from the transcript without a model.

The checks here know no benchmark: a benchmark hands them what only it knows (the
user's instruction as text, whether a change it asked for is still undone, which calls
the user wanted) and gets `Fault`s back, each quoting the message that shows it.
They lean towards silence: a fault is reported only where the transcript shows it
plainly, since blaming the user wrongly would excuse the agent.

- `invented_details`: the user states an identifier, an amount or a personal detail
  (an order or reservation id, a user id, an email, a zip code, a card, a sum of
  money) that is neither in their instruction nor said earlier in the conversation.
- `refused_wanted`: the user said no to a change their instruction asks for, proposed
  in full.
- `accepted_unwanted`: the user said yes to a change they never asked for, and the
  agent made it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from deedbench.records import Fault, Message, ToolCall, answered_calls
from deedbench.scoring.affirmation import classify_reply
from deedbench.scoring.procedure import quote

__all__ = [
    "CONTRADICTS_GOLD",
    "EARLY_STOP",
    "GOLD_BREAKS_POLICY",
    "GOLD_RAISES",
    "ID_KINDS",
    "INVENTED_DETAIL",
    "OUTPUT_UNSUPPORTED",
    "REFUSED_WANTED",
    "UNWANTED_ACCEPTED",
    "accepted_unwanted",
    "contradicted_ids",
    "details_in",
    "invented_details",
    "refused_wanted",
    "refuses",
    "unsupported",
    "unsupported_outputs",
]

GOLD_RAISES = "task.gold_raises"
GOLD_BREAKS_POLICY = "task.gold_breaks_policy"
OUTPUT_UNSUPPORTED = "task.output_unsupported"
CONTRADICTS_GOLD = "task.instruction_contradicts_gold"
ID_KINDS = ("order id", "reservation id", "user id")
"""The details that name what a task is about: an instruction naming some, and gold actions
naming others of the same kind, contradict each other."""

INVENTED_DETAIL = "user.invented_detail"
EARLY_STOP = "user.early_stop"
UNWANTED_ACCEPTED = "user.accepted_unwanted"
REFUSED_WANTED = "user.refused_wanted"

_DETAILS = {
    "order id": re.compile(r"#?\bW\d{5,}\b"),
    "user id": re.compile(r"\b(?!(?:credit|gift)_card_)[a-z]+_[a-z]+_\d{3,}\b"),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b"),
    "payment method": re.compile(r"\b(?:credit_card|gift_card|paypal|certificate)_\d+\b"),
    "flight number": re.compile(r"\b[A-Z]{3}\d{3}\b"),
    "reservation id": re.compile(
        r"\b(?![A-Z]{3}\d{3}\b)(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b"
    ),
    "item id": re.compile(r"\b\d{10}\b"),
    "zip code": re.compile(r"(?<![\d.$,])\b\d{5}\b(?![\d.,])"),
    "amount": re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?"),
}
"""What counts as a detail a user cannot guess: the shapes of τ-bench's and τ²'s ids."""


def _normal(kind: str, text: str) -> str:
    if kind == "amount":
        number = float(text.replace("$", "").replace(",", "").strip())
        return f"{number:g}"
    if kind == "order id":
        return text.lstrip("#")
    return text.lower() if kind in ("email", "user id") else text


def details_in(text: str) -> set[tuple[str, str]]:
    """Every detail in `text`, as (kind, normalised value)."""
    found = set()
    for kind, pattern in _DETAILS.items():
        for match in pattern.finditer(text):
            found.add((kind, _normal(kind, match.group())))
    amounts = {v for k, v in found if k == "amount"}  # "$50" also reads as the number 50
    for number in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])", text):
        value = f"{float(number.replace(',', '')):g}"
        if value not in amounts:
            found.add(("number", value))
    return found


def invented_details(messages: Sequence[Message], instruction: str) -> list[Fault]:
    """The details the user states that neither their instruction nor anything said
    before (by the agent or by themselves) holds. A number the agent or the instruction
    gave counts as known in any notation ($1,234.50 and 1234.5)."""
    known = details_in(instruction)
    numbers = {v for k, v in known if k in ("amount", "number")}
    found: list[Fault] = []
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.content:
            said = details_in(message.content)
            known |= said
            numbers |= {v for k, v in said if k in ("amount", "number")}
            continue
        if message.role != "user" or not message.content:
            continue
        said = details_in(message.content)
        for kind, value in sorted(said - known):
            if kind == "number" or (kind == "amount" and _arithmetic(value, numbers)):
                continue
            found.append(
                Fault(
                    kind=INVENTED_DETAIL,
                    excerpt=f"the user states {kind} {value!r}, which neither their "
                    f"instruction nor the conversation gave them: {quote(message.content)}",
                    message_index=index,
                )
            )
        known |= said
        numbers |= {v for k, v in said if k in ("amount", "number")}
    return found


def _arithmetic(value: str, numbers: set[str]) -> bool:
    """Whether an amount is a known number, or a sum or difference of two or three of them
    (a user who adds up what the agent quoted made nothing up)."""
    if value in numbers:
        return True
    target = float(value)
    known = sorted({float(n) for n in numbers})
    near = {round(n, 2) for n in known}
    for i, a in enumerate(known):
        for b in known[i:]:
            if round(target - a - b, 2) in near or round(abs(a - b), 2) == round(target, 2):
                return True
            if round(a + b, 2) == round(target, 2):
                return True
    return False


_REFUSAL = re.compile(
    r"\b(?:can ?not|can't|unable|not able|not allowed|not permitted|not possible|not eligible"
    r"|against (?:our |the )?policy|(?:i'?m|i am) sorry,? but|won't be able|must decline)\b",
    re.IGNORECASE,
)


def refuses(text: str) -> bool:
    """Whether an agent's message turns something down."""
    return _REFUSAL.search(text) is not None


_ASKS_CONFIRMATION = re.compile(
    r"\b(?:confirm|proceed|shall i|should i|would you like me to|do you want me to|go ahead"
    r"|yes or no|yes/no|is that (?:right|correct|ok))\b",
    re.IGNORECASE,
)
_SAYS_NO = re.compile(
    r"^\W*(?:no|nope|nah|don'?t|do not|please don'?t|never mind|not now|i (?:don'?t|do not) "
    r"want)\b",
    re.IGNORECASE,
)


def refused_wanted(
    messages: Sequence[Message], proposes: Callable[[str], list[str]]
) -> list[Fault]:
    """Each plain no (the reply opens with it) the user gave to the agent's request to
    confirm a change they asked for, named in full (`proposes`: the wanted changes a
    message names in full)."""
    found = []
    last = ""
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.content.strip():
            last = message.content
        elif message.role == "user" and message.content.strip() and last:
            asks = "?" in last and _ASKS_CONFIRMATION.search(last) is not None
            wanted = proposes(last) if asks else []
            if (
                wanted
                and _SAYS_NO.search(message.content)
                and classify_reply(message.content) == "no"
            ):
                found.append(
                    Fault(
                        kind=REFUSED_WANTED,
                        excerpt=f"the user said no ({quote(message.content, 80)}) to "
                        f"{', '.join(wanted)}, which their instruction asks for: "
                        f"{quote(last, 120)}",
                        message_index=index,
                    )
                )
            last = ""
    return found


def accepted_unwanted(
    messages: Sequence[Message],
    writes: Callable[[ToolCall], bool],
    wanted: Callable[[ToolCall], bool],
) -> list[Fault]:
    """Each change the agent made, successfully, right after the user said yes, that the
    user never asked for (`writes`: the call changes data; `wanted`: the user asked for it)."""
    found = []
    for answered in answered_calls(messages):
        call = answered.call
        if answered.failed or not writes(call) or wanted(call):
            continue
        user = next(
            (
                (i, m)
                for i in range(answered.index - 1, -1, -1)
                if (m := messages[i]).role == "user" and m.content.strip()
            ),
            None,
        )
        if user is None or classify_reply(user[1].content) != "yes":
            continue
        found.append(
            Fault(
                kind=UNWANTED_ACCEPTED,
                excerpt=f"the user said yes ({quote(user[1].content, 80)}) to "
                f"{call.name}({quote(call.arguments, 120)}), which they never asked for",
                message_index=user[0],
            )
        )
    return found


def unsupported(
    outputs: Iterable[str], sources: str, database: str = "", *, numbers: bool = True
) -> list[str]:
    """The required outputs with no source: a text (an identifier among them: a number of
    seven digits or more) found neither in `sources` (the instruction, what the gold actions
    return, the task's own statements) nor in the `database` as text; a number that is none
    of the sources' and no sum or difference of two or three of them (unless not `numbers`:
    a number may be worked out from more numbers than that, so it is weak evidence)."""
    known = sources.lower().replace(",", "")
    stored = database.lower().replace(",", "")
    values = {f"{float(n):g}" for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])", known)}
    found = []
    for output in outputs:
        text = output.strip().lower().replace(",", "")
        if _numeric(output) and not re.fullmatch(r"\d{7,}", text):
            if not numbers:
                continue
            value = f"{float(text.strip('$%')):g}"
            if not _arithmetic(value, values):
                found.append(output)
        elif text not in known and text not in stored:
            found.append(output)
    return found


def unsupported_outputs(
    outputs: Iterable[str],
    results: str,
    instruction: str,
    noun: str = "output",
    database: str = "",
) -> list[Fault]:
    """The required outputs with no source in any result of the gold actions, the
    instruction or the database (`unsupported`): no agent can say them. Numbers are not
    checked here (they may be worked out from others: a total, a difference)."""
    return [
        Fault(
            kind=OUTPUT_UNSUPPORTED,
            excerpt=f"required {noun} {output!r} is in no result of the gold actions and not "
            "in the instruction, and no number worked out from theirs",
        )
        for output in unsupported(outputs, f"{results} {instruction}", database, numbers=False)
    ]


def contradicted_ids(instruction: str, gold: Iterable[Mapping[str, Any]]) -> list[Fault]:
    """For each kind of id (`ID_KINDS`) both name, an instruction that names ids none of
    which the gold actions (their arguments) touch."""
    named = details_in(instruction)
    touched = set().union(*(details_in(json.dumps(arguments)) for arguments in gold))
    found = []
    for kind in ID_KINDS:
        asked = {v for k, v in named if k == kind}
        used = {v for k, v in touched if k == kind}
        if asked and used and not asked & used:
            found.append(
                Fault(
                    kind=CONTRADICTS_GOLD,
                    excerpt=f"the instruction names {kind}s {sorted(asked)}, and the gold "
                    "actions touch none of them",
                )
            )
    return found


def _numeric(text: str) -> bool:
    return re.fullmatch(r"[$]?-?[\d,]+(?:\.\d+)?%?", text.strip()) is not None
