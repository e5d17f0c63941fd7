"""The records a run leaves behind: its configuration and one record per episode."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from deedbench.engine.messages import Message, Usage
from deedbench.engine.sample import EpisodeKey
from deedbench.engine.secrets import has_secrets, redact
from deedbench.scoring import ReportSpec, Score

__all__ = ["EpisodeRecord", "RunConfig"]


class RunConfig(BaseModel):
    """Everything needed to repeat a run and to read its records."""

    run_id: str
    benchmark: str
    benchmark_options: dict[str, str] = Field(default_factory=dict)
    data_hash: str
    agent: str
    agent_params: dict[str, Any] = Field(default_factory=dict)
    user: dict[str, Any] = Field(
        default_factory=dict
    )  # a model-played user: spec, settings, prompt
    conditions: list[str]
    epochs: int
    seed: int
    sample_ids: list[str]
    report: ReportSpec
    deedbench_version: str
    python_version: str
    created_at: str

    def episode_keys(self) -> list[EpisodeKey]:
        """Every episode the run is made of, in a stable order."""
        return [
            EpisodeKey(sample_id, condition, epoch)
            for epoch in range(1, self.epochs + 1)
            for condition in self.conditions
            for sample_id in self.sample_ids
        ]


class EpisodeRecord(BaseModel):
    """One episode as stored: transcript, verdict, and how it ended.

    `status` is "scored" for an episode the agent finished (whatever the verdict)
    and "error" for one that infrastructure broke; errors count in no rate.
    `usage` sums model calls by the role that made them ("assistant" for the
    agent, "user" for a simulated user), so each is costed apart.
    """

    sample_id: str
    condition: str
    epoch: int
    seed: int
    status: Literal["scored", "error"]
    termination: str
    steps: int
    messages: list[Message]
    score: Score | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    chance: float | None = None
    error: str | None = None
    usage: dict[str, Usage] = Field(default_factory=dict)
    started_at: float
    duration_s: float

    @property
    def key(self) -> EpisodeKey:
        return EpisodeKey(self.sample_id, self.condition, self.epoch)

    def model_dump_json(self, **kwargs: Any) -> str:
        """The record as JSON with registered secrets redacted: the last guard before
        the store (model agents already remove keys from what providers answer)."""
        return redact(super().model_dump_json(**kwargs))

    def redacted(self) -> EpisodeRecord:
        """This record without registered secrets, for exports; itself when it has none."""
        if not has_secrets():
            return self
        text = super().model_dump_json()
        clean = redact(text)
        return self if clean == text else EpisodeRecord.model_validate_json(clean)
