"""Why an episode failed: the departures from its gold actions that the failure follows from.

Knows no benchmark. A benchmark hands it the calls that change state in an episode
(`Act`), the task's gold actions (`GoldStep`), and a `Judge`: what still differs from a
passing end (the failing components' differences, each a line that names it) when a
given list of calls is replayed. `departures` lines the episode up with the gold
actions: a gold action done as gold does it is matched; one never done is ``missing``;
one done with other arguments is ``different``; a call no gold action asks for is
``extra``; a call of a tool whose gold action raises (the reference skips it) is
``gold_raises``. `explain` repairs each departure alone (adds the missing call, puts the
gold's arguments in, takes the extra call out) and keeps those whose repair removes
differences: those are what the failure follows from, and the lines they remove are
their evidence.

Who answers for a departure (`answerable`): whoever performed, or failed to perform,
the action. The user for a call of their own tools, unless the agent asked for it and no
gold action wants it; the user for a gold action of theirs not done, unless the agent
called that tool itself (and was refused) and never asked them, or asked for their other
actions and never for this one. The user too where the agent's differing value is one
the user stated and their instruction does not hold, for gold actions left undone after
the user ended the conversation while the agent was still at work, and where they said
they do not have the user id their instruction gives (`scoring.dialogue` reads these).
The task where a call that did something matches a gold action that raises (the gold
never does it), or where the agent's value is in the instruction and the gold's is not. A
raising gold action never made is not the task's: where calls are checked (the only place
it is a departure), the call made as the gold writes it counts, raise or not, so it is
whoever failed to make it. The agent otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from deedbench.records import Fault, Message
from deedbench.scoring.dialogue import (
    argument_values,
    in_text,
    said_first_by_user,
    stop_quote,
    telling,
    withheld_identity,
)
from deedbench.scoring.procedure import quote

__all__ = [
    "Act",
    "Call",
    "Departure",
    "GoldStep",
    "Judge",
    "Matches",
    "Side",
    "answerable",
    "departures",
    "explain",
    "repaired",
]

Side = Literal["agent", "user"]
Call = tuple[Side, str, dict[str, Any]]
"""A call as a replay makes it: who, which tool, its arguments."""
Judge = Callable[[list[Call]], frozenset[str]]
"""What still differs from a passing end when these calls are replayed (none: it passes)."""


@dataclass(frozen=True)
class Act:
    """A call made in the episode that can change state (or tried to)."""

    index: int
    """The message that made it (in the transcript given)."""
    side: Side
    name: str
    arguments: dict[str, Any]
    failed: bool = False
    refused: bool = False
    """The tool is not this side's (the other side's tool, called by the wrong side)."""
    writes: bool = True
    """Whether its tool can change state (a call that only reads is never extra)."""
    answer: str = ""
    """What the call was answered (an error's text, where it raised)."""

    def call(self) -> Call:
        return (self.side, self.name, self.arguments)

    def shown(self) -> str:
        return f"{self.name}({quote(json.dumps(self.arguments, sort_keys=True), 160)})"


@dataclass(frozen=True)
class GoldStep:
    """A gold action: who should make it, and whether the gold replay could."""

    index: int
    side: Side
    name: str
    arguments: dict[str, Any]
    raises: bool = False
    error: str = ""

    def call(self) -> Call:
        return (self.side, self.name, self.arguments)

    def shown(self) -> str:
        return f"{self.name}({quote(json.dumps(self.arguments, sort_keys=True), 160)})"


Matches = Callable[[GoldStep, Act], bool]


@dataclass
class Departure:
    """One way the episode's calls depart from the gold actions."""

    kind: Literal["missing", "different", "extra", "gold_raises"]
    gold: GoldStep | None
    act: Act | None
    at: int
    """Where in the calls a repair puts the gold's call (missing), or the act's place."""
    explains: tuple[str, ...] = ()
    """The differences its repair removes."""


def departures(
    acts: Sequence[Act],
    gold: Sequence[GoldStep],
    matches: Matches,
    *,
    calls_checked: bool = False,
) -> list[Departure]:
    """The episode's calls (`acts`, in order) lined up with the gold actions. A gold action
    that raises and was not called is missing only where the calls themselves are checked
    (`calls_checked`: τ²'s action matching); elsewhere the gold never did it either."""
    done = [i for i, a in enumerate(acts) if not a.failed and not a.refused]
    used: set[int] = set()
    paired: dict[int, int] = {}  # gold index -> act position
    for step in gold:
        candidates = range(len(acts)) if step.raises else done  # a raising call, made too
        for i in candidates:
            if i not in used and acts[i].name == step.name and matches(step, acts[i]):
                paired[step.index] = i
                used.add(i)
                break
    found: list[Departure] = []
    for step in gold:  # same tool, other arguments: the closest unused call
        if step.index in paired:
            continue
        pool = range(len(acts)) if step.raises else done  # a raising call, made too
        near = [i for i in pool if i not in used and acts[i].name == step.name]
        if near:
            best = max(near, key=lambda i: _agreement(step.arguments, acts[i].arguments))
            paired[step.index] = best
            used.add(best)
            kind: Literal["different", "gold_raises"] = (
                "gold_raises" if step.raises else "different"
            )
            found.append(Departure(kind, step, acts[best], best))
    for step in gold:
        if step.index in paired or (step.raises and not calls_checked):
            continue
        later = [paired[g.index] for g in gold if g.index > step.index and g.index in paired]
        found.append(Departure("missing", step, None, min(later) if later else len(acts)))
    for i in done:
        if i not in used and acts[i].writes:
            found.append(Departure("extra", None, acts[i], i))
    return found


def _agreement(gold: dict[str, Any], made: dict[str, Any]) -> int:
    return sum(made.get(k) == v for k, v in gold.items())


def repaired(acts: Sequence[Act], departure: Departure) -> list[Call]:
    """The episode's calls with this one departure undone."""
    calls = [a.call() for a in acts]
    if departure.kind == "missing":
        assert departure.gold is not None
        calls.insert(departure.at, departure.gold.call())
    elif departure.kind in ("different", "gold_raises"):
        assert departure.gold is not None
        calls[departure.at] = departure.gold.call()
    else:  # extra: a call the gold does not make
        del calls[departure.at]
    return calls


def explain(acts: Sequence[Act], found: Iterable[Departure], judge: Judge) -> list[Departure]:
    """The departures whose repair alone removes some of what differs, each with the lines
    it removes; if none does alone, every departure (they fail it together)."""
    base = judge([a.call() for a in acts])
    if not base:
        return []
    found = list(found)
    relevant = []
    for departure in found:
        left = judge(repaired(acts, departure))
        removed = base - left
        if removed and len(left) < len(base):
            relevant.append(replace(departure, explains=tuple(sorted(removed))))
    if relevant:
        return relevant
    return [replace(d, explains=tuple(sorted(base))) for d in found]


# --- who answers for a departure ---------------------------------------------------------------


def _differing(made: dict[str, Any], gold: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The values the call has that the gold action has not, and the gold's that it lacks."""
    ours, theirs = argument_values(made), argument_values(gold)
    return [v for v in ours if v not in theirs], [v for v in theirs if v not in ours]


def answerable(
    departure: Departure,
    *,
    acts: Sequence[Act],
    messages: Sequence[Message],
    instruction: str,
    stopped_at: int | None,
    asked: Callable[[str, dict[str, Any], int], bool],
    last_done_gold: int,
    statements: str | None = None,
    asked_before: Callable[[str, dict[str, Any], int], bool] | None = None,
) -> Fault:
    """The fault a departure is: whose, of what kind, with what it explains.

    `stopped_at`: the user's early stop (`early_stop`), if any; `asked(tool, arguments,
    after)`: whether an agent message after message `after` asks the user for that call;
    `last_done_gold`: the highest gold index the episode did; `statements`: what the task
    itself says of what should happen (the instruction and the task's own assertions), for
    telling a gold that departs from it (default: the instruction); `asked_before(tool,
    arguments, index)`: whether an agent message before message `index` asked the user for
    that call (where the user has tools: a user action the agent asked for and no gold
    action wants is the agent's doing, and so is one the agent asked for others but never
    for this one)."""
    differs = "; ".join(departure.explains[:4]) or "no difference named"
    gold, act = departure.gold, departure.act
    if departure.kind == "gold_raises":
        assert gold is not None and act is not None
        if not _same_error(act, gold):
            return _fault(
                "task.gold_raises",
                f"gold action #{gold.index} {gold.shown()} raises in the gold replay "
                f"({gold.error}), so the gold never does what {act.side} call {act.shown()} "
                f"at message {act.index} did: {differs}",
                act.index,
            )
        departure = replace(departure, kind="different")  # the same error: the arguments differ
    if departure.kind == "missing":
        assert gold is not None
        nearest = _nearest(acts, gold)
        near = f"; nearest call made: {nearest}" if nearest else "; no call of that tool was made"
        if gold.raises:  # only where calls are checked: made as written, it counts
            near = f"; it raises in the gold replay ({quote(gold.error, 100)}){near}"
        tried = [a for a in acts if a.name == gold.name and a.failed and a.side == "agent"]
        if tried:
            ours, _ = _differing(tried[-1].arguments, gold.arguments)
            stated = said_first_by_user(ours, messages, tried[-1].index, instruction)
            if stated is not None:
                value, where = stated
                return _fault(
                    "user.stated_value",
                    f"the user said {value!r} (message {where}: "
                    f"{quote(messages[where].content or '', 100)}), which their instruction does "
                    f"not hold; the agent's {tried[-1].shown()} at message {tried[-1].index} "
                    f"used it and failed, and gold action #{gold.index} {gold.shown()} was never "
                    f"done: {differs}",
                    where,
                )
        denied = withheld_identity(messages, instruction)
        wrote = any(a.writes and not a.failed and not a.refused for a in acts)
        if denied is not None and gold.side == "agent" and not wrote:
            return _fault(
                "user.withheld_identity",
                f"the user said they do not have their user id (message {denied}: "
                f"{quote(messages[denied].content or '', 100)}), which their instruction gives "
                f"them, and never gave it; gold action #{gold.index} {gold.shown()} was never "
                f"done: {differs}",
                denied,
            )
        if stopped_at is not None and gold.index > last_done_gold:
            return _fault(
                "user.early_stop",
                f"the user ended the conversation ({stop_quote(messages, stopped_at)}) while the "
                f"agent was still at work, before gold action #{gold.index} {gold.shown()}: "
                f"{differs}",
                min(stopped_at, len(messages) - 1),
            )
        if gold.side == "user":
            tried = [a for a in acts if a.refused and a.side == "agent" and a.name == gold.name]
            if tried and not asked(gold.name, gold.arguments, tried[-1].index):
                return _fault(
                    "agent.wrong_side",
                    f"the agent called the user's tool {tried[-1].shown()} itself at message "
                    f"{tried[-1].index} (refused: not its tool) and never asked the user to; "
                    f"gold action #{gold.index} {gold.shown()} was never done: {differs}",
                    tried[-1].index,
                )
            others = asked_before is not None and any(
                asked_before(a.name, a.arguments, a.index) for a in acts if a.side == "user"
            )
            if (
                others
                and asked_before is not None
                and not asked_before(gold.name, gold.arguments, len(messages))
            ):
                return _fault(
                    "agent.never_asked",
                    f"the agent asked the user for other actions but never for gold action "
                    f"#{gold.index} {gold.shown()}{near}: {differs}",
                    None,
                )
            return _fault(
                "user.action_not_done",
                f"the user never did gold action #{gold.index} {gold.shown()}{near}: {differs}",
                None,
            )
        return _fault(
            "agent.action_not_done",
            f"the agent never made gold call #{gold.index} {gold.shown()}{near}: {differs}",
            None,
        )
    assert act is not None
    if departure.kind == "different":
        assert gold is not None
        ours, theirs = _differing(act.arguments, gold.arguments)
        if act.side == "agent":
            stated = said_first_by_user(ours, messages, act.index, instruction)
            if stated is not None:
                value, where = stated
                return _fault(
                    "user.stated_value",
                    f"the user said {value!r} (message {where}: "
                    f"{quote(messages[where].content or '', 100)}), which their instruction does "
                    f"not hold, and the agent's {act.shown()} at message {act.index} used it "
                    f"where gold action #{gold.index} has {gold.shown()}: {differs}",
                    where,
                )
            said = instruction if statements is None else statements
            if (
                any(telling(v) and in_text(v, said) for v in ours)
                and theirs
                and not any(in_text(v, said) for v in theirs if telling(v))
            ):
                return _fault(
                    "task.contradicts_instruction",
                    f"the agent's {act.shown()} at message {act.index} follows the user's "
                    f"instruction, and gold action #{gold.index} {gold.shown()} departs from it: "
                    f"{differs}",
                    act.index,
                )
        return _fault(
            f"{act.side}.wrong_arguments",
            f"{act.side} call {act.shown()} at message {act.index} differs from gold action "
            f"#{gold.index} {gold.shown()}: {differs}",
            act.index,
        )
    if act.side == "agent":
        stated = said_first_by_user(
            argument_values(act.arguments), messages, act.index, instruction
        )
        if stated is not None:
            value, where = stated
            return _fault(
                "user.stated_value",
                f"the user said {value!r} (message {where}: "
                f"{quote(messages[where].content or '', 100)}), which their instruction does not "
                f"hold, and the agent's {act.shown()} at message {act.index}, which no gold "
                f"action makes, used it: {differs}",
                where,
            )
    if (
        act.side == "user"
        and asked_before is not None
        and asked_before(act.name, act.arguments, act.index)
    ):
        return _fault(
            "agent.asked_unneeded",
            f"the agent asked the user for {act.name}, which no gold action wants, and the user's "
            f"{act.shown()} at message {act.index} did it: {differs}",
            act.index,
        )
    return _fault(
        f"{act.side}.unrequested",
        f"{act.side} call {act.shown()} at message {act.index} is one no gold action makes: "
        f"{differs}",
        act.index,
    )


def _same_error(act: Act, gold: GoldStep) -> bool:
    """Whether the call raised as the gold action does: the gold's error is then not what
    sets them apart (its arguments are)."""
    return bool(act.answer.strip()) and act.answer.strip() == gold.error.strip()


def _nearest(acts: Sequence[Act], gold: GoldStep) -> str:
    same = [a for a in acts if a.name == gold.name]
    if same:
        a = same[-1]
        state = " (refused)" if a.refused else " (failed)" if a.failed else ""
        return f"{a.side} call {a.shown()} at message {a.index}{state}"
    return ""


def _fault(kind: str, excerpt: str, index: int | None) -> Fault:
    return Fault(kind=kind, excerpt=excerpt, message_index=index, cause=True)
