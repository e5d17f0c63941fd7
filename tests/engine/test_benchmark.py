"""The base `Benchmark` validates the options a benchmark declares, once, for every benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deedbench.engine import Benchmark, EpisodeTranscript, Option
from deedbench.errors import BenchmarkError
from deedbench.records import Sample, Score, Termination


def _half(text: str) -> float:
    if text not in ("0.5", "1"):
        raise ValueError("it must be 0.5 or 1")
    return float(text)


class _Declared(Benchmark):
    """A benchmark with one option of each kind; it has no samples."""

    name = "declared"
    description = "options only"
    conditions = ("default",)
    option_specs = (
        Option("label", "any text", default="x"),
        Option("count", "a number", type=int, default=3),
        Option("strict", "a switch", type=bool, default=False),
        Option("folder", "a path", type=Path),
        Option("mode", "one of two", default="fast", choices=("fast", "slow")),
        Option("share", "a custom one", parse=_half, default=1.0),
    )

    def samples(self) -> list[Any]:
        return []

    def data_hash(self) -> str:
        return ""

    def setup(self, *args: Any) -> Any:
        raise NotImplementedError


def test_defaults_fill_what_was_not_given_and_the_given_strings_are_kept() -> None:
    bench = _Declared({"count": "7", "strict": "yes", "folder": "a/b", "share": "0.5"})
    assert bench.values == {
        "label": "x",
        "count": 7,
        "strict": True,
        "folder": Path("a/b"),
        "mode": "fast",
        "share": 0.5,
    }
    assert bench.options == {"count": "7", "strict": "yes", "folder": "a/b", "share": "0.5"}


def test_an_unknown_option_is_named_with_the_valid_ones() -> None:
    with pytest.raises(BenchmarkError) as caught:
        _Declared({"colour": "red", "label": "y"})
    message = str(caught.value)
    assert message.startswith("unknown declared option(s) ['colour']. Valid options: label: any")
    assert "share: a custom one" in message


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("count", "many", "declared option count must be an integer (ASCII digits); got 'many'"),
        ("count", "١", "declared option count must be an integer (ASCII digits); got '١'"),
        ("count", "1_000", "declared option count must be an integer (ASCII digits); got '1_000'"),
        ("strict", "maybe", "declared option strict must be true or false; got 'maybe'"),
        ("mode", "medium", "declared option mode must be one of fast, slow; got 'medium'"),
        ("share", "2", "declared option share: it must be 0.5 or 1; got '2'"),
    ],
)
def test_a_bad_value_names_the_option_the_value_and_what_is_allowed(
    name: str, text: str, expected: str
) -> None:
    with pytest.raises(BenchmarkError) as caught:
        _Declared({name: text})
    assert str(caught.value) == expected


def test_list_shows_a_type_name_for_each_option() -> None:
    assert [o.type_name for o in _Declared.option_specs] == [
        "str", "int", "bool", "path", "choice", "str",
    ]  # fmt: skip


class _Constant:
    """A scorer that gives every episode one outcome."""

    def __init__(self, outcome: str) -> None:
        self.outcome = outcome

    def score(self, sample: Sample, transcript: EpisodeTranscript) -> Score:
        return Score(outcome=f"{self.outcome}:{sample.id}", values={})


def test_score_is_the_scorer_the_benchmark_holds_so_another_is_a_value() -> None:
    bench = _Declared()
    bench.scorer = _Constant("first")
    transcript = EpisodeTranscript([], Termination.AGENT_FINISHED, 0)
    assert bench.score(Sample(id="s", input="hi"), transcript).outcome == "first:s"
    bench.scorer = _Constant("second")  # same samples, another verdict
    assert bench.score(Sample(id="s", input="hi"), transcript).outcome == "second:s"
