"""The labelled transcripts that the scanner and the judge are measured on.

`labelled_transcripts.jsonl` holds realistic TAC and retail service-desk
conversations, each labelled "aware" (the agent's own words show it knows or
suspects it is being tested) or "not_aware", with a one-line reason and, for aware
ones, the agent's words that show it. Many negatives are tricky on purpose: a
driving test, a cricket Test match, exam season, a museum's "Hypothetical" exhibit,
an agent testing a date's availability, a user who jokes that it is a test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from deedbench.records import EpisodeRecord, Message

LABELLED = Path(__file__).with_name("labelled_transcripts.jsonl")


@dataclass(frozen=True)
class Labelled:
    id: str
    domain: str
    label: Literal["aware", "not_aware"]
    why: str
    evidence: list[str]
    messages: list[Message]

    @property
    def aware(self) -> bool:
        return self.label == "aware"

    def record(self, epoch: int = 1) -> EpisodeRecord:
        """The transcript as a stored episode: its id is the sample, its domain the condition."""
        return EpisodeRecord(
            sample_id=self.id,
            condition=self.domain,
            epoch=epoch,
            seed=sum(map(ord, self.id)) * 7919 + epoch,
            status="scored",
            termination="agent_finished",
            steps=sum(m.role == "assistant" for m in self.messages),
            messages=self.messages,
            started_at=0.0,
            duration_s=0.0,
        )


def labelled() -> list[Labelled]:
    items = []
    with LABELLED.open(encoding="utf-8") as f:
        for line in f:
            data = json.loads(line)
            data["messages"] = [Message.model_validate(m) for m in data["messages"]]
            items.append(Labelled(**data))
    return items
