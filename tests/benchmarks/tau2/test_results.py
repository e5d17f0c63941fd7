"""τ²'s result files read and written as τ² does: one JSON or the folder format, its index
checked, errors naming the file and the field; messages both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.tau2.results import (
    Tau2Results,
    read_results,
    simulation_messages,
    tau2_messages,
    write_results,
)
from deedbench.errors import BenchmarkError
from deedbench.records import Message, ToolCall, Usage

MESSAGES: list[dict[str, Any]] = [
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "My phone has no signal."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "name": "get_line", "arguments": {"line": "L1"}, "requestor": "assistant"}
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9},
    },
    {"id": "c1", "role": "tool", "content": '{"status": "ok"}', "requestor": "assistant"},
    {"role": "assistant", "content": "Please restart your phone."},
    {
        "role": "user",
        "content": None,
        "tool_calls": [{"id": "u1", "name": "reboot", "arguments": {}, "requestor": "user"}],
    },
    {"id": "u1", "role": "tool", "content": "Error: busy", "requestor": "user", "error": True},
    {"role": "user", "content": "Done. ###STOP###"},
]


def _file(simulations: int = 2, **info: Any) -> dict[str, Any]:
    return {
        "timestamp": "2026-07-16T10:00:00",
        "info": {
            "git_commit": "fc0055d",
            "num_trials": 1,
            "max_steps": 200,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
            "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1", "llm_args": {}},
            "environment_info": {"domain_name": "telecom", "policy": "Be kind."},
            "an_unknown_field": [1, 2],
            **info,
        },
        "tasks": [{"id": "t1", "user_scenario": {"instructions": "x"}}],
        "simulations": [
            {
                "id": f"s{n}",
                "task_id": "t1",
                "start_time": "2026-07-16T10:00:00",
                "end_time": "2026-07-16T10:01:00",
                "duration": 60.0,
                "termination_reason": "user_stop",
                "reward_info": {"reward": 1.0},
                "messages": MESSAGES,
                "trial": n,
            }
            for n in range(simulations)
        ],
    }


def test_both_formats_read_the_same_and_write_back_what_they_read(tmp_path: Path) -> None:
    raw = _file()
    single = tmp_path / "one.json"
    single.write_text(json.dumps(raw))
    read = read_results(single)
    assert read.info.domain == "telecom" and read.info.num_trials == 1
    assert [s.id for s in read.simulations] == ["s0", "s1"]
    folder = tmp_path / "run"
    write_results(read, folder, format="dir")
    assert sorted(p.name for p in (folder / "simulations").iterdir()) == ["s0.json", "s1.json"]
    index = json.loads((folder / "results.json").read_text())["simulation_index"]
    assert [e["reward"] for e in index] == [1.0, 1.0]
    for given in (folder, folder / "results.json"):
        again = read_results(given)
        assert again.model_dump(exclude={"simulation_index"}) == read.model_dump(
            exclude={"simulation_index"}
        )
    assert again.info.model_dump()["an_unknown_field"] == [1, 2]  # kept, not dropped
    write_results(again, tmp_path / "back.json")
    written = json.loads((tmp_path / "back.json").read_text())["simulations"]
    for mine, theirs in zip(written, raw["simulations"], strict=True):
        assert {k: mine[k] for k in theirs} == theirs  # and τ²'s defaults for the rest


def test_a_folder_whose_index_disagrees_with_its_files_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    write_results(Tau2Results.model_validate(_file(3)), folder, format="dir")
    (folder / "simulations" / "s1.json").unlink()
    (folder / "simulations" / "extra.json").write_text(json.dumps(_file(1)["simulations"][0]))
    with pytest.raises(BenchmarkError, match=r"missing simulation files: \['s1'\]; .*\['extra'\]"):
        read_results(folder)


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("{", r"cannot read a τ² result file"),
        ("[1, 2]", r"not a τ² result file \(expected a JSON object\)"),
        (json.dumps({"tasks": []}), r"field info: Field required"),
        (
            json.dumps({**_file(), "simulations": [{"id": "s"}]}),
            r"field simulations\.0\.task_id: Field required",
        ),
    ],
)
def test_a_broken_file_is_named_with_its_field(tmp_path: Path, content: str, error: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(BenchmarkError, match=f"{path}: .*{error}"):
        read_results(path)
    with pytest.raises(BenchmarkError, match="no such τ² result file"):
        read_results(tmp_path / "missing.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BenchmarkError, match=r"no results\.json in this folder"):
        read_results(empty)


def test_messages_cross_both_ways_with_sides_errors_and_tokens() -> None:
    [simulation] = Tau2Results.model_validate(_file(1)).simulations
    messages = simulation_messages(simulation)
    call, result, user_call, user_result = (
        messages[2],
        messages[3],
        messages[5],
        messages[6],
    )
    assert call.tool_calls[0].args == {"line": "L1"} and result.tool_name == "get_line"
    assert call.usage == Usage(input_tokens=120, output_tokens=9, calls=1)
    assert user_call.role == "user" and user_result.requestor == "user" and user_result.error
    back = tau2_messages([Message(role="system", content="policy"), *messages])
    assert [m["role"] for m in back] == [m["role"] for m in MESSAGES]  # no system prompt
    assert back[2]["content"] is None and back[2]["tool_calls"][0]["requestor"] == "assistant"
    assert back[5]["tool_calls"][0]["requestor"] == "user"
    assert back[6] | {"turn_idx": None} == MESSAGES[6] | {"turn_idx": None}
    assert simulation_messages(simulation.model_copy(update={"messages": back})) == messages


def test_a_voice_file_says_so() -> None:
    raw = _file(1)
    raw["simulations"][0] |= {"mode": "full_duplex", "messages": None, "ticks": []}
    assert Tau2Results.model_validate(raw).voice
    assert not Tau2Results.model_validate(_file(1)).voice


def test_solo_is_taus_own_rule() -> None:
    solo = _file(
        1,
        agent_info={"implementation": "llm_agent_solo", "llm": "m"},
        user_info={"implementation": "dummy_user"},
    )
    assert Tau2Results.model_validate(solo).info.solo
    assert not Tau2Results.model_validate(_file(1)).info.solo


def test_a_call_whose_arguments_are_not_an_object_is_written_as_no_arguments() -> None:
    broken = Message(role="assistant", tool_calls=[ToolCall(id="c", name="n", arguments="[1]")])
    [written] = tau2_messages([broken])
    assert written["tool_calls"][0]["arguments"] == {}
