"""An episode's kind: everything a report reads of an episode but its epoch and the token
usage of its model calls.

A million episodes of a run have a few hundred kinds (a TAC run: each sample's condition
times the options an agent bought), so the store keeps each kind once per run with the
number of episodes of that kind, and one small row per episode naming its epoch and its
kind (`engine.store`, format 3). A report reads those instead of a million records:
counts per kind for rates, clusters and tests, epochs in the order written for what pairs
episodes (flips between variants, contrasts between conditions and runs).

The kind is JSON: the sample, condition, status, how it ended, its error, how many of its
calls timed out, its score (outcome, values, choice, the rules its evidence cites, whose
failure it was and the kinds of faults found), the sample's metadata and chance level.
`episode_kind` makes it from a record here; the store makes the same from a stored
summary with SQLite's JSON functions (`engine.store_schema.KIND_JSON`), for stores written
before kinds were kept; tests/records check that both read alike.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_jsonable_python

from deedbench.records.run import EpisodeRecord
from deedbench.secrets import redact

__all__ = ["episode_kind", "kind_value"]


def kind_value(record: EpisodeRecord) -> dict[str, Any]:
    """The kind of an episode as a mapping (what `episode_kind` writes as JSON)."""
    score = record.score
    scored: dict[str, Any] | None = None
    if score is not None:
        found = score.attribution
        scored = {
            "outcome": score.outcome,
            "values": score.values,
            "choice": score.choice,
            "rules": [e.rule for e in score.evidence if e.rule],
            "party": None if found is None else found.party,
            "faults": [] if found is None else list(dict.fromkeys(f.kind for f in found.faults)),
        }
    return {
        "sample_id": record.sample_id,
        "condition": record.condition,
        "status": record.status,
        "termination": record.termination,
        "error": record.error,
        "timeouts": sum(u.timeouts for u in record.usage.values()),
        "score": scored,
        "metadata": record.metadata,
        "chance": record.chance,
    }


def episode_kind(record: EpisodeRecord) -> str:
    """The kind of an episode as JSON text, registered secrets redacted (as in the stored
    record): equal records give equal texts."""
    text = json.dumps(
        kind_value(record),
        separators=(",", ":"),
        ensure_ascii=False,
        default=to_jsonable_python,  # metadata as the record's JSON has it
    )
    return redact(text)
