"""The real `deedbench` command in a pseudo-terminal, typed at as a person types: its output
read until an expected text appears, keys sent (Tab, Ctrl-C) through the terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

DEEDBENCH = Path(sys.executable).with_name("deedbench")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


class Terminal:
    """`deedbench ARGS` in a pty of its own (its controlling terminal, so Ctrl-C is a
    SIGINT from the line discipline, and readline edits the line)."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the command, nothing else
            os.chdir(cwd)
            environ = {**os.environ, "TERM": "dumb", "COLUMNS": "200", **(env or {})}
            os.execve(str(DEEDBENCH), [str(DEEDBENCH), *args], environ)
        self.pid, self.fd = pid, fd
        self.seen = b""
        self.code: int | None = None
        self.pos = 0  # where the last expected text ended

    def expect(self, text: str, timeout: float = 20.0) -> str:
        """Read until `text` has appeared after what was expected before; all read so far."""
        deadline = time.monotonic() + timeout
        while (found := self.text.find(text, self.pos)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.text}")
        self.pos = found + len(text)
        return self.text

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def line(self, text: str) -> None:
        self.send(text + "\r")

    def wait(self, timeout: float = 30.0) -> int:
        """The command's exit code once it ends, its last output read."""
        deadline = time.monotonic() + timeout
        while self.code is None:
            while self._read(0.05):
                pass
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.code = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                raise AssertionError(f"deedbench did not end; the terminal shows:\n{self.text}")
        while self._read(0.05):
            pass
        os.close(self.fd)
        return self.code

    @property
    def text(self) -> str:
        return ANSI.sub(b"", self.seen).decode(errors="replace")

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child has gone: the pty reads EIO
            return False
        self.seen += chunk
        return bool(chunk)
