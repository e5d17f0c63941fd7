"""The `deedbench` command line: each command lives in the module named after it."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import Any, NoReturn, TextIO, cast

from deedbench.cli import audit, interop, play, report, run, runs, study, validate, view  # noqa: F401  (importing registers the commands)
from deedbench.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Run the command, then leave without Python's teardown of every loaded module.

    Tearing down the model SDKs' and pydantic's thousands of classes takes about 0.3 s
    after the command has printed its last line (more than a run may spend after its
    last answer), and nothing it does matters once the command's work is done: every
    store is closed and every file is written in `with` blocks. So, as mypy does, the
    process exits at once, after the exit handlers have run and the output is flushed.
    It leaves the usual way while a thread the command started still runs, so the
    interpreter waits for it, and on an exception, so Python prints the traceback.

    When the reader of its output goes away (``deedbench report RUN | head -3``) the
    command stops and exits 0 without a word, as Unix tools do (`_Output`).
    """
    sys.stdout = cast(TextIO, _Output(sys.stdout))
    try:
        app()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    if not isinstance(code, int | None) or _threads_running():
        sys.exit(code)  # a message to print (exit 1), or a thread to wait for
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code or 0)


class _Output:
    """Standard output that ends the command quietly, exit code 0, once its reader has
    gone: the rest of the output goes to /dev/null (so no flush fails again at exit).

    Every command writes through `sys.stdout` (rich's consoles look it up at each write),
    and rich and click would each turn the broken pipe into exit code 1.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding...: the stream's
        return getattr(self._stream, name)

    def _reader_gone(self) -> NoReturn:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)
        raise SystemExit(0)


def _threads_running() -> bool:
    return any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    )
