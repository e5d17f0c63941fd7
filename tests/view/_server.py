"""`deedbench view` as a user starts it: a child process on a free port, stopped by Ctrl-C,
keeping its figures in a cache folder of its own (never the user's)."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["serving"]

LAUNCH = "from deedbench.cli.main import app; app(prog_name='deedbench')"


@contextmanager
def serving(store: Path, *options: str) -> Iterator[str]:
    """The URL `deedbench view --port 0` prints (on 127.0.0.1 for a server listening on
    every address); the server is stopped (SIGINT, as Ctrl-C) however the block ends, and
    killed if it does not stop within ten seconds."""
    command = [sys.executable, "-c", LAUNCH, "view", "--port", "0", "--store", str(store)]
    cache = tempfile.TemporaryDirectory(prefix="deedbench-view-cache-")
    # The server's log goes to a file: a pipe nobody reads fills at 64 KB and blocks the
    # server mid-request (a test then waits on a page that never comes).
    log = open(Path(cache.name) / "server.log", "w+", encoding="utf-8")  # noqa: SIM115
    process = subprocess.Popen(
        [*command, *options],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env={**os.environ, "COLUMNS": "500", "XDG_CACHE_HOME": cache.name},
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline() if ready else ""
        found = re.search(r"http://(127\.0\.0\.1|0\.0\.0\.0):(\d+)/", line)
        if found is None:
            process.kill()
            process.wait(timeout=10)
            log.seek(0)
            raise AssertionError(f"deedbench view did not start: {line!r} {log.read()!r}")
        yield f"http://127.0.0.1:{found.group(2)}/"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.seek(0)
        errors = log.read()
        log.close()
        cache.cleanup()
        if "Traceback" in errors:  # a request that failed inside the server fails the test
            raise AssertionError(f"deedbench view logged an error:\n{errors[-4000:]}")
