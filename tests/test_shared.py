"""The tests' own rules for ../shared (`_shared.py`): a reference test fails where the
references are and cannot run, skips with one summary line where they are absent; kept
reference answers are found by content, never by path; and τ²'s environment is made by
one of two workers at once while the other waits."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import _shared


@pytest.fixture
def broken_group(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setitem(_shared.GROUPS, "probe", ("a probe group", lambda: "its files are gone"))
    _shared.missing.cache_clear()
    yield "probe"
    _shared.missing.cache_clear()


def test_a_group_that_cannot_run_where_shared_is_fails(
    broken_group: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_shared, "SHARED", tmp_path)  # present
    with pytest.raises(pytest.fail.Exception, match="its files are gone"):
        _shared.need(broken_group)


def test_a_group_is_skipped_where_shared_is_absent_and_counted_in_one_line(
    broken_group: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_shared, "SHARED", tmp_path / "nowhere")
    with pytest.raises(pytest.skip.Exception) as skipped:
        _shared.need(broken_group)
    reason = str(skipped.value)
    assert reason.startswith(_shared.ABSENT)
    reports = [SimpleNamespace(longrepr=("t.py", 1, f"Skipped: {reason}"))] * 3
    reports.append(SimpleNamespace(longrepr=("t.py", 2, "Skipped: no browser")))
    [line] = _shared.summary_lines(reports)
    assert "3 tests of the probe group did not run: a probe group" in line


def test_an_unknown_group_fails() -> None:
    with pytest.raises(pytest.fail.Exception, match="unknown reference group"):
        _shared.need("no-such-group")


def test_a_kept_answer_is_found_by_content_and_its_files_written_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_shared, "CACHE", tmp_path / "cache")
    monkeypatch.delenv("DEEDBENCH_REFERENCE_CACHE", raising=False)
    made: list[str] = []

    def compute(target: Path, answer: str) -> object:
        made.append(answer)
        target.mkdir(parents=True, exist_ok=True)
        (target / "file.json").write_text(answer)
        return {"answer": answer}

    first, second = tmp_path / "one", tmp_path / "two"
    key = {"case": [1, 2]}
    assert _shared.cached("k", "v1", key, lambda: compute(first, "a"), first) == {"answer": "a"}
    # the same code, data and case elsewhere: kept, and its file written where asked
    assert _shared.cached("k", "v1", key, lambda: compute(second, "b"), second) == {"answer": "a"}
    assert (second / "file.json").read_text() == "a" and made == ["a"]
    # another version of the reference, or another case: asked again
    assert _shared.cached("k", "v2", key, lambda: compute(first, "c"), first) == {"answer": "c"}
    assert _shared.cached("k", "v1", {"case": [2]}, lambda: compute(first, "d"), first)
    assert made == ["a", "c", "d"]
    # a torn file is made again, not read
    for kept in (tmp_path / "cache").rglob("*.json.gz"):
        kept.write_bytes(b"torn")
    assert _shared.cached("k", "v1", key, lambda: compute(first, "e"), first) == {"answer": "e"}


MAKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import _shared
    folder, log, wanted = Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]

    def make():
        with log.open("a") as out:
            out.write(f"made {wanted}\\n")
        time.sleep(1.0)  # long enough for the other worker to come asking
        folder.mkdir(exist_ok=True)

    _shared.made_once(folder, wanted, make)
    print("ready" if (folder / ".deedbench-ready").is_file() else "not ready")
    """
)


def test_two_workers_at_once_make_the_environment_once_and_neither_goes_without(
    tmp_path: Path,
) -> None:
    folder, log = tmp_path / "env", tmp_path / "log"
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": tests}

    def both(wanted: str) -> list[str]:
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", MAKER, tests, str(folder), str(log), wanted],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(2)
        ]
        return [worker.communicate(timeout=60)[0].strip() for worker in workers]

    assert both("v1") == ["ready", "ready"]
    assert log.read_text().splitlines() == ["made v1"]
    assert both("v1") == ["ready", "ready"]  # made already: nobody makes it again
    assert both("v2") == ["ready", "ready"]  # another list of packages: made again, once
    assert log.read_text().splitlines() == ["made v1", "made v2"]
