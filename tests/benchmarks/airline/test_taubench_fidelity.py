"""deedbench's airline tools against 200 real τ-bench airline results (gpt-4o, 50 tasks x 4).

The τ-bench files live beside the checkout (``../shared/taubench``) and are read
from there only. Each result carries the gold database hash τ-bench computed
(``gt_data_hash``) and whether the agent's final database matched it
(``r_actions``). Two proofs of fidelity follow:

- replaying each task's gold actions gives exactly τ-bench's gold hash;
- replaying each recorded trajectory's tool calls gives exactly the observation
  τ-bench returned for every call, and a final database that matches the gold
  one exactly when τ-bench said it did.

The results were recorded with τ-bench's users of 2024-11 (addresses then had a
``province``), so the world is the current flights and reservations plus those users.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.airline import load_airline_data
from deedbench.benchmarks.airline.tools import AIRLINE_TOOLS, AIRLINE_WRITE_TOOLS
from deedbench.benchmarks.servicedesk import DeskWorld
from deedbench.engine import ToolBox
from deedbench.records import ToolCall
from deedbench.scoring import tau_hash, worlds_equal_tau

REPO_ROOT = Path(__file__).resolve().parents[3]
TAUBENCH = REPO_ROOT.parent / "shared" / "taubench"
AIRLINE = TAUBENCH / "airline"
RECORDED = TAUBENCH / "trajectories"
RECORDS_FILE = RECORDED / "gpt-4o-airline.json"
USERS_2024_11 = RECORDED / "airline-2024-11" / "users.json"
SKIPPED = frozenset({"respond", "transfer_to_human_agents"})

pytestmark = pytest.mark.reference("taubench")


def _load_records() -> list[dict[str, Any]]:
    if not RECORDS_FILE.is_file():
        return []
    loaded: list[dict[str, Any]] = json.loads(RECORDS_FILE.read_text(encoding="utf-8"))
    return loaded


RECORDS = _load_records()
TASK_IDS = sorted({record["task_id"] for record in RECORDS})


def reward_info(record: dict[str, Any]) -> dict[str, Any]:
    """The record's ``reward_info.info`` ({} for the runs that hit τ-bench's step limit)."""
    info: dict[str, Any] = (record["info"].get("reward_info") or {}).get("info") or {}
    return info


def records_of(task_id: int) -> list[dict[str, Any]]:
    return [record for record in RECORDS if record["task_id"] == task_id]


GOLD_TASK_IDS = sorted(
    {record["task_id"] for record in RECORDS if "gt_data_hash" in reward_info(record)}
)


@cache
def base() -> dict[str, Any]:
    return load_airline_data(AIRLINE, users_file=USERS_2024_11)


@cache
def untouched_hash() -> str:
    return tau_hash(DeskWorld(base()).snapshot())


def gold_actions(task_id: int) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = records_of(task_id)[0]["info"]["task"]["actions"]
    return actions


def run_calls(calls: Iterator[tuple[str, str, str]]) -> tuple[DeskWorld, list[str]]:
    """Run (id, tool name, JSON arguments) calls on a fresh world; returns it and the outputs."""
    world = DeskWorld(base())
    box = ToolBox(AIRLINE_TOOLS, world)
    outputs = []
    for call_id, name, arguments in calls:
        outputs.append(box.call(ToolCall(id=call_id, name=name, arguments=arguments)).content)
    return world, outputs


@cache
def gold(task_id: int) -> tuple[DeskWorld, tuple[str, ...]]:
    """τ-bench's gold replay: every action but respond and transfer, in order; and its errors."""
    actions = [a for a in gold_actions(task_id) if a["name"] not in SKIPPED]
    world, outputs = run_calls(
        (f"gold-{i}", a["name"], json.dumps(a["kwargs"])) for i, a in enumerate(actions)
    )
    return world, tuple(out for out in outputs if out.startswith("Error:"))


def world_hash(world: DeskWorld) -> str:
    """tau_hash of the world (a world that wrote nothing is the base, hashed once)."""
    return tau_hash(world) if world.touched() else untouched_hash()


def trajectory_calls(record: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """Each tool call of the trajectory, in order, with the observation τ-bench returned.

    The observation is the tool message right after the call (call ids repeat in
    some trajectories, so they cannot be matched by id).
    """
    traj = record["traj"]
    calls = []
    for message, reply in pairwise(traj):
        if message["role"] == "assistant" and message.get("tool_calls"):
            # τ-bench's tool-calling agent runs (and records) only the first call of a turn.
            (call,) = message["tool_calls"]
            assert reply["role"] == "tool" and reply["tool_call_id"] == call["id"]
            function = call["function"]
            calls.append((call["id"], function["name"], function["arguments"], reply["content"]))
    return calls


def replay_trajectory(record: dict[str, Any]) -> tuple[DeskWorld, list[tuple[str, str, str]]]:
    """The agent's final world and every (tool, ours, τ-bench's) observation that differs."""
    calls = trajectory_calls(record)
    world, outputs = run_calls((c[0], c[1], c[2]) for c in calls)
    differences = [
        (name, ours, theirs)
        for (_, name, _, theirs), ours in zip(calls, outputs, strict=True)
        if ours != theirs
    ]
    return world, differences


# --- the recorded set -------------------------------------------------------------------------


def test_the_records_are_fifty_tasks_four_trials_each() -> None:
    assert len(RECORDS) == 200
    assert list(range(50)) == TASK_IDS
    assert sorted(r["trial"] for r in records_of(7)) == [0, 1, 2, 3]
    kinds = [tuple(sorted(reward_info(r))) for r in RECORDS]
    assert kinds.count(("gt_data_hash", "r_actions")) == 182
    assert kinds.count(("outputs", "r_outputs")) == 13
    assert kinds.count(()) == 5  # runs that reached τ-bench's step limit: no reward info
    tasks = json.loads((RECORDED / "airline-2024-11" / "tasks_test.json").read_text())
    for record in RECORDS:
        assert record["info"]["task"]["actions"] == tasks[record["task_id"]]["actions"]


def test_every_name_used_is_an_airline_tool() -> None:
    names = {t.name for t in AIRLINE_TOOLS}
    for record in RECORDS:
        assert {a["name"] for a in record["info"]["task"]["actions"]} <= names
        assert {name for _, name, _, _ in trajectory_calls(record)} <= names


def test_the_untouched_world_has_the_hash_of_tasks_that_change_nothing() -> None:
    read_only = {
        reward_info(r)["gt_data_hash"]
        for r in RECORDS
        if "gt_data_hash" in reward_info(r)
        and not {a["name"] for a in r["info"]["task"]["actions"]} & AIRLINE_WRITE_TOOLS
    }
    assert read_only == {untouched_hash()}
    # The users of 2024-11 matter: today's users give another hash.
    assert tau_hash(DeskWorld(load_airline_data(AIRLINE)).snapshot()) != untouched_hash()


# --- gold replays -----------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", GOLD_TASK_IDS)
def test_gold_replay_gives_tau_bench_gold_hash(task_id: int) -> None:
    world, errors = gold(task_id)
    assert errors == ()  # every gold action of this split is valid
    expected = {reward_info(r).get("gt_data_hash") for r in records_of(task_id)} - {None}
    assert expected == {world_hash(world)}


def test_gold_replays_leave_the_base_untouched() -> None:
    for task_id in GOLD_TASK_IDS:
        gold(task_id)
    assert tau_hash(base()) == untouched_hash()


@pytest.mark.parametrize("users", ["current", "2024-11"])
def test_every_gold_action_of_both_task_files_is_valid(users: str) -> None:
    if users == "current":
        data, tasks_file = load_airline_data(AIRLINE), AIRLINE / "tasks_test.json"
    else:
        data, tasks_file = base(), RECORDED / "airline-2024-11" / "tasks_test.json"
    tasks = json.loads(tasks_file.read_text(encoding="utf-8"))
    assert len(tasks) == 50
    for task in tasks:
        box = ToolBox(AIRLINE_TOOLS, DeskWorld(data))
        for action in task["actions"]:
            if action["name"] not in SKIPPED:
                call = ToolCall(id="g", name=action["name"], arguments=json.dumps(action["kwargs"]))
                message = box.call(call)
                assert not message.error, (task["user_id"], action, message.content)


# --- recorded trajectories --------------------------------------------------------------------


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_trajectories_reproduce_tau_bench_observations_and_r_actions(task_id: int) -> None:
    """For worlds over one base, equal τ-bench hashes means equal touched records, which
    `worlds_equal_tau` compares; the gold world's hash itself is checked above."""
    for record in records_of(task_id):
        world, differences = replay_trajectory(record)
        assert differences == [], (record["trial"], differences[:1])
        info = reward_info(record)
        if "r_actions" in info:
            matches_gold = worlds_equal_tau(world, gold(task_id)[0])
            assert matches_gold == bool(info["r_actions"]), record["trial"]


def test_trajectory_hashes_themselves_agree_with_r_actions() -> None:
    """The same verdict from full hashes, for one passing and one failing run that wrote."""
    picked: dict[bool, dict[str, Any]] = {}
    for record in RECORDS:
        info = reward_info(record)
        wrote = any(name in AIRLINE_WRITE_TOOLS for _, name, _, _ in trajectory_calls(record))
        if "r_actions" in info and wrote:
            picked.setdefault(bool(info["r_actions"]), record)
    assert set(picked) == {True, False}
    for passed, record in picked.items():
        world, _ = replay_trajectory(record)
        assert world.touched()
        assert (tau_hash(world) == reward_info(record)["gt_data_hash"]) == passed
