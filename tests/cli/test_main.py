"""The console entry point leaves without Python's teardown, losing nothing: its output
whole (beyond a pipe's buffer), its exit code, the exit handlers run; and it leaves the
usual way while a thread it started still runs.

Each case is a fresh interpreter calling `deedbench.cli.main.main` as the console script
does. An object whose finalizer writes "teardown" stands for the teardown: printed when
the interpreter tears its modules down, and not when the entry point skips that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import atexit, os, sys, threading, time

class Finalized:
    def __del__(self, write=os.write):  # bound now: module globals may be gone by then
        write(2, b"teardown\\n")

held = Finalized()
atexit.register(lambda: sys.stderr.write("exit handler ran\\n"))
sys.argv = ["deedbench", *{args!r}]
from deedbench.cli.main import main
if {thread!r}:  # still running when the command is done
    def late():
        time.sleep(1.0)
        sys.stderr.write("thread finished\\n")
    threading.Thread(target=late).start()
main()
"""


def deedbench(
    *args: str, thread: bool = False, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    script = SCRIPT.format(args=list(args), thread=thread)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("main") / "store.db"
    done = deedbench(
        "run", "tac", "--agent", "baseline/random", "--run-id", "r", "--store", str(path)
    )
    assert done.returncode == 0, done.stderr
    return path


def test_output_longer_than_a_pipe_buffer_arrives_whole(store: Path) -> None:
    done = deedbench("report", "r", "--json", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 65_536  # more than the pipe holds: it was flushed, not dropped
    assert json.loads(done.stdout)["run"]["run_id"] == "r"
    assert "exit handler ran" in done.stderr
    assert "teardown" not in done.stderr  # the interpreter's teardown was skipped


def test_exit_codes_and_error_messages_are_kept(store: Path) -> None:
    done = deedbench("report", "nosuch", "--store", str(store))
    assert done.returncode == 2
    assert "nosuch" in done.stderr and "exit handler ran" in done.stderr
    assert "teardown" not in done.stderr
    assert deedbench("--version").returncode == 0


def test_a_running_thread_is_waited_for() -> None:
    done = deedbench("--version", thread=True)
    assert done.returncode == 0
    assert done.stderr.index("thread finished") < done.stderr.index("exit handler ran")
    assert "teardown" in done.stderr  # the usual exit, which waits for threads


def to_a_closed_pipe(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command with its standard output a pipe nobody reads any more (as after
    `| head -3`): its first write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-c", SCRIPT.format(args=list(args), thread=False)],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, cwd=cwd,
        )  # fmt: skip
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [
        ["report", "r"],
        ["report", "r", "--json"],
        ["report", "r", "--csv"],
        ["runs"],
        ["runs", "--json"],
        ["compare", "r", "r"],
        ["show", "r", "seville_bullfight_base"],
        ["export", "r", "--format", "csv"],
        ["export", "r", "--format", "jsonl"],
        ["audit", "r"],
        ["list"],
        ["--help"],
        ["run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "1"],
    ],
    ids=" ".join,
)
def test_a_reader_gone_ends_the_command_quietly_with_exit_0(store: Path, args: list[str]) -> None:
    """As Unix tools do: no traceback, no "Broken pipe", and exit 0 (rich and click
    would each make it 1)."""
    where = [] if args[0] in ("list", "--help") else ["--store", str(store)]  # no store there
    done = to_a_closed_pipe(*args, *where)
    assert done.returncode == 0, done.stderr
    assert done.stderr.replace("exit handler ran\n", "") == "", done.stderr


def test_report_piped_into_head_exits_0(store: Path) -> None:
    script = SCRIPT.format(args=["report", "r", "--json", "--store", str(store)], thread=False)
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", '"$0" -c "$1" | head -3', sys.executable, script],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr
