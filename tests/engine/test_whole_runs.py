"""`engine.whole_runs`: runs added in one transaction, all of them or none, and a run
deleted with everything the store keeps of it (issue 39)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from deedbench.engine import RunStore
from deedbench.engine.whole_runs import add_runs, delete_run, unencodable
from deedbench.errors import StoreError
from deedbench.records import EpisodeRecord, Message

from .test_store import make_config, make_record


def test_runs_are_added_whole_with_their_summaries(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        records = [make_record("s1"), make_record("s2", "spicy", 2)]
        add_runs(store, [(make_config("a"), records), (make_config("b"), [make_record()])])
        assert [c.run_id for c in store.configs()] == ["b", "a"]
        assert [s.key for s in store.summaries("a")] == [r.key for r in records]
        assert list(store.episodes("a")) == records


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (make_record("s1").model_copy(update={"epoch": 2**70}), "the epoch is beyond"),
        (make_record("s1"), "two records of one episode"),
        (
            make_record("s2").model_copy(
                update={"messages": [Message(role="user", content="a \udc80 b")]}
            ),
            "field messages.0.content holds text that is not Unicode ('\\udc80'",
        ),
    ],
    ids=["epoch", "twice", "surrogate"],
)
def test_a_record_that_cannot_be_stored_leaves_nothing(
    tmp_path: Path, bad: EpisodeRecord, said: str
) -> None:
    def records() -> Iterator[EpisodeRecord]:
        yield make_record("s1")
        yield bad

    with RunStore(tmp_path / "s.db") as store:
        with pytest.raises(StoreError, match=r"run 'b', sample .*") as caught:
            add_runs(store, [(make_config("a"), [make_record()]), (make_config("b"), records())])
        assert said in str(caught.value)
        assert store.run_ids() == [] and store.counts() == {}
        add_runs(store, [(make_config("a"), [make_record()])])  # and then it imports
        with pytest.raises(StoreError, match="run 'a' already exists"):
            add_runs(store, [(make_config("a"), [])])


def test_delete_removes_the_run_and_nothing_else(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.db") as store:
        add_runs(store, [(make_config("a"), [make_record()]), (make_config("b"), [make_record()])])
        with store.writing() as db:
            db.execute("INSERT INTO audits VALUES ('a', 's1', 'plain', 1, 'scanner', '{}')")
        done = delete_run(store, "a")
        assert (done.episodes, done.audits) == (1, 1)
        assert store.run_ids() == ["b"] and list(store.counts()) == ["b"]
        with pytest.raises(StoreError, match="no run 'a'"):
            delete_run(store, "a")


def test_unencodable_names_the_path_of_the_first_lone_surrogate() -> None:
    assert unencodable({"a": [1, {"b": "ok"}, {"c": "x\ud800"}]}) == ("a.2.c", "\ud800")
    assert unencodable({"a\udc80": 1}) == ("", "\udc80")
    assert unencodable({"a": ["fine", 1.5, None]}) is None


def test_an_imported_run_has_the_figures_of_one_written_record_by_record(tmp_path: Path) -> None:
    """Reports read a run's kinds, facts and calls (store format 3): a run added whole by
    SQL (an import) gets the same as the writer gives the same records, the judge's calls
    too; deleting it takes them along and leaves the other run's."""
    from deedbench.records import Usage
    from deedbench.reports.summary import RunTally

    from .test_store_figures import kept

    judged = make_record("s3", "spicy", 1).model_copy(
        update={"usage": {"judge": Usage(input_tokens=7, output_tokens=2, calls=1)}}
    )
    records = [make_record("s1"), make_record("s2", "spicy", 2), judged]
    imported, written = tmp_path / "imported.db", tmp_path / "written.db"
    with RunStore(imported) as store:
        add_runs(store, [(make_config("a"), records), (make_config("b"), [make_record()])])
    with RunStore(written) as store:
        for config, recs in ((make_config("a"), records), (make_config("b"), [make_record()])):
            store.create_run(config)
            for record in recs:
                store.add(config.run_id, record)
    ours, theirs = kept(imported), kept(written)
    assert ours["counts"] and ours["counts"] == theirs["counts"]
    assert ours["facts"] == theirs["facts"] and ours["summaries"] == len(records) + 1
    assert sorted(ours["calls"]) == sorted(theirs["calls"])
    assert any(row[1] == "judge" and row[4] == 7 for row in ours["calls"])
    with RunStore(imported) as store:
        figures = RunTally.stored(make_config("a"), store).summary()
        assert figures.scored == len(records)
        assert [c.role for c in figures.costs if c.role == "judge"] == ["judge"]
        delete_run(store, "a")
    left = kept(imported)
    assert {run for run, _ in left["counts"]} == {"b"} and list(left["facts"]) == ["b"]
    assert {row[0] for row in left["calls"]} <= {"b"}
