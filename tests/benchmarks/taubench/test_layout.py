"""`--data` as τ-bench's users have it: a clone of its repository (the root, a domain's
``tau_bench/envs/<domain>`` folder, its ``data/`` folder) or a converted copy, read to the
same tasks and the same gold hashes; the task files read as literals, never run.

The clone is ``../shared/taubench/src`` (the repository tree at the pinned commit) copied
into ``tmp_path`` with the tables put where the repository keeps them (its ``data/``
folders hold no JSON in ../shared; the converted tables are byte-identical to τ-bench's).
"""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks.taubench import TaubenchAirlineBenchmark, TaubenchRetailBenchmark
from deedbench.benchmarks.taubench.benchmark import TaubenchBenchmark
from deedbench.benchmarks.taubench.layout import LAYOUTS, locate, read_python_tasks
from deedbench.cli.main import app
from deedbench.errors import BenchmarkError

from ._reference import TAUBENCH

SRC = TAUBENCH / "src"
TABLES = {
    "retail": ("users", "orders", "products"),
    "airline": ("users", "flights", "reservations"),
}
SPLITS = [("retail", "test"), ("retail", "dev"), ("retail", "train"), ("airline", "test")]
KINDS = {"retail": TaubenchRetailBenchmark, "airline": TaubenchAirlineBenchmark}
FULL = os.environ.get("DEEDBENCH_TAUBENCH_FULL") == "1"
"""Compare the gold hashes of every task of every split, not the first 8 of each (and
retail's 20 dev tasks against τ-bench's own): the 500 retail training tasks' replays alone
take minutes (each τ-bench hash is of the whole database)."""

pytestmark = pytest.mark.reference("taubench")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clone") / "tau-bench"
    shutil.copytree(SRC, root)
    for domain, tables in TABLES.items():
        for table in tables:
            name = f"{table}.json"
            shutil.copyfile(
                TAUBENCH / domain / name, root / "tau_bench/envs" / domain / "data" / name
            )
    return root


def _bench(domain: str, data: Path, split: str) -> TaubenchBenchmark:
    return KINDS[domain]({"data": str(data), "split": split})


@cache
def _converted(domain: str, split: str) -> tuple[dict[str, object], str]:
    bench = _bench(domain, TAUBENCH / domain, split)
    return {key: task.model_dump() for key, task in bench.tasks.items()}, bench.policy


@cache
def _converted_base(domain: str) -> object:
    return _bench(domain, TAUBENCH / domain, "test").base


@pytest.mark.parametrize(("domain", "split"), SPLITS)
@pytest.mark.parametrize("where", ["root", "env", "data"])
def test_a_clone_reads_to_the_converted_tasks_and_gold_hashes(
    clone: Path, domain: str, split: str, where: str
) -> None:
    env = clone / "tau_bench" / "envs" / domain
    data = {"root": clone, "env": env, "data": env / "data"}[where]
    bench = _bench(domain, data, split)
    tasks, policy = _converted(domain, split)
    assert bench.files.clone and bench.files.tables == env / "data"
    assert {key: task.model_dump() for key, task in bench.tasks.items()} == tasks
    assert bench.policy == policy
    assert bench.base == _converted_base(domain)  # a gold hash is f(tables, gold actions)
    if where == "root":  # τ-bench's hash of each gold replay: the first 8 tasks, or all
        chosen = {} if FULL else {"tasks": "0-7"}
        mine = KINDS[domain]({"data": str(data), "split": split, **chosen}).validate()
        theirs = KINDS[domain]({"data": str(TAUBENCH / domain), "split": split, **chosen})
        hashes = [c.gold_hash_tau for c in theirs.validate()]
        assert [c.gold_hash_tau for c in mine] == hashes and len(hashes) >= min(8, len(tasks))


def test_the_dev_gold_hashes_read_from_a_clone_are_taus_own(clone: Path) -> None:
    """τ-bench's own code computed these (../shared/taubench/retail/gold_hashes_dev.json)."""
    recorded = json.loads((TAUBENCH / "retail" / "gold_hashes_dev.json").read_text())
    expected = {task["index"]: task["gold_hash"] for task in recorded["tasks"]}
    found = {c.index: c.gold_hash_tau for c in _bench("retail", clone, "dev").validate()}
    assert found == expected and len(found) == 20


def _task_file(folder: Path, body: str) -> Path:
    path = folder / "tasks_test.py"
    path.write_text("from tau_bench.types import Action, Task\n\n" + body, encoding="utf-8")
    return path


def test_a_task_file_is_read_as_literals(tmp_path: Path) -> None:
    path = _task_file(
        tmp_path,
        'TASKS_TEST = [Task(annotator="0", user_id="u", instruction="hi",\n'
        '    actions=[Action(name="x", kwargs={"a": -1, "b": [1.5, None, True]})], outputs=[])]\n',
    )
    assert read_python_tasks(path, "test") == [
        {
            "index": 0,
            "annotator": "0",
            "user_id": "u",
            "instruction": "hi",
            "actions": [{"name": "x", "kwargs": {"a": -1, "b": [1.5, None, True]}}],
            "outputs": [],
        }
    ]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('import os\nos.system("touch pwned")\nTASKS = []\n', "found Expr"),
        ('TASKS = [Task(user_id=open("x").read())]\n', "open('x').read()"),
        ("TASKS = [Task(**extra)]\n", "keyword arguments only"),
        ("TASKS = [Task(user_id=f'{1+1}')]\n", "not a literal"),
        ("def f():\n    pass\nTASKS = []\n", "found FunctionDef"),
        ("OTHER = []\n", "no task list"),
        ("TASKS = [Task(user_id=__import__('os').getcwd())]\n", "not a literal"),
    ],
)
def test_a_task_file_that_is_not_literals_is_refused_and_never_run(
    tmp_path: Path, body: str, said: str
) -> None:
    path = _task_file(tmp_path, body)
    with pytest.raises(BenchmarkError, match=r"tasks_test\.py") as caught:
        read_python_tasks(path, "test")
    assert said in str(caught.value)
    assert not (tmp_path / "pwned").exists()


def test_a_folder_of_no_layout_names_the_layouts(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError) as caught:
        locate(tmp_path, "retail")
    assert all(layout in str(caught.value) for layout in LAYOUTS)


def test_a_clone_without_its_tables_says_so(tmp_path: Path) -> None:
    root = tmp_path / "tau-bench"
    shutil.copytree(SRC / "tau_bench" / "envs" / "retail", root / "tau_bench/envs/retail")
    with pytest.raises(BenchmarkError, match=r"no tables \(data/\*\.json\)"):
        locate(root, "retail")


def test_a_split_the_clone_has_no_file_for_is_named(clone: Path) -> None:
    with pytest.raises(
        BenchmarkError, match=r"no tasks file for split 'dev' \(looked for tasks_dev.py\)"
    ):
        _ = _bench("airline", clone, "dev").tasks


RESULTS = TAUBENCH / "trajectories" / "gpt-4o-airline.json"
OLDER = TAUBENCH / "trajectories" / "airline-2024-11"


@pytest.mark.parametrize("where", ["root", "env", "data"])
def test_rescore_reads_a_clone_too(clone: Path, where: str) -> None:
    """The clone's root holds both domains: the records' system prompt names airline's."""
    env = clone / "tau_bench" / "envs" / "airline"
    data = {"root": clone, "env": env, "data": env / "data"}[where]

    def rescored(folder: Path) -> Any:
        args = ["rescore", "taubench", str(RESULTS), "--data", str(OLDER), "--data", str(folder)]
        result = CliRunner().invoke(app, [*args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    mine, theirs = rescored(data), rescored(TAUBENCH / "airline")
    assert mine == theirs and mine["reproduced"] == mine["records"] == 200


def test_rescore_asks_for_the_domain_when_a_clone_s_root_cannot_tell(
    clone: Path, tmp_path: Path
) -> None:
    file = tmp_path / "results.json"
    file.write_text(json.dumps([{"traj": [{"role": "system", "content": "Be nice."}]}]))
    result = CliRunner().invoke(app, ["rescore", "taubench", str(file), "--data", str(clone)])
    assert result.exit_code == 2
    assert "shows neither policy" in result.output and "tau_bench/envs/<domain>" in result.output
