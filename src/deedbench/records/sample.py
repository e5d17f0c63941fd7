"""Samples and the key that names one episode of a run."""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

__all__ = ["EpisodeKey", "Sample", "episode_seed"]


class Sample(BaseModel):
    """One unit of a benchmark: what the user asks and the facts a report groups by.

    `metadata` is copied into every episode record, so reports need nothing but
    the store; `chance` is what a uniformly random agent would score, when that
    is defined.
    """

    id: str
    input: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    chance: float | None = None


class EpisodeKey(NamedTuple):
    """What identifies one episode inside a run."""

    sample_id: str
    condition: str
    epoch: int


def episode_seed(run_seed: int, key: EpisodeKey) -> int:
    """A 63-bit seed for one episode, fixed by the run seed and the episode's key."""
    text = f"{run_seed}|{key.sample_id}|{key.condition}|{key.epoch}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1
