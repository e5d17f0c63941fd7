"""The audits table: audits and user judgments written and read by their owner, beside the
run's episodes in its store, one per episode and judge."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from deedbench.audit import (
    AuditResult,
    UserJudgment,
    load_audits,
    load_user_judgments,
    save_audits,
    save_user_judgments,
)
from deedbench.audit.store import audit_counts, last_audit
from deedbench.engine import RunStore
from deedbench.engine.read_only_store import ReadOnlyStore


def audited(sample_id: str, *, epoch: int = 1, judge: str | None = None) -> AuditResult:
    return AuditResult(
        run_id="run-1",
        sample_id=sample_id,
        condition="plain",
        epoch=epoch,
        judge_spec=judge,
        audited_at="2026-01-01T00:00:00+00:00",
    )


def judged(sample_id: str, judge: str = "openai/gpt-4o") -> UserJudgment:
    return UserJudgment(
        run_id="run-1",
        sample_id=sample_id,
        condition="plain",
        epoch=1,
        judge_spec=judge,
        judged_at="2026-01-01T00:00:00+00:00",
    )


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def store(path: Path) -> Iterator[RunStore]:
    with RunStore(path) as opened:
        yield opened


def audit_rows(path: Path) -> list[tuple[str, str, str, int, str]]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(
            "SELECT run_id, sample_id, condition, epoch, judge FROM audits "
            "ORDER BY run_id, judge, sample_id"
        ).fetchall()


def test_audits_round_trip_per_run(store: RunStore, path: Path) -> None:
    save_audits(store, "run-1", [audited("s1"), audited("s2", epoch=2)])
    save_audits(store, "run-2", [audited("s9")])
    assert load_audits(store, "run-1") == [audited("s1"), audited("s2", epoch=2)]
    assert load_audits(store, "run-3") == []
    assert audit_rows(path) == [
        ("run-1", "s1", "plain", 1, ""),
        ("run-1", "s2", "plain", 2, ""),
        ("run-2", "s9", "plain", 1, ""),
    ]


def test_auditing_again_replaces_only_the_same_judges_audit(store: RunStore) -> None:
    save_audits(store, "run-1", [audited("s1")])
    save_audits(store, "run-1", [audited("s1", judge="openai/gpt-4o")])
    again = audited("s1", judge="openai/gpt-4o").model_copy(update={"judge_error": "late"})
    save_audits(store, "run-1", [again])
    assert load_audits(store, "run-1") == [audited("s1"), again]  # the scanner-only first


def test_user_judgments_share_the_table_and_keep_to_their_own(store: RunStore, path: Path) -> None:
    save_audits(store, "run-1", [audited("s1")])
    save_user_judgments(store, "run-1", [judged("s1"), judged("s2")])
    save_user_judgments(store, "run-1", [judged("s1")])  # judged again: replaced, last
    assert load_user_judgments(store, "run-1") == [judged("s2"), judged("s1")]
    assert load_audits(store, "run-1") == [audited("s1")]
    users = "users/openai/gpt-4o"  # the judge's spec under the user judges' prefix
    assert [row[4] for row in audit_rows(path)] == ["", users, users]


def test_audits_survive_reopen_and_are_read_read_only(path: Path) -> None:
    with RunStore(path) as store:
        save_audits(store, "run-1", [audited("s1"), audited("s2")])
        save_user_judgments(store, "run-2", [judged("s1")])
    with RunStore(path) as reopened:
        assert load_audits(reopened, "run-1") == [audited("s1"), audited("s2")]
    reader = ReadOnlyStore(path, on_corrupt=pytest.fail)
    assert load_audits(reader, "run-1") == [audited("s1"), audited("s2")]
    assert audit_counts(reader) == {"run-1": (2, 2), "run-2": (1, 3)}
    assert last_audit(reader) == 3


def test_a_store_made_before_audits_existed_gains_the_table(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT, config_json TEXT)")
    assert audit_counts(ReadOnlyStore(path, on_corrupt=pytest.fail)) == {}  # read: none there
    assert last_audit(ReadOnlyStore(path, on_corrupt=pytest.fail)) is None
    with RunStore(path) as store:
        save_audits(store, "run-1", [audited("s1")])
        assert load_audits(store, "run-1") == [audited("s1")]
