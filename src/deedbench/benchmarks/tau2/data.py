"""Finding and reading τ²'s data: a domain's folder, its database files, their schema.

Users have τ²'s data as a checkout of sierra-research/tau2-bench, whose domains are
``data/tau2/domains/<domain>``, or through ``$TAU2_DATA_DIR``, τ²'s own variable,
which names the ``data`` folder. `domain_folder` accepts either, and the domain's
folder itself.

τ² reads a database (JSON, or TOML for telecom) into its pydantic model, which fills
defaults and turns 5 into 5.0 where a field is a float, and hashes the model's
dump. deedbench reads it into its own copy of that model (each domain's
``schema.py``) once, and keeps the dump: what τ²'s tools would see, value for
value and type for type (`load_db`). A task's ``initialization_data`` is merged
into that dump and read through the model again, as τ² does (`updated`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, parse_toml, read_text

__all__ = ["DATA_ENV", "domain_folder", "load_db", "merged", "read_data", "updated"]

DATA_ENV = "TAU2_DATA_DIR"
"""τ²'s own variable: the folder holding ``tau2/domains/<domain>``."""

_LAYOUTS = (
    ".",
    "{domain}",
    "domains/{domain}",
    "tau2/domains/{domain}",
    "data/tau2/domains/{domain}",
)


def domain_folder(given: Path | None, domain: str, marker: str, benchmark: str) -> Path:
    """The folder of τ²'s `domain`, from ``--data`` (`given`) or ``$TAU2_DATA_DIR``.

    `given` may be the domain's folder, a τ² checkout, its ``data`` folder or its
    ``data/tau2/domains``; the folder found must hold `marker` (a file or folder every
    copy of the domain has). A `BenchmarkError` says which layouts were tried.
    """
    if given is None:
        env = os.environ.get(DATA_ENV)
        if not env:
            raise BenchmarkError(
                f"{benchmark} needs τ²'s data: --data DIR (a τ² checkout, or its "
                f"data/tau2/domains/{domain} folder) or ${DATA_ENV} (τ²'s data folder)"
            )
        given = Path(env)
    if not given.is_dir():
        raise BenchmarkError(f"{benchmark}: data folder {given} does not exist")
    tried = []
    for layout in _LAYOUTS:
        folder = given / layout.format(domain=domain)
        if (folder / marker).exists():
            return folder
        tried.append(str(folder))
    raise BenchmarkError(
        f"{benchmark}: no τ² {domain} data in {given}: expected {marker} in one of "
        f"{', '.join(tried)} (a τ² checkout, its data folder, or the domain's folder)"
    )


def read_data(path: Path, what: str) -> Any:
    """A JSON or TOML file, with an error that names it."""
    if not path.exists():
        raise BenchmarkError(f"{what} {path} is missing")
    try:
        text = read_text(path)  # a FIFO, a device or a file over the cap: a UsageError
        return parse_toml(text) if path.suffix == ".toml" else parse_json(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{what} {path} cannot be read: {exc}") from None
    except ValueError as exc:  # no JSON or TOML, nested too deeply, an integer too long
        raise BenchmarkError(f"{what} {path} does not parse: {exc}") from None


def load_db(path: Path, schema: type[BaseModel], what: str) -> dict[str, Any]:
    """A database file as τ² holds it: read into `schema`, then dumped."""
    raw = read_data(path, what)
    try:
        return schema.model_validate(raw).model_dump()
    except ValidationError as exc:
        raise BenchmarkError(f"{what} {path} does not fit τ²'s schema: {exc}") from None


def merged(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`update` merged into `base` as τ² merges them (``addict``'s update): a dict into a
    dict key by key, anything else replacing what was there."""
    result = dict(base)
    for key, value in update.items():
        current = result.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            result[key] = merged(current, value)
        else:
            result[key] = value
    return result


def updated(
    base: Mapping[str, Any], update: Mapping[str, Any], schema: type[BaseModel]
) -> dict[str, Any]:
    """A database after a task's ``initialization_data``: merged, then read through the
    model again (τ²'s ``update_db``)."""
    return schema.model_validate(merged(base, update)).model_dump()
