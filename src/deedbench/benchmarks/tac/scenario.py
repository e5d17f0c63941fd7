"""TAC scenarios: the schema, loading from files, and validation with precise errors.

One schema serves deedbench's own files (one scenario object per file) and the
official upstream file (``{"canary": "...", "scenarios": [...]}``), so a user who has
the gated upstream data can run it unchanged. The canary (a marker that keeps the
file out of training corpora) is the official file's one field of its own: it is
accepted at the top level and in a scenario, and dropped on loading, so no tool,
prompt or record ever shows it. Any other unknown key is an error naming it.

Categories carry upstream's identifiers (`CATEGORIES`: those of its data file, and of its
``<category>_welfare`` metrics), so a user's result files and scripts name the same
groups. The longer names deedbench's first scenario files used are accepted as aliases
(`CATEGORY_ALIASES`) and read as upstream's; the built-in files still carry them, so
that their content hash, which every run on them records, stays what it was.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, read_bytes

__all__ = [
    "BUILTIN_DIR",
    "BUILTIN_LABEL",
    "CANARY",
    "CATEGORIES",
    "CATEGORY_ALIASES",
    "FILE_FIELDS",
    "Experience",
    "Scenario",
    "ScenarioSet",
    "load_scenario_set",
    "load_scenarios",
    "scenarios_hash",
]

CATEGORIES = (
    "captive_marine",
    "captive_shows",
    "animal_riding",
    "animal_racing",
    "animal_fighting",
    "wildlife_exploitation",
)
"""Upstream TAC's categories (inspect_evals/tac), in the order of the published paper."""
CATEGORY_ALIASES = {
    "captive_marine_animals": "captive_marine",
    "captive_animal_shows": "captive_shows",
    "animal_riding_traction": "animal_riding",
}
"""The names deedbench's first scenario files gave three categories, read as upstream's."""

BUILTIN_DIR = Path(__file__).parent / "scenarios"
BUILTIN_LABEL = "built-in"  # how a run records a shipped file: built-in/seville_bullfight.json

CANARY = "canary"  # the official file's own field, never shown to the model
FILE_FIELDS = ("scenarios", CANARY)  # the keys of a {"scenarios": [...]} file


class Experience(BaseModel):
    """One bookable listing in a scenario's catalogue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    location: str = Field(min_length=1)
    description: str = Field(min_length=1)
    price: float = Field(ge=0, allow_inf_nan=False)  # a price of inf or nan sorts nowhere
    rating: float = Field(ge=0, le=5, allow_inf_nan=False)
    tags: tuple[str, ...] = ()


class Scenario(BaseModel):
    """A user request and the listings an agent will meet, each harmful or safe."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    category: str = Field(min_length=1)
    input: str = Field(min_length=1)
    harmful_ids: tuple[str, ...] = Field(min_length=1)
    safe_ids: tuple[str, ...] = Field(min_length=1)
    experiences: tuple[Experience, ...] = Field(min_length=2)

    @field_validator("category")
    @classmethod
    def _known_category(cls, category: str) -> str:
        """Reports group by category: a misspelt one would be a category of its own. An
        alias is read as upstream's name."""
        category = CATEGORY_ALIASES.get(category, category)
        if category not in CATEGORIES:
            known = [*CATEGORIES, *CATEGORY_ALIASES]
            near = get_close_matches(category, known, n=1)
            hint = f"did you mean {CATEGORY_ALIASES.get(near[0], near[0])!r}? " if near else ""
            raise ValueError(f"unknown category {category!r}; {hint}valid: {', '.join(CATEGORIES)}")
        return category

    @model_validator(mode="after")
    def _check_partition(self) -> Scenario:
        """Messages name the fields at fault: they are shown as they are."""
        ids = [e.id for e in self.experiences]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"field experiences: ids are not unique: {duplicates}")
        harmful, safe = set(self.harmful_ids), set(self.safe_ids)
        if harmful & safe:
            both = sorted(harmful & safe)
            raise ValueError(
                f"field harmful_ids and field safe_ids: ids both harmful and safe: {both}"
            )
        for name, listed in (("harmful_ids", self.harmful_ids), ("safe_ids", self.safe_ids)):
            if len(set(listed)) != len(listed):
                raise ValueError(f"field {name} lists an id twice")
            unknown = sorted(set(listed) - set(ids))
            if unknown:
                raise ValueError(f"field {name}: ids not among the experiences: {unknown}")
        unlabelled = sorted(set(ids) - harmful - safe)
        if unlabelled:
            raise ValueError(
                f"field experiences: neither harmful nor safe (in no id list): {unlabelled}"
            )
        return self

    def experience(self, experience_id: str) -> Experience | None:
        return next((e for e in self.experiences if e.id == experience_id), None)


@dataclass(frozen=True)
class ScenarioSet:
    """Scenarios as loaded, and the files they came from (name -> sha256 of the bytes
    read), which a run records: shipped files as ``built-in/NAME``, others as given."""

    scenarios: list[Scenario]
    files: dict[str, str]


def load_scenarios(path: Path | None = None) -> list[Scenario]:
    """Load scenarios from a directory of files, one file, or the built-in set.

    Every problem is reported with the file, the scenario and the field.
    """
    return load_scenario_set(path).scenarios


def load_scenario_set(path: Path | None = None, extra: Path | None = None) -> ScenarioSet:
    """The scenarios of `path` (default the built-in set), then those of `extra`, a file or
    folder added to them. An id used twice, within one set or across both, is an error
    naming both files."""
    scenarios: list[Scenario] = []
    files: dict[str, str] = {}
    origin: dict[str, str] = {}
    for source in (path or BUILTIN_DIR, extra):
        if source is None:
            continue
        for file in _files(source):
            name = _label(file)
            data = _read(file)
            files[name] = "sha256:" + hashlib.sha256(data).hexdigest()
            for scenario in _load_file(file, data):
                if scenario.id in origin:
                    raise BenchmarkError(
                        f"{name}: scenario {scenario.id!r}: id already used in "
                        f"{origin[scenario.id]}{_hint(name, origin[scenario.id])}"
                    )
                origin[scenario.id] = name
                scenarios.append(scenario)
    _check_unique_experience_ids(scenarios, origin)
    return ScenarioSet(scenarios, files)


def _files(path: Path) -> list[Path]:
    """The scenario files a path names: itself, or a folder's *.json files in name order."""
    if not path.exists():
        raise BenchmarkError(f"{path}: no such file or directory")
    # a folder named like a file is no scenario file
    files = sorted(p for p in path.glob("*.json") if not p.is_dir()) if path.is_dir() else [path]
    if not files:
        raise BenchmarkError(f"{path}: no *.json scenario files in this directory")
    return files


def _label(file: Path) -> str:
    """A file's name in errors and in the run's record."""
    if file.parent == BUILTIN_DIR:
        return f"{BUILTIN_LABEL}/{file.name}"
    return str(file)


def _hint(*names: str) -> str:
    """What to do about an id that a file of the user's shares with a shipped one."""
    if any(n.startswith(f"{BUILTIN_LABEL}/") for n in names):
        return (
            " (a built-in scenario: give yours another id, or use -T scenarios=DIR to "
            "replace the built-in set)"
        )
    return ""


def _read(file: Path) -> bytes:
    try:
        return read_bytes(file)  # a FIFO, a device or a file over the cap: a UsageError
    except OSError as exc:
        raise BenchmarkError(f"{file}: cannot be read: {exc.strerror or exc}") from None


def _load_file(file: Path, raw: bytes) -> list[Scenario]:
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark is no error
    except UnicodeDecodeError as exc:
        raise BenchmarkError(
            f"{file}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
            "save it as UTF-8"
        ) from None
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{file}: not valid JSON: {exc}") from None
    except ValueError as exc:  # nested too deeply, an integer too long
        raise BenchmarkError(f"{file}: not a scenario file: {exc}") from None
    if isinstance(data, dict) and "scenarios" in data:
        unknown = sorted(set(data) - set(FILE_FIELDS))
        if unknown:
            raise BenchmarkError(
                f"{file}: field {', '.join(map(repr, unknown))}: not a field of a scenario "
                f"file (valid: {', '.join(FILE_FIELDS)})"
            )
        items = data["scenarios"]
        if not isinstance(items, list):
            raise BenchmarkError(f"{file}: field 'scenarios' must be a list")
        if not items:  # it would add no sample: a run of it would plan 0 episodes
            raise BenchmarkError(f"{file}: field 'scenarios' is empty: list one scenario or more")
    elif isinstance(data, dict):
        items = [data]
    else:
        raise BenchmarkError(f'{file}: expected a scenario object or {{"scenarios": [...]}}')
    return [_parse(file, index, item) for index, item in enumerate(items)]


def _parse(file: Path, index: int, item: Any) -> Scenario:
    name = item.get("id") if isinstance(item, dict) else None
    label = f"scenario {name!r}" if isinstance(name, str) else f"scenario #{index}"
    if isinstance(item, dict):
        item = {k: v for k, v in item.items() if k != CANARY}
    try:
        return Scenario.model_validate(item)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            message = error["msg"].removeprefix("Value error, ")
            if not error["loc"]:  # a check across fields, whose message names them
                problems.append(f"{file}: {label}: {message}")
                continue
            loc = _format_loc(error["loc"], item)
            problems.append(f"{file}: {label}: field {loc}: {message}")
        raise BenchmarkError("\n".join(problems)) from None


def _format_loc(loc: tuple[Any, ...], item: Any) -> str:
    """`experiences[2].price`, naming the experience by id where it has one."""
    text = ""
    node = item
    for part in loc:
        if isinstance(part, int):
            label = str(part)
            entry = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(entry, dict) and "id" in entry:
                label = f"{part} ({entry['id']!r})"
            text += f"[{label}]"
        else:
            text += f".{part}" if text else str(part)
        node = node[part] if isinstance(node, dict | list) and _has(node, part) else None
    return text


def _has(node: Any, part: Any) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(part, int) and part < len(node)


def _check_unique_experience_ids(scenarios: list[Scenario], origin: dict[str, str]) -> None:
    seen: dict[str, str] = {}
    for scenario in scenarios:
        for experience in scenario.experiences:
            other = seen.get(experience.id)
            if other is not None and other != scenario.id:
                raise BenchmarkError(
                    f"{origin[scenario.id]}: scenario {scenario.id!r}: field "
                    f"experiences.id: {experience.id!r} is already used by scenario {other!r} "
                    f"in {origin[other]}{_hint(origin[scenario.id], origin[other])}"
                )
            seen[experience.id] = scenario.id


def scenarios_hash(scenarios: list[Scenario]) -> str:
    """A content hash of the scenarios as loaded (independent of file layout)."""
    payload = json.dumps([s.model_dump(mode="json") for s in scenarios], sort_keys=True)
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()
