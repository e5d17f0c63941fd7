"""Every data file is read within bounds: regular files only (no FIFO, device or /proc
file), at most $DEEDBENCH_MAX_FILE_MB, refused with a line that names the file, and the
cap raised by the variable. The commands that read data files refuse them at once
(exit 2, no traceback) instead of reading /dev/zero until memory runs out."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from deedbench.benchmarks.servicedesk import read_table
from deedbench.benchmarks.tau2.data import read_data
from deedbench.benchmarks.tau2.results import read_results
from deedbench.benchmarks.taubench.layout import read_python_tasks
from deedbench.cli.main import app
from deedbench.errors import UsageError
from deedbench.files import MAX_FILE_ENV, check_file, max_file_bytes, read_bytes, read_text
from deedbench.reports.cost import PriceTable
from deedbench.stats import read_covariate_csv
from deedbench.study import StudyError, load_study

MB = 1 << 20


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def deedbench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The console script under a 3 GB memory cap and a time limit, so a reader that reads
    /dev/zero fails the test (MemoryError, or the limit) instead of the machine."""

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [str(Path(sys.executable).with_name("deedbench")), *args],
        capture_output=True, text=True, timeout=120, preexec_fn=cap_memory,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def refused(
    read: Callable[[], Any], kind: type[Exception] = UsageError, seconds: float = 10.0
) -> str:
    """The message of the `kind` of error `read` refuses with, within `seconds`: a read
    that blocks (a FIFO opened) fails the test instead of hanging it."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            read()
        except BaseException as exc:  # the refusal, or anything else to report
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the read blocked instead of refusing"
    [error] = outcome
    assert isinstance(error, kind), error
    return str(error)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "scenarios.json"
    os.mkfifo(path)  # nobody ever writes to it: opening it to read would block for ever
    return path


@pytest.mark.parametrize(
    ("name", "kind"), [("/dev/zero", "a character device"), ("/dev/urandom", "a character device")]
)
def test_a_device_is_refused_before_a_byte_is_read(name: str, kind: str) -> None:
    message = refused(lambda: read_bytes(Path(name)))
    assert message == f"{name}: {kind}: deedbench reads data from regular files only"


def test_a_fifo_is_refused_without_being_opened(fifo: Path) -> None:
    message = refused(lambda: read_text(fifo))
    assert message == f"{fifo}: a FIFO (named pipe): deedbench reads data from regular files only"


def test_a_proc_file_is_refused_though_it_says_it_is_a_regular_file() -> None:
    status = Path("/proc/self/status")
    if not status.is_file():
        pytest.skip("no /proc here")
    message = refused(lambda: read_bytes(status))
    assert message.startswith(f"{status}: holds more than the 0 bytes its size says")


def test_a_file_over_the_cap_is_refused_and_the_variable_raises_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at_cap, over = tmp_path / "at.json", tmp_path / "over.json"
    at_cap.write_bytes(b" " * MB)
    over.write_bytes(b" " * (MB + 1))
    monkeypatch.setenv(MAX_FILE_ENV, "1")
    assert len(read_bytes(at_cap)) == MB
    message = refused(lambda: read_bytes(over))
    assert message == (
        f"{over}: 1.0 MB, over the cap of 1 MB a file; set ${MAX_FILE_ENV} to a larger "
        "number of MB to read it"
    )
    monkeypatch.setenv(MAX_FILE_ENV, "2")
    assert len(read_bytes(over)) == MB + 1


def test_the_default_cap_is_256_mb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MAX_FILE_ENV, raising=False)
    assert max_file_bytes() == 256 * MB


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "١"])
def test_a_cap_that_is_no_whole_number_above_0_is_refused_by_name(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.json"
    path.write_text("{}")
    monkeypatch.setenv(MAX_FILE_ENV, value)
    with pytest.raises(UsageError) as raised:
        check_file(path)
    assert str(raised.value) == (
        f"${MAX_FILE_ENV} must be a whole number of megabytes above 0; got {value!r}"
    )


def test_every_reader_of_data_files_refuses_a_fifo(fifo: Path) -> None:
    """Each benchmark's, the study's, the price table's and the covariate's reader."""
    readers: list[Callable[[], Any]] = [
        lambda: read_data(fifo, "tau2 database"),
        lambda: read_results(fifo),
        lambda: read_table(fifo, "retail"),
        lambda: read_python_tasks(fifo, "test"),
        lambda: PriceTable.load(fifo),
        lambda: read_covariate_csv(fifo, "scenario", "x"),
    ]
    for read in readers:
        assert refused(read).startswith(f"{fifo}: a FIFO (named pipe)")
    # the study reports it as the problem of its file
    assert refused(lambda: load_study(fifo), StudyError) == (
        f"{fifo}: a FIFO (named pipe): deedbench reads data from regular files only"
    )


# --- the commands --------------------------------------------------------------------------


def one_line_refusal(result: Result | subprocess.CompletedProcess[str], name: str) -> str:
    code = result.exit_code if isinstance(result, Result) else result.returncode
    assert code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert name in lines[0]
    return lines[0]


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_run_refuses_a_device_as_scenarios_at_once(device: str, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    for given in (["--scenarios", device], ["-T", f"extra_scenarios={device}"]):
        result = deedbench(
            "run", "tac", "--agent", "baseline/random", *given, "--store", str(store)
        )
        line = one_line_refusal(result, device)
        assert "a character device: deedbench reads data from regular files only" in line


def test_a_study_whose_data_is_a_device_lists_it_as_a_problem(tmp_path: Path) -> None:
    study = tmp_path / "s.toml"
    study.write_text(
        'name = "s"\n\n[[benchmarks]]\nname = "tac"\ndata = "/dev/zero"\n\n'
        '[[benchmarks]]\nname = "tac"\nlabel = "more"\n'
        'options = { extra_scenarios = "/dev/urandom" }\n\n'
        '[[agents]]\nspec = "baseline/random"\n'
    )
    result = deedbench("study", str(study), "--dry-run", "--store", str(tmp_path / "runs.db"))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2, result.stderr
    assert f"{study}:5: benchmarks[1].data: /dev/zero: a character device" in lines[0]
    assert f"{study}:10: benchmarks[2].options: /dev/urandom: a character device" in lines[1]


def test_a_study_file_that_is_a_device_or_a_fifo_is_refused(fifo: Path, tmp_path: Path) -> None:
    for path in ("/dev/zero", str(fifo)):
        result = deedbench("study", path, "--dry-run", "--store", str(tmp_path / "runs.db"))
        line = one_line_refusal(result, path)
        assert "deedbench reads data from regular files only" in line


def test_prices_covariates_and_inspect_logs_are_read_within_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "runs.db")
    ran = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "1",
        "--run-id", "r", "--store", store,
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"as_of": "x", "models": {}, "pad": " " * MB}))
    monkeypatch.setenv(MAX_FILE_ENV, "1")
    one_line_refusal(invoke("report", "r", "--prices", str(big), "--store", store), str(big))
    result = deedbench(
        "report", "r", "--covariate", "/dev/zero", "--covariate-column", "x", "--store", store
    )
    one_line_refusal(result, "/dev/zero")
    pytest.importorskip("inspect_ai")
    result = deedbench("import", "inspect", "/dev/urandom", "--store", store)
    one_line_refusal(result, "/dev/urandom")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("1" * 100_000, "an integer of 100,000 digits, more than the 4,300 digits Python reads"),
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ],
)
def test_parse_json_words_every_failure_as_one_line(text: str, said: str) -> None:
    from deedbench.files import parse_json

    with pytest.raises(ValueError) as caught:
        parse_json(text)
    assert str(caught.value) == said
    assert parse_json('{"a": [1, 2.5]}') == {"a": [1, 2.5]}
