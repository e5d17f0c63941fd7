"""τ-bench task files in Python that would exhaust memory or end in a traceback are
refused with one line naming the file (issue 39): a file far bigger than any of τ-bench's,
a list or a call as a dict key, a number under thousands of unary minus signs."""

from __future__ import annotations

from pathlib import Path

import pytest

from deedbench.benchmarks.taubench import layout
from deedbench.benchmarks.taubench.layout import read_python_tasks
from deedbench.errors import BenchmarkError, UsageError

TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"


def _task_file(folder: Path, body: str) -> Path:
    path = folder / "tasks_test.py"
    path.write_text("from tau_bench.types import Action, Task\n\n" + body, encoding="utf-8")
    return path


def test_the_cap_is_above_every_task_file_taubench_has() -> None:
    files = list((TAUBENCH / "src" / "tau_bench" / "envs").glob("*/tasks*.py"))
    assert len(files) >= 5, f"τ-bench's source is not at {TAUBENCH}"
    assert max(f.stat().st_size for f in files) * 8 <= layout.TASK_FILE_LIMIT


def test_a_task_file_bigger_than_any_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "tasks_test.py"
    with path.open("wb") as out:  # sparse: the size is what matters, never read
        out.truncate(layout.TASK_FILE_LIMIT + 1)
    with pytest.raises(UsageError, match=r"tasks_test\.py: 4\.0 MB, more than a τ-bench task"):
        read_python_tasks(path, "test")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("TASKS = [Task(user_id='u', x={[1]: 2})]\n", "a dict key must be a string or number"),
        ("TASKS = [Task(user_id='u', x={(1, [2]): 2})]\n", "a dict key must be"),
        ("TASKS = [Task(user_id='u', x={Action(name='a'): 2})]\n", "a dict key must be"),
        ("TASKS = [Task(user_id=" + "-" * 100_000 + "1)]\n", "nested too deeply"),
        ("TASKS = [Task(user_id=" + "-" * 500 + "1)]\n", "nested too deeply"),
    ],
    ids=["list-key", "tuple-holding-a-list-key", "call-key", "minus-100000", "minus-500"],
)
def test_a_task_file_that_would_break_the_reader_is_one_line(
    tmp_path: Path, body: str, said: str
) -> None:
    path = _task_file(tmp_path, body)
    with pytest.raises(BenchmarkError, match=r"tasks_test\.py") as caught:
        read_python_tasks(path, "test")
    assert said in str(caught.value) and "\n" not in str(caught.value)
