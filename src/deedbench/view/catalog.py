"""What the viewer knows of a store's runs, kept up to date as runs are written.

A run's light records (`StoreReader.light_records`: no transcripts) are read once and
then only the rows written since (by rowid), so watching a live run costs one small
query per poll; of each, the viewer keeps its browser row and its `EpisodeFigures` (what
pairings and links read), not the record, and counts it in the run's `RunTally`. Its
summary is that tally's, the same figures as `deedbench report --json` (read from the
store anew once an episode was stored again); it is computed again when the run changed,
but no more often than every `RECOMPUTE_FACTOR` times its own cost, so a big live run
cannot keep a core busy (its page says of how many episodes its figures are).

Summaries the runs list needs are computed by one background thread, so listing a
store never waits for a big run; a run's own page waits for its summary.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from sys import intern
from typing import Any

from deedbench.engine import EpisodeKey, EpisodeRecord, RunConfig, register_secret
from deedbench.reports.contrast import Contrast, contrast
from deedbench.reports.cost import PriceTable
from deedbench.reports.html import ERROR, SCORED, episode_data, episode_filters
from deedbench.reports.summary import EpisodeFigures, RunSummary, RunTally, cluster_of
from deedbench.scoring import ReportSpec
from deedbench.view.source import Activity, StoreReader

__all__ = [
    "Catalog",
    "EpisodeFilter",
    "Pairing",
    "Summarized",
    "UnknownEpisode",
    "UnknownRun",
    "ref",
]

RECOMPUTE_FACTOR = 4.0  # a summary that took s seconds is recomputed at most every 4 s


class UnknownRun(LookupError):
    """No such run in the store (or one whose configuration no longer parses)."""


class UnknownEpisode(LookupError):
    """No such episode stored in the run."""


@dataclass(frozen=True)
class Summarized:
    """A run's summary and the number of stored episodes it was computed from."""

    summary: RunSummary
    episodes: int
    seconds: float  # how long computing it took
    figures: list[EpisodeFigures] = field(default_factory=list)  # its scored episodes'


@dataclass(frozen=True)
class EpisodeFilter:
    """The transcript browser's filter, as the report's links write it (`data-filter`)."""

    condition: str | None = None
    groups: Mapping[str, str] = field(default_factory=dict)
    outcome: str | None = None  # an outcome, SCORED or ERROR
    counted: str | None = None  # a metric: the episodes its rate counts
    sample: str = ""  # part of the sample id
    text: str = ""  # words in the transcript


@dataclass(frozen=True)
class Pairing:
    """Two sides (run, condition) paired on shared (sample, epoch) keys."""

    contrast: Contrast | None  # None when the runs do not share their data
    rows: list[dict[str, Any]]  # per shared key in run order: both sides and b − a
    only_a: int
    only_b: int
    note: str | None = None  # why nothing was paired


@dataclass
class _Run:
    """One run as the viewer holds it."""

    config: RunConfig
    lock: threading.Lock = field(default_factory=threading.Lock)  # figures and rows
    summarizing: threading.Lock = field(default_factory=threading.Lock)  # one at a time
    figures: dict[EpisodeKey, EpisodeFigures] = field(default_factory=dict)  # rowid order
    rows: dict[EpisodeKey, dict[str, Any]] = field(default_factory=dict)  # for the list
    tally: RunTally = field(init=False)  # every record read, counted as it is read
    # an episode was stored again: its first counts cannot be taken back from the tally,
    # so summaries read the store anew
    recount: bool = False
    shared: dict[Any, Any] = field(default_factory=dict)  # what equal rows share (`_row`)
    last_rowid: int = 0
    summarized: Summarized | None = None
    summarized_version: str = ""
    computed_at: float = 0.0
    pending: bool = False  # a background summary is on its way

    def __post_init__(self) -> None:
        self.tally = RunTally(self.config)


class Catalog:
    """The runs of one store, their summaries, browser rows and pairings."""

    def __init__(self, reader: StoreReader, prices: PriceTable) -> None:
        self.reader = reader
        self.prices = prices
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()
        self._background = ThreadPoolExecutor(1, thread_name_prefix="deedbench-view-summary")

    def close(self) -> None:
        self._background.shutdown(wait=False, cancel_futures=True)

    # --- runs ------------------------------------------------------------------------------

    def run(self, run_id: str) -> RunConfig:
        return self._run(run_id).config

    def activity(self) -> dict[str, Activity]:
        return self.reader.activity()

    def overview(self) -> Iterator[tuple[RunConfig, Activity, Summarized | None]]:
        """Every run newest first with its activity and the freshest summary at hand;
        stale or missing summaries are brought up to date in the background."""
        activity = self.reader.activity()
        for run_id in self.reader.run_ids():
            try:
                run = self._run(run_id)
            except UnknownRun:
                continue  # its configuration no longer parses (reported once)
            act = activity.get(run_id)
            if act is None:
                continue
            if act.version != run.summarized_version and self._due(run):
                self._schedule(run_id, run)
            yield run.config, act, run.summarized

    def summary(self, run_id: str) -> tuple[Summarized, Activity]:
        """The run's summary, computed now if it is missing or stale and due, from the
        run's tally (or the store, once an episode was stored again) without holding the
        run's lock, so its episodes list never waits."""
        run = self._run(run_id)
        with run.summarizing:
            with run.lock:
                act = self._refresh(run)
                stale = run.summarized is None or (
                    act.version != run.summarized_version and self._due(run)
                )
                tally = run.tally.snapshot() if stale and not run.recount else None
            if stale:
                started = time.monotonic()
                audits = self.reader.audits(run_id) if act.audits else []
                if tally is None:
                    records = (record for _, record in self.reader.light_records(run_id))
                    tally = RunTally.of(run.config, records)
                summary = tally.summary(self.prices, audits=audits)
                finished = time.monotonic()
                seconds = finished - started
                run.summarized = Summarized(summary, tally.added, seconds, tally.episodes)
                run.summarized_version = act.version
                run.computed_at = finished
            assert run.summarized is not None
            return run.summarized, act

    # --- episodes --------------------------------------------------------------------------

    def episodes(
        self, run_id: str, where: EpisodeFilter, *, newest_first: bool
    ) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The browser rows the filter selects, in the report's order (condition, sample,
        epoch) or newest first, and the count of each outcome among them."""
        run = self._run(run_id)
        with run.lock:
            self._refresh(run)
            keys = list(run.rows)
        found = self.reader.containing(run_id, where.text) if where.text else None
        chosen = [
            run.rows[k]
            for k in keys
            if _matches(run.rows[k], where) and (found is None or k in found)
        ]
        if newest_first:
            chosen.sort(key=lambda row: -row["rowid"])
        else:
            samples = {s: i for i, s in enumerate(run.config.sample_ids)}
            conditions = {c: i for i, c in enumerate(run.config.conditions)}
            chosen.sort(
                key=lambda row: (
                    conditions.get(row["condition"], len(conditions)),
                    samples.get(row["sample"], len(samples)),
                    row["sample"],
                    row["epoch"],
                )
            )
        counts: dict[str, int] = {}
        for row in chosen:
            counts[row["shown"]] = counts.get(row["shown"], 0) + 1
        return chosen, dict(sorted(counts.items()))

    def facets(self, run_id: str) -> dict[str, Any]:
        """The values each filter can take in this run: conditions, groups, outcomes."""
        run = self._run(run_id)
        with run.lock:
            rows = list(run.rows.values())
        groups: dict[str, set[str]] = {key: set() for key in run.config.report.group_by}
        for row in rows:
            for key, value in row["groups"].items():
                groups.setdefault(key, set()).add(value)
        return {
            "conditions": sorted({row["condition"] for row in rows}),
            "groups": {key: sorted(values) for key, values in groups.items()},
            "outcomes": sorted({row["outcome"] for row in rows if row["outcome"] is not None}),
        }

    def episode(self, run_id: str, key: EpisodeKey) -> tuple[dict[str, Any], list[dict[str, str]]]:
        """One episode as the browser reads it, and the episodes it can be put beside."""
        run = self._run(run_id)
        record = self.reader.episode(run_id, key)
        if record is None:
            raise UnknownEpisode(key)
        return episode_data(record, run.config.report), self._related(run, record)

    def _related(self, run: _Run, record: EpisodeRecord) -> list[dict[str, str]]:
        """Episodes worth reading beside this one: the same sample in another condition,
        the base variant of its cluster, the same episode in other runs of the same data."""
        config, key = run.config, record.key
        related = []
        with run.lock:
            self._refresh(run)
            for condition in config.conditions:
                other = EpisodeKey(key.sample_id, condition, key.epoch)
                if condition != key.condition and other in run.rows:
                    related.append(
                        {"label": f"{condition} (same sample)", "ref": ref(config.run_id, other)}
                    )
            spec = config.report
            variant = record.metadata.get(spec.flip_by or "")
            if spec.flip_by and variant is not None and variant != spec.flip_base:
                cluster = cluster_of(spec)(record)
                for other, f in run.figures.items():
                    if (
                        other.condition == key.condition
                        and other.epoch == key.epoch
                        and f.variant == spec.flip_base
                        and f.cluster == cluster
                    ):
                        label = f"the {spec.flip_base} {spec.flip_by} ({other.sample_id})"
                        related.append({"label": label, "ref": ref(config.run_id, other)})
        peers = [
            run_id
            for run_id in self.reader.run_ids()
            if run_id != config.run_id and self._same_data(run_id, config)
        ]
        for run_id in self.reader.stored_in(peers, key) if peers else []:
            agent = self._run(run_id).config.agent
            related.append({"label": f"{agent} (run {run_id})", "ref": ref(run_id, key)})
        return related

    def _same_data(self, run_id: str, config: RunConfig) -> bool:
        try:
            other = self._run(run_id).config
        except UnknownRun:
            return False
        return (other.benchmark, other.data_hash) == (config.benchmark, config.data_hash)

    # --- side by side ----------------------------------------------------------------------

    def pairing(self, a: tuple[str, str], b: tuple[str, str]) -> Pairing:
        """Side b against side a, each a (run, condition), on shared (sample, epoch) keys:
        the report's paired contrast of the primary metric and one row per pair."""
        run_a, run_b = self._run(a[0]), self._run(b[0])
        for (run_id, condition), run in ((a, run_a), (b, run_b)):
            if condition not in run.config.conditions:
                raise UnknownEpisode(f"run {run_id!r} has no condition {condition!r}")
        first, second = run_a.config, run_b.config
        if (first.benchmark, first.data_hash) != (second.benchmark, second.data_hash):
            note = (
                f"{b[0]} ran {second.benchmark} with data {second.data_hash[:19]}, {a[0]} "
                f"{first.benchmark} with data {first.data_hash[:19]}: no shared samples"
            )
            return Pairing(None, [], 0, 0, note)
        side_a, side_b = self._side(run_a, a[1]), self._side(run_b, b[1])
        spec = first.report
        primary = spec.metric(spec.primary)
        labels = (f"{a[0]}/{a[1]}", f"{b[0]}/{b[1]}")
        result = contrast(
            primary.name,
            primary.value,
            (labels[0], side_a.values()),
            (labels[1], side_b.values()),
        )
        samples = {s: i for i, s in enumerate(first.sample_ids)}
        shared = sorted(
            set(side_a) & set(side_b), key=lambda k: (samples.get(k[0], len(samples)), k)
        )
        rows = []
        for sample, epoch in shared:
            ra, rb = side_a[(sample, epoch)], side_b[(sample, epoch)]
            va, vb = _value(ra, primary.value), _value(rb, primary.value)
            rows.append(
                {
                    "sample": sample,
                    "epoch": epoch,
                    "a": _side_row(a[0], ra, va),
                    "b": _side_row(b[0], rb, vb),
                    "difference": vb - va,
                }
            )
        return Pairing(result, rows, len(set(side_a) - set(side_b)), len(set(side_b) - set(side_a)))

    def _side(self, run: _Run, condition: str) -> dict[tuple[str, int], EpisodeFigures]:
        with run.lock:
            self._refresh(run)
            return {
                (k.sample_id, k.epoch): f
                for k, f in run.figures.items()
                if k.condition == condition and f.score is not None
            }

    # --- plumbing --------------------------------------------------------------------------

    def _run(self, run_id: str) -> _Run:
        with self._lock:
            run = self._runs.get(run_id)
        if run is not None:
            return run
        config = self.reader.config(run_id)
        if config is None:
            raise UnknownRun(run_id)
        for variable in config.key_variables:  # what the run read is redacted everywhere
            register_secret(os.environ.get(variable))
        with self._lock:
            return self._runs.setdefault(run_id, _Run(config))

    def _refresh(self, run: _Run) -> Activity:
        """Read the records written since the last look and tally them (the caller holds
        the run's lock)."""
        act = self.reader.activity().get(run.config.run_id) or Activity({}, 0, 0, None)
        if act.last_rowid == run.last_rowid:
            return act
        spec = run.config.report
        for rowid, record in self.reader.light_records(run.config.run_id, run.last_rowid):
            key = record.key
            figures = run.tally.figures(record)
            if run.figures.pop(key, None) is not None:  # stored again: moves to the end
                run.recount = True
            elif not run.recount:
                run.tally.add(record, figures)
            run.figures[key] = figures
            run.rows[key] = _row(run.config.run_id, rowid, record, spec, run.shared)
            run.last_rowid = max(run.last_rowid, rowid)
        return act

    def _due(self, run: _Run) -> bool:
        seconds = run.summarized.seconds if run.summarized else 0.0
        return time.monotonic() - run.computed_at >= RECOMPUTE_FACTOR * seconds

    def _schedule(self, run_id: str, run: _Run) -> None:
        with self._lock:
            if run.pending:
                return
            run.pending = True

        def work() -> None:
            try:
                self.summary(run_id)
            finally:
                run.pending = False

        self._background.submit(work)


def ref(run_id: str, key: EpisodeKey) -> str:
    """An episode's reference in URLs: run/condition/epoch/sample (the sample last, since
    sample ids may hold a slash; run ids and conditions hold none)."""
    return f"{run_id}/{key.condition}/{key.epoch}/{key.sample_id}"


def _row(
    run_id: str, rowid: int, record: EpisodeRecord, spec: ReportSpec, shared: dict[Any, Any]
) -> dict[str, Any]:
    """The browser's row of an episode, with the groups and rates it counts in computed
    by the report's own code (`episode_filters`), so a filter selects what a rate counts.
    Its texts, groups and counted metrics are the objects of the run's rows with equal
    ones (`shared`): epochs of a sample repeat them, and a big run has many."""
    data = episode_filters(record, spec.group_by, spec.metrics)
    shown = "error" if record.status == "error" else (data["outcome"] or "?")
    groups, counted = data["groups"], data["counted"]
    return {
        "ref": ref(run_id, record.key),
        "rowid": rowid,
        "sample": intern(record.sample_id),
        "condition": intern(record.condition),
        "epoch": record.epoch,
        "status": intern(record.status),
        "outcome": None if data["outcome"] is None else intern(data["outcome"]),
        "shown": intern(shown),
        "choice": None if data["choice"] is None else intern(data["choice"]),
        "groups": shared.setdefault(("groups", *groups.items()), groups),
        "counted": shared.setdefault(("counted", *counted), counted),
    }


def _matches(row: dict[str, Any], where: EpisodeFilter) -> bool:
    if where.condition and row["condition"] != where.condition:
        return False
    if any(row["groups"].get(k) != v for k, v in where.groups.items()):
        return False
    outcome = where.outcome
    if outcome == SCORED and row["status"] != "scored":
        return False
    if outcome == ERROR and row["status"] != "error":
        return False
    if outcome and outcome not in (SCORED, ERROR) and row["outcome"] != outcome:
        return False
    if where.counted and where.counted not in row["counted"]:
        return False
    return not where.sample or where.sample.lower() in row["sample"].lower()


def _value(episode: EpisodeFigures, value: str) -> float:
    assert episode.score is not None
    return episode.score.values.get(value, 0.0)


def _side_row(run_id: str, episode: EpisodeFigures, value: float) -> dict[str, Any]:
    assert episode.score is not None
    key = EpisodeKey(episode.sample_id, episode.condition, episode.epoch)
    return {
        "ref": ref(run_id, key),
        "outcome": episode.score.outcome,
        "choice": episode.score.choice,
        "value": value,
    }
