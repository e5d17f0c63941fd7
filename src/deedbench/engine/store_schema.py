"""The run store's schema and format: its tables, the SQL that derives what reports read
from each stored record, and the migration of older stores.

Format 2 keeps each record's summary beside it (`episode_summaries`): the record with every
message cut to the role and token usage of its model call, made by SQLite from the stored
JSON in the record's own transaction. Format 3 adds what a report reads of a million
episodes without reading a million summaries (`engine.store_figures` reads them):

- `episode_kinds`: each distinct kind of a run's episodes once (`records.kinds`: the
  sample, condition, status, ending, error and score, all but the epoch and the calls'
  usage), with the number of stored episodes of that kind;
- `episode_facts`: one small row per stored episode, its rowid its summary's: its epoch
  and its kind, in the order written, for what pairs episodes;
- `run_calls`: per run, role and billed or not, the token usage of its model calls summed,
  and when that role first appeared (a report's costs keep that order).

The writer keeps them as it writes each record (`RunStore.flush`, which makes the kind in
Python from the record at hand). Triggers keep them right whatever else changes the
summaries: a summary deleted or replaced (a run's error written again on resume) takes its
kind's count, its fact and its calls' usage with it (a run deleted deletes its summaries
first: `engine.whole_runs`), and a summary rewritten in place gets
its kind made anew by SQLite (`KIND_JSON`, the same kind as `records.kinds` makes, from the
summary's JSON; one that is no longer a record's gets a kind marked corrupt, which readers
skip and name). An older store gets them when it is opened, chunk by chunk in one
transaction, with progress for a big one.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import quote

from deedbench.errors import StoreFormatError
from deedbench.records import FORMAT, Usage
from deedbench.version import __version__

__all__ = [
    "CALL_FIELDS",
    "INDEXES",
    "KIND_JSON",
    "SUMMARIZE",
    "SUMMARY_JSON",
    "TABLES",
    "TRIGGERS",
    "figures_of_run",
    "format_of",
    "migrate",
    "needs_migration",
    "refuse_newer",
    "refuse_unmigratable",
    "with_judge",
]

CALL_FIELDS = tuple(Usage.model_fields)  # the token counts `run_calls` sums, one column each

TABLES = f"""
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT,
    record_json TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, condition, epoch)
);
CREATE TABLE IF NOT EXISTS episode_summaries (
    run_id TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    status TEXT NOT NULL,
    summary_json TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, condition, epoch)
);
CREATE TABLE IF NOT EXISTS episode_kinds (
    run_id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    episodes INTEGER NOT NULL,
    kind_json TEXT NOT NULL,
    PRIMARY KEY (run_id, kind)
);
CREATE UNIQUE INDEX IF NOT EXISTS kinds_by_json ON episode_kinds (run_id, kind_json);
CREATE TABLE IF NOT EXISTS episode_facts (
    run_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    kind INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_calls (
    run_id TEXT NOT NULL,
    role TEXT NOT NULL,
    billed INTEGER NOT NULL,
    first INTEGER NOT NULL,
    messages INTEGER NOT NULL,
    {", ".join(f"{name} INTEGER NOT NULL" for name in CALL_FIELDS)},
    PRIMARY KEY (run_id, role, billed)
);
CREATE TABLE IF NOT EXISTS audits (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    judge TEXT NOT NULL,
    record_json TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, condition, epoch, judge)
);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    protocol TEXT NOT NULL,
    model TEXT NOT NULL,
    response_json TEXT NOT NULL,
    sample_id TEXT,
    epoch INTEGER,
    seed INTEGER
);
CREATE TABLE IF NOT EXISTS studies (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    study_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_locks (
    run_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    heartbeat_at REAL NOT NULL
);
"""
# Answers cached before they carried their episode have NULL there (see `migrate`).
_EPISODE_COLUMNS = {"sample_id": "TEXT", "epoch": "INTEGER", "seed": "INTEGER"}
INDEXES = """
CREATE INDEX IF NOT EXISTS episodes_by_epoch ON episodes (run_id, epoch, condition);
CREATE INDEX IF NOT EXISTS responses_by_seed ON responses (seed);
CREATE INDEX IF NOT EXISTS summaries_by_run ON episode_summaries (run_id);
"""
# An episode's summary made from its stored record by SQLite (JSON in C, no Python parse):
# the record with each message cut to its role and token usage, and messages without usage
# left out (the rest is small: score, metadata, usage, timing, error).
SUMMARY_JSON = """json_set(record_json, '$.messages', (
    SELECT json_group_array(
        json_object('role', m.value ->> '$.role', 'usage', m.value -> '$.usage')
    ) FROM json_each(record_json, '$.messages') AS m WHERE m.value ->> '$.usage' IS NOT NULL
))"""
SUMMARIZE = (
    "INSERT OR REPLACE INTO episode_summaries "
    "(run_id, sample_id, condition, epoch, status, summary_json) "
    f"SELECT run_id, sample_id, condition, epoch, status, {SUMMARY_JSON} FROM episodes "
)


def _kind(s: str, sample: str, condition: str, epoch: str, status: str) -> str:
    """`records.kinds.episode_kind` in SQL, of the summary JSON `s` (numbers taken with ->,
    which keeps their text, as ->> would not); a summary that is no record's any more
    gets a kind marked corrupt, naming its epoch."""
    faults = f"json_each({s}, '$.score.attribution.faults')"
    return f"""CASE WHEN json_valid({s}) AND json_type({s}, '$.termination') = 'text'
    AND json_type({s}, '$.metadata') = 'object'
    AND coalesce(json_type({s}, '$.score'), 'null') IN ('object', 'null')
    AND (json_type({s}, '$.score') IS NOT 'object' OR (
        json_type({s}, '$.score.values') = 'object'
        AND json_type({s}, '$.score.outcome') = 'text'))
THEN json_object(
    'sample_id', {sample}, 'condition', {condition}, 'status', {status},
    'termination', {s} -> '$.termination', 'error', {s} -> '$.error',
    'timeouts', CASE WHEN {s} ->> '$.usage' IN ('{{}}', NULL) THEN 0 ELSE (
        SELECT coalesce(SUM(value ->> '$.timeouts'), 0) FROM json_each({s}, '$.usage')) END,
    'score', CASE WHEN json_type({s}, '$.score') = 'object' THEN json_object(
        'outcome', {s} -> '$.score.outcome', 'values', {s} -> '$.score.values',
        'choice', {s} -> '$.score.choice',
        'rules', (SELECT json_group_array(value ->> '$.rule')
            FROM json_each({s}, '$.score.evidence') WHERE value ->> '$.rule' <> ''),
        'party', {s} -> '$.score.attribution.party',
        'faults', CASE WHEN json_type({s}, '$.score.attribution.faults') = 'array'
            THEN (SELECT json_group_array(DISTINCT value ->> '$.kind') FROM {faults})
            ELSE json_array() END) END,
    'metadata', {s} -> '$.metadata', 'chance', {s} -> '$.chance')
ELSE json_object('sample_id', {sample}, 'condition', {condition}, 'status', {status},
    'corrupt', {epoch}) END"""


KIND_JSON = _kind("summary_json", "sample_id", "condition", "epoch", "status")


def with_judge(s: str) -> str:
    """Summary `s` with its judge's calls (the record's ``usage["judge"]``: τ²'s NL judge,
    asked outside the conversation) as one more message of role "judge", so that what
    sums a summary's messages counts them too; nothing is added where there were none."""
    return (
        f"json_insert({s}, '$.messages[#]', "
        f"json_object('role', 'judge', 'usage', {s} -> '$.usage.judge'))"
    )


def _calls(s: str, run: str, sign: str, first: str) -> str:
    """Add (`sign` +) or take away (-) the token usage of the model calls of summary `s`
    (one that is no record's any more adds nothing)."""
    sums = ", ".join(
        f"{sign}SUM(coalesce(m.value ->> '$.usage.{name}', 0))" for name in CALL_FIELDS
    )
    updates = ", ".join(f"{name} = {name} + excluded.{name}" for name in CALL_FIELDS)
    columns = ", ".join(CALL_FIELDS)
    return f"""INSERT INTO run_calls (run_id, role, billed, first, messages, {columns})
    SELECT {run}, m.value ->> '$.role', coalesce(m.value ->> '$.usage.cache_hits', 0) = 0,
        {first}, {sign}COUNT(*), {sums}
    FROM json_each(CASE WHEN json_valid({s}) THEN {with_judge(s)} ELSE '{{}}' END, '$.messages')
        AS m
    WHERE m.value ->> '$.usage' IS NOT NULL GROUP BY 2, 3
    ON CONFLICT (run_id, role, billed) DO UPDATE SET
        first = min(first, excluded.first), messages = messages + excluded.messages, {updates}"""


_REMOVE = f"""
    UPDATE episode_kinds SET episodes = episodes - 1 WHERE run_id = OLD.run_id
        AND kind = (SELECT kind FROM episode_facts WHERE rowid = OLD.rowid);
    DELETE FROM episode_facts WHERE rowid = OLD.rowid;
    {_calls("OLD.summary_json", "OLD.run_id", "-", str(2**63 - 1))};
    DELETE FROM run_calls WHERE run_id = OLD.run_id AND messages <= 0;"""
_NEXT_FIRST = "(SELECT coalesce(MAX(first), 0) + 1 FROM run_calls)"
_NEW_KIND = _kind("NEW.summary_json", "NEW.sample_id", "NEW.condition", "NEW.epoch", "NEW.status")
TRIGGERS = (  # each one statement: `migrate` runs them inside its transaction
    f"""CREATE TRIGGER IF NOT EXISTS summary_removed AFTER DELETE ON episode_summaries
BEGIN{_REMOVE}
END""",
    f"""CREATE TRIGGER IF NOT EXISTS summary_changed
AFTER UPDATE OF summary_json ON episode_summaries BEGIN{_REMOVE}
    INSERT INTO episode_kinds (run_id, kind, episodes, kind_json)
        SELECT NEW.run_id, coalesce(MAX(kind) + 1, 0), 1, {_NEW_KIND}
        FROM episode_kinds WHERE run_id = NEW.run_id
        ON CONFLICT (run_id, kind_json) DO UPDATE SET episodes = episodes + 1;
    INSERT INTO episode_facts (rowid, run_id, epoch, kind) VALUES (NEW.rowid, NEW.run_id,
        NEW.epoch, (SELECT kind FROM episode_kinds WHERE run_id = NEW.run_id
            AND kind_json = {_NEW_KIND}));
    {_calls("NEW.summary_json", "NEW.run_id", "", _NEXT_FIRST)};
END""",
)
_MIGRATE_CHUNK = 20_000  # records summarized, or summaries given their kinds, per step
_ON_THREADS_FROM = 100_000  # summaries from which their kinds are made on two threads


def format_of(db: sqlite3.Connection) -> int:
    (version,) = db.execute("PRAGMA user_version").fetchone()
    return int(version)


def refuse_newer(db: sqlite3.Connection, path: Path) -> None:
    """StoreFormatError when a newer deedbench wrote the store in a newer format."""
    found = format_of(db)
    if found <= FORMAT:
        return
    writer = "a newer version"
    with suppress(sqlite3.Error):  # a store without the table still gets its message
        row = db.execute("SELECT value FROM meta WHERE key = 'deedbench_version'").fetchone()
        if row is not None:
            writer = str(row[0])
    raise StoreFormatError(
        f"{path}: this store was written by deedbench {writer} (format {found}); "
        f"this is {__version__} (format {FORMAT}): upgrade deedbench"
    )


def refuse_unmigratable(db: sqlite3.Connection, path: Path) -> None:
    """StoreFormatError, saying how, when an older store must be migrated (which writes
    to it) and the file or its folder is read-only."""
    if format_of(db) >= FORMAT or not _has(db, "runs"):
        return
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        return
    raise StoreFormatError(
        f"{path} is in format {format_of(db) or 1} of an earlier deedbench; this "
        f"{__version__} reads format {FORMAT} and migrates the store once, which writes "
        "to it, but the file or its folder is read-only. Make both writable (or copy "
        f"the file somewhere writable) and run any command on it once, e.g. "
        f"deedbench runs --store {path}"
    )


def migrate(db: sqlite3.Connection, path: Path, on_progress: Callable[[str], None]) -> None:
    """Bring an older store to this format, in the transaction the caller holds: cached
    answers get their episode columns (NULL for old rows), every stored record its summary
    (format 2) and every summary its kind, fact and calls (format 3), with progress for
    big stores; then the triggers, and the store records its format and who wrote it."""
    have = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
    for name, kind in _EPISODE_COLUMNS.items():
        if name not in have:
            db.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
    found = format_of(db)
    if found < FORMAT:
        for trigger in ("summary_removed", "summary_changed", "record_removed"):
            db.execute(f"DROP TRIGGER IF EXISTS {trigger}")  # none yet; made below
        if found < 2:
            _summarize_all(db, path, on_progress)
        _kinds_of_all(db, path, on_progress, committed=found >= 2)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('deedbench_version', ?)", (__version__,))
        db.execute(f"PRAGMA user_version = {FORMAT}")
    for trigger in TRIGGERS:  # one by one: executescript would commit the transaction
        db.execute(trigger)


def needs_migration(db: sqlite3.Connection) -> bool:
    have = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
    return format_of(db) != FORMAT or any(name not in have for name in _EPISODE_COLUMNS)


def _has(db: sqlite3.Connection, table: str) -> bool:
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


def _steps(
    db: sqlite3.Connection, table: str, what: str, path: Path, on_progress: Callable[[str], None]
) -> tuple[int, list[tuple[int, int]]]:
    """How many rows `table` has and the rowid ranges to go through step by step, saying
    `what` is done once when there are many."""
    total, last = db.execute(f"SELECT COUNT(*), MAX(rowid) FROM {table}").fetchone()
    if not total:
        return 0, []
    if total > _MIGRATE_CHUNK:
        on_progress(f"{path}: migrating the store to format {FORMAT}: {what.format(total)}")
    return total, [(low, low + _MIGRATE_CHUNK) for low in range(0, last, _MIGRATE_CHUNK)]


def _summarize_all(db: sqlite3.Connection, path: Path, on_progress: Callable[[str], None]) -> None:
    """Summaries for every stored record, in the order the records were written."""
    what = "summarizing {:,} stored episodes once (reports read the summaries)"
    total, steps = _steps(db, "episodes", what, path, on_progress)
    done = 0
    for low, high in steps:
        done += db.execute(
            SUMMARIZE + "WHERE rowid > ? AND rowid <= ? ORDER BY rowid", (low, high)
        ).rowcount
        if total > _MIGRATE_CHUNK:
            on_progress(f"  {min(done, total):,} of {total:,}")


def _kinds_of_all(
    db: sqlite3.Connection, path: Path, on_progress: Callable[[str], None], *, committed: bool
) -> None:
    """Kinds, facts and calls for every stored summary, in the order they were written,
    new kinds numbered per run in the order they first appear. Summaries committed before
    (a store of format 2) are read by two threads (`_kinds_on_threads`); else each chunk's
    kinds are made once into a scratch table."""
    db.execute("DELETE FROM episode_kinds")
    db.execute("DELETE FROM episode_facts")
    db.execute("DELETE FROM run_calls")
    what = "sorting {:,} stored episodes by kind once (reports count the kinds)"
    total, steps = _steps(db, "episode_summaries", what, path, on_progress)
    if committed and total >= _ON_THREADS_FROM:
        _kinds_on_threads(db, path, steps, total, on_progress)
        return
    done = 0
    for low, high in steps:
        done += _figures_of("s.rowid > ? AND s.rowid <= ?", (low, high), db)
        if total > _MIGRATE_CHUNK:
            on_progress(f"  {min(done, total):,} of {total:,}")


def figures_of_run(db: sqlite3.Connection, run_id: str) -> None:
    """Kinds, facts and calls of a run whose summaries were written by SQL (an import, in
    its transaction: `engine.whole_runs`), as the migration makes them for a chunk."""
    _figures_of("s.run_id = ?", (run_id,), db)


def _figures_of(where: str, params: tuple[Any, ...], db: sqlite3.Connection) -> int:
    """Kinds, facts and calls of the summaries `where` selects (of `s`), new kinds numbered
    per run after its last, in the order they first appear; how many facts were written."""
    db.execute(
        f"CREATE TEMP TABLE kinds_chunk AS SELECT s.rowid AS r, s.run_id, s.epoch, "
        f"{KIND_JSON} AS j FROM episode_summaries AS s WHERE {where}",
        params,
    )
    try:
        db.execute(
            "INSERT INTO episode_kinds (run_id, kind, episodes, kind_json) "
            "SELECT c.run_id, coalesce(b.next, 0) + ROW_NUMBER() OVER "
            "(PARTITION BY c.run_id ORDER BY c.first) - 1, c.n, c.j "
            "FROM (SELECT run_id, j, MIN(r) AS first, COUNT(*) AS n FROM temp.kinds_chunk "
            "GROUP BY run_id, j) AS c LEFT JOIN (SELECT run_id, MAX(kind) + 1 AS next "
            "FROM episode_kinds GROUP BY run_id) AS b USING (run_id) WHERE true "
            "ON CONFLICT (run_id, kind_json) DO UPDATE SET episodes = episodes + excluded.episodes"
        )
        facts = db.execute(
            "INSERT INTO episode_facts (rowid, run_id, epoch, kind) "
            "SELECT c.r, c.run_id, c.epoch, k.kind FROM temp.kinds_chunk AS c "
            "JOIN episode_kinds AS k ON k.run_id = c.run_id AND k.kind_json = c.j ORDER BY c.r"
        ).rowcount
    finally:
        db.execute("DROP TABLE temp.kinds_chunk")
    db.execute(_all_calls(f"WHERE {where}"), params)
    return int(facts)


def _kinds_on_threads(
    db: sqlite3.Connection,
    path: Path,
    steps: list[tuple[int, int]],
    total: int,
    on_progress: Callable[[str], None],
) -> None:
    """`_kinds_of_all` of summaries committed before: SQLite makes each chunk's kinds and
    sums its calls on one of two threads, each with a read-only connection of its own
    (WAL lets them read beside this transaction, and SQLite runs without the GIL), a few
    chunks ahead; this thread numbers the kinds and writes the facts, in the chunks'
    order, then the kinds with their counts and the calls. Making the kinds is most of a
    migration (JSON read in C, some 20 reads of each summary), so two cores halve it."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    opened: list[sqlite3.Connection] = []
    local = threading.local()
    guard = threading.Lock()

    def chunk(low: int, high: int) -> tuple[list[Any], list[Any]]:
        conn = getattr(local, "db", None)
        if conn is None:
            conn = local.db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            with guard:
                opened.append(conn)
        range_ = (low, high)
        kinds = conn.execute(
            f"SELECT rowid, run_id, epoch, {KIND_JSON} FROM episode_summaries "
            "WHERE rowid > ? AND rowid <= ?",
            range_,
        ).fetchall()
        return kinds, conn.execute(_CHUNK_CALLS, range_).fetchall()

    numbers: dict[tuple[str, str], int] = {}
    following: dict[str, int] = {}
    counts: Counter[tuple[str, str]] = Counter()
    calls: dict[tuple[str, str, int], list[int]] = {}
    done = 0
    try:
        with ThreadPoolExecutor(2, thread_name_prefix="deedbench-migrate") as pool:
            ahead = iter(steps)
            pending = deque(pool.submit(chunk, *step) for step in islice(ahead, 4))
            while pending:
                kinds, summed = pending.popleft().result()
                step = next(ahead, None)
                if step is not None:
                    pending.append(pool.submit(chunk, *step))
                facts = []
                for rowid, run_id, epoch, kind in kinds:
                    key = (run_id, kind)
                    number = numbers.get(key)
                    if number is None:
                        number = numbers[key] = following.get(run_id, 0)
                        following[run_id] = number + 1
                    counts[key] += 1
                    facts.append((rowid, run_id, epoch, number))
                db.executemany(
                    "INSERT INTO episode_facts (rowid, run_id, epoch, kind) VALUES (?, ?, ?, ?)",
                    facts,
                )
                for run_id, role, billed, first, *sums in summed:
                    had = calls.setdefault((run_id, role, billed), [first] + [0] * len(sums))
                    had[0] = min(had[0], first)
                    for i, n in enumerate(sums, 1):
                        had[i] += n
                done += len(kinds)
                if total > _MIGRATE_CHUNK:
                    on_progress(f"  {min(done, total):,} of {total:,}")
    finally:
        for conn in opened:
            conn.close()
    db.executemany(
        "INSERT INTO episode_kinds (run_id, kind, episodes, kind_json) VALUES (?, ?, ?, ?)",
        [(run_id, numbers[run_id, kind], n, kind) for (run_id, kind), n in counts.items()],
    )
    marks = ", ".join("?" * (len(CALL_FIELDS) + 2))
    db.executemany(
        f"INSERT INTO run_calls (run_id, role, billed, first, messages, "
        f"{', '.join(CALL_FIELDS)}) VALUES (?, ?, ?, {marks})",
        [(*key, *total_) for key, total_ in calls.items()],
    )


_CHUNK_CALLS = (  # the calls of a chunk of summaries, summed per (run, role, billed)
    "SELECT s.run_id, m.value ->> '$.role', coalesce(m.value ->> '$.usage.cache_hits', 0) = 0, "
    "MIN(s.rowid * 1048576 + m.key), COUNT(*), "
    + ", ".join(f"SUM(coalesce(m.value ->> '$.usage.{name}', 0))" for name in CALL_FIELDS)
    + f" FROM episode_summaries AS s, json_each({with_judge('s.summary_json')}, '$.messages') "
    "AS m WHERE s.rowid > ? AND s.rowid <= ? AND m.value ->> '$.usage' IS NOT NULL "
    "GROUP BY 1, 2, 3"
)


def _all_calls(where: str) -> str:
    """Add the calls of the summaries `where` selects (of `s`), each role's first the
    position of its first call (summary rowid, then message)."""
    sums = ", ".join(f"SUM(coalesce(m.value ->> '$.usage.{name}', 0))" for name in CALL_FIELDS)
    updates = ", ".join(f"{name} = {name} + excluded.{name}" for name in CALL_FIELDS)
    return (
        f"INSERT INTO run_calls (run_id, role, billed, first, messages, {', '.join(CALL_FIELDS)}) "
        "SELECT s.run_id, m.value ->> '$.role', coalesce(m.value ->> '$.usage.cache_hits', 0) = 0, "
        f"MIN(s.rowid * 1048576 + m.key), COUNT(*), {sums} "
        f"FROM episode_summaries AS s, json_each({with_judge('s.summary_json')}, '$.messages') "
        f"AS m {where} AND m.value ->> '$.usage' IS NOT NULL GROUP BY 1, 2, 3 "
        "ON CONFLICT (run_id, role, billed) DO UPDATE SET first = min(first, excluded.first), "
        f"messages = messages + excluded.messages, {updates}"
    )
