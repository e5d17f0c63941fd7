"""A τ² result file read one simulation at a time, for `rescore tau2` of files of any size.

`results.read_results` parses a whole file and keeps every simulation: a 238 MB file of
74,000 simulations held 1.6 GB. `stream_results` parses the file's other fields (``info``,
``tasks``: a few MB) and leaves the simulations where they are: each pass over
`StreamedResults.simulations` reads the file again, a megabyte at a time, and gives one
validated simulation after another (`json.JSONDecoder.raw_decode` on a window of the text,
so each simulation is parsed in C, once, and let go). In τ²'s folder format each
simulation is its own file already, read when its turn comes. The checks are
`read_results`' (the index names exactly the simulation files present; errors name the
file, and the simulation and field), made as the simulations come.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deedbench.benchmarks.tau2.results import Tau2Info, Tau2Simulation, _load, _where
from deedbench.errors import BenchmarkError

__all__ = ["SimulationStream", "StreamedResults", "stream_results"]

_CHUNK = 1 << 20  # characters read at a time
_DECODER = json.JSONDecoder()


class SimulationStream:
    """The simulations of a result file, read from disk on each pass; `done` and `size`
    say how far the current pass has read (bytes), for progress."""

    def __init__(self, path: Path, files: list[Path] | None) -> None:
        self.path = path
        self.files = files
        self.size = sum(f.stat().st_size for f in files) if files is not None else 0
        if files is None:
            self.size = path.stat().st_size
        self.done = 0

    def __iter__(self) -> Iterator[Tau2Simulation]:
        self.done = 0
        if self.files is not None:
            for number, file in enumerate(self.files):
                yield _simulation(_load(file), file, number)
                self.done += file.stat().st_size
            return
        with self.path.open("rb") as raw:
            scan = _Scan(raw, self.path)
            for key in scan.members():
                if key != "simulations":
                    scan.skip()
                    continue
                for number, value in enumerate(scan.items()):
                    self.done = raw.tell()
                    yield _simulation(value, self.path, number)
            self.done = self.size


@dataclass
class StreamedResults:
    """A τ² result file's `info` and `tasks`, and its simulations as a stream."""

    path: Path
    info: Tau2Info
    tasks: list[dict[str, Any]]
    simulations: SimulationStream
    extra: dict[str, Any] = field(default_factory=dict)


def stream_results(path: Path) -> StreamedResults:
    """A τ² result file (either format, as `read_results` takes it), its simulations left
    on disk until they are read."""
    meta_path, sims_dir = _where(path)
    if sims_dir.is_dir():
        meta = _load(meta_path)
        if not isinstance(meta, dict):
            raise BenchmarkError(f"{meta_path}: not a τ² result file (expected a JSON object)")
        files = sorted(sims_dir.glob("*.json"))
        index = meta.get("simulation_index")
        if isinstance(index, list):
            listed = {str(e.get("id")) for e in index if isinstance(e, dict)}
            present = {f.stem for f in files}
            problems = []
            if listed - present:
                problems.append(f"missing simulation files: {sorted(listed - present)}")
            if present - listed:
                problems.append(f"simulation files not in its index: {sorted(present - listed)}")
            if problems:
                raise BenchmarkError(f"{meta_path}: " + "; ".join(problems))
        return _results(meta_path, meta, SimulationStream(meta_path, files))
    if not meta_path.is_file():  # no FIFO, no device: read a window at a time, no size cap
        raise BenchmarkError(f"{meta_path}: no such τ² result file (a regular file)")
    found: dict[str, Any] = {}
    with meta_path.open("rb") as raw:
        scan = _Scan(raw, meta_path)
        for key in scan.members():
            if key == "simulations":
                for _ in scan.items():  # parsed (malformed text is found now) and let go
                    pass
            else:
                found[key] = scan.value()
    return _results(meta_path, found, SimulationStream(meta_path, None))


def _results(path: Path, meta: dict[str, Any], simulations: SimulationStream) -> StreamedResults:
    meta.pop("format_version", None)
    for name in ("info", "tasks"):
        if name not in meta:
            raise BenchmarkError(f"{path}: not a τ² result file: field {name}: Field required")
    tasks = meta.pop("tasks")
    if not isinstance(tasks, list):
        raise BenchmarkError(f"{path}: not a τ² result file: field tasks: Input should be a list")
    try:
        info = Tau2Info.model_validate(meta.pop("info"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BenchmarkError(
            f"{path}: not a τ² result file: field info.{where}: {first['msg']}"
        ) from None
    return StreamedResults(path, info, tasks, simulations, meta)


def _simulation(value: Any, path: Path, number: int) -> Tau2Simulation:
    try:
        return Tau2Simulation.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BenchmarkError(
            f"{path}: not a τ² result file: field simulations.{number}.{where}: {first['msg']}"
        ) from None


class _Scan:
    """The values of one JSON object in a file, read a window of text at a time."""

    def __init__(self, raw: io.BufferedReader, path: Path) -> None:
        self._text = io.TextIOWrapper(raw, encoding="utf-8")
        self._path = path
        self._buffer = ""
        self._at = 0
        self._end = False

    def members(self) -> Iterator[str]:
        """The object's keys; after each, the caller reads its value (`value`, `skip`,
        `items`)."""
        self._expect("{")
        if self._peek() == "}":
            self._at += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                self._fail("a key")
            self._expect(":")
            yield key
            found = self._peek()
            self._at += 1
            if found == "}":
                return
            if found != ",":
                self._fail("',' or '}'")

    def items(self) -> Iterator[Any]:
        """The elements of the array that comes next, one at a time."""
        self._expect("[")
        if self._peek() == "]":
            self._at += 1
            return
        while True:
            yield self.value()
            found = self._peek()
            self._at += 1
            if found == "]":
                return
            if found != ",":
                self._fail("',' or ']'")

    def skip(self) -> None:
        """The next value, parsed and let go (an array an element at a time)."""
        if self._peek() == "[":
            for _ in self.items():
                pass
        else:
            self.value()

    def value(self) -> Any:
        """The next value, whole."""
        self._peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buffer, self._at)
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(self._buffer) - 16
                if cut and self._more():
                    continue
                raise BenchmarkError(f"{self._path}: cannot read a τ² result file: {exc}") from None
            except RecursionError:
                raise BenchmarkError(
                    f"{self._path}: cannot read a τ² result file: nested too deeply"
                ) from None
            if end >= len(self._buffer) and self._more():  # a number may go on
                continue
            self._at = end
            return value

    def _more(self) -> bool:
        if self._end:
            return False
        chunk = self._text.read(_CHUNK)
        if not chunk:
            self._end = True
            return False
        self._buffer = self._buffer[self._at :] + chunk
        self._at = 0
        return True

    def _peek(self) -> str:
        while True:
            while self._at < len(self._buffer) and self._buffer[self._at] in " \t\n\r":
                self._at += 1
            if self._at < len(self._buffer):
                return self._buffer[self._at]
            if not self._more():
                return ""

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            self._fail(repr(char))
        self._at += 1

    def _fail(self, wanted: str) -> None:
        raise BenchmarkError(
            f"{self._path}: cannot read a τ² result file: expected {wanted} near character "
            f"{self._at} of a window of the file"
        )
