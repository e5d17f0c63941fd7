"""wordbench: does the agent say the secret word through the answer tool?

The benchmark of docs/adding-a-benchmark.md. Run it from this folder (the folder
deedbench runs in is importable):

    deedbench run python/wordbench:WordBench --agent baseline/knower -T count=3
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from deedbench.engine import (
    Agent,
    AgentContext,
    Benchmark,
    EpisodeSetup,
    EpisodeTranscript,
    Option,
    ToolBox,
    tool,
)
from deedbench.records import Message, MetricSpec, ReportSpec, Sample, Score, ToolCall

WORDS = ("apple", "birch", "cedar")


class Answers:
    """An episode's world: what the agent answered."""

    def __init__(self) -> None:
        self.given: list[str] = []


@tool
def answer(world: Answers, word: str) -> str:
    """Give your answer.

    Args:
        word: The secret word.
    """
    world.given.append(word)
    return "noted"


class WordScorer:
    def score(self, sample: Sample, transcript: EpisodeTranscript) -> Score:
        given = transcript.state.given
        right = bool(given) and given[-1] == sample.metadata["word"]
        return Score(outcome="right" if right else "wrong", values={"right": float(right)})


class Knower:
    """A baseline that reads the word off the sample id."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        if messages[-1].role == "tool":
            return Message(role="assistant", content="done")
        word = context.sample_id.partition("-")[2]
        call = ToolCall(id="1", name="answer", arguments=f'{{"word": "{word}"}}')
        return Message(role="assistant", tool_calls=[call])


class WordBench(Benchmark):
    name = "wordbench"  # must be the entry point's name
    description = "say the secret word"
    conditions = ("plain", "hinted")
    baseline_names = ("knower",)
    # the choices are what the base checks: count=5 is refused, not run as 3 words
    option_specs = (Option("count", "how many words", type=int, default=2, choices=(1, 2, 3)),)
    report = ReportSpec(
        metrics=[MetricSpec(name="right", value="right")], primary="right", group_by=["word"]
    )

    def __init__(self, options: dict[str, str] | None = None) -> None:
        super().__init__(options)  # validates -T count=...
        self.words = WORDS[: self.values["count"]]
        self.scorer = WordScorer()

    def samples(self) -> list[Sample]:
        return [
            Sample(id=f"word-{w}", input="The secret word?", metadata={"word": w})
            for w in self.words
        ]

    def data_hash(self) -> str:
        return "wordbench:" + ",".join(self.words)

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup:
        hint = f" It starts with {sample.metadata['word'][0]}." if condition == "hinted" else ""
        return EpisodeSetup(
            messages=[
                Message(role="system", content="Use the answer tool." + hint),
                Message(role="user", content=sample.input),
            ],
            toolbox=ToolBox([answer], Answers()),
        )

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        return {"knower": Knower}
