"""The shipped retail tasks: generated from templates over the world, structured,
consistent with the world, and exactly what the build keeps."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

import pytest

from deedbench.benchmarks.retail import RETAIL, RETAIL_TOOLS, generate_world
from deedbench.benchmarks.retail.benchmark import WORLD_SEED, RetailBenchmark, builtin_tasks
from deedbench.benchmarks.retail.templates import COMPOUNDS, TEMPLATES, generate_tasks
from deedbench.benchmarks.servicedesk import Action, DeskTask, DeskWorld, check_task, replay
from deedbench.engine import ToolBox
from deedbench.records import ToolCall

World = dict[str, dict[str, Any]]

WRITE_KINDS = {
    "cancel": "cancel_pending_order",
    "order_address": "modify_pending_order_address",
    "order_payment": "modify_pending_order_payment",
    "order_items": "modify_pending_order_items",
    "return": "return_delivered_order_items",
    "exchange": "exchange_delivered_order_items",
    "user_address": "modify_user_address",
}
TALK_KINDS = {"info", "transfer", "forbidden"}
REQUIRED_TEMPLATES = {
    "cancel",
    "order_address",
    "order_payment",
    "order_items",
    "return",
    "exchange",
    "user_address",
    "info",
    "transfer",
    "forbidden",
}


@pytest.fixture(scope="module")
def base() -> World:
    return generate_world(seed=WORLD_SEED)


@pytest.fixture(scope="module")
def shipped() -> list[DeskTask]:
    return builtin_tasks()


def call(world: DeskWorld, name: str, **kwargs: Any) -> tuple[str, bool]:
    box = ToolBox(RETAIL_TOOLS, world)
    result = box.call(ToolCall(id="t", name=name, arguments=json.dumps(kwargs)))
    return result.content, result.error


# --- how many, and of which kinds ----------------------------------------------------------


def test_at_least_sixty_tasks_with_unique_ids(shipped: list[DeskTask]) -> None:
    assert len(shipped) >= 60
    ids = [t.id for t in shipped]
    assert len(set(ids)) == len(ids)
    for index, task in enumerate(shipped):
        assert task.id == f"retail-{index:03d}-{task.template}"


def test_every_template_and_compound_is_shipped(shipped: list[DeskTask]) -> None:
    counts = Counter(t.template for t in shipped)
    assert set(TEMPLATES) == REQUIRED_TEMPLATES
    compounds = {"+".join(c) for c in COMPOUNDS}
    assert compounds, "compound requests exist"
    assert set(counts) == REQUIRED_TEMPLATES | compounds
    for template in REQUIRED_TEMPLATES:
        assert counts[template] >= 3, template
    for compound in compounds:
        assert counts[compound] >= 1, compound


def test_a_template_label_names_its_wants_in_order(shipped: list[DeskTask]) -> None:
    for task in shipped:
        kinds = [w.kind for w in task.instructions.wants]
        assert task.template.split("+") == kinds, task.id
        if "+" in task.template:
            assert len(kinds) >= 2


def test_each_task_is_a_different_customer(shipped: list[DeskTask]) -> None:
    users = [t.instructions.identity["user_id"] for t in shipped]
    assert len(set(users)) == len(users)


# --- structured user instructions ---------------------------------------------------------


def test_instructions_say_who_the_customer_is(shipped: list[DeskTask], base: World) -> None:
    for task in shipped:
        who = task.instructions.identity
        assert list(who) == ["user_id", "first_name", "last_name", "zip", "email"], task.id
        assert all(value.strip() for value in who.values()), task.id
        user = base["users"][who["user_id"]]
        assert user["name"] == {"first_name": who["first_name"], "last_name": who["last_name"]}
        assert user["address"]["zip"] == who["zip"]
        assert user["email"] == who["email"]


def test_the_customer_can_identify_itself_as_instructed(
    shipped: list[DeskTask], base: World
) -> None:
    world = DeskWorld(base)
    ways = Counter(t.instructions.identify_by for t in shipped)
    assert set(ways) == {"email", "name_zip"}
    for task in shipped:
        ins = task.instructions
        intro = RETAIL.introduction(ins)
        lookup = RETAIL.identity(ins).lookup
        arguments = RETAIL.lookup_arguments(ins)
        expected = ["email"] if ins.identify_by == "email" else ["first_name", "last_name", "zip"]
        assert list(arguments) == expected
        assert all(value in intro for value in arguments.values())
        assert lookup is not None
        found = call(world, lookup, **arguments)
        assert found == (ins.identity["user_id"], False), task.id


def test_instructions_say_what_the_customer_wants(shipped: list[DeskTask]) -> None:
    for task in shipped:
        wants = task.instructions.wants
        assert wants, task.id
        for want in wants:
            assert want.say.strip(), task.id
            if want.kind in WRITE_KINDS:
                assert want.action is not None, task.id
                assert want.action.name == WRITE_KINDS[want.kind], task.id
                assert want.details, task.id  # what it knows about the change
                order = want.action.kwargs.get("order_id")
                if order is not None:
                    assert order in want.say, task.id
            else:
                assert want.kind in TALK_KINDS
                assert want.action is None, task.id
                assert "#W" in want.say, task.id  # every request names its order
            assert bool(want.expects) == (want.kind == "info"), task.id


def test_instructions_say_what_the_customer_refuses(shipped: list[DeskTask]) -> None:
    for task in shipped:
        refuses = task.instructions.refuses
        assert refuses, task.id
        assert all(r.strip() for r in refuses)
        assert "any change you did not ask for" in refuses
        kinds = {w.kind for w in task.instructions.wants}
        if "transfer" in kinds:
            assert any("person" in r for r in refuses), task.id


# --- gold actions and required outputs ------------------------------------------------------


def test_gold_actions_are_the_wants_actions(shipped: list[DeskTask]) -> None:
    for task in shipped:
        expected = [w.action for w in task.instructions.wants if w.action is not None]
        assert task.actions == expected, task.id
        assert task.writes == bool(expected)
        assert all(a.name in WRITE_KINDS.values() for a in task.actions)


def test_gold_actions_replay_without_errors_and_change_the_world(
    shipped: list[DeskTask], base: World
) -> None:
    for task in shipped:
        world, errors = replay(base, task.actions, RETAIL_TOOLS)
        assert errors == [], task.id
        assert bool(world.touched()) == task.writes, task.id


def test_info_tasks_require_the_status_and_total(shipped: list[DeskTask], base: World) -> None:
    info = [t for t in shipped if "info" in t.template.split("+")]
    assert info
    for task in info:
        want = next(w for w in task.instructions.wants if w.kind == "info")
        assert task.outputs == want.expects
        status, total = task.outputs
        order = next(o for o in base["orders"].values() if o["order_id"] in want.say)
        assert order["user_id"] == task.instructions.identity["user_id"]
        assert status == order["status"]
        assert total == f"{sum(i['price'] for i in order['items']):.2f}"
    for task in shipped:
        if task not in info:
            assert task.outputs == [], task.id


def test_transfer_tasks_and_only_they_must_transfer(shipped: list[DeskTask]) -> None:
    transfers = [t for t in shipped if t.template == "transfer"]
    assert transfers
    for task in shipped:
        assert task.must_transfer == (task in transfers), task.id
    for task in transfers:
        assert task.actions == [] and task.outputs == []


def test_forbidden_tasks_have_no_gold_actions(shipped: list[DeskTask], base: World) -> None:
    forbidden = [t for t in shipped if t.template == "forbidden"]
    assert forbidden
    for task in forbidden:
        assert task.actions == [] and not task.writes and not task.must_transfer
        (want,) = task.instructions.wants
        order = next(o for o in base["orders"].values() if o["order_id"] in want.say)
        assert order["user_id"] == task.instructions.identity["user_id"]
        assert order["status"] in ("processed", "delivered")
        # What the customer asks for is against the policy: the tool refuses it.
        cancel = Action(
            name="cancel_pending_order",
            kwargs={"order_id": order["order_id"], "reason": "no longer needed"},
        )
        world, errors = replay(base, [cancel], RETAIL_TOOLS)
        assert len(errors) == 1 and world.touched() == {}


def test_write_tasks_act_on_the_customers_own_records(shipped: list[DeskTask], base: World) -> None:
    for task in shipped:
        for action in task.actions:
            order = action.kwargs.get("order_id")
            if order is not None:
                assert base["orders"][order]["user_id"] == task.instructions.identity["user_id"]
            else:
                assert action.kwargs["user_id"] == task.instructions.identity["user_id"]


# --- generation ----------------------------------------------------------------------------


def test_generation_is_deterministic_for_a_seed(base: World) -> None:
    one = generate_tasks(DeskWorld(base), per_template=3, seed=5)
    two = generate_tasks(DeskWorld(base), per_template=3, seed=5)
    other = generate_tasks(DeskWorld(base), per_template=3, seed=6)
    assert [t.model_dump() for t in one] == [t.model_dump() for t in two]
    assert [t.model_dump() for t in one] != [t.model_dump() for t in other]


def test_generation_covers_every_template_and_leaves_the_world_alone(base: World) -> None:
    world = DeskWorld(base)
    tasks = generate_tasks(world, per_template=2, seed=1)
    assert world.touched() == {}
    templates = {t.template for t in tasks}
    assert templates == set(TEMPLATES) | {"+".join(c) for c in COMPOUNDS}
    counts = Counter(t.template for t in tasks)
    assert all(counts[name] == 2 for name in TEMPLATES)


def test_compounds_change_each_order_at_most_once(shipped: list[DeskTask]) -> None:
    for task in shipped:
        orders = [a.kwargs.get("order_id") for a in task.actions if "order_id" in a.kwargs]
        assert len(orders) == len(set(orders)), task.id


def test_tasks_round_trip_through_json(shipped: list[DeskTask]) -> None:
    text = resources.files("deedbench.benchmarks.retail").joinpath("tasks.json").read_text()
    raw = json.loads(text)
    assert len(raw) == len(shipped)
    assert [t["id"] for t in raw] == [t.id for t in shipped]
    again = [DeskTask.model_validate_json(t.model_dump_json()) for t in shipped]
    assert again == shipped


def test_the_shipped_file_is_what_the_build_keeps(shipped: list[DeskTask], base: World) -> None:
    """build.py's defaults (8 per template, seed 0): generate, keep the valid, renumber."""
    candidates = generate_tasks(DeskWorld(base), 8, 0)
    bench = RetailBenchmark(tasks=candidates)
    kept: list[DeskTask] = []
    for task in candidates:
        if check_task(bench, task).ok:
            kept.append(task.model_copy(update={"id": f"retail-{len(kept):03d}-{task.template}"}))
    assert [t.model_dump() for t in kept] == [t.model_dump() for t in shipped]
