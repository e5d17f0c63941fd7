"""A study file: TOML read with `tomllib`, checked with pydantic, every problem on its line.

    name = "tac-paper"            # run ids are <name>-<benchmark>-<agent>
    seed = 0
    concurrency = 32              # model calls in flight per endpoint, across the study

    [[benchmarks]]
    name = "tac"
    conditions = ["base", "welfare"]
    epochs = 3

    [[agents]]
    name = "opus"
    spec = "anthropic/claude-opus-4-7"
    temperature = 0.7
    price = { input = 15.0, output = 75.0 }

    [user]                        # the model playing the simulated user, where one is
    spec = "openai/gpt-4.1"       # (the desks' and τ²'s -T user=llm:SPEC)

    [judge]                       # the model judging τ²'s NL assertions (-T judge=SPEC)
    spec = "openai/gpt-4.1-2025-04-14"

Every model's table takes the same settings (`deedbench.agents.roles.ModelChoice`:
base_url, api_key_env, temperature, max_tokens, top_p, seed, reasoning_effort, extra,
timeout, max_attempts, max_retry_seconds), as `deedbench run` takes them as flags.

`tomllib` keeps no positions, so `locate` finds the line of a key path
(``("agents", 1, "price", "input")``) by reading the text itself: table headers, the
occurrences of each array of tables, and `key =` lines, skipping multi-line strings.
A problem with a key that is missing points at its table's header.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deedbench.agents.roles import ModelChoice
from deedbench.errors import UsageError
from deedbench.files import parse_toml, read_text
from deedbench.records import MAX_EPOCHS
from deedbench.reports.cost import Price

__all__ = [
    "LABEL",
    "LABEL_RULE",
    "AgentEntry",
    "BenchmarkEntry",
    "JudgeEntry",
    "Loc",
    "Problem",
    "StudyDraft",
    "StudyError",
    "StudyFile",
    "UserEntry",
    "load_study",
    "locate",
    "read_study",
    "where",
]

Loc = tuple[str | int, ...]

# What a study's name and its agents' and benchmarks' labels may be: run ids are made of
# them (`<name>-<benchmark>-<agent>`), and a run id is 1 to 128 of these characters.
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
LABEL_RULE = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or a digit"


class Problem(BaseModel):
    """One thing wrong with a study file, at its line (None: the file as a whole)."""

    line: int | None
    where: str
    message: str

    def render(self, path: Path) -> str:
        at = f"{path}:{self.line}" if self.line is not None else str(path)
        return f"{at}: {self.where}: {self.message}" if self.where else f"{at}: {self.message}"


class StudyError(Exception):
    """A study file that cannot run: every problem found, each on its line."""

    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__("\n".join(p.render(path) for p in problems))


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkEntry(_Entry):
    """One benchmark of the study; each agent runs it once (one run)."""

    name: str
    label: str | None = None  # in run ids and tables; needed when a benchmark is listed twice
    conditions: list[str] | None = None
    epochs: int | None = Field(default=None, ge=1, le=MAX_EPOCHS)
    seed: int | None = None
    limit: int | None = Field(default=None, ge=1)
    samples: list[str] | None = None  # only these sample ids (`deedbench run --samples`)
    data: str | None = None  # a file or folder, relative to the study file
    options: dict[str, Any] = Field(default_factory=dict)  # as `-T KEY=VALUE`

    @field_validator("options")
    @classmethod
    def _scalars(cls, options: dict[str, Any]) -> dict[str, Any]:
        for key, value in options.items():
            if not isinstance(value, str | int | float | bool):
                raise ValueError(f"option {key!r} must be a string, a number or a boolean")
        return options

    @property
    def key(self) -> str:
        return self.label or self.name


class AgentEntry(ModelChoice):
    """One agent and its settings (model ones only for model specs): a model's settings
    are `ModelChoice`'s, checked as `deedbench run` checks its flags, by the planner."""

    spec: str
    name: str | None = None  # in run ids and tables; by default made from the spec
    benchmarks: list[str] | None = None  # the benchmark labels it runs (default: all)
    price: Price | None = None  # USD per million tokens

    @property
    def key(self) -> str:
        """The name, by default the spec's last part (`openai/gpt-4o`: `gpt-4o`)."""
        last = self.spec.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        return self.name or re.sub(r"[^A-Za-z0-9._-]+", "-", last).strip("-._")[:64]

    @property
    def model_settings(self) -> dict[str, Any]:
        """The settings given that only a model agent takes."""
        names = set(ModelChoice.model_fields)
        return {k: getattr(self, k) for k in sorted(names & self.model_fields_set)}


class UserEntry(ModelChoice):
    """A model-played user, for the benchmarks that have one (the service desks, τ²):
    its spec and settings (temperature 0 unless given, as τ²'s user simulator)."""

    spec: str
    price: Price | None = None


class JudgeEntry(ModelChoice):
    """The model judging τ²'s NL assertions, for the benchmarks that take one: its spec
    and settings (temperature 0 unless given, as τ²'s judge)."""

    spec: str
    price: Price | None = None


class StudyFile(_Entry):
    """The whole file."""

    name: str
    description: str = ""
    seed: int = 0
    epochs: int | None = Field(default=None, ge=1, le=MAX_EPOCHS)
    concurrency: int = Field(default=16, ge=1)
    executor: str = "local"
    ray_address: str | None = None
    workers: int | None = Field(default=None, ge=1)
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)
    agents: list[AgentEntry] = Field(min_length=1)
    user: UserEntry | None = None
    judge: JudgeEntry | None = None

    @field_validator("name")
    @classmethod
    def _label(cls, name: str) -> str:
        if not LABEL.fullmatch(name):
            raise ValueError(f"a study name is {LABEL_RULE}")
        return name

    @field_validator("executor")
    @classmethod
    def _executor(cls, name: str) -> str:
        from deedbench.errors import ExecutorError
        from deedbench.executors.kinds import executor_kind

        try:
            executor_kind(name, study=True)
        except ExecutorError as exc:
            raise ValueError(str(exc)) from None
        return name


@dataclass
class StudyDraft:
    """A study file read as far as it goes: every problem found in the file itself, and
    its parts that are whole (the name, each entry), which the planner checks too, so one
    pass finds every problem of the file.

    `study` is the whole file once it has no problem of its own; `name` is None when the
    name has one (no run id can be made), `user` when the user table has one, and an
    entry of `benchmarks` or `agents` when that entry has one; `judge` as `user`.
    """

    text: str
    problems: list[Problem]
    study: StudyFile | None
    name: str | None
    seed: int
    epochs: int | None
    user: UserEntry | None
    benchmarks: list[BenchmarkEntry | None]
    agents: list[AgentEntry | None]
    judge: JudgeEntry | None = None


def load_study(path: Path) -> tuple[StudyFile, str]:
    """The study and its text; StudyError with every problem pydantic or TOML found."""
    draft = read_study(path)
    if draft.study is None:
        raise StudyError(path, draft.problems)
    return draft.study, draft.text


def read_study(path: Path) -> StudyDraft:
    """The file as a `StudyDraft`; StudyError when it cannot be read as TOML at all."""
    try:
        text = read_text(path)  # a FIFO, a device or a file over the cap: a UsageError
    except UnicodeDecodeError as exc:
        raise _whole_file(path, f"not UTF-8: {exc}") from None
    except OSError as exc:
        raise _whole_file(path, f"cannot be read: {exc.strerror or exc}") from None
    except UsageError as exc:
        raise _whole_file(path, str(exc).removeprefix(f"{path}: ")) from None
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(found.group(1)) if found else None
        message = "not TOML: " + re.sub(r" \(at line.*", "", str(exc))
        raise StudyError(path, [Problem(line=line, where="", message=message)]) from None
    except ValueError as exc:  # nested too deeply, an integer longer than Python converts
        raise _whole_file(path, f"not a study file: {exc}") from None
    try:
        study = StudyFile.model_validate(data)
    except ValidationError as exc:
        problems = sorted(
            (_problem(text, error) for error in exc.errors()), key=lambda p: (p.line or 0, p.where)
        )
        broken = {error["loc"][0] for error in exc.errors() if error["loc"]}
        return _partial(text, data, problems, broken)
    return StudyDraft(
        text,
        [],
        study,
        study.name,
        study.seed,
        study.epochs,
        study.user,
        list(study.benchmarks),
        list(study.agents),
        study.judge,
    )


def _whole_file(path: Path, message: str) -> StudyError:
    return StudyError(path, [Problem(line=None, where="", message=message)])


def _partial(
    text: str, data: dict[str, Any], problems: list[Problem], broken: set[str | int]
) -> StudyDraft:
    """The parts of a file with problems that are whole: a top-level key without one
    (`broken` holds those with one), an entry that validates on its own."""

    def entries(key: str, model: type[_Model]) -> list[_Model | None]:
        found = data.get(key)
        return [_usable(model, item) for item in found] if isinstance(found, list) else []

    def scalar(key: str, default: Any) -> Any:
        return data.get(key, default) if key not in broken else default

    user, judge = data.get("user"), data.get("judge")
    return StudyDraft(
        text,
        problems,
        None,
        scalar("name", None),
        scalar("seed", 0),
        scalar("epochs", None),
        None if user is None else _usable(UserEntry, user),
        entries("benchmarks", BenchmarkEntry),
        entries("agents", AgentEntry),
        None if judge is None else _usable(JudgeEntry, judge),
    )


_Model = TypeVar("_Model", bound=BaseModel)


def _usable(model: type[_Model], item: Any) -> _Model | None:
    """An entry as far as it validates: the keys with problems (already listed) left
    out; None when it cannot do without them (a required key is missing)."""
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        if not isinstance(item, dict):
            return None
        broken = {error["loc"][0] for error in exc.errors() if error["loc"]}
        try:
            return model.model_validate({k: v for k, v in item.items() if k not in broken})
        except ValidationError:
            return None


def _problem(text: str, error: Any) -> Problem:
    loc: Loc = tuple(error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        near = get_close_matches(str(loc[-1]), _keys(loc), n=1)
        message = f"unknown key (a typo? did you mean {near[0]!r}?)" if near else "unknown key"
    elif error["type"] == "missing":
        message = "required, missing"
    return Problem(line=locate(text, loc), where=where(loc), message=message)


def _keys(loc: Loc) -> list[str]:
    """The keys the table holding `loc`'s last key takes (none known: a deeper table)."""
    tables: dict[tuple[str, ...], type[BaseModel]] = {
        (): StudyFile,
        ("benchmarks", "[]"): BenchmarkEntry,
        ("agents", "[]"): AgentEntry,
        ("user",): UserEntry,
        ("judge",): JudgeEntry,
    }
    model = tables.get(tuple("[]" if isinstance(p, int) else p for p in loc[:-1]))
    return list(model.model_fields) if model is not None else []


def where(loc: Loc) -> str:
    """A key path as a reader of the file names it: ``agents[2].price.input`` (1-based)."""
    text = ""
    for part in loc:
        text += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_BARE = r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'"""  # a bare or quoted key
_KEY = re.compile(rf"^\s*((?:{_BARE})(?:\s*\.\s*(?:{_BARE}))*)\s*=")


def _parts(dotted: str) -> list[str]:
    return [part.strip("\"'") for part in re.findall(_BARE, dotted)]


def locate(text: str, loc: Loc) -> int | None:
    """The 1-based line that defines the longest prefix of `loc` (a key or a table header);
    None when even the first part is defined nowhere (a top-level key that is missing)."""
    best: tuple[int, int] | None = None  # (matched parts, line)
    arrays: dict[tuple[str, ...], int] = {}  # array-of-tables path -> index of its last table
    table: tuple[str | int, ...] = ()
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2:
                in_string = None
            continue
        path: tuple[str | int, ...] | None = None
        header = _HEADER.match(line)
        if header:
            names = _parts(header.group(2))
            resolved: list[str | int] = []
            for index, name in enumerate(names):
                resolved.append(name)
                prefix = tuple(names[: index + 1])
                is_last = index == len(names) - 1
                if prefix in arrays and not (is_last and header.group(1) == "[["):
                    resolved.append(arrays[prefix])
            if header.group(1) == "[[":
                key = tuple(names)
                arrays[key] = arrays.get(key, -1) + 1
                resolved.append(arrays[key])
            table = path = tuple(resolved)
        else:
            found = _KEY.match(line)
            if found:
                path = table + tuple(_parts(found.group(1)))
                rest = line[found.end() :]
                for quote in ('"""', "'''"):
                    if rest.count(quote) % 2:
                        in_string = quote
        if path is None or tuple(loc[: len(path)]) != path:
            continue
        if best is None or len(path) > best[0]:
            best = (len(path), number)
    return best[1] if best else None
