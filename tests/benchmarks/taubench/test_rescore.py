"""Rescoring real τ-bench results: gpt-4o on the airline test split, 50 tasks x 4 trials.

Each trajectory's tool calls are replayed on a fresh world (the users as they were when
the trajectories were recorded, the unchanged flights and reservations); τ-bench's
reward components must come out as recorded, and deedbench adds procedure verdicts.
The τ-bench files live beside the checkout (``../shared/taubench``) and are only read.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.airline import AIRLINE, AIRLINE_PROCEDURE_RULES, AIRLINE_RULES
from deedbench.benchmarks.retail import RETAIL
from deedbench.benchmarks.servicedesk import scorer as desk_scorer
from deedbench.benchmarks.taubench import domain_for
from deedbench.benchmarks.taubench.rescore import RecordVerdict, RescoreReport, rescore_file
from deedbench.errors import BenchmarkError

# tests/benchmarks/taubench/<this file>: parents[3] is the checkout, its parent holds `shared`.
TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"
RESULTS = TAUBENCH / "trajectories" / "gpt-4o-airline.json"
FOLDERS = [TAUBENCH / "trajectories" / "airline-2024-11", TAUBENCH / "airline"]
RULES = frozenset(AIRLINE_PROCEDURE_RULES) | frozenset(AIRLINE_RULES)

pytestmark = pytest.mark.reference("taubench")


@cache
def records() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(RESULTS.read_text())
    return loaded


def recorded(record: dict[str, Any], component: str) -> float | None:
    """A reward component as τ-bench records it: `info.reward_info.info.<component>`
    (τ-bench's RewardResult: reward, info, actions); absent when the run crashed."""
    reward_info = record["info"].get("reward_info") or {}
    value = (reward_info.get("info") or {}).get(component)
    return None if value is None else float(value)


def called_tools(record: dict[str, Any]) -> set[str]:
    return {
        call["function"]["name"]
        for message in record["traj"]
        for call in message.get("tool_calls") or []
    }


def tampered(tmp_path: Path, component: str) -> tuple[Path, int]:
    """A copy of the results with one record's recorded component flipped."""
    changed = json.loads(RESULTS.read_text())
    number = next(i for i, r in enumerate(changed) if recorded(r, component) == 1.0)
    changed[number]["info"]["reward_info"]["info"][component] = 0.0
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(changed))
    return path, number


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """rescore_file merges the data folders into a temporary folder it never removes;
    keep those out of the system's temporary directory."""
    folder = tmp_path / "tempdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> RescoreReport:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tempdir")))
        return rescore_file(RESULTS, FOLDERS, AIRLINE)


def test_every_record_is_rescored_in_order(report: RescoreReport) -> None:
    assert report.records == len(report.verdicts) == len(records()) == 200
    assert report.reproduced == 200
    assert all(v.reproduced for v in report.verdicts)
    pairs = [(v.task_id, v.trial) for v in report.verdicts]
    assert pairs == [(r["task_id"], r["trial"]) for r in records()]
    assert len(set(pairs)) == 200
    assert [v.recorded_reward for v in report.verdicts] == [r["reward"] for r in records()]


def test_the_recomputed_components_equal_the_recorded_ones(report: RescoreReport) -> None:
    with_actions = with_outputs = 0
    for record, verdict in zip(records(), report.verdicts, strict=True):
        where = (verdict.task_id, verdict.trial)
        if recorded(record, "r_actions") is not None:
            with_actions += 1
            assert verdict.r_actions == recorded(record, "r_actions"), where
        if recorded(record, "r_outputs") is not None:
            with_outputs += 1
            assert verdict.r_outputs == recorded(record, "r_outputs"), where
        outputs = record["info"]["task"].get("outputs") or []
        assert (verdict.r_outputs is None) == (not outputs), where
    assert with_actions == 182 and with_outputs == 13  # 5 records crashed and hold none
    assert {v.r_actions for v in report.verdicts} == {0.0, 1.0}  # not constant


def test_a_tau_bench_pass_is_also_a_canonical_pass(report: RescoreReport) -> None:
    for verdict in report.verdicts:
        if verdict.r_actions == 1.0:  # equal str() of every record means equal meaning
            assert verdict.outcome_canonical == 1.0, (verdict.task_id, verdict.trial)


def test_the_verdicts_carry_the_recorded_components(report: RescoreReport) -> None:
    for record, verdict in zip(records(), report.verdicts, strict=True):
        assert verdict.recorded_r_actions == recorded(record, "r_actions")
        assert verdict.recorded_r_outputs == recorded(record, "r_outputs")


def test_reward_tau_equals_the_recorded_reward(report: RescoreReport) -> None:
    for record, verdict in zip(records(), report.verdicts, strict=True):
        if record["info"].get("reward_info"):
            assert verdict.reward_tau == record["reward"], (verdict.task_id, verdict.trial)


@pytest.mark.parametrize("component", ["r_actions", "r_outputs"])
def test_a_tampered_recorded_component_is_not_reproduced(tmp_path: Path, component: str) -> None:
    path, number = tampered(tmp_path, component)
    report = rescore_file(path, FOLDERS, AIRLINE)
    assert report.records == 200
    assert report.reproduced == 199
    assert [i for i, v in enumerate(report.verdicts) if not v.reproduced] == [number]


def test_passing_trajectories_and_their_violations_are_counted(report: RescoreReport) -> None:
    passing_in_file = sum(1 for r in records() if r["reward"] == 1.0)
    assert report.passing == passing_in_file == 84
    passing = [v for v in report.verdicts if v.recorded_reward == 1.0]
    broke = [v for v in passing if v.violations]
    assert report.passing_with_violations == len(broke)
    assert 0 < report.passing_with_violations < report.passing


def test_rules_count_passing_trajectories_per_rule(report: RescoreReport) -> None:
    passing = [v for v in report.verdicts if v.recorded_reward == 1.0]
    expected = Counter(
        rule for v in passing for rule in {text.split(":")[0] for text in v.violations}
    )
    assert report.rules == dict(expected)
    assert report.rules and set(report.rules) <= RULES
    for rule, count in report.rules.items():
        assert 1 <= count <= report.passing_with_violations, rule
    assert sum(report.rules.values()) >= report.passing_with_violations
    counts = list(report.rules.values())
    assert counts == sorted(counts, reverse=True)  # most common first


def test_each_violation_names_its_rule_and_quotes_a_call(report: RescoreReport) -> None:
    seen = 0
    for record, verdict in zip(records(), report.verdicts, strict=True):
        tools = called_tools(record)
        replies = [m.get("content") or "" for m in record["traj"] if m["role"] == "assistant"]
        for text in verdict.violations:
            seen += 1
            rule = text.split(":")[0]
            assert rule in RULES and text.startswith(f"{rule}: "), text
            quotes_call = any(f"{name}(" in text for name in tools)
            quotes_reply = any(
                part.strip("…") and any(part.strip("…") in r for r in replies)
                for part in re.findall(r'"([^"]{12,})"', text)
            )
            assert quotes_call or quotes_reply, text
    assert seen > report.passing_with_violations


def test_failing_trajectories_get_verdicts_too(report: RescoreReport) -> None:
    failing: list[RecordVerdict] = [v for v in report.verdicts if v.recorded_reward == 0.0]
    assert len(failing) == 116
    assert any(v.violations for v in failing)


def test_rescoring_leaves_no_temporary_folder_behind(tmp_path: Path, private_tempdir: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records()[:2]))
    assert rescore_file(path, FOLDERS, AIRLINE).records == 2
    assert list(private_tempdir.iterdir()) == []


# --- domains and bad input -----------------------------------------------------------------------


def test_the_domain_is_told_by_its_files(tmp_path: Path) -> None:
    assert domain_for(FOLDERS) is AIRLINE
    assert domain_for([TAUBENCH / "airline"]) is AIRLINE
    if (TAUBENCH / "retail" / "orders.json").is_file():
        assert domain_for([TAUBENCH / "retail"]) is RETAIL
    with pytest.raises(BenchmarkError, match="no τ-bench retail") as caught:
        domain_for([tmp_path])
    assert str(tmp_path) in str(caught.value)


def test_a_file_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"records": records()[:2]}))
    with pytest.raises(BenchmarkError, match="expected a JSON list") as caught:
        rescore_file(path, FOLDERS, AIRLINE)
    assert str(path) in str(caught.value)


def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("[{")
    with pytest.raises(BenchmarkError, match="cannot read") as caught:
        rescore_file(path, FOLDERS, AIRLINE)
    assert str(path) in str(caught.value)
    with pytest.raises(BenchmarkError, match="cannot read"):
        rescore_file(tmp_path / "absent.json", FOLDERS, AIRLINE)


@pytest.mark.parametrize("field", ["traj", "info", "task_id"])
def test_a_record_missing_a_field_is_listed_and_the_rest_rescored(
    tmp_path: Path, field: str
) -> None:
    chosen = json.loads(json.dumps(records()[:5]))
    del chosen[3][field]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(chosen))
    report = rescore_file(path, FOLDERS, AIRLINE)
    assert (report.records, report.rescored, report.malformed) == (5, 4, 1)
    broken = report.verdicts[3]
    assert broken.status == "malformed" and broken.index == 3
    assert broken.error is not None and field in broken.error
    assert all(v.status == "rescored" for i, v in enumerate(report.verdicts) if i != 3)


def test_a_crashed_record_is_listed_as_crashed(tmp_path: Path) -> None:
    """τ-bench records a run that raised with reward 0, `info.error` and no trajectory."""
    chosen = json.loads(json.dumps(records()[:3]))
    chosen[1] = {
        "task_id": chosen[1]["task_id"],
        "reward": 0.0,
        "info": {"error": "Expecting value: line 1 column 1 (char 0)", "traceback": "..."},
        "traj": [],
        "trial": 0,
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(chosen))
    report = rescore_file(path, FOLDERS, AIRLINE)
    assert (report.rescored, report.crashed, report.reproduced) == (2, 1, 2)
    assert report.verdicts[1].status == "crashed"
    assert report.verdicts[1].error == "Expecting value: line 1 column 1 (char 0)"


def test_records_that_never_ended_score_zero(report: RescoreReport) -> None:
    """Five runs hit τ-bench's 30-step limit: no reward_info, reward 0, however right the
    database; two of them left it exactly as the gold actions would."""
    never = [v for v in report.verdicts if v.ended is False]
    assert [(v.task_id, v.trial) for v in never] == [(33, 0), (2, 1), (9, 2), (9, 3), (46, 3)]
    assert all(v.reward_tau == 0.0 == v.recorded_reward and v.reproduced for v in never)
    assert sum(v.r_actions == 1.0 for v in never) == 2
    assert report.never_ended == 5
    for record, verdict in zip(records(), report.verdicts, strict=True):
        assert (not record["info"].get("reward_info")) == (verdict.ended is False)


def test_reproduced_means_the_recorded_reward_itself(tmp_path: Path) -> None:
    changed = json.loads(RESULTS.read_text())
    number = next(
        i for i, r in enumerate(changed) if r["reward"] == 0.0 and r["info"].get("reward_info")
    )
    changed[number]["reward"] = 1.0
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(changed))
    report = rescore_file(path, FOLDERS, AIRLINE)
    assert report.reproduced == 199
    (differing,) = report.differing
    assert differing.index == number and differing.differs == ["reward"]
    assert not differing.explained_by_older_rule  # it is no output task, or outputs fail


def _output_record(outputs_found: bool, database_right: bool) -> dict[str, Any]:
    """A recorded run of an airline task with required outputs, changed to the case asked:
    the reply states the outputs or not, the database matches the gold one or not."""
    base = next(
        r
        for r in records()
        if r["info"]["task"].get("outputs") and r["reward"] == 1.0 and r["info"].get("reward_info")
    )
    record = json.loads(json.dumps(base))
    outputs = record["info"]["task"]["outputs"]
    traj = record["traj"]
    last_reply = max(
        i for i, m in enumerate(traj) if m["role"] == "assistant" and not m.get("tool_calls")
    )
    for message in traj:  # no other reply states anything (τ-bench's rule finds "4" in "$45")
        if message["role"] == "assistant" and not message.get("tool_calls"):
            message["content"] = "Noted."
    said = "; ".join(outputs) if outputs_found else "nothing useful"
    traj[last_reply]["content"] = f"Here you are: {said}."
    if not database_right:  # a cancellation the gold actions do not make, before the reply
        reservation = next(
            iter(json.loads((TAUBENCH / "airline" / "reservations.json").read_text()))
        )
        call = {
            "id": "call_extra",
            "type": "function",
            "function": {
                "name": "cancel_reservation",
                "arguments": json.dumps({"reservation_id": reservation}),
            },
        }
        traj[last_reply:last_reply] = [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": "call_extra",
                "name": "cancel_reservation",
                "content": "...",
            },
        ]
        assert traj[-1]["role"] == "user"
    return record


def test_the_older_outputs_only_rule_is_recognised(tmp_path: Path) -> None:
    """τ-bench once scored a task with outputs by its outputs alone: a record that says
    reward 1 with a wrong database differs under the current rule, which the report
    says and explains."""
    old = _output_record(outputs_found=True, database_right=False)
    old["reward"] = 1.0
    right = _output_record(outputs_found=True, database_right=True)
    path = tmp_path / "results.json"
    path.write_text(json.dumps([old, right]))
    report = rescore_file(path, FOLDERS, AIRLINE)
    first, second = report.verdicts
    assert second.reproduced and second.reward_tau == 1.0
    assert first.r_outputs == 1.0 and first.r_actions == 0.0
    assert first.reward_tau == 0.0 and first.reward_older_rule == 1.0
    assert first.differs == ["reward"] and first.explained_by_older_rule
    assert report.older_rule == 1
    assert "older rule" in (report.regime() or "") and "explains 1 of the 1" in report.regime()


def test_only_replies_count_for_outputs(tmp_path: Path) -> None:
    """Text that came with a tool call never reached the user: τ-bench does not count it."""
    record = _output_record(outputs_found=False, database_right=True)
    outputs = record["info"]["task"]["outputs"]
    with_call = next(m for m in record["traj"] if m["role"] == "assistant" and m.get("tool_calls"))
    with_call["content"] = "; ".join(outputs)
    record["reward"] = 0.0
    record["info"]["reward_info"]["info"]["r_outputs"] = 0.0
    path = tmp_path / "results.json"
    path.write_text(json.dumps([record]))
    (verdict,) = rescore_file(path, FOLDERS, AIRLINE).verdicts
    assert verdict.r_outputs == 0.0 and verdict.reward_tau == 0.0 and verdict.reproduced


def test_gold_actions_are_replayed_once_per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = desk_scorer.replay

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(desk_scorer, "replay", counting)
    report = rescore_file(RESULTS, FOLDERS, AIRLINE)
    tasks = {json.dumps(r["info"]["task"], sort_keys=True) for r in records()}
    assert report.rescored == 200 and len(calls) == len(tasks) == 50


def test_a_subset_of_records_rescores_alone(tmp_path: Path, report: RescoreReport) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records()[40:48]))
    part = rescore_file(path, FOLDERS, AIRLINE)
    assert part.records == 8
    strip = lambda v: v.model_dump(exclude={"index"})  # noqa: E731
    assert [strip(v) for v in part.verdicts] == [strip(v) for v in report.verdicts[40:48]]
