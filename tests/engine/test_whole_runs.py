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
