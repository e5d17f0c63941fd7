"""The `deedbench` command line: each command lives in the module named after it."""

from __future__ import annotations

from deedbench.cli import audit, interop, report, run, runs, study, validate, view  # noqa: F401  (importing registers the commands)
from deedbench.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()
