"""Who failed a τ² episode, by the principles of issue 38 (DESIGN.md, "Failure attribution"):
who performed, or failed to perform, the action decides; a correct user action unasked is
no fault; a raising gold read excuses nothing; a passing episode has no party; a failure
quotes what differs. Each episode is a task's gold conversation with one change, scored by
deedbench's τ² scorer (these behaviours are measured at scale by bench/attribution.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from deedbench.benchmarks.tau2.banking import banking_domain
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.retail import RETAIL
from deedbench.benchmarks.tau2.scorer import Tau2Scorer
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.benchmarks.tau2.telecom import TELECOM
from deedbench.records import AGENT_SCOPE, Message, Score, ToolCall

from . import _reference

Call = tuple[str, str, dict[str, Any]]  # requestor, tool, arguments

pytestmark = pytest.mark.reference("tau2")


def _data(domain: Tau2Domain) -> Tau2Data:
    folder = _reference.domain_data(domain.folder_name)
    if not folder.is_dir():
        pytest.fail(f"τ²'s {domain.name} data is not at {folder}")
    return Tau2Data(domain, folder, f"tau2-{domain.name}", "base" if domain is not None else None)


@pytest.fixture(scope="module")
def telecom() -> Tau2Data:
    return _data(TELECOM)


@pytest.fixture(scope="module")
def retail() -> Tau2Data:
    return _data(RETAIL)


@pytest.fixture(scope="module")
def banking() -> Tau2Data:
    domain = banking_domain("no_knowledge")
    folder = _reference.domain_data(domain.folder_name)
    return Tau2Data(domain, folder, "tau2-banking", None)


def _scored(data: Tau2Data, task: Tau2Task, calls: list[Call | str]) -> Score:
    """The task's conversation with these calls (each by its requestor, its result from the
    task's start) and words (a string: the agent's), then the summary and the user's stop."""
    environment = data.start(task)
    messages = [
        Message(role="system", content="the policy"),
        Message(role="assistant", content=OWN_PROMPTS.greeting),
        Message(role="user", content="Hello, I need help."),
    ]
    for number, item in enumerate(calls):
        if isinstance(item, str):
            messages.append(Message(role="assistant", content=item))
            continue
        requestor, name, arguments = item
        call = ToolCall.decoded(f"call_{number}", name, dict(arguments))
        role = "user" if requestor == "user" else "assistant"
        messages.append(Message(role=role, content="", tool_calls=[call]))
        messages.append(environment.respond(call, "user" if requestor == "user" else "assistant"))
    criteria = task.evaluation_criteria
    infos = list(criteria.communicate_info or []) if criteria is not None else []
    messages.append(Message(role="assistant", content=" ".join(["Done.", *infos])))
    messages.append(Message(role="user", content="Thanks. ###STOP###"))
    scorer = Tau2Scorer(data, {task.id: task})
    return scorer.score_task(task, messages, "user_stop", _met(task))


def _met(task: Tau2Task) -> Any:
    if not task.needs_judge or task.evaluation_criteria is None:
        return None
    from deedbench.benchmarks.tau2.reward import NLAssertionCheck

    return [
        NLAssertionCheck(nl_assertion=a, met=True, justification="scripted")
        for a in task.evaluation_criteria.nl_assertions or []
    ]


def _gold(task: Tau2Task) -> list[Call | str]:
    return [(a.requestor, a.name, dict(a.arguments)) for a in task.gold]


def _task(data: Tau2Data, wanted: Callable[[Tau2Task], bool]) -> Tau2Task:
    return next(t for t in data.tasks.values() if wanted(t))


def _writes(data: Tau2Data) -> set[str]:
    desk = data.domain.desk
    return {t.name for t in (*desk.agent_tools, *desk.user_tools) if t.writes}


def _causes(score: Score) -> list[str]:
    assert score.attribution is not None
    return [f.kind for f in score.attribution.faults if f.cause]


def test_an_agent_that_calls_the_users_tool_itself_is_the_agents_failure(
    telecom: Tau2Data,
) -> None:
    task = _task(telecom, lambda t: any(a.requestor == "user" for a in t.gold))
    calls = _gold(task)
    at = next(i for i, c in enumerate(calls) if not isinstance(c, str) and c[0] == "user")
    _, name, arguments = calls[at]  # type: ignore[misc]
    calls[at] = ("assistant", name, arguments)  # τ² refuses it: not the agent's tool
    score = _scored(telecom, task, calls)
    assert score.values["reward"] == 0.0
    assert score.attribution is not None and score.attribution.party == "agent"
    assert "agent.wrong_side" in _causes(score)


def test_a_correct_user_action_unasked_is_no_fault_and_the_agents_drop_stays_its_own(
    telecom: Tau2Data,
) -> None:
    writes = _writes(telecom)
    task = _task(
        telecom,
        lambda t: (
            any(a.requestor == "user" for a in t.gold)
            and any(a.requestor == "assistant" and a.name in writes for a in t.gold)
        ),
    )
    clean = _scored(telecom, task, _gold(task))  # the user's gold actions, nobody asking
    assert clean.values["reward"] == 1.0
    assert clean.attribution is not None and clean.attribution.party is None
    dropped = [
        c for c in _gold(task) if isinstance(c, str) or not (c[0] == "assistant" and c[1] in writes)
    ]
    score = _scored(telecom, task, dropped)
    assert score.values["reward"] == 0.0
    assert score.attribution is not None and score.attribution.party == "agent"
    assert not any(k.startswith("user.") for k in _causes(score))


def test_a_users_wrong_device_action_in_banking_is_the_users_failure(banking: Tau2Data) -> None:
    task = _task(banking, lambda t: any(a.name == "apply_for_credit_card" for a in t.gold))
    calls = _gold(task)
    at = next(
        i for i, c in enumerate(calls) if not isinstance(c, str) and c[1] == "apply_for_credit_card"
    )
    requestor, name, arguments = calls[at]  # type: ignore[misc]
    card = (
        "Silver Rewards Card"
        if arguments["card_type"] != "Silver Rewards Card"
        else "Gold Rewards Card"
    )
    calls[at] = (requestor, name, {**arguments, "card_type": card})
    score = _scored(banking, task, calls)
    assert score.values["reward"] == 0.0
    assert score.attribution is not None and score.attribution.party == "user"
    assert _causes(score) == ["user.wrong_arguments"]


def test_a_raising_gold_read_excuses_nothing(retail: Tau2Data) -> None:
    writes = _writes(retail)
    task = _task(retail, lambda t: any(a.name in writes for a in t.gold))
    read = next(i for i, a in enumerate(task.gold) if a.name not in writes)
    broken = task.model_copy(deep=True)
    assert broken.evaluation_criteria is not None
    gold_read = broken.evaluation_criteria.actions[read]  # type: ignore[index]
    gold_read.arguments = {k: f"{v}0404" for k, v in gold_read.arguments.items()}  # it raises now
    broken.id = f"{task.id}~raising-read"
    calls = [c for c in _gold(task) if isinstance(c, str) or c[1] not in writes]  # writes dropped
    score = _scored(retail, broken, calls)
    assert score.values["reward"] == 0.0
    assert score.attribution is not None and score.attribution.party == "agent"
    assert "task.gold_raises" not in _causes(score)


def test_a_passing_episode_has_no_party_whatever_procedure_it_broke(retail: Tau2Data) -> None:
    writes = _writes(retail)
    task = _task(retail, lambda t: any(a.name in writes for a in t.gold))
    score = _scored(retail, task, _gold(task))  # writes with no consent asked
    assert score.values["reward"] == 1.0 and score.values["procedure_ok"] == 0.0
    assert score.attribution is not None and score.attribution.party is None
    assert score.values[AGENT_SCOPE] == 1.0  # reward_agent keeps it


def test_a_failure_quotes_the_table_record_and_field_that_differ(retail: Tau2Data) -> None:
    writes = _writes(retail)
    task = _task(retail, lambda t: any(a.name in writes for a in t.gold))
    calls = [c for c in _gold(task) if isinstance(c, str) or c[1] not in writes]
    score = _scored(retail, task, calls)
    db = next(e.excerpt for e in score.evidence if e.rule == "DB")
    assert "orders[" in db and "(gold: " in db  # record and field, ours against the gold's
    assert score.attribution is not None
    [cause] = [f for f in score.attribution.faults if f.cause][:1]
    assert cause.kind == "agent.action_not_done" and "(gold: " in cause.excerpt


def test_a_device_action_the_agent_asked_for_and_no_gold_wants_is_the_agents(
    telecom: Tau2Data,
) -> None:
    task = _task(
        telecom,
        lambda t: (
            any(a.requestor == "user" for a in t.gold)
            and not any(a.name == "toggle_airplane_mode" for a in t.gold)
        ),
    )
    ask = "Could you please turn on airplane mode (toggle_airplane_mode) on your phone?"
    unasked = _scored(telecom, task, [*_gold(task), ("user", "toggle_airplane_mode", {})])
    asked = _scored(telecom, task, [*_gold(task), ask, ("user", "toggle_airplane_mode", {})])
    assert unasked.values["reward"] == asked.values["reward"] == 0.0
    assert _causes(unasked) == ["user.unrequested"]
    assert _causes(asked) == ["agent.asked_unneeded"]
    assert asked.attribution is not None and asked.attribution.party == "agent"
