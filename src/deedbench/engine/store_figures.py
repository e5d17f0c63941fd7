"""What reports read of a run in a format-3 store, and how the writer keeps it: each kind
of episode once with its count, one (epoch, kind) per episode in the order written, and
the token usage of the run's calls summed (`engine.store_schema` describes the tables).

Reading them costs what the run's kinds cost (hundreds of rows), plus two small integers
per episode for what pairs episodes: a million episodes' epochs and kinds come from SQLite
as a few long texts of numbers (`group_concat` over ranges of rowids), which numpy parses
in C, instead of a million rows built in Python. Listing a store's runs reads the kinds
and the calls alone: nothing per episode.

Both stores use these functions on their connection: the writer (`RunStore`) and the
read-only reader (`ReadOnlyStore`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from deedbench.engine.store_schema import CALL_FIELDS
from deedbench.records import EpisodeRecord, Usage
from deedbench.records.kinds import episode_kind

if TYPE_CHECKING:  # numpy is imported where figures are read
    import numpy as np

__all__ = [
    "KindIds",
    "call_usage",
    "calls",
    "counts",
    "facts",
    "kinds",
    "scored_totals",
    "write_figures",
]

_FACTS_CHUNK = 1 << 16  # rowids read per step: a few hundred KB of text at a time
_COLUMNS = ", ".join(CALL_FIELDS)


def kinds(db: sqlite3.Connection, run_id: str) -> list[tuple[int, int, str]]:
    """The run's kinds of stored episodes: (kind, how many episodes, its JSON), by kind."""
    return db.execute(
        "SELECT kind, episodes, kind_json FROM episode_kinds WHERE run_id = ? AND episodes > 0 "
        "ORDER BY kind",
        (run_id,),
    ).fetchall()


def facts(db: sqlite3.Connection, run_id: str) -> tuple[np.ndarray, np.ndarray]:
    """The epoch and the kind of each of the run's stored episodes, in the order written
    (int32 arrays): a range of rowids at a time, each range's numbers as three texts,
    parsed and let go before the next."""
    import numpy as np

    low, high = db.execute(
        "SELECT MIN(rowid), MAX(rowid) FROM episode_summaries WHERE run_id = ?", (run_id,)
    ).fetchone()
    (total,) = db.execute(  # how many facts to expect: the run's kinds count them
        "SELECT coalesce(SUM(episodes), 0) FROM episode_kinds WHERE run_id = ?", (run_id,)
    ).fetchone()
    epochs_all = np.empty(total, dtype=np.int32)
    kinds_all = np.empty(total, dtype=np.int32)
    filled = 0
    epochs: list[np.ndarray] = []
    kinds: list[np.ndarray] = []
    last = -1
    ordered = True
    if low is not None:
        for start in range(low, high + 1, _FACTS_CHUNK):
            rowids, epoch, kind = db.execute(
                "SELECT group_concat(rowid), group_concat(epoch), group_concat(kind) "
                "FROM episode_facts WHERE rowid BETWEEN ? AND ? AND run_id = ?",
                (start, min(start + _FACTS_CHUNK - 1, high), run_id),
            ).fetchone()
            if rowids is None:
                continue
            found = _numbers(rowids)
            ordered = ordered and bool(found[0] > last and np.all(found[1:] > found[:-1]))
            last = int(found[-1])
            if not ordered:  # SQLite gave them out of order (it never has): sort them
                return _sorted_facts(db, run_id)
            epoch_numbers, kind_numbers = _numbers(epoch), _numbers(kind)
            end = filled + len(epoch_numbers)
            if end <= total and not epochs:  # into the arrays made for them: no copy
                epochs_all[filled:end] = epoch_numbers
                kinds_all[filled:end] = kind_numbers
                filled = end
            else:
                epochs.append(epoch_numbers.astype(np.int32))
                kinds.append(kind_numbers.astype(np.int32))
    if filled == total and not epochs:
        return epochs_all, kinds_all
    return (  # not as many facts as the kinds count (never seen): what there is
        np.concatenate([epochs_all[:filled], *epochs]),
        np.concatenate([kinds_all[:filled], *kinds]),
    )


def _sorted_facts(db: sqlite3.Connection, run_id: str) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    rows = db.execute(
        "SELECT epoch, kind FROM episode_facts WHERE rowid IN "
        "(SELECT rowid FROM episode_summaries WHERE run_id = ?) ORDER BY rowid",
        (run_id,),
    )
    found = np.array(rows.fetchall(), dtype=np.int32).reshape(-1, 2)
    return found[:, 0].copy(), found[:, 1].copy()


def _numbers(text: str) -> np.ndarray:
    """Whole numbers written with commas between them, parsed in C."""
    import numpy as np

    return np.fromstring(text, dtype=np.int64, sep=",")


def calls(db: sqlite3.Connection, run_id: str) -> list[tuple[str, bool, Usage]]:
    """The run's model calls: per role and billed (not answered by deedbench's response
    cache) or not, their token usage summed; in the order each role first called."""
    rows = db.execute(
        f"SELECT role, billed, {_COLUMNS} FROM run_calls AS c JOIN (SELECT role, "
        "MIN(first) AS since FROM run_calls WHERE run_id = :run GROUP BY role) USING (role) "
        "WHERE c.run_id = :run ORDER BY since, role, billed DESC",
        {"run": run_id},
    )
    return [
        (role, bool(billed), Usage(**dict(zip(CALL_FIELDS, found, strict=True))))
        for role, billed, *found in rows
    ]


def call_usage(db: sqlite3.Connection) -> dict[str, list[tuple[str, bool, Usage]]]:
    """`calls` of every run."""
    found: dict[str, list[tuple[str, bool, Usage]]] = {}
    for (run_id,) in db.execute("SELECT DISTINCT run_id FROM run_calls").fetchall():
        found[run_id] = calls(db, run_id)
    return found


def counts(db: sqlite3.Connection, run_id: str | None = None) -> dict[str, dict[str, int]]:
    """Every run's (or one run's) stored episodes by status, from its kinds."""
    found: dict[str, dict[str, int]] = {}
    for run, status, n in db.execute(
        "SELECT run_id, kind_json ->> '$.status', SUM(episodes) FROM episode_kinds "
        "WHERE episodes > 0 AND (:run IS NULL OR run_id = :run) GROUP BY 1, 2",
        {"run": run_id},
    ):
        found.setdefault(run, {})[status] = n
    return found


def scored_totals(
    db: sqlite3.Connection, run_id: str, value: str, given: str | None
) -> dict[str, tuple[int, float]]:
    """Per condition, the run's scored episodes (those whose score value `given` is 1, if
    one is named) and the sum of their score value `value`: from its kinds."""
    path = f'$.score.values."{value}"'
    only = None if given is None else f'$.score.values."{given}"'
    rows = db.execute(
        "SELECT kind_json ->> '$.condition', SUM(episodes), "
        "TOTAL(episodes * coalesce(json_extract(kind_json, ?), 0)) FROM episode_kinds "
        "WHERE run_id = ? AND episodes > 0 AND kind_json ->> '$.status' = 'scored' "
        "AND json_type(kind_json, '$.score') = 'object' "
        "AND (? IS NULL OR json_extract(kind_json, ?) = 1) GROUP BY 1",
        (path, run_id, only, only),
    )
    return {condition: (n, total) for condition, n, total in rows}


class KindIds:
    """The writer's kind numbers, per run: read from the store the first time a run is
    written, then kept (one writer per run); a kind new to the run is numbered after the
    run's last one."""

    def __init__(self) -> None:
        self._ids: dict[str, dict[str, int]] = {}

    def forget(self, run_id: str) -> None:
        self._ids.pop(run_id, None)

    def of(self, db: sqlite3.Connection, run_id: str, kind: str) -> int:
        known = self._ids.get(run_id)
        if known is None:
            rows = db.execute(
                "SELECT kind_json, kind FROM episode_kinds WHERE run_id = ?", (run_id,)
            )
            known = self._ids[run_id] = dict(rows.fetchall())
        found = known.get(kind)
        if found is None:
            db.execute(
                "INSERT INTO episode_kinds (run_id, kind, episodes, kind_json) "
                "SELECT ?, coalesce(MAX(kind) + 1, 0), 0, ? FROM episode_kinds WHERE run_id = ? "
                "ON CONFLICT (run_id, kind_json) DO NOTHING",
                (run_id, kind, run_id),
            )
            (found,) = db.execute(
                "SELECT kind FROM episode_kinds WHERE run_id = ? AND kind_json = ?",
                (run_id, kind),
            ).fetchone()
            known[kind] = found
        return found


def write_figures(
    db: sqlite3.Connection, ids: KindIds, written: Iterable[tuple[str, EpisodeRecord]]
) -> None:
    """Within the transaction that wrote these records' summaries: each one's kind counted
    and its fact, and its calls' usage added (the summaries they replaced were taken away
    by the store's trigger)."""
    facts_rows = []
    added: Counter[tuple[str, int]] = Counter()
    usage: dict[tuple[str, str, bool], list[int]] = defaultdict(
        lambda: [0] * (len(CALL_FIELDS) + 1)
    )
    for run_id, record in written:
        kind = ids.of(db, run_id, episode_kind(record))
        added[run_id, kind] += 1
        facts_rows.append((kind, run_id, record.sample_id, record.condition, record.epoch))
        calls: list[tuple[str, Usage | None]] = [(m.role, m.usage) for m in record.messages]
        calls.append(("judge", record.usage.get("judge")))  # asked outside the conversation
        for role, call in calls:
            if call is not None:
                total = usage[run_id, role, not call.cache_hits]
                total[0] += 1
                for i, name in enumerate(CALL_FIELDS, 1):
                    total[i] += getattr(call, name)
    db.executemany(
        "INSERT INTO episode_facts (rowid, run_id, epoch, kind) SELECT rowid, run_id, epoch, ? "
        "FROM episode_summaries WHERE run_id = ? AND sample_id = ? AND condition = ? "
        "AND epoch = ?",
        facts_rows,
    )
    db.executemany(
        "UPDATE episode_kinds SET episodes = episodes + ? WHERE run_id = ? AND kind = ?",
        [(n, run_id, kind) for (run_id, kind), n in added.items()],
    )
    updates = ", ".join(f"{name} = {name} + excluded.{name}" for name in CALL_FIELDS)
    marks = ", ".join("?" * len(CALL_FIELDS))
    db.executemany(
        f"INSERT INTO run_calls (run_id, role, billed, first, messages, {_COLUMNS}) "
        f"SELECT ?, ?, ?, coalesce(MAX(first), 0) + 1, ?, {marks} FROM run_calls "
        "WHERE true ON CONFLICT (run_id, role, billed) DO UPDATE SET "
        f"messages = messages + excluded.messages, {updates}",
        [(run_id, role, billed, *total) for (run_id, role, billed), total in usage.items()],
    )
