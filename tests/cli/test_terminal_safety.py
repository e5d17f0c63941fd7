"""Data never drives the terminal: escape sequences and rich markup from model replies,
scenario files and run ids are printed as visible text by every command.

A scenario file and a fake model on 127.0.0.1 plant escape sequences (clear screen,
hidden text, window title, hyperlink, C1 controls, a right-to-left override) and
markup; then `run`, `report`, `compare`, `show` and `audit` must print none of the
raw control characters, show them as escapes instead, and print markup as it is.
"""

from __future__ import annotations

import io
import json
import os
import pty
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from deedbench.benchmarks.tac.scenario import BUILTIN_DIR
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.printable import printable
from deedbench.records import RunConfig
from deedbench.testing import FakeModelServer, Reply, tac_player

ESCAPES = (
    "\x1b[2J\x1b[8m\x1b]0;pwned\x07\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\\x9b2J\u202e"
)
RAW = ("\x1b", "\x07", "\x9b", "\u202e")  # none of these may reach the terminal
MARKUP = "[bold red]loud[/] x[/]"
SCENARIO = f"evil_show {ESCAPES} {MARKUP}"  # printed by every report, grouped by scenario
SAMPLE = f"{SCENARIO}_base"


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-terminal-safety-0000")
    monkeypatch.delenv("DEEDBENCH_STORE", raising=False)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def hostile_scenarios(folder: Path) -> Path:
    scenario = json.loads((BUILTIN_DIR / "seville_bullfight.json").read_text(encoding="utf-8"))
    scenario["id"] = SCENARIO  # (a category is one of the six: no data of the file's own)
    scenario["input"] = f"Find me a show in seville {ESCAPES} {MARKUP}"
    scenario["experiences"][0]["name"] += ESCAPES + MARKUP
    folder.mkdir()
    (folder / "evil.json").write_text(json.dumps(scenario), encoding="utf-8")
    return folder


def hostile_player(body: dict[str, Any]) -> Reply:
    reply = tac_player(body)
    if reply.text is not None:  # the last word, after the booking
        reply.text = f"Booked. Is this a test? {ESCAPES} {MARKUP}"
    return reply


def assert_safe(result: Result) -> str:
    text = result.stdout + result.stderr
    for char in RAW:
        assert char not in text, repr(text)
    return text


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    folder = tmp_path_factory.mktemp("hostile")
    store = folder / "runs.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-terminal-safety-0000")
        with FakeModelServer("openai", hostile_player) as server:
            result = invoke(
                "run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
                "--scenarios", str(hostile_scenarios(folder / "scenarios")),
                "--epochs", "1", "--store", str(store), "--run-id", "hostile",
            )  # fmt: skip
    return store, result


def test_run_prints_no_escape_sequence(hostile_run: tuple[Path, Result]) -> None:
    _, result = hostile_run
    assert result.exit_code == 0, result.output
    assert_safe(result)


def test_show_prints_escapes_visibly_and_markup_as_it_is(
    hostile_run: tuple[Path, Result],
) -> None:
    store, _ = hostile_run
    result = invoke("show", "hostile", SAMPLE, "--store", str(store))
    assert result.exit_code == 0, result.output
    text = assert_safe(result)
    assert "\\x1b[2J" in text and "\\x1b]0;pwned\\x07" in text and "\\u202e" in text
    assert MARKUP in text


@pytest.mark.parametrize(
    "command",
    [["report", "hostile"], ["compare", "hostile", "hostile"], ["audit", "hostile"]],
)
def test_reading_commands_print_no_escape_sequence(
    hostile_run: tuple[Path, Result], command: list[str]
) -> None:
    store, _ = hostile_run
    result = invoke(*command, "--store", str(store))
    assert result.exit_code == 0, result.output
    text = assert_safe(result)
    if command[0] != "compare":  # which shows no scenario and no transcript
        assert "\\x1b" in text  # the scenario, or the scanner's quote of the reply
    if command[0] == "report":
        assert MARKUP in " ".join(text.split())  # as it is


@pytest.fixture
def legacy_store(tmp_path: Path) -> tuple[Path, str]:
    """A run whose id was made before run ids had a rule: markup and escapes in it."""
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "tac", "--agent", "baseline/relevance", "--limit", "1", "--epochs", "1",
        "--store", str(store), "--run-id", "legacy",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    legacy_id = f"x[/]{MARKUP}\x1b]0;t\x07"
    with closing(sqlite3.connect(store)) as db, db:
        (text,) = db.execute("SELECT config_json FROM runs").fetchone()
        config = RunConfig.model_validate_json(text).model_copy(update={"run_id": legacy_id})
        db.execute(
            "UPDATE runs SET run_id = ?, config_json = ?", (legacy_id, config.model_dump_json())
        )
        db.execute("UPDATE episodes SET run_id = ?", (legacy_id,))
    return store, legacy_id


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{id}"],
        ["compare", "{id}", "{id}"],
        ["show", "{id}", "budapest_animal_circus_base"],
        ["audit", "{id}"],
        ["run", "tac", "--run-id", "{id}"],  # resumes: nothing left to run
    ],
)
def test_a_run_id_is_never_read_as_markup(
    legacy_store: tuple[Path, str], command: list[str]
) -> None:
    store, legacy_id = legacy_store
    result = invoke(*[part.format(id=legacy_id) for part in command], "--store", str(store))
    assert result.exit_code == 0, result.output
    text = " ".join(assert_safe(result).split())
    if command[0] != "show":  # which prints the episode, not the run id
        assert "x[/][bold red]loud[/] x[/]\\x1b]0;t\\x07" in text


@pytest.mark.parametrize(
    "run_id", ["x[/]", "[bold red]x[/]", "../x", "a/b", "-x", ".x", " x", "x\x1b", "", "a" * 129]
)
def test_a_new_run_id_breaking_the_rule_is_refused_before_anything_is_written(
    tmp_path: Path, run_id: str
) -> None:
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "1",
        "--store", str(store), "--run-id", run_id,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "invalid run id" in result.stderr
    assert "letters, digits" in result.stderr  # the rule is stated
    assert_safe(result)
    assert not store.exists()
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_new_run_id_breaking_the_rule_is_refused_in_an_existing_store(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    with RunStore(store):
        pass
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "1", "--store", str(store),
        "--run-id", "x[/]",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


@pytest.mark.parametrize("run_id", ["a", "A.b_c-1", "7", "x" * 128])
def test_run_ids_that_follow_the_rule_are_taken(tmp_path: Path, run_id: str) -> None:
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "1",
        "--store", str(tmp_path / "runs.db"), "--run-id", run_id,
    )  # fmt: skip
    assert result.exit_code == 0, result.output


def test_the_console_guards_cells_nested_in_tables_and_panels() -> None:
    """Rich renders a cell through the console's own render, nested in the table's; the
    guard on the outermost render covers them all."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from deedbench.cli.app import SafeConsole

    out = io.StringIO()
    table = Table(title="t")
    table.add_column("cell")
    table.add_row(Text("title\x1b]0;owned\x07 here"))
    table.add_row(Panel(Text("inner\x1b[2Jpanel")))
    SafeConsole(file=out, width=60, force_terminal=True).print(table)
    text = out.getvalue()
    assert "\x1b]" not in text and "\x1b[2J" not in text
    assert "\\x1b]0;owned" in text and "\\x1b[2Jpanel" in text


def exported_csv(store: Path, *, terminal: bool) -> str:
    """`export hostile --format csv` without -o, its standard output a terminal (a pty) or
    a pipe, as the console script runs it."""
    command = [sys.executable, "-c", "from deedbench.cli.main import main; main()"]
    command += ["export", "hostile", "--format", "csv", "--store", str(store)]
    if not terminal:
        done = subprocess.run(command, capture_output=True, timeout=120, check=True)
        return done.stdout.decode()
    main, side = pty.openpty()
    with subprocess.Popen(command, stdout=side, stderr=subprocess.PIPE) as process:
        os.close(side)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(main)
        assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
    return b"".join(chunks).decode().replace("\r\n", "\n")  # the terminal's line ends


def test_export_csv_to_a_terminal_shows_escapes_and_leaves_a_pipe_or_file_alone(
    hostile_run: tuple[Path, Result], tmp_path: Path
) -> None:
    store, _ = hostile_run
    shown = exported_csv(store, terminal=True)
    for char in RAW:
        assert char not in shown, repr(shown)
    assert "\\x1b]0;pwned\\x07" in shown and "\\u202e" in shown
    piped = exported_csv(store, terminal=False)
    assert ESCAPES in piped  # the data as stored, byte for byte
    assert shown == piped.replace(ESCAPES, printable(ESCAPES))
    written = tmp_path / "episodes.csv"
    result = invoke(
        "export", "hostile", "--format", "csv", "-o", str(written), "--store", str(store)
    )
    assert result.exit_code == 0, result.output
    assert written.read_text(encoding="utf-8") == piped
