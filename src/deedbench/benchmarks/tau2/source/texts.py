"""Everything a τ² run shows its models that is τ²'s prose, from one place: the user's τ²
source when there is one, deedbench's own wording otherwise, and which it was.

`Tau2Texts` holds the prompts (`Tau2Prompts`) and, per toolkit, the tools as τ²
sends them (`ToolText`: the JSON of ``openai_schema``, and the docstring τ³'s
discoverable tools are unlocked with). With no source, `tools` gives None and the
callers use deedbench's own tools' specs and docstrings. `record` is what a run
keeps of it (the files read with their sha256, a digest of every text used), so a
reader of the run, and `export --format tau2-submission`, can tell which it was.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from deedbench.benchmarks.tau2.source.locate import Tau2Source
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS, Tau2Prompts, read_prompts
from deedbench.benchmarks.tau2.source.toolkits import ToolkitReader, ToolText
from deedbench.benchmarks.tau2.source.tree import SourceError, SourceTree
from deedbench.errors import BenchmarkError

__all__ = [
    "OWN_WORDING",
    "TEXTS_KEY",
    "Tau2Texts",
    "ToolkitName",
    "load_texts",
    "recorded_origin",
]

TEXTS_KEY = "tau2 texts"
"""The entry of a run's ``data_files`` that says where its model-facing texts came from:
``<origin>`` -> ``sha256:<digest of every text used>``."""
OWN_WORDING = "deedbench's own wording (no τ² source)"

ToolkitName = tuple[str, str]
"""A τ² toolkit class: its module and its name (``tau2.domains.airline.tools``,
``AirlineTools``)."""


@dataclass(frozen=True)
class Tau2Texts:
    """The texts a τ² run shows its models, and where they came from."""

    source: Tau2Source | None
    prompts: Tau2Prompts
    toolkits: dict[ToolkitName, list[ToolText]] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    """Every file of the source read, with the sha256 of its bytes."""

    @property
    def origin(self) -> str:
        return self.source.describe() if self.source is not None else OWN_WORDING

    def tools(self, toolkit: ToolkitName) -> list[ToolText] | None:
        """The toolkit's tools in τ²'s order as the source has them; None without a
        source."""
        if self.source is None:
            return None
        return self.toolkits[toolkit]

    def digest(self) -> str:
        """A sha256 of every text (prompts, tool specs, docstrings)."""
        tools = {
            f"{module}.{name}": [[t.name, t.spec, t.discoverable, t.doc] for t in found]
            for (module, name), found in sorted(self.toolkits.items())
        }
        text = json.dumps([asdict(self.prompts), tools], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def record(self) -> dict[str, str]:
        """What a run records of its texts, in its ``data_files``."""
        return {TEXTS_KEY: f"{self.origin} sha256:{self.digest()}", **self.files}


def _unreadable(source: Tau2Source, exc: SourceError) -> BenchmarkError:
    return BenchmarkError(
        f"cannot read the texts τ² shows its models from the {source.describe()}: {exc}; "
        "-T source=none uses deedbench's own wording instead"
    )


def _stamp(root: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for path in sorted(root.rglob("*.py")):
        info = path.stat()
        found.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(found)


@cache
def _read(
    source: Tau2Source, stamp: tuple[tuple[str, int, int], ...], toolkits: tuple[ToolkitName, ...]
) -> Tau2Texts:
    del stamp  # the cache key: a changed file is read again
    reader = ToolkitReader(SourceTree(source.root))
    try:
        prompts = read_prompts(reader.tree, reader.types)
        found = {toolkit: reader.tools(*toolkit) for toolkit in toolkits}
    except SourceError as exc:
        raise _unreadable(source, exc) from None
    except RecursionError:  # nesting deeper than Python's parser or deedbench follows
        raise _unreadable(source, SourceError("expressions nested too deeply")) from None
    files = {str(path): digest for path, digest in sorted(reader.tree.files.items())}
    return Tau2Texts(source, prompts, found, files)


def load_texts(source: Tau2Source | None, toolkits: tuple[ToolkitName, ...] = ()) -> Tau2Texts:
    """The prompts and the named toolkits' tools of `source` (None: deedbench's own
    wording); read once per process while the source's files are unchanged. A
    `BenchmarkError` names the file and line the source cannot be read at."""
    if source is None:
        return Tau2Texts(None, OWN_PROMPTS)
    return _read(source, _stamp(source.root), tuple(toolkits))


def recorded_origin(data_files: dict[str, str]) -> str | None:
    """Where a run's texts came from, as it recorded them (None: a run recorded before
    deedbench said; its tools were described in deedbench's own words)."""
    found = data_files.get(TEXTS_KEY)
    return found.rpartition(" sha256:")[0] if found else None
