"""Validation of a desk's tasks (`check_task`): a gold action that fails, gold actions the
customer did not ask for, and every task checked; run on retail, the desk that ships tasks."""

from __future__ import annotations

import pytest

from deedbench.benchmarks.retail import RetailBenchmark
from deedbench.benchmarks.servicedesk import Action, DeskTask, check_task


@pytest.fixture(scope="module")
def bench() -> RetailBenchmark:
    return RetailBenchmark()


def broken(task: DeskTask, **kwargs: object) -> DeskTask:
    """The task with its first gold action's arguments changed (the customer's too)."""
    action = task.actions[0]
    bad = Action(name=action.name, kwargs={**action.kwargs, **kwargs})
    wants = [
        w.model_copy(update={"action": bad}) if w.action == action else w
        for w in task.instructions.wants
    ]
    instructions = task.instructions.model_copy(update={"wants": wants})
    return task.model_copy(
        update={"id": f"{task.id}-broken", "actions": [bad], "instructions": instructions}
    )


def test_a_gold_action_on_an_unknown_order_is_reported(bench: RetailBenchmark) -> None:
    cancel = next(t for t in bench.tasks.values() if t.template == "cancel")
    task = broken(cancel, order_id="#W0000000")
    mine = RetailBenchmark(tasks=[task])
    check = check_task(mine, task)
    assert not check.ok
    assert check.task == task.id and check.template == "cancel"
    (error,) = check.gold_errors
    assert error.index == 0 and error.name == "cancel_pending_order"
    assert "#W0000000" in error.error or "not found" in error.error.lower()
    assert check.problems[0] == f"gold action #0 cancel_pending_order fails: {error.error}"
    assert "the gold actions change nothing" in check.problems
    assert "the idle agent passes a task that needs a change" in check.problems


def test_gold_actions_the_customer_did_not_ask_for_are_reported(bench: RetailBenchmark) -> None:
    task = next(t for t in bench.tasks.values() if t.template == "cancel")
    other = next(t for t in bench.tasks.values() if t.template == "cancel" and t is not task)
    # The customer asks for its own cancellation; the gold cancels someone else's order.
    wrong = task.model_copy(update={"id": "mismatch", "actions": other.actions})
    check = check_task(RetailBenchmark(tasks=[wrong]), wrong)
    assert check.gold_errors == []
    assert len(check.problems) == 2
    # found from the task alone: the instruction's order is not the one the gold touches
    assert check.problems[0].startswith("task.instruction_contradicts_gold: ")
    assert [f.kind for f in check.faults] == ["task.instruction_contradicts_gold"]
    assert check.problems[1].startswith("the oracle does not pass: outcome: ")
    assert other.actions[0].kwargs["order_id"] in check.problems[1]


def test_validate_checks_every_task_and_passes_the_good_ones(bench: RetailBenchmark) -> None:
    good = [t for t in bench.tasks.values() if t.template == "exchange"][:2]
    bad = broken(good[0], new_item_ids=["0000000000"] * len(good[0].actions[0].kwargs["item_ids"]))
    checks = RetailBenchmark(tasks=[*good, bad]).validate()
    assert [c.task for c in checks] == [good[0].id, good[1].id, bad.id]
    assert [c.ok for c in checks] == [True, True, False]
    assert checks[2].gold_errors and checks[2].problems
