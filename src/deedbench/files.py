"""Reading the files users give deedbench, within bounds.

A data file (scenarios, a study, a benchmark's tasks and database, a price table, a
covariate CSV, an Inspect log) is read whole into memory, so a path that names
`/dev/zero`, a FIFO or a file of many gigabytes would hang the command or exhaust the
machine's memory before any parser sees a byte. `read_bytes` and `read_text` are the one
way deedbench reads such a file: they refuse, before opening it, anything that is not a
regular file and any file larger than the cap (256 MB unless ``$DEEDBENCH_MAX_FILE_MB``
says otherwise), and while reading they refuse a file that holds more than its size says
(a /proc or /sys file, whose size reads 0 or 4096, or one still being written).
`check_file` makes the same checks for a reader that opens the file itself (Inspect's).
A reader of a kind of file whose real instances are far smaller (a τ-bench task file,
parsed whole by `ast`) gives a cap of its own (`limit`), which the variable does not raise.

`parse_json` parses JSON text as `json.loads` does, and words every way it can fail as one
`ValueError` line: text that is no JSON, nesting deeper than Python recurses, and an
integer of more digits than Python converts (``sys.get_int_max_str_digits()``, 4,300).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

from deedbench.errors import UsageError

__all__ = [
    "DEFAULT_MAX_FILE_MB",
    "MAX_FILE_ENV",
    "check_file",
    "max_file_bytes",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_text",
]

MAX_FILE_ENV = "DEEDBENCH_MAX_FILE_MB"
"""The variable that sets the cap, in megabytes (2**20 bytes)."""

DEFAULT_MAX_FILE_MB = 256
"""The cap when the variable is not set: some eighteen times τ²'s largest data file (14 MB)."""

_MB = 1 << 20
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def max_file_bytes() -> int:
    """The cap in bytes; a `UsageError` if the variable holds no whole number above 0."""
    text = os.environ.get(MAX_FILE_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_FILE_MB * _MB
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise UsageError(
            f"${MAX_FILE_ENV} must be a whole number of megabytes above 0; got {text!r}"
        )
    return int(text) * _MB


def check_file(path: Path, limit: tuple[int, str] | None = None) -> int:
    """The size of `path`, a regular file within the cap; a `UsageError` naming the file
    otherwise. Only `stat` looks at it: a FIFO or a device is never opened. `limit`:
    (bytes, what such a file is) for a kind of file with a cap of its own."""
    info = path.stat()  # OSError (no such file, no access) is the caller's to word
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "no regular file")
        raise UsageError(f"{path}: {kind}: deedbench reads data from regular files only")
    if limit is not None and info.st_size > limit[0]:
        raise UsageError(
            f"{path}: {info.st_size / _MB:,.1f} MB, more than {limit[1]} holds: deedbench "
            f"reads at most {limit[0] / _MB:g} MB of one"
        )
    cap = max_file_bytes()
    if info.st_size > cap:
        raise UsageError(
            f"{path}: {info.st_size / _MB:,.1f} MB, over the cap of {cap // _MB:,} MB a file; "
            f"set ${MAX_FILE_ENV} to a larger number of MB to read it"
        )
    return info.st_size


def read_bytes(path: Path, limit: tuple[int, str] | None = None) -> bytes:
    """The whole of a regular file within the cap (see the module's docstring)."""
    size = check_file(path, limit)
    with path.open("rb") as handle:
        data = handle.read(size + 1)
    if len(data) > size:
        raise UsageError(
            f"{path}: holds more than the {size:,} bytes its size says (a /proc or /sys file, "
            "or one still being written): deedbench reads data from regular files only"
        )
    return data


def read_text(path: Path, encoding: str = "utf-8", limit: tuple[int, str] | None = None) -> str:
    """`read_bytes` decoded; a UnicodeDecodeError is the caller's to word."""
    return read_bytes(path, limit).decode(encoding)


_DIGITS = re.compile(r"value has (\d+) digits")


def parse_json(text: str | bytes) -> Any:
    """`json.loads(text)`; a `ValueError` of one line for text that is no JSON (a
    `json.JSONDecodeError`, with its position), nested too deeply, or holding an integer
    longer than Python converts."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # an integer beyond sys.get_int_max_str_digits()
        raise ValueError(_long_integer(exc)) from None


def parse_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads(text)`, worded as `parse_json` words its failures (a
    `tomllib.TOMLDecodeError` for text that is no TOML)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        raise ValueError("tables or arrays nested too deeply") from None
    except ValueError as exc:
        raise ValueError(_long_integer(exc)) from None


def _long_integer(exc: ValueError) -> str:
    found = _DIGITS.search(str(exc))
    if found is None:
        return str(exc)
    return (
        f"an integer of {int(found.group(1)):,} digits, more than the "
        f"{sys.get_int_max_str_digits():,} digits Python reads"
    )
