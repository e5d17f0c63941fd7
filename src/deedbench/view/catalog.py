"""What the viewer knows of a store's runs, kept up to date as runs are written.

Nothing here grows with a run's episodes. The browser's list is the store's SQL over its
stored summaries (`StoreReader`, the engine's `ReadOnlyStore`): a filter becomes a
`Selection`, and a page of the report's order (condition, sample in the run's order, epoch)
is found from the count of each (condition, sample) bucket, kept while the run is
unchanged, then read bucket by bucket.
Of a run the catalog keeps its configuration, what its filters can take (its samples,
conditions, outcomes and each distinct metadata's groups, read on by rowid, so a poll
of a live run reads only the new rows) and its latest summary.

A summary is the same figures as `deedbench report --json`, computed by a `Summarizer`
(a big run's in a child process) and kept in a `SummaryCache` on disk once the run is
not being executed, so a finished run's figures show at once on the next start. A run
that changed is summarized again, but no more often than every `RECOMPUTE_FACTOR` times
its own cost, so a big live run cannot keep a core busy (its page says of how many
episodes its figures are). Summaries the runs list needs are computed in the
background, so listing a store never waits for a big run; a run's own page waits.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from deedbench.engine.read_only_store import ListedEpisode, Selection
from deedbench.records import EpisodeKey, EpisodeRecord, RunConfig
from deedbench.reports.contrast import Contrast, contrast
from deedbench.reports.cost import PriceTable
from deedbench.reports.format import data_label
from deedbench.reports.html import ERROR, SCORED, episode_data
from deedbench.reports.summary import EpisodeFigures, RunTally, cluster_of, group_order
from deedbench.secrets import register_secret
from deedbench.view.source import Activity, StoreReader
from deedbench.view.summaries import Summarized, Summarizer, SummaryCache

__all__ = [
    "RECOMPUTE_FACTOR",
    "Catalog",
    "EpisodeFilter",
    "Listing",
    "Pairing",
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
class EpisodeFilter:
    """The transcript browser's filter, as the report's links write it (`data-filter`)."""

    condition: str | None = None
    groups: Mapping[str, str] = field(default_factory=dict)
    outcome: str | None = None  # an outcome, SCORED or ERROR
    counted: str | None = None  # a metric: the episodes its rate counts
    sample: str = ""  # part of the sample id
    text: str = ""  # words in the transcript
    fault: str | None = None  # party:PARTY or fault:KIND (the attribution's)


@dataclass(frozen=True)
class Listing:
    """A page of the episodes a filter selects, how many it selects, and how many of
    them show each outcome ("error", an outcome, or "?")."""

    rows: list[dict[str, Any]]
    total: int
    counts: dict[str, int]


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
    """One run as the viewer holds it: nothing per episode."""

    config: RunConfig
    # re-entrant: a summary that finished before its callback was added settles at once
    lock: threading.RLock = field(default_factory=threading.RLock)
    # What its filters can take, read up to rowid `seen`: each distinct metadata (as
    # the store renders its JSON) with its value of each `group_by` key.
    seen: int = 0
    samples: set[str] = field(default_factory=set)
    conditions: set[str] = field(default_factory=set)
    outcomes: set[str] = field(default_factory=set)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # each sample's value of each `group_by` key (a store that keeps runs' kinds is
    # filtered by group through its samples)
    sample_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ranks: dict[str, int] | None = None  # each sample's place in the run's order
    # the last list's buckets ((condition, sample), count) in order and outcome counts,
    # with the run's contents and the selection they count
    tallied: tuple[str, Selection, list[tuple[tuple[str, str], int]], dict[str, int]] | None = None
    summarized: Summarized | None = None
    summarized_contents: str = ""
    computed_at: float = 0.0
    pending: _Pending | None = None  # a summary on its way


@dataclass(frozen=True)
class _Pending:
    """A summary being computed, of the run's `contents`; `key` is its place in the
    cache (None: not kept)."""

    future: Future[Summarized]
    contents: str
    key: str | None


class Catalog:
    """The runs of one store, their summaries, browser rows and pairings."""

    def __init__(
        self, reader: StoreReader, prices: PriceTable, cache: SummaryCache | None = None
    ) -> None:
        self.reader = reader
        self.prices = prices
        self._cache = cache or SummaryCache(None, reader.report_corrupt)
        self._summarizer = Summarizer(reader, prices)
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self._summarizer.close()

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
            with run.lock:
                self._bring_up(run, act)
                summarized = run.summarized
            yield run.config, act, summarized

    def summary(self, run_id: str) -> tuple[Summarized, Activity]:
        """The run's summary, computed now if it is missing or stale and due (waiting for
        one already on its way)."""
        run = self._run(run_id)
        while True:
            act = self.reader.activity().get(run_id) or Activity({}, 0, 0, None)
            with run.lock:
                pending = self._bring_up(run, act)
                if pending is None:
                    assert run.summarized is not None
                    return run.summarized, act
            pending.future.result()  # raises what stopped it (a store that cannot be read)
            self._settle(run, pending)

    def _bring_up(self, run: _Run, act: Activity) -> _Pending | None:
        """Start what brings the run's summary up to date (the caller holds its lock):
        the summary on its way, if one is, or None when the one at hand will do."""
        if run.pending is not None:
            return run.pending
        fresh = run.summarized is not None and run.summarized_contents == act.contents
        if fresh or (run.summarized is not None and not self._due(run)):
            return None
        key = SummaryCache.key(run.config, act.contents, self.prices)
        kept = self._cache.get(self.reader.path, run.config.run_id, key)
        if kept is not None:
            run.summarized, run.summarized_contents = kept, act.contents
            run.computed_at = time.monotonic()
            return None
        future = self._summarizer.submit(run.config, act.stored, act.audits > 0)
        # a run being executed changes before anyone reads its summary again: not kept
        pending = _Pending(future, act.contents, None if act.executor else key)
        run.pending = pending
        future.add_done_callback(lambda _: self._settle(run, pending))
        return pending

    def _settle(self, run: _Run, pending: _Pending) -> None:
        """Take a finished summary as the run's (once: the first of its waiter and its
        callback to come), and keep it on disk."""
        with run.lock:
            if run.pending is not pending:
                return
            run.pending = None
            future = pending.future
            if future.cancelled() or future.exception() is not None:
                return  # whoever waits for it is told why; the next look tries again
            run.summarized, run.summarized_contents = future.result(), pending.contents
            run.computed_at = time.monotonic()
        if pending.key is not None:
            self._cache.put(self.reader.path, run.config.run_id, pending.key, future.result())

    # --- episodes --------------------------------------------------------------------------

    def episodes(
        self, run_id: str, where: EpisodeFilter, *, newest_first: bool, offset: int, limit: int
    ) -> Listing:
        """A page of the browser rows the filter selects, in the report's order
        (condition, sample, epoch) or newest first, the number selected and the count of
        each outcome among them."""
        run = self._run(run_id)
        chosen = self._choose(run, where)
        if chosen is None:
            return Listing([], 0, {})
        buckets, counts = self._tally(run, chosen)
        total = sum(counts.values())
        if newest_first:
            found = self.reader.newest(run_id, chosen, offset, limit)
        else:
            slices, start = [], 0
            for (condition, sample_id), n in buckets:
                if start + n > offset and start < offset + limit:
                    skip = max(0, offset - start)
                    slices.append(
                        (condition, sample_id, skip, min(n, offset + limit - start) - skip)
                    )
                start += n
            found = self.reader.sliced(run_id, chosen, slices)[:limit]
        return Listing([_row(run_id, e) for e in found], total, counts)

    def facets(self, run_id: str) -> dict[str, Any]:
        """The values each filter can take in this run: conditions, groups, outcomes."""
        run = self._run(run_id)
        with run.lock:
            self._learn(run)
            group_by = run.config.report.group_by
            return {
                "conditions": sorted(run.conditions),
                "groups": {
                    key: sorted({values[i] for values in run.groups.values()}, key=group_order)
                    for i, key in enumerate(group_by)
                },
                "outcomes": sorted(run.outcomes),
            }

    def episode(self, run_id: str, key: EpisodeKey) -> tuple[dict[str, Any], list[dict[str, str]]]:
        """One episode as the browser reads it, and the episodes it can be put beside."""
        run = self._run(run_id)
        record = self.reader.episode(run_id, key)
        if record is None:
            raise UnknownEpisode(key)
        return episode_data(record, run.config.report), self._related(run, record)

    def _choose(self, run: _Run, where: EpisodeFilter) -> Selection | None:
        """The filter as SQL tests it; None when it selects nothing (an unknown metric)."""
        spec = run.config.report
        given = None
        if where.counted:
            metric = next((m for m in spec.metrics if m.name == where.counted), None)
            if metric is None:
                return None
            given = metric.given
        status = outcome = None
        if where.outcome == SCORED:
            status = "scored"
        elif where.outcome == ERROR:
            status = "error"
        elif where.outcome:
            outcome = where.outcome

        def chosen(values: tuple[str, ...]) -> bool:
            named = dict(zip(spec.group_by, values, strict=True))
            return all(named.get(k) == v for k, v in where.groups.items())

        with run.lock:
            self._learn(run)
            metadata: frozenset[str] | None = None
            samples: frozenset[str] | None = None
            if where.groups and self.reader.counted:
                samples = frozenset(s for s, values in run.sample_groups.items() if chosen(values))
            elif where.groups:
                metadata = frozenset(text for text, values in run.groups.items() if chosen(values))
            if where.sample:
                needle = where.sample.lower()
                found = frozenset(s for s in run.samples if needle in s.lower())
                samples = found if samples is None else samples & found
        return Selection(
            condition=where.condition or None,
            samples=samples,
            metadata=metadata,
            status=status,
            outcome=outcome,
            counted=bool(where.counted),
            given=given,
            text=where.text,
            fault=where.fault,
        )

    def _learn(self, run: _Run) -> None:
        """Read what the run's episodes written since the last look are (the caller holds
        its lock): their samples, conditions, outcomes and groups."""
        group_by = run.config.report.group_by
        for sample_id, condition, metadata, outcome, rowid in self.reader.kinds(
            run.config.run_id, run.seen
        ):
            run.samples.add(sample_id)
            run.conditions.add(condition)
            if outcome is not None:
                run.outcomes.add(outcome)
            if metadata not in run.groups:
                values = json.loads(metadata) if metadata else {}
                run.groups[metadata] = tuple(str(values.get(key, "?")) for key in group_by)
            run.sample_groups[sample_id] = run.groups[metadata]
            run.seen = max(run.seen, rowid)

    def _tally(
        self, run: _Run, chosen: Selection
    ) -> tuple[list[tuple[tuple[str, str], int]], dict[str, int]]:
        """The selected episodes' (condition, sample) buckets in the report's order with
        their sizes, and their outcome counts: kept while the run and selection stay."""
        contents = (
            self.reader.activity().get(run.config.run_id) or Activity({}, 0, 0, None)
        ).contents
        with run.lock:
            if run.tallied is not None and run.tallied[:2] == (contents, chosen):
                return run.tallied[2], run.tallied[3]
        sizes: dict[tuple[str, str], int] = {}
        counts: dict[str, int] = {}
        for condition, sample_id, shown, n in self.reader.tally(run.config.run_id, chosen):
            sizes[(condition, sample_id)] = sizes.get((condition, sample_id), 0) + n
            counts[shown] = counts.get(shown, 0) + n
        config = run.config
        with run.lock:
            if run.ranks is None:
                run.ranks = {s: i for i, s in enumerate(config.sample_ids)}
            ranks = run.ranks
        conditions = {c: i for i, c in enumerate(config.conditions)}
        buckets = sorted(
            sizes.items(),
            key=lambda item: (
                conditions.get(item[0][0], len(conditions)),
                ranks.get(item[0][1], len(ranks)),
                item[0][1],
            ),
        )
        counts = dict(sorted(counts.items()))
        with run.lock:
            run.tallied = (contents, chosen, buckets, counts)
        return buckets, counts

    def _related(self, run: _Run, record: EpisodeRecord) -> list[dict[str, str]]:
        """Episodes worth reading beside this one: the same sample in another condition,
        the base variant of its cluster, the same episode in other runs of the same data."""
        config, key = run.config, record.key
        related = []
        stored = set(self.reader.conditions_of(config.run_id, key.sample_id, key.epoch))
        for condition in config.conditions:
            if condition != key.condition and condition in stored:
                other = EpisodeKey(key.sample_id, condition, key.epoch)
                related.append(
                    {"label": f"{condition} (same sample)", "ref": ref(config.run_id, other)}
                )
        spec = config.report
        variant = record.metadata.get(spec.flip_by or "")
        if spec.flip_by and variant is not None and variant != spec.flip_base:
            cluster = cluster_of(spec)(record)
            figures = RunTally(config).figures
            for _, light in self.reader.light_records(
                config.run_id, condition=key.condition, epoch=key.epoch
            ):
                f = figures(light)
                if f.variant == spec.flip_base and f.cluster == cluster:
                    label = f"the {spec.flip_base} {spec.flip_by} ({light.sample_id})"
                    related.append({"label": label, "ref": ref(config.run_id, light.key)})
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
                f"{b[0]} ran {second.benchmark} with data {data_label(second.data_hash)}, "
                f"{a[0]} {first.benchmark} with data {data_label(first.data_hash)}: no shared "
                "samples"
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
        """The scored episodes of one condition, read for this pairing."""
        figures = RunTally(run.config).figures
        side = {}
        for _, record in self.reader.light_records(run.config.run_id, condition=condition):
            f = figures(record)
            if f.score is not None:
                side[(f.sample_id, f.epoch)] = f
        return side

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

    def _due(self, run: _Run) -> bool:
        seconds = run.summarized.seconds if run.summarized else 0.0
        return time.monotonic() - run.computed_at >= RECOMPUTE_FACTOR * seconds


def ref(run_id: str, key: EpisodeKey) -> str:
    """An episode's reference in URLs: run/condition/epoch/sample (the sample last, since
    sample ids may hold a slash; run ids and conditions hold none)."""
    return f"{run_id}/{key.condition}/{key.epoch}/{key.sample_id}"


def _row(run_id: str, episode: ListedEpisode) -> dict[str, Any]:
    """The browser's row of an episode."""
    key = EpisodeKey(episode.sample_id, episode.condition, episode.epoch)
    return {
        "ref": ref(run_id, key),
        "sample": episode.sample_id,
        "condition": episode.condition,
        "epoch": episode.epoch,
        "status": episode.status,
        "shown": episode.shown,
        "choice": episode.choice,
    }


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
