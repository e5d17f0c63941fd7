"""Why an episode failed: departures from the gold lined up, kept only where their repair
removes what differs, and put on whoever performed or failed to perform the action."""

from __future__ import annotations

from dataclasses import replace

from deedbench.records import Message, ToolCall
from deedbench.scoring.causes import Act, Call, GoldStep, answerable, departures, explain
from deedbench.scoring.dialogue import early_stop

STOP = "###STOP###"


def _agent(text: str) -> Message:
    return Message(role="assistant", content=text)


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def _same(step: GoldStep, act: Act) -> bool:
    return step.arguments == act.arguments


def _judge(wanted: dict[str, int]):  # type: ignore[no-untyped-def]
    """A world of counters: each call adds its `n` to its tool's counter (the user's toggle
    refuses the agent); what differs is every counter unlike `wanted`'s."""

    def judge(calls: list[Call]) -> frozenset[str]:
        got: dict[str, int] = {}
        for side, name, arguments in calls:
            if name == "toggle" and side != "user":
                continue
            got[name] = got.get(name, 0) + int(arguments.get("n", 0))
        return frozenset(
            f"{k}: {got.get(k, 0)} (gold: {wanted.get(k, 0)})"
            for k in sorted(got.keys() | wanted.keys())
            if got.get(k, 0) != wanted.get(k, 0)
        )

    return judge


def test_departures_are_missing_different_extra_and_only_relevant_ones_explain() -> None:
    gold = [
        GoldStep(0, "agent", "refuel", {"n": 2}),
        GoldStep(1, "user", "toggle", {"n": 1}),
        GoldStep(2, "agent", "resume", {"n": 1}),
    ]
    acts = [
        Act(3, "agent", "refuel", {"n": 3}),  # different
        Act(5, "user", "wifi", {"n": 0}),  # extra, and harmless
        Act(7, "agent", "resume", {"n": 1}),  # as gold
    ]
    found = departures(acts, gold, _same)
    assert sorted((d.kind, d.gold.index if d.gold else None) for d in found) == [
        ("different", 0),
        ("extra", None),
        ("missing", 1),
    ]
    missing = next(d for d in found if d.kind == "missing")
    assert missing.at == 2  # before the call that did the next gold action
    relevant = explain(acts, found, _judge({"refuel": 2, "toggle": 1, "resume": 1}))
    assert sorted(d.kind for d in relevant) == ["different", "missing"]  # the wifi changed nothing
    different = next(d for d in relevant if d.kind == "different")
    assert different.explains == ("refuel: 3 (gold: 2)",)


def _fault_of(kind: str, acts: list[Act], gold: GoldStep, messages: list[Message], **kw):  # type: ignore[no-untyped-def]
    found = [d for d in departures(acts, [gold], _same) if d.kind == kind]
    [departure] = explain(acts, found, _judge({gold.name: int(gold.arguments.get("n", 0))}))
    options = {"stopped_at": None, "asked": lambda tool, args, after: False, "last_done_gold": -1}
    options.update(kw)
    return answerable(departure, acts=acts, messages=messages, instruction="refuel 2 GB", **options)


def test_a_user_action_not_done_is_the_users_unless_the_agent_took_it_and_never_asked() -> None:
    toggle = GoldStep(0, "user", "toggle", {"n": 1})
    messages = [_agent("please toggle roaming"), _user("ok")]
    assert _fault_of("missing", [], toggle, messages).kind == "user.action_not_done"
    refused = [Act(1, "agent", "toggle", {"n": 1}, failed=True, refused=True)]
    fault = _fault_of("missing", refused, toggle, messages)
    assert fault.kind == "agent.wrong_side" and fault.cause and fault.party == "agent"
    asked = _fault_of("missing", refused, toggle, messages, asked=lambda tool, args, after: True)
    assert asked.kind == "user.action_not_done"  # asked after its own try: the user's again


def test_a_value_the_user_stated_against_their_instruction_is_theirs() -> None:
    refuel = GoldStep(0, "agent", "refuel", {"n": 2})
    messages = [_agent("How much?"), _user("Make it 3 please."), _agent("Done.")]
    acts = [Act(2, "agent", "refuel", {"n": 3})]
    fault = _fault_of("different", acts, refuel, messages)
    assert fault.kind == "user.stated_value" and fault.message_index == 1
    assert "refuel" in fault.excerpt and "(gold: 2)" in fault.excerpt  # what differs
    quiet = [_agent("I will refuel 3 GB. OK?"), _user("yes"), _agent("Done.")]
    assert _fault_of("different", acts, refuel, quiet).kind == "agent.wrong_arguments"


def test_a_call_whose_gold_action_raises_is_the_tasks() -> None:
    gold = GoldStep(0, "agent", "refuel", {"n": 9}, raises=True, error="no such line")
    acts = [Act(2, "agent", "refuel", {"n": 2})]
    [departure] = departures(acts, [gold], _same)
    assert departure.kind == "gold_raises"
    [relevant] = explain(acts, [departure], _judge({}))
    fault = answerable(
        relevant,
        acts=acts,
        messages=[],
        instruction="",
        stopped_at=None,
        asked=lambda tool, args, after: False,
        last_done_gold=-1,
    )
    assert fault.kind == "task.gold_raises" and fault.party == "task"


def test_the_stop_is_early_while_the_agent_is_at_work_and_not_after_it_winds_up() -> None:
    ask = [_agent("I will cancel order #W1. Shall I proceed?"), _user(f"Yes. {STOP}")]
    assert early_stop(ask, STOP) == 1
    call = Message(role="assistant", content="", tool_calls=[ToolCall(id="c", name="x")])
    mid = [call, Message(role="tool", tool_call_id="c", content="ok"), _user(STOP)]
    assert early_stop(mid, STOP) == 2
    cut_in = [_agent("Hi! How can I help you today?"), _user("Hello."), _user(STOP)]
    assert early_stop(cut_in, STOP) == 2
    assert early_stop([_agent("Done. Anything else?"), _user(STOP)], STOP) is None
    assert early_stop([_agent("Sorry, but I cannot do that."), _user(STOP)], STOP) is None
    assert early_stop([_agent("Summary: refunded $5.")], STOP) is None
    assert early_stop(ask[:1], STOP, ended=True) == 1  # ended with no stop message


def test_a_raising_gold_action_never_made_is_whoever_failed_to_make_it() -> None:
    """Where calls are checked (τ²), a gold call that raises still counts when made as
    written: one the user's early stop left unmade is the stop's, one never made otherwise
    the agent's (not the task's: the call could have been made)."""
    done = GoldStep(0, "agent", "refuel", {"n": 2})
    raising = GoldStep(1, "agent", "dispute", {"n": 0}, raises=True, error="missing argument")
    acts = [Act(1, "agent", "refuel", {"n": 2})]
    [departure] = departures(acts, [done, raising], _same, calls_checked=True)
    assert departure.kind == "missing" and departure.gold == raising
    messages = [_agent("Refuelled. I will file the dispute. Shall I?"), _user(f"Yes. {STOP}")]
    options = {"acts": acts, "messages": messages, "instruction": "", "last_done_gold": 0}
    asked = {"asked": lambda tool, args, after: False}
    [relevant] = explain(acts, [departure], lambda calls: frozenset({"dispute not called"}))
    stopped = answerable(relevant, stopped_at=1, **asked, **options)  # type: ignore[arg-type]
    assert stopped.kind == "user.early_stop" and stopped.party == "user"
    assert "dispute" in stopped.excerpt
    unmade = answerable(relevant, stopped_at=None, **asked, **options)  # type: ignore[arg-type]
    assert unmade.kind == "agent.action_not_done" and unmade.party == "agent"
    assert "raises in the gold replay (missing argument)" in unmade.excerpt


def test_a_call_that_hit_the_gold_actions_own_error_is_the_callers() -> None:
    """A raising gold action sets the task apart only where the episode's call did what the
    gold cannot: a call that raised the gold's own error differs only in its arguments."""
    gold = GoldStep(0, "agent", "dispute", {"n": 1, "id": "t1"}, raises=True, error="Error: no cap")
    for failed in (False, True):  # flagged or not, an error answer
        acts = [Act(2, "agent", "dispute", {"n": 1, "id": "t2"}, failed, answer="Error: no cap")]
        [departure] = departures(acts, [gold], _same, calls_checked=True)
        assert departure.kind == "gold_raises"
        [relevant] = explain(acts, [departure], lambda calls: frozenset({"no call matches #0"}))
        fault = answerable(
            relevant,
            acts=acts,
            messages=[],
            instruction="",
            stopped_at=None,
            asked=lambda tool, args, after: False,
            last_done_gold=-1,
        )
        assert fault.kind == "agent.wrong_arguments" and fault.party == "agent"
    other = [Act(2, "agent", "dispute", {"n": 1, "id": "t2"}, answer="Error: unknown tool")]
    [departure] = departures(other, [gold], _same, calls_checked=True)
    fault = answerable(
        replace(departure, explains=("no call matches #0",)),
        acts=other,
        messages=[],
        instruction="",
        stopped_at=None,
        asked=lambda tool, args, after: False,
        last_done_gold=-1,
    )
    assert fault.kind == "task.gold_raises" and fault.party == "task"
