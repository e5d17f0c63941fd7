"""Loading τ-bench's own retail tasks: `-T tasks=` selection, and errors in the data folder
reported with the file and the task index.

The τ-bench files live beside the checkout (``../shared/taubench``) and are only read
from there; a broken folder is a copy made in ``tmp_path``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks import retail
from deedbench.benchmarks.retail import RETAIL as RETAIL_DESK
from deedbench.benchmarks.retail import load_retail_data
from deedbench.benchmarks.taubench import TaubenchRetailBenchmark
from deedbench.benchmarks.taubench.layout import locate
from deedbench.benchmarks.taubench.tasks import load_taubench_tasks, parse_selection
from deedbench.errors import BenchmarkError

# tests/benchmarks/taubench/<this file>: parents[3] is the checkout, its parent holds `shared`.
TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"
RETAIL = TAUBENCH / "retail"
WRITES = frozenset(RETAIL_DESK.procedure_spec.write_tools)
COPIED = ("users.json", "orders.json", "products.json", "policy.md", "tasks_dev.json")

needs_data = pytest.mark.reference("taubench")


@cache
def raw_tasks(split: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((RETAIL / f"tasks_{split}.json").read_text())
    return loaded


@cache
def users() -> dict[str, Any]:
    return load_retail_data(RETAIL)["users"]


def copy_folder(target: Path) -> Path:
    """A private copy of the retail data with the dev tasks, to break one thing in."""
    target.mkdir()
    for name in COPIED:
        shutil.copyfile(RETAIL / name, target / name)
    return target


def edit_tasks(folder: Path, change: Callable[[list[dict[str, Any]]], None]) -> Path:
    file = folder / "tasks_dev.json"
    tasks = json.loads(file.read_text())
    change(tasks)
    file.write_text(json.dumps(tasks))
    return file


def load(folder: Path, **options: str) -> TaubenchRetailBenchmark:
    return TaubenchRetailBenchmark({"data": str(folder), "split": "dev", **options})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return copy_folder(tmp_path / "retail")


# --- parse_selection ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0,5,9-12", [0, 5, 9, 10, 11, 12]),
        ("7", [7]),
        ("9-9", [9]),
        (" 1 , 3-4 ", [1, 3, 4]),
        ("12-14,0", [12, 13, 14, 0]),  # the order given is kept
    ],
)
def test_parse_selection_expands_indexes_and_ranges(text: str, expected: list[int]) -> None:
    assert parse_selection(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3,3", [3]),
        ("3,1-4,3", [3, 1, 2, 4]),
        ("2-5,4-6", [2, 3, 4, 5, 6]),
    ],
)
def test_parse_selection_drops_duplicates(text: str, expected: list[int]) -> None:
    assert parse_selection(text) == expected


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("", ""),
        ("a", "a"),
        ("1,x", "x"),
        ("1-", "1-"),
        ("-3", "-3"),
        ("1,,2", ""),
        ("1-2-3", "1-2-3"),
        ("1.5", "1.5"),
        ("2 - 4", "2 - 4"),
    ],
)
def test_parse_selection_refuses_bad_text(text: str, bad: str) -> None:
    with pytest.raises(ValueError, match="is not an index or a range") as caught:
        parse_selection(text)
    assert str(caught.value).startswith(repr(bad))


@pytest.mark.parametrize("text", ["5-3", "0,12-9"])
def test_parse_selection_refuses_a_backwards_range(text: str) -> None:
    with pytest.raises(ValueError, match="runs backwards") as caught:
        parse_selection(text)
    assert repr(text.split(",")[-1]) in str(caught.value)


# --- loading the real tasks ---------------------------------------------------------------------


@needs_data
def test_every_dev_task_loads_with_its_gold_actions_and_customer() -> None:
    raw = raw_tasks("dev")
    tasks = load_taubench_tasks(locate(RETAIL, "retail"), "dev", users(), None, retail.RETAIL)
    assert [t.id for t in tasks] == [f"task-{i}" for i in range(len(raw))] and len(raw) == 20
    for task, source in zip(tasks, raw, strict=True):
        assert [a.model_dump() for a in task.actions] == source["actions"]
        assert task.outputs == source["outputs"]
        ins = task.instructions
        user = users()[source["user_id"]]
        assert ins.identity["user_id"] == source["user_id"]
        assert (ins.identity["first_name"], ins.identity["last_name"]) == (
            user["name"]["first_name"],
            user["name"]["last_name"],
        )
        details = (ins.identity["zip"], ins.identity["email"])
        assert details == (user["address"]["zip"], user["email"])
        assert ins.free_text == source["instruction"]
        # the scripted customer asks for exactly the gold writes, in order
        writes = [a for a in task.actions if a.name in WRITES]
        assert [w.action for w in ins.wants if w.action is not None] == writes
        assert any(w.kind == "info" for w in ins.wants) == bool(source["outputs"])
        handoff = any(a["name"] == "transfer_to_human_agents" for a in source["actions"])
        assert any(w.kind == "transfer" for w in ins.wants) == handoff


@needs_data
def test_tasks_selects_exactly_those_indexes() -> None:
    bench = TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev", "tasks": "0,5,9-12"})
    wanted = [0, 5, 9, 10, 11, 12]
    assert list(bench.tasks) == [f"task-{i}" for i in wanted]
    assert [s.id for s in bench.samples()] == [f"task-{i}" for i in wanted]
    for index in wanted:  # the right tasks, not just relabelled ones
        task = bench.tasks[f"task-{index}"]
        assert [a.model_dump() for a in task.actions] == raw_tasks("dev")[index]["actions"]
        assert task.instructions.identity["user_id"] == raw_tasks("dev")[index]["user_id"]


@needs_data
def test_the_split_chooses_the_tasks_file_and_test_is_the_default() -> None:
    assert len(TaubenchRetailBenchmark({"data": str(RETAIL)}).tasks) == len(raw_tasks("test"))
    assert len(raw_tasks("test")) == 115
    dev = TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev"})
    assert len(dev.tasks) == 20
    assert dev.policy == (RETAIL / "policy.md").read_text(encoding="utf-8")


@needs_data
def test_tasks_beyond_the_file_are_an_error_naming_the_file() -> None:
    with pytest.raises(BenchmarkError) as caught:
        TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev", "tasks": "18-21"})
    message = str(caught.value)
    assert str(RETAIL / "tasks_dev.json") in message
    assert "[20, 21]" in message and "20 tasks" in message


@needs_data
def test_a_bad_selection_is_an_error() -> None:
    with pytest.raises(BenchmarkError, match="option tasks: range '4-2' runs backwards"):
        TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev", "tasks": "4-2"})


# --- errors in the data folder ------------------------------------------------------------------


@needs_data
def test_a_missing_tasks_file_is_named(folder: Path) -> None:
    (folder / "tasks_dev.json").unlink()
    with pytest.raises(BenchmarkError) as caught:
        load(folder)
    message = str(caught.value)
    assert str(folder) in message
    assert "split 'dev'" in message and "tasks_dev.json" in message


@needs_data
def test_a_plain_tasks_json_is_used_when_the_split_file_is_absent(folder: Path) -> None:
    (folder / "tasks_dev.json").rename(folder / "tasks.json")
    assert list(load(folder).tasks) == [f"task-{i}" for i in range(20)]


@needs_data
@pytest.mark.parametrize("name", ["users.json", "orders.json", "products.json"])
def test_a_missing_world_file_is_named(folder: Path, name: str) -> None:
    (folder / name).unlink()
    with pytest.raises(BenchmarkError, match="is missing") as caught:
        load(folder)
    assert str(folder / name) in str(caught.value)


@needs_data
def test_a_world_file_that_is_not_json_is_named(folder: Path) -> None:
    (folder / "orders.json").write_text("{not json")
    with pytest.raises(BenchmarkError, match="not valid JSON") as caught:
        load(folder)
    assert str(folder / "orders.json") in str(caught.value)


@needs_data
def test_a_missing_policy_is_reported(folder: Path) -> None:
    (folder / "policy.md").unlink()
    with pytest.raises(BenchmarkError) as caught:
        load(folder)
    assert str(folder) in str(caught.value) and "policy.md" in str(caught.value)


@needs_data
def test_wiki_md_serves_as_the_policy(folder: Path) -> None:
    (folder / "policy.md").rename(folder / "wiki.md")
    assert load(folder).policy == (RETAIL / "policy.md").read_text(encoding="utf-8")


@needs_data
def test_a_tasks_file_that_is_not_json_or_not_a_list_is_named(folder: Path) -> None:
    file = folder / "tasks_dev.json"
    file.write_text("[{")
    with pytest.raises(BenchmarkError, match="not valid JSON") as caught:
        load(folder)
    assert str(file) in str(caught.value)
    file.write_text('{"tasks": []}')
    with pytest.raises(BenchmarkError, match="expected a list of tasks") as caught:
        load(folder)
    assert str(file) in str(caught.value)


@needs_data
def test_a_task_naming_an_unknown_user_is_reported_with_its_index(folder: Path) -> None:
    file = edit_tasks(folder, lambda tasks: tasks[7].update(user_id="nobody_0000"))
    with pytest.raises(BenchmarkError) as caught:
        load(folder)
    message = str(caught.value)
    assert message.startswith(f"{file}: task 7:")
    assert "unknown user 'nobody_0000'" in message


@needs_data
def test_a_task_without_a_user_id_is_reported_with_its_index(folder: Path) -> None:
    file = edit_tasks(folder, lambda tasks: tasks[2].pop("user_id"))
    with pytest.raises(BenchmarkError, match="user_id") as caught:
        load(folder)
    assert str(caught.value).startswith(f"{file}: task 2:")


@needs_data
def test_an_action_without_a_name_is_reported_as_malformed(folder: Path) -> None:
    file = edit_tasks(folder, lambda tasks: tasks[4]["actions"][0].pop("name"))
    with pytest.raises(BenchmarkError) as caught:
        load(folder)
    message = str(caught.value)
    assert message.startswith(f"{file}: task 4:")
    assert "malformed action" in message and "name" in message


@needs_data
def test_an_action_with_bad_kwargs_is_reported_as_malformed(folder: Path) -> None:
    file = edit_tasks(folder, lambda tasks: tasks[11]["actions"][0].update(kwargs="oops"))
    with pytest.raises(BenchmarkError, match="malformed action") as caught:
        load(folder)
    assert str(caught.value).startswith(f"{file}: task 11:")
    assert "kwargs" in str(caught.value)


@needs_data
@pytest.mark.parametrize("actions", [None, 5])
def test_an_actions_field_that_is_not_a_list_is_reported(folder: Path, actions: object) -> None:
    file = edit_tasks(folder, lambda tasks: tasks[6].update(actions=actions))
    with pytest.raises(BenchmarkError) as caught:
        load(folder)
    assert str(caught.value).startswith(f"{file}: task 6:")


@needs_data
def test_a_task_that_is_not_an_object_or_has_bad_outputs_is_reported(folder: Path) -> None:
    file = edit_tasks(folder, lambda tasks: tasks.__setitem__(3, "task"))
    with pytest.raises(BenchmarkError, match="expected an object") as caught:
        load(folder)
    assert str(caught.value).startswith(f"{file}: task 3:")
    shutil.copyfile(RETAIL / "tasks_dev.json", file)
    edit_tasks(folder, lambda tasks: tasks[5].update(outputs=[1, 2]))
    with pytest.raises(BenchmarkError, match="outputs must be a list of strings") as caught:
        load(folder)
    assert str(caught.value).startswith(f"{file}: task 5:")


@needs_data
def test_the_error_names_the_file_index_when_tasks_are_selected(folder: Path) -> None:
    file = edit_tasks(folder, lambda tasks: tasks[13].update(user_id="ghost_1"))
    with pytest.raises(BenchmarkError) as caught:
        load(folder, tasks="12-14")
    assert str(caught.value).startswith(f"{file}: task 13:")
