"""What a τ² run's models were shown, as the run recorded it, for its leaderboard export.

A τ² run records where the texts its models were shown came from (its ``data_files``'
``"tau2 texts"`` entry: τ²'s source with its path and version, or deedbench's own
wording, and a digest of every text). A submission of runs whose models were shown
deedbench's own wording is refused (`check_texts`) unless the user asks for it, and
then the methodology's notes say so (`texts_note`); otherwise they say where τ²'s
texts were read from.
"""

from __future__ import annotations

from collections.abc import Sequence

from deedbench.benchmarks.tau2.source import OWN_WORDING, TEXTS_KEY, recorded_origin
from deedbench.errors import UsageError
from deedbench.records import RunConfig

__all__ = ["check_texts", "shown_texts", "texts_note"]


def shown_texts(config: RunConfig) -> str | None:
    """Where a run's model-facing texts came from, as it recorded it (with their digest);
    None: deedbench's own wording (or a run recorded before deedbench said, whose tool
    descriptions were deedbench's own)."""
    origin = recorded_origin(config.data_files)
    if origin is None or origin == OWN_WORDING:
        return None
    return config.data_files[TEXTS_KEY]


def check_texts(configs: Sequence[RunConfig], own_wording: bool) -> None:
    """A `UsageError` naming the runs whose models were shown deedbench's own wording,
    unless `own_wording` (``--own-wording``) accepts them."""
    own = [c.run_id for c in configs if shown_texts(c) is None]
    if own and not own_wording:
        raise UsageError(
            f"the models of run(s) {', '.join(own)} were shown deedbench's own wording of "
            "τ²'s tool descriptions and prompts (no τ² source was found), not τ²'s, so the "
            "figures are not comparable with the leaderboard's; run again with -T "
            "source=PATH (a tau2-bench checkout), or give --own-wording to export them with "
            "the difference written into the methodology's notes"
        )


def texts_note(configs: Sequence[RunConfig]) -> str:
    """What the methodology's notes say of the texts the models were shown (a sentence
    with a leading space)."""
    own = [c.run_id for c in configs if shown_texts(c) is None]
    if own:
        return (
            f" The models of run(s) {', '.join(own)} were shown deedbench's own wording of "
            "τ²'s tool descriptions, agent instruction, greeting and judge prompt (no τ² "
            "source was found), not τ²'s: these figures are not comparable with the "
            "leaderboard's."
        )
    sources = sorted({entry for c in configs if (entry := shown_texts(c)) is not None})
    return (
        " The tool descriptions and schemas, the agent instruction, the greeting and the "
        f"judge prompt were τ²'s own, read from {'; '.join(sources)}."
    )
