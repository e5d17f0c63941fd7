"""What the tests take from ../shared, and what they do when it is not there.

``../shared`` (beside the checkout) holds τ-bench's and τ²'s code and data. A test that
needs them carries ``@pytest.mark.reference(GROUP)`` (a module: ``pytestmark``), GROUP
one of `GROUPS`. Before it runs (`check`):

- ``../shared`` is absent (a machine that never had it): the test is skipped, its
  reason starting with `ABSENT`, and the run's summary counts such skips in one line
  per group (`summary_lines`);
- ``../shared`` is present but the group's part of it is missing or broken: the test
  fails, naming what is missing. A reference test never turns into a skip where the
  references are.

Reference outputs that cost seconds to make (τ²'s own evaluator run on deedbench's
cases) are kept on disk by `cached`, keyed by the content hash of the reference's code
and data, the script that asks and the case (see `tests/benchmarks/tau2/_reference.py`).
"""

from __future__ import annotations

import base64
import fcntl
import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
# a symlinked ../shared is read as its target: deedbench records the real paths it reads
SHARED = (CHECKOUT.parent / "shared").resolve()
TAU2 = SHARED / "tau2"
TAUBENCH = SHARED / "taubench"

ABSENT = "../shared is not beside the checkout"


def _tau2() -> str | None:
    if not (TAU2 / "src" / "src" / "tau2" / "evaluator" / "evaluator.py").is_file():
        return f"τ²'s source is not at {TAU2 / 'src' / 'src'}"
    if not (TAU2 / "data" / "tau2" / "domains" / "airline" / "db.json").is_file():
        return f"τ²'s data is not at {TAU2 / 'data'}"
    return None


def _taubench() -> str | None:
    needed = [
        TAUBENCH / "src" / "tau_bench" / "envs" / "base.py",
        TAUBENCH / "retail" / "orders.json",
        TAUBENCH / "airline" / "flights.json",
        TAUBENCH / "trajectories" / "gpt-4o-airline.json",
    ]
    for path in needed:
        if not path.is_file():
            return f"{path} is missing (τ-bench's code, data and recorded runs)"
    return None


GROUPS: dict[str, tuple[str, Callable[[], str | None]]] = {
    "tau2": ("τ²'s code and data (differential tests against τ² v1.0.1)", _tau2),
    "taubench": ("τ-bench's code, data and recorded runs (differential tests)", _taubench),
}
"""Each group: what it is, and why it cannot run here (None: it can)."""


@cache
def missing(group: str) -> str | None:
    """Why `group`'s part of ../shared cannot be used here (None: it can)."""
    return GROUPS[group][1]()


def need(group: str) -> None:
    """Inside a test or fixture: go on when `group` can run here; else skip where ../shared
    is absent, and fail where it is present."""
    if group not in GROUPS:
        pytest.fail(f"unknown reference group {group!r}: one of {sorted(GROUPS)}")
    why = missing(group)
    if why is None:
        return
    if not SHARED.is_dir():
        pytest.skip(f"{ABSENT}: {group}")
    pytest.fail(f"../shared is here but the {group} reference cannot run: {why}", pytrace=False)


def check(item: pytest.Item) -> None:
    """`need` each group a test's ``reference`` markers name (run before every test)."""
    for marker in item.iter_markers("reference"):
        for group in marker.args:
            need(group)


def summary_lines(skipped: Iterable[Any]) -> list[str]:
    """One line per group of tests skipped because ../shared is absent."""
    counts: dict[str, int] = {}
    for report in skipped:
        longrepr = getattr(report, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        if isinstance(reason, str) and ABSENT in reason:
            group = reason.rsplit(": ", 1)[-1]
            counts[group] = counts.get(group, 0) + 1
    return [
        f"{ABSENT} ({SHARED}): {n} tests of the {group} group did not run: {GROUPS[group][0]}"
        for group, n in sorted(counts.items())
        if group in GROUPS
    ]


# ---- reference outputs kept on disk ----------------------------------------------------

CACHE = Path(
    os.environ.get(
        "DEEDBENCH_REFERENCE_CACHE",
        Path(
            os.environ.get("DEEDBENCH_TAU2_VENV", Path.home() / ".cache/deedbench/tau2-reference")
        ).parent
        / "reference-outputs",
    )
)
"""Where reference outputs are kept: beside τ²'s reference virtual environment."""


def tree_hash(paths: Iterable[Path]) -> str:
    """The content hash of files and folders (every file under a folder, by relative
    path and bytes; caches and compiled files left out)."""
    digest = hashlib.sha256()
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            name = path.relative_to(root) if path != root else Path(path.name)
            digest.update(f"{name}\0{path.stat().st_size}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def cached(
    kind: str, fingerprint: str, key: Any, compute: Callable[[], Any], files: Path | None = None
) -> Any:
    """`compute()`'s JSON value, kept on disk under the hash of `fingerprint` (the
    reference's code and data) and `key` (the case, as JSON). `files`: a file or folder
    that `compute` writes, kept with the value and written again on a hit (its path is
    not part of the key). ``DEEDBENCH_REFERENCE_CACHE=off`` always computes."""
    text = json.dumps([kind, fingerprint, key], sort_keys=True, separators=(",", ":"))
    name = hashlib.sha256(text.encode()).hexdigest()
    path = CACHE / kind / name[:2] / f"{name}.json.gz"
    if os.environ.get("DEEDBENCH_REFERENCE_CACHE") != "off" and path.is_file():
        try:
            entry = json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, ValueError):
            entry = None  # a torn or foreign file: made again below
        if entry is not None:
            if files is not None:
                _restore(files, entry["files"])
            return entry["value"]
    value = compute()
    entry = {"value": value, "files": _capture(files) if files is not None else {}}
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".part")
    with os.fdopen(handle, "wb") as out:
        out.write(gzip.compress(json.dumps(entry).encode(), compresslevel=6))
    os.replace(scratch, path)  # whole or not at all; two workers write the same bytes
    return value


def _capture(root: Path) -> dict[str, str]:
    if root.is_file():
        return {"": base64.b64encode(root.read_bytes()).decode()}
    return {
        str(p.relative_to(root)): base64.b64encode(p.read_bytes()).decode()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _restore(root: Path, files: dict[str, str]) -> None:
    for name, data in files.items():
        target = root / name if name else root
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))


def made_once(folder: Path, wanted: str, make: Callable[[], None]) -> None:
    """Make `folder` with `make` unless it was made for `wanted` (its stamp says so), under
    a lock beside it: of two test workers that need it at once, the second waits for the
    first one's folder instead of racing it (and never skips meanwhile)."""
    stamp = folder / ".deedbench-ready"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted:
            return
        stamp.unlink(missing_ok=True)
        make()
        stamp.write_text(wanted, encoding="utf-8")
