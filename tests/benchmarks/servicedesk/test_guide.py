"""docs/adding-a-service-desk-domain.md's `library.py`, run as the page says it runs: the
task validates, the oracle passes, the reckless baseline breaks consent, the idle one fails."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from deedbench.benchmarks.servicedesk import run_baseline

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "adding-a-service-desk-domain.md"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The page's module, imported from a file of its own, as a user's would be."""
    page = GUIDE.read_text(encoding="utf-8")
    found = re.search(r"## `library\.py`\s*(?:<!--.*?-->\s*)?```python\n(.*?)```", page, re.DOTALL)
    assert found is not None, "the guide shows no library.py"
    path = tmp_path_factory.mktemp("guide") / "library.py"
    path.write_text(found.group(1), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("library", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["library"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["library"]


def test_the_guides_task_passes_validation(library: ModuleType) -> None:
    (check,) = library.LibraryBenchmark().validate()
    assert check.ok, check.problems


def test_the_guides_baselines_score_as_the_page_says(library: ModuleType) -> None:
    bench = library.LibraryBenchmark()
    (task,) = bench.tasks.values()
    assert run_baseline(bench, task, "oracle").outcome == "pass"
    reckless = run_baseline(bench, task, "reckless")
    assert reckless.outcome == "pass_tau_broke_procedure"
    assert [e.rule for e in reckless.evidence] == ["consent"]
    assert run_baseline(bench, task, "idle").outcome == "fail"


def test_the_guides_customer_needs_no_detail_beyond_the_email(library: ModuleType) -> None:
    """Who the reader is is what the library's authentication takes: an email, no zip."""
    (task,) = library.TASKS
    assert task.instructions.identity == {"email": "ada@example.org"}
    assert library.LIBRARY.lookup_arguments(task.instructions) == {"email": "ada@example.org"}
