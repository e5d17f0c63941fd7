"""The interface every benchmark implements; the engine runs whatever fits it."""

from __future__ import annotations

import dataclasses
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol

from typing_extensions import TypeVar

from deedbench.engine.agent import Agent
from deedbench.engine.episode import EpisodeSetup, EpisodeTranscript
from deedbench.engine.python_specs import import_target
from deedbench.errors import BenchmarkError
from deedbench.records import ReportSpec, Sample, Score, ScorerSpec

__all__ = ["Benchmark", "Check", "Option", "Scorer", "rebuild_scorer", "scorer_spec"]

_W = TypeVar("_W", default=Any)  # default: as `tools._W`


class Check(Protocol):
    """One sample's validation verdict: `problems` empty means it passed; `notes` are
    what a user should know that is no fault (a task needing a judge)."""

    task: str
    problems: list[str]
    notes: list[str]

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]: ...


class Scorer(Protocol[_W]):
    """Judges one finished episode by what the agent did; a benchmark holds one as
    `scorer` (as an Inspect `Task` holds its scorer), so the same samples under another
    verdict are another scorer and a `ReportSpec`, not another benchmark class. It reads
    the episode's world as its benchmark's type, `_W`."""

    def score(self, sample: Sample, transcript: EpisodeTranscript[_W]) -> Score: ...


def scorer_spec(scorer: Scorer[Any]) -> ScorerSpec:
    """What a run records of its scorer: the class, and a dataclass scorer's fields when
    they are all JSON values (other state, such as a desk's loaded data, comes from the
    benchmark the scorer is rebuilt beside)."""
    kind = type(scorer)
    args: dict[str, Any] = {}
    if dataclasses.is_dataclass(scorer):
        fields = {f.name: getattr(scorer, f.name) for f in dataclasses.fields(scorer) if f.init}
        try:
            if json.loads(json.dumps(fields)) == fields:
                args = fields
        except (TypeError, ValueError):
            pass
    return ScorerSpec(target=f"{kind.__module__}:{kind.__qualname__}", args=args)


def rebuild_scorer(spec: ScorerSpec) -> Scorer[Any]:
    """The scorer a run recorded, made again from its class and arguments; BenchmarkError
    when this process cannot (a class defined in a script or a function, other arguments)."""
    try:
        made: Scorer[Any] = import_target(spec.target)(**spec.args)
    except Exception as exc:  # whatever the scorer's own __init__ raises
        raise BenchmarkError(
            f"the run was scored by {spec.target}, which cannot be rebuilt here: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    return made


_BOOLS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


@dataclass(frozen=True)
class Option:
    """One option a benchmark takes (``-T NAME=VALUE``), declared once on its class so the
    base validates it and `deedbench list` shows it.

    `type` is str, int, bool or Path; `choices` limits a str or int option; `parse`, when
    given, turns the text into the value instead and raises ValueError saying what is
    allowed. `default` is the value when the option is not given (None: not given).
    """

    name: str
    help: str
    type: type = str
    default: Any = None
    choices: tuple[Any, ...] = ()
    parse: Callable[[str], Any] | None = None

    def value(self, text: str) -> Any:
        """The typed value of `text`; ValueError (what is allowed) if it is none."""
        if self.parse is not None:
            return self.parse(text)
        value: Any
        if self.type is bool:
            if text.lower() not in _BOOLS:
                raise ValueError("true or false")
            value = _BOOLS[text.lower()]
        elif self.type is int:  # ASCII digits only: int() also takes "١" and "1_000"
            if re.fullmatch(r"[+-]?[0-9]+", text.strip()) is None:
                raise ValueError(f"{self.allowed} (ASCII digits)")
            value = int(text)
        else:
            value = self.type(text)
        if self.choices and value not in self.choices:
            raise ValueError(self.allowed)
        return value

    @property
    def allowed(self) -> str:
        """What the option accepts, in words."""
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        return {bool: "true or false", int: "an integer", Path: "a path"}.get(self.type, "text")

    @property
    def type_name(self) -> str:
        """The option's type as `deedbench list` shows it."""
        return "choice" if self.choices else self.type.__name__.lower()


class Benchmark(ABC, Generic[_W]):
    """A set of samples, how to set up an episode for each, and how to score it.

    Generic over its episodes' world, `_W` (what its toolbox changes and its scorer reads):
    ``Benchmark[DeskWorld]`` sets up ``EpisodeSetup[DeskWorld]`` and scores
    ``EpisodeTranscript[DeskWorld]``. A plain ``Benchmark`` leaves the world untyped.

    A subclass declares its options in `option_specs`; `__init__` checks the given
    ones once (an unknown name or a bad value is a `BenchmarkError` naming it and what is
    allowed), keeps the strings as given in `options` (the run records them, and resume
    compares them) and the typed values, defaults filled in, in `values`.
    """

    name: ClassVar[str]
    # the name the class itself declares, where `name` is another (a python/MODULE:ATTR
    # benchmark is recorded by its spec): what a new run's id starts with
    declared_name: ClassVar[str | None] = None
    description: ClassVar[str]
    conditions: ClassVar[tuple[str, ...]]
    default_epochs: ClassVar[int] = 1
    generation_defaults: ClassVar[dict[str, Any]] = {}
    data_option: ClassVar[str | None] = None  # the option that `--data PATH` sets
    baseline_names: ClassVar[tuple[str, ...]] = ()  # what `baselines()` offers, for listing
    # what each baseline is for, one line under a baseline run's summary, so that its
    # figure (a 0% from the relevance trap) is read as the point, not a bug
    baseline_purposes: ClassVar[dict[str, str]] = {}
    # what each baseline scores on the benchmark's own data with its default options, metric
    # by metric (a rate in [0, 1]); its purpose line quotes these figures where it gives one,
    # and tests/benchmarks/test_baseline_claims.py runs each baseline to check every one
    baseline_claims: ClassVar[dict[str, dict[str, float]]] = {}
    report: ClassVar[ReportSpec]
    scorer: Scorer[_W]  # set by the subclass (an attribute or a property)
    option_specs: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options = dict(options or {})
        declared = {o.name: o for o in self.option_specs}
        unknown = sorted(set(self.options) - set(declared))
        if unknown:
            valid = "; ".join(f"{o.name}: {o.help}" for o in self.option_specs) or "none"
            raise BenchmarkError(f"unknown {self.name} option(s) {unknown}. Valid options: {valid}")
        self.values: dict[str, Any] = {}
        for name, option in declared.items():
            if name not in self.options:
                self.values[name] = option.default
                continue
            text = self.options[name]
            try:
                self.values[name] = option.value(text)
            except ValueError as exc:
                sep = ": " if option.parse is not None else " must be "
                raise BenchmarkError(f"{self.name} option {name}{sep}{exc}; got {text!r}") from None

    @abstractmethod
    def samples(self) -> list[Sample]:
        """All samples, in a stable order."""

    @abstractmethod
    def data_hash(self) -> str:
        """A content hash of the data the samples come from."""

    @classmethod
    def recorded_report(cls) -> ReportSpec:
        """The `report` a run records: with the class's conditions and baselines' purposes,
        which readers of the store then take from it instead of importing the class."""
        return cls.report.model_copy(
            update={
                "conditions": list(cls.conditions),
                "baseline_purposes": dict(cls.baseline_purposes),
            }
        )

    def data_files(self) -> dict[str, str]:
        """The files the samples were read from, name -> content hash, recorded with a run
        so a reader sees which data it used (empty: the benchmark does not say)."""
        return {}

    def notices(self) -> list[str]:
        """What a user should know before a run starts, one line each (`run` prints them
        before the first episode): where texts the models are shown came from, and that
        they are not the reference's when they are not. None by default."""
        return []

    @abstractmethod
    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup[_W]:
        """A fresh world, tools, opening messages and user for one episode."""

    def score(self, sample: Sample, transcript: EpisodeTranscript[_W]) -> Score:
        """Judge one finished episode by what the agent did: the benchmark's `scorer`."""
        return self.scorer.score(sample, transcript)

    def scorer_spec(self) -> ScorerSpec | None:
        """What a run records of the benchmark's scorer; None for a benchmark that scores
        by overriding `score` and holds no scorer (nothing to rebuild: its class scores)."""
        scorer: Scorer[_W] | None = getattr(self, "scorer", None)
        return None if scorer is None else scorer_spec(scorer)

    @property
    def user_prompt_version(self) -> str | None:
        """The version of a model-played user's prompt, recorded with a run that has one
        (None: the benchmark has no simulated user)."""
        return None

    def user_model_spec(self) -> str | None:
        """The agent spec of a model that should play the user, if an option asks for one."""
        return None

    def user_instruction(self, sample_id: str) -> str | None:
        """What a model-played user of this sample is told (its system prompt), for a judge
        of how faithfully it played it (None: the benchmark has no simulated user)."""
        return None

    def use_user_model(self, agent: Agent) -> None:
        """Receive that model, resolved by the caller (benchmarks do not import agents)."""
        raise BenchmarkError(f"benchmark {self.name!r} has no model-played user")

    def judge_model_spec(self) -> str | None:
        """The agent spec of a model that should judge episodes, if an option asks for one
        (τ²'s NL assertions); it is given through `use_judge_model`."""
        return None

    def use_judge_model(self, agent: Agent) -> None:
        """Receive the judging model, resolved by the caller (benchmarks do not import agents)."""
        raise BenchmarkError(f"benchmark {self.name!r} has no model-played judge")

    def validate(self) -> Sequence[Check]:
        """Check every sample's data (for `deedbench validate`); none by default."""
        raise BenchmarkError(f"benchmark {self.name!r} has no validation beyond loading")

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        """Model-free agents for this benchmark, by name (used as ``baseline/NAME``)."""
        return {}
