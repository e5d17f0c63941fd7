"""Finding and reading the user's τ² source: where it is looked for, that it is never
imported, and one clear line (naming the file) for a source that cannot be used."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.source import Tau2Source, find_source, load_texts
from deedbench.benchmarks.tau2.source.docstrings import parse_docstring
from deedbench.cli.main import app
from deedbench.errors import BenchmarkError

from . import _reference

PACKAGE = _reference.SOURCE / "tau2"
AIRLINE = _reference.domain_data("airline")
pytestmark = pytest.mark.reference("tau2")


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of τ²'s package (its Python files), to change."""
    target = tmp_path / "checkout" / "src" / "tau2"
    shutil.copytree(
        PACKAGE,
        target,
        ignore=lambda _, names: [n for n in names if n.endswith((".md", ".json", ".pyc"))],
    )
    return target


def test_the_source_is_found_where_users_have_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = find_source(None, AIRLINE)  # the checkout holding the data
    assert found is not None and found.found == "checkout" and found.root == PACKAGE
    assert found.version == "1.0.1"
    for given in (_reference.TAU2 / "src", _reference.SOURCE, PACKAGE):  # checkout, src, package
        named = find_source(str(given), tmp_path)
        assert named is not None and named.root == PACKAGE and named.found == "given"
    assert find_source("none", AIRLINE) is None
    elsewhere = tmp_path / "data" / "tau2" / "domains" / "airline"
    elsewhere.mkdir(parents=True)
    assert find_source(None, elsewhere) is None  # no checkout, nothing installed
    site = tmp_path / "site"
    site.mkdir()
    (site / "tau2").symlink_to(PACKAGE)
    monkeypatch.syspath_prepend(str(site))
    installed = find_source(None, elsewhere)
    assert installed is not None and installed.found == "installed"
    assert installed.root == PACKAGE and "tau2" not in sys.modules  # located, never imported


def test_a_folder_without_taus_source_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "tau2-airline", "--data", str(_reference.TAU2), "--agent", "baseline/oracle",
         "-T", f"source={tmp_path}", "--store", str(tmp_path / "s.db")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert f"-T source={tmp_path}: no τ² source there" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_another_version_of_tau2_is_refused_naming_the_tools(copy: Path) -> None:
    tools = copy / "domains" / "airline" / "tools.py"
    text = tools.read_text(encoding="utf-8")
    tools.write_text(
        text.replace("def get_user_details(", "def get_customer_details("), encoding="utf-8"
    )
    with pytest.raises(BenchmarkError, match=r"get_customer_details.*get_user_details"):
        load_benchmark("tau2-airline", {"data": str(_reference.TAU2), "source": str(copy)})


def test_a_source_that_does_not_parse_names_its_file(copy: Path) -> None:
    tools = copy / "domains" / "airline" / "tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"airline/tools\.py.*-T source=none"):
        load_benchmark("tau2-airline", {"data": str(_reference.TAU2), "source": str(copy)})


def test_reading_the_source_runs_none_of_it(copy: Path, tmp_path: Path) -> None:
    """A module-level statement that would write a file if the module ran does not."""
    marker = tmp_path / "ran"
    for name in ("domains/airline/tools.py", "agent/llm_agent.py"):
        path = copy / name
        path.write_text(
            f"open({str(marker)!r}, 'w').write('ran')\n" + path.read_text(encoding="utf-8"),
            encoding="utf-8",
        )
    texts = load_texts(Tau2Source(copy, "given"), (("tau2.domains.airline.tools", "AirlineTools"),))
    assert texts.prompts.greeting and texts.toolkits and not marker.exists()


def test_a_benchmark_records_the_files_it_read(copy: Path) -> None:
    bench = load_benchmark("tau2-airline", {"data": str(_reference.TAU2), "source": str(copy)})
    assert isinstance(bench, Tau2Benchmark)
    files = bench.data_files()
    assert str(copy / "domains" / "airline" / "tools.py") in files
    assert str(copy / "agent" / "llm_agent.py") in files
    assert all(len(digest) == 64 for key, digest in files.items() if key != "tau2 texts")


DOCSTRINGS = [
    ("\n    Do it.\n\n    In two steps.\n    ", "Do it.\n\nIn two steps.", {}),
    (
        "Go.\n\nArgs:\n    where (str): The place.\n        Far away.\n",
        "Go.",
        {"where": "The place.\nFar away."},
    ),
    (
        "Go.\n\nRaises:\n    nothing here\nArgs:\n    x: y\n",
        "Go.\n\nRaises:\n    nothing here\nArgs:\n    x: y",
        {},
    ),
    ("", None, {}),
    ("Only a line", "Only a line", {}),
    (
        "Short.\nLong directly.\n\nArgs:\n    a: b\n    c (int, optional): d\n\nReturns:\n    r\n",
        "Short.\n\nLong directly.",
        {"a": "b", "c": "d"},
    ),
    ("Short.\n\nArgs:\n    a: b\nUnknown section\n    c: d\n", "Short.", {"a": "b"}),
    ("Short.\n\nReturns:\n    str: a thing\n", "Short.", {}),
    ("Short.\n\nExample:\n    foo()\n\nArgs:\n    a: the a\n", "Short.", {"a": "the a"}),
    (
        "Short.\n\nArgs:\n  a: two-space indent\n  b: ok\n",
        "Short.",
        {"a": "two-space indent", "b": "ok"},
    ),
    (
        "Short.\n\nArgs:\n    a: b\n\n    Extra paragraph in args.\n",
        "Short.\n\nArgs:\n    a: b\n\n    Extra paragraph in args.",
        {},
    ),
]
"""Docstrings beyond τ²'s own (which test_shown.py covers), with what docstring_parser 0.18
(τ²'s reading) makes of them: its description and each parameter's, as recorded by
running it in τ²'s reference environment."""


@pytest.mark.parametrize(("doc", "description", "params"), DOCSTRINGS)
def test_docstrings_are_read_as_taus_parser_reads_them(
    doc: str, description: str | None, params: dict[str, str]
) -> None:
    parsed = parse_docstring(doc, "x")
    assert (parsed.description, parsed.params) == (description, params)


def test_a_run_does_not_resume_with_texts_other_than_it_began_with(
    copy: Path, tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    args = ["run", "tau2-airline", "--run-id", "r", "--store", str(store), "-q"]
    first = CliRunner().invoke(
        app,
        [*args, "--data", str(_reference.TAU2), "--agent", "baseline/oracle", "--limit", "1",
         "-T", f"source={copy}"],
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    tools = copy / "domains" / "airline" / "tools.py"
    tools.write_text(
        tools.read_text(encoding="utf-8").replace("Book a reservation.", "Book a trip."),
        encoding="utf-8",
    )
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "the data now hashes to" in " ".join(again.output.split())
