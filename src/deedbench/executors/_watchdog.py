"""Ends a local Ray cluster with the driver that started it, however the driver ends.

`RayPool` starts this file as its own process (``python _watchdog.py``: it imports
nothing of deedbench or Ray, so it starts in milliseconds) when `ray.init` started a new
local cluster, writes the cluster's session folder and programs (JSON) to its standard
input and keeps the pipe open. When the driver ends, by `ray.shutdown` and exit or by
SIGKILL, the pipe reaches end of file here, and this process kills every process of that
cluster still alive, then exits.

Why a process of its own: Ray already gives the processes it starts from the driver (GCS,
raylet, dashboard, monitors) `PR_SET_PDEATHSIG`, so they die with it; but the raylet's own
children (the dashboard and runtime-env agents, the worker processes) are not the
driver's, and outlived a SIGKILLed driver by up to a minute (BENCHMARKS.md, issue 26).
`PR_SET_PDEATHSIG` only follows a process's own parent, and the driver does not spawn
them; a process group does not hold them either (Ray's workers make groups of their own,
and killing the driver's group would also kill whatever shares the user's terminal).
What they do share is the cluster's session folder: each has its log files there open.
So a cluster's process is one that runs this Python or one of Ray's programs and has a
file under the session's ``logs`` folder open; the search repeats until none is left.
This process starts in a session of its own and ignores SIGINT, SIGTERM and SIGHUP, so a
Ctrl-C or a hang-up of the driver's terminal does not end it before it has cleaned up.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

__all__ = ["cluster_processes", "main"]

_ROUNDS = 50  # searches, 0.1 s apart, until the cluster's processes are all gone


def cluster_processes(session: str, programs: tuple[str, ...], spare: set[int]) -> list[int]:
    """Processes that run one of `programs` (a path prefix of their executable) and have
    a file under `session`'s logs folder open, but this one and those in `spare` (the
    driver, which has its own Ray log files open there while it lives on after closing
    its pool)."""
    logs = os.path.join(session, "logs") + os.sep
    spare = spare | {os.getpid()}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spare:
            continue
        try:
            program = os.readlink(entry / "exe")
            if not program.startswith(programs):
                continue
            if any(os.readlink(fd).startswith(logs) for fd in (entry / "fd").iterdir()):
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to look at
            continue
    return found


def main() -> None:
    """Wait for the driver to close the pipe, then end its cluster's processes."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    received = b""
    while chunk := sys.stdin.buffer.read(65536):  # until the driver's end closes
        received += chunk
    try:
        told = json.loads(received.splitlines()[0])
        session, programs = str(told["session"]), tuple(str(p) for p in told["programs"])
        driver = int(told["driver"])
    except (IndexError, ValueError, KeyError, TypeError):
        return  # the driver died before it said which cluster: nothing known to end
    for _ in range(_ROUNDS):
        alive = cluster_processes(session, programs, {driver})
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(OSError):  # it ended meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
