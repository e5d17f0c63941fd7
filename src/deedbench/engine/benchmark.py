"""The interface every benchmark implements; the engine runs whatever fits it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from deedbench.engine.agent import Agent
from deedbench.engine.episode import EpisodeSetup, EpisodeTranscript
from deedbench.errors import BenchmarkError
from deedbench.records import ReportSpec, Sample, Score

__all__ = ["Benchmark", "Check"]


class Check(Protocol):
    """One sample's validation verdict: `problems` empty means it passed."""

    task: str
    problems: list[str]

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]: ...


class Benchmark(ABC):
    """A set of samples, how to set up an episode for each, and how to score it.

    Subclasses take their options (strings from the command line) in `__init__`
    and raise `BenchmarkError` for bad ones.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    conditions: ClassVar[tuple[str, ...]]
    default_epochs: ClassVar[int] = 1
    generation_defaults: ClassVar[dict[str, Any]] = {}
    data_option: ClassVar[str | None] = None  # the option that `--data PATH` sets
    baseline_names: ClassVar[tuple[str, ...]] = ()  # what `baselines()` offers, for listing
    report: ClassVar[ReportSpec]

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options = dict(options or {})

    @abstractmethod
    def samples(self) -> list[Sample]:
        """All samples, in a stable order."""

    @abstractmethod
    def data_hash(self) -> str:
        """A content hash of the data the samples come from."""

    @abstractmethod
    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup:
        """A fresh world, tools, opening messages and user for one episode."""

    @abstractmethod
    def score(self, sample: Sample, transcript: EpisodeTranscript) -> Score:
        """Judge one finished episode by what the agent did."""

    def user_model_spec(self) -> str | None:
        """The agent spec of a model that should play the user, if an option asks for one."""
        return None

    def use_user_model(self, agent: Agent) -> None:
        """Receive that model, resolved by the caller (benchmarks do not import agents)."""
        raise BenchmarkError(f"benchmark {self.name!r} has no model-played user")

    def validate(self) -> Sequence[Check]:
        """Check every sample's data (for `deedbench validate`); none by default."""
        raise BenchmarkError(f"benchmark {self.name!r} has no validation beyond loading")

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        """Model-free agents for this benchmark, by name (used as ``baseline/NAME``)."""
        return {}
