"""Where the user's τ² source is: a folder they name, the checkout holding the data, or
an installed ``tau2`` package (found on disk, never imported).

τ²'s source is its package folder, the one holding ``environment/tool.py``. A
checkout of tau2-bench has it at ``src/tau2``; the offline reference copy these
tests use keeps the repository tree under ``src/``, so ``src/src/tau2``; τ²'s wheel
installs it as ``tau2`` with its data inside (``tau2/data/tau2/domains``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import tomllib
from dataclasses import dataclass
from pathlib import Path

from deedbench.errors import BenchmarkError
from deedbench.files import read_text

__all__ = ["NO_SOURCE", "Tau2Source", "find_source", "source_folder"]

NO_SOURCE = "none"
"""The option's value that asks for deedbench's own wording."""

_MARKER = Path("environment") / "tool.py"
_LAYOUTS = ("src/tau2", "src/src/tau2", "tau2", ".")


@dataclass(frozen=True)
class Tau2Source:
    """τ²'s package folder, how it was found, and its version where known."""

    root: Path
    found: str
    """How: ``given``, ``checkout`` (the one holding the data) or ``installed``."""
    version: str | None = None

    def describe(self) -> str:
        version = f" {self.version}" if self.version else ""
        how = {
            "given": "named with -T source",
            "checkout": "the checkout holding the data",
            "installed": "the installed package",
        }[self.found]
        return f"τ²{version} source at {self.root} ({how})"


def source_folder(path: Path) -> Path | None:
    """τ²'s package folder in `path` (a checkout, its ``src``, or the package itself)."""
    for layout in _LAYOUTS:
        folder = (path / layout).resolve()
        if (folder / _MARKER).is_file():
            return folder
    return None


def _version(folder: Path) -> str | None:
    """The version a checkout's ``pyproject.toml`` states (read, never run)."""
    for candidate in (folder.parent.parent / "pyproject.toml", folder.parent / "pyproject.toml"):
        if candidate.is_file():
            try:
                project = tomllib.loads(read_text(candidate)).get("project", {})
            except (tomllib.TOMLDecodeError, ValueError):
                return None
            if project.get("name") in ("tau2", "tau2-bench") and isinstance(
                project.get("version"), str
            ):
                return str(project["version"])
    return None


def _installed() -> Tau2Source | None:
    try:
        spec = importlib.util.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        if (Path(location) / _MARKER).is_file():
            version = None
            names = importlib.metadata.packages_distributions().get("tau2", [])
            for name in names:
                try:
                    version = importlib.metadata.version(name)
                    break
                except importlib.metadata.PackageNotFoundError:
                    continue
            return Tau2Source(Path(location).resolve(), "installed", version)
    return None


def find_source(given: str | None, data_folder: Path) -> Tau2Source | None:
    """The τ² source whose texts a run shows its models.

    `given` (``-T source``): a folder, or `NO_SOURCE`; otherwise the checkout holding
    `data_folder` (a domain's folder, ``<checkout>/data/tau2/domains/<domain>``), then an
    installed ``tau2`` package. None: no source (deedbench's own wording is used). A
    named folder without τ²'s source is a `BenchmarkError`.
    """
    if given == NO_SOURCE:
        return None
    if given:
        path = Path(given).expanduser()
        folder = source_folder(path) if path.is_dir() else None
        if folder is None:
            raise BenchmarkError(
                f"-T source={given}: no τ² source there (a tau2-bench checkout, its src "
                f"folder or the tau2 package folder, holding {_MARKER}); -T source={NO_SOURCE} "
                "uses deedbench's own wording"
            )
        return Tau2Source(folder, "given", _version(folder))
    domains = data_folder.parent
    if domains.name == "domains" and domains.parent.name == "tau2":
        checkout = domains.parent.parent.parent
        folder = source_folder(checkout)
        if folder is not None:
            return Tau2Source(folder, "checkout", _version(folder))
    return _installed()
