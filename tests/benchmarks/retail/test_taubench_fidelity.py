"""deedbench's retail tools against τ-bench's own data and gold database hashes.

The τ-bench files live beside the checkout (``../shared/taubench``) and are read
from there only. Replaying a task's gold actions must give exactly the database
τ-bench's code gives: the same hash, for every dev task.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.retail import RETAIL_TOOLS, load_retail_data
from deedbench.benchmarks.servicedesk import DeskWorld
from deedbench.engine import ToolBox
from deedbench.records import ToolCall
from deedbench.scoring import tau_hash, worlds_equal_tau

REPO_ROOT = Path(__file__).resolve().parents[3]
TAUBENCH = REPO_ROOT.parent / "shared" / "taubench"
RETAIL = TAUBENCH / "retail"
SKIPPED = frozenset({"respond", "transfer_to_human_agents"})

pytestmark = pytest.mark.reference("taubench")


@cache
def base() -> dict[str, Any]:
    return load_retail_data(RETAIL)


@cache
def tasks(split: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((RETAIL / f"tasks_{split}.json").read_text())
    return loaded


@cache
def gold() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RETAIL / "gold_hashes_dev.json").read_text())
    return loaded


def replay(task: dict[str, Any]) -> tuple[DeskWorld, list[str]]:
    """τ-bench's gold replay: every action but respond and transfer, in order, errors and all."""
    world = DeskWorld(base())
    box = ToolBox(RETAIL_TOOLS, world)
    errors = []
    for index, action in enumerate(task["actions"]):
        if action["name"] in SKIPPED:
            continue
        call = ToolCall(
            id=f"gold-{index}", name=action["name"], arguments=json.dumps(action["kwargs"])
        )
        message = box.call(call)
        if message.error:
            errors.append(f"{action['name']}: {message.content}")
    return world, errors


def test_the_untouched_world_has_tau_bench_initial_hash() -> None:
    assert tau_hash(DeskWorld(base()).snapshot()) == gold()["initial_hash"]


def test_every_gold_action_names_a_retail_tool() -> None:
    names = {t.name for t in RETAIL_TOOLS} | SKIPPED
    for split in ("dev", "test", "train"):
        used = {a["name"] for task in tasks(split) for a in task["actions"]}
        assert used <= names, (split, used - names)


@pytest.mark.parametrize("index", range(20))
def test_gold_replay_gives_tau_bench_gold_hash(index: int) -> None:
    task = tasks("dev")[index]
    expected = gold()["tasks"][index]
    assert (expected["index"], expected["user_id"]) == (task["index"], task["user_id"])

    world, errors = replay(task)
    assert tau_hash(world.snapshot()) == expected["gold_hash"], errors

    again, _ = replay(task)
    assert worlds_equal_tau(world, again)
    fresh = DeskWorld(base())
    assert worlds_equal_tau(world, fresh) == (expected["gold_hash"] == gold()["initial_hash"])

    changed, _ = replay(task)
    user = changed.for_update("users", task["user_id"])
    user["email"] = "someone.else@example.com"
    assert not worlds_equal_tau(world, changed)
    assert tau_hash(changed.snapshot()) != expected["gold_hash"]


def test_gold_replays_leave_the_base_untouched() -> None:
    for task in tasks("dev"):
        replay(task)
    assert tau_hash(base()) == gold()["initial_hash"]


@pytest.mark.parametrize(("split", "actions", "in_tasks"), [("test", 24, 19), ("train", 20, 19)])
def test_invalid_gold_actions_are_the_ones_tau_bench_reports(
    split: str, actions: int, in_tasks: int
) -> None:
    """τ-bench's own tools reject 24 gold actions in 19 test tasks, 20 in 19 train tasks."""
    failing = {}
    for task in tasks(split):
        _, errors = replay(task)
        if errors:
            failing[task["index"]] = errors
    assert sum(len(errors) for errors in failing.values()) == actions, failing
    assert len(failing) == in_tasks, failing
