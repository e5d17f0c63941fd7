"""deedbench against τ-bench's own code on generated input: every observation, every
database, every reward.

- Tool calls: sequences over all 16 retail and 14 airline tools, valid and malformed
  (unknown ids, wrong types, missing and extra arguments, empty lists, duplicates,
  insufficient balances, repeated writes): after every call τ-bench's observation (or
  its crash) and deedbench's are the same, and at the end so is τ-bench's hash.
- Conversations on real test tasks: τ-bench's tool-calling agent, driven by a script of
  model messages, gives a reward; deedbench's `taubench-*` benchmark, driven by the
  same messages, gives the same `reward_tau`; and rescoring τ-bench's own record of the
  run reproduces it. The same scripts as τ-bench's ReAct agent's text, rescored, too.

Seeds are fixed; `--differential N` runs N of each per domain (the default is below).
A slice of each world (every record the chosen tasks need, and more) keeps hashing cheap.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.airline.tools import AIRLINE_TOOLS
from deedbench.benchmarks.retail import RETAIL, RETAIL_TOOLS
from deedbench.benchmarks.servicedesk import DeskWorld, TauToolBox
from deedbench.benchmarks.taubench import (
    TaubenchAirlineBenchmark,
    TaubenchRetailBenchmark,
    rescore_file,
)
from deedbench.engine import AgentContext, Message, Termination, ToolCall, run_episode
from deedbench.scoring import tau_hash

from ._generate import Slice, conversation, sequence, world_slice
from ._reference import STOP, Crash, available, environment, solve, step

pytestmark = [
    pytest.mark.skipif(
        not available(), reason="τ-bench's code and data not found beside the checkout (../shared)"
    ),
    pytest.mark.filterwarnings("ignore::SyntaxWarning"),  # τ-bench's eval of "2(3)"
]

SEQUENCES = 300
CONVERSATIONS = 150
REACT = 50
TOOLS = {"retail": RETAIL_TOOLS, "airline": AIRLINE_TOOLS}
BENCHMARKS = {"retail": TaubenchRetailBenchmark, "airline": TaubenchAirlineBenchmark}
DOMAINS = {"retail": RETAIL, "airline": AIRLINE}
NO_TASK = {"user_id": "nobody", "actions": [], "instruction": "", "outputs": []}


def count(request: pytest.FixtureRequest, default: int) -> int:
    chosen: int | None = request.config.getoption("--differential")
    return default if chosen is None else chosen


@pytest.fixture(scope="module", params=["retail", "airline"])
def world(request: pytest.FixtureRequest) -> Slice:
    """The tasks' customers and a dozen more; for the tool calls alone, fewer flights."""
    domain: str = request.param
    tasks = 25 if domain == "retail" else 10  # airline's flights make its hash the slow part
    return world_slice(domain, random.Random(f"slice-{domain}"), tasks=tasks, extra_users=6)


@pytest.fixture(scope="module")
def small_world(world: Slice) -> Slice:
    rng = random.Random(f"small-slice-{world.domain}")
    return world_slice(
        world.domain, rng, tasks=2, extra_users=12, extra_flights=20, every_product=False
    )


@pytest.fixture(scope="module")
def data_folder(world: Slice, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return world.write(tmp_path_factory.mktemp(f"taubench-{world.domain}"))


def _as_call(number: int, name: str, kwargs: dict[str, Any]) -> Message:
    call = ToolCall(id=f"call_{number}", name=name, arguments=json.dumps(kwargs))
    return Message(role="assistant", tool_calls=[call])


def test_every_call_gives_tau_bench_observation_and_database(
    small_world: Slice, request: pytest.FixtureRequest
) -> None:
    world = small_world
    mismatches: list[str] = []
    calls = crashes = 0
    for number in range(count(request, SEQUENCES)):
        seed = f"{world.domain}-calls-{number}"
        env = environment(world.domain, world.load, NO_TASK, [])
        mine = DeskWorld(world.load())
        box = TauToolBox(TOOLS[world.domain], mine)
        for index, (name, kwargs) in enumerate(sequence(world.domain, world, random.Random(seed))):
            calls += 1
            ending = name == "transfer_to_human_agents"
            if ending and env.get_data_hash() != tau_hash(mine.snapshot()):
                mismatches.append(f"{seed}: database before call {index}")
            theirs = step(env, name, json.loads(json.dumps(kwargs)))
            outcome = box.take_turn(_as_call(index, name, kwargs))
            if isinstance(theirs, Crash):
                crashes += 1
                if outcome.ends is not Termination.INVALID_ACTION:
                    mismatches.append(f"{seed}: call {index} {name}{kwargs}: τ-bench {theirs}")
                break
            ours = outcome.results[0].content
            if ours != theirs:
                mismatches.append(
                    f"{seed}: call {index} {name}({kwargs}): τ-bench {theirs!r}, ours {ours!r}"
                )
            if ending:  # τ-bench scores the run now and reloads its data: the run is over
                break
        else:
            if env.get_data_hash() != tau_hash(mine.snapshot()):
                mismatches.append(f"{seed}: database at the end")
    assert not mismatches, f"{len(mismatches)} of {calls} calls differ:\n" + "\n".join(
        mismatches[:15]
    )
    assert calls > 5 * count(request, SEQUENCES) and crashes >= 0


class _Lines:
    """deedbench's user interface, answering from the same list as τ-bench's stub user."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        self.said = 0
        self.finished = False

    async def reply(self, messages: Sequence[Message]) -> Message:
        line = self.lines[self.said] if self.said < len(self.lines) else "ok."
        self.said += 1
        self.finished = STOP in line
        return Message(role="user", content=line)


class _Script:
    """deedbench's agent interface, replaying the same model messages."""

    def __init__(self, turns: Sequence[dict[str, Any]]) -> None:
        self.turns = list(turns)

    async def next_turn(self, messages: Any, tools: Any, context: Any) -> Message:
        if not self.turns:
            return Message(role="assistant", content="Is there anything else I can do for you?")
        turn = self.turns.pop(0)
        calls = [
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
            for c in turn.get("tool_calls") or []
        ]
        return Message(role="assistant", content=turn.get("content") or "", tool_calls=calls)


def test_conversations_get_tau_bench_reward_live_and_rescored(
    world: Slice, data_folder: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bench = BENCHMARKS[world.domain]({"data": str(data_folder), "split": "test"})
    samples = {s.id: s for s in bench.samples()}
    mismatches: list[str] = []
    records: list[dict[str, Any]] = []
    rewards: list[float] = []
    for number in range(count(request, CONVERSATIONS)):
        seed = f"{world.domain}-conversation-{number}"
        script = conversation(world.domain, world, random.Random(seed))
        solved = solve(
            environment(world.domain, world.load, script.task, script.lines), script.turns
        )
        sample = samples[f"task-{script.task['index']}"]
        setup = bench.setup(sample, "default", 0)
        setup.user = _Lines(script.lines)
        context = AgentContext(sample.id, "default", 1, 0)
        transcript = asyncio.run(run_episode(_Script(script.turns), setup, context))
        ours = bench.score(sample, transcript).values["reward_tau"]
        rewards.append(solved.reward)
        if ours != solved.reward:
            mismatches.append(
                f"{seed}: task {script.task['index']}: τ-bench {solved.reward}, ours {ours} "
                f"({transcript.termination}, τ-bench {solved.info.get('error', 'no error')})"
            )
        record = {"task_id": script.task["index"], "trial": number, "reward": solved.reward}
        records.append({**record, "info": solved.info, "traj": solved.traj})
    assert not mismatches, f"{len(mismatches)} conversations differ:\n" + "\n".join(mismatches[:15])
    assert 0 < sum(rewards) < len(rewards)  # both outcomes occur
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records))
    report = rescore_file(path, [data_folder], DOMAINS[world.domain])
    differing = [f"record {v.index}: {v.differs} {v.error or ''}" for v in report.differing]
    assert not differing, "\n".join(differing[:15])
    assert report.rescored + report.crashed == len(records)
    assert report.reproduced == report.rescored
    assert report.observations_differ == 0


def _react_text(turn: dict[str, Any]) -> str:
    """A tool-calling model message as τ-bench's ReAct agent's text."""
    calls = turn.get("tool_calls") or []
    if not calls:
        return "Thought:\nI answer.\nAction:\n" + json.dumps(
            {"name": "respond", "arguments": {"content": turn.get("content") or ""}}
        )
    function = calls[0]["function"]
    try:
        arguments = json.loads(function["arguments"])
    except json.JSONDecodeError:
        return f"Thought:\nA call.\nAction:\n{function['arguments']}"  # read as a reply
    return "Thought:\nA call.\nAction:\n" + json.dumps(
        {"name": function["name"], "arguments": arguments}
    )


def test_react_records_are_rescored_as_tau_bench_scored_them(
    world: Slice, data_folder: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    records = []
    for number in range(count(request, REACT)):
        script = conversation(world.domain, world, random.Random(f"{world.domain}-react-{number}"))
        turns = [{"role": "assistant", "content": _react_text(t)} for t in script.turns]
        env = environment(world.domain, world.load, script.task, script.lines)
        solved = solve(env, turns, react=True)
        record = {"task_id": script.task["index"], "trial": number, "reward": solved.reward}
        records.append({**record, "info": solved.info, "traj": solved.traj})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records))
    report = rescore_file(path, [data_folder], DOMAINS[world.domain])
    differing = [f"record {v.index}: {v.differs}" for v in report.differing]
    assert not differing, "\n".join(differing[:15])
    assert report.reproduced == report.rescored > 0
    assert report.observations > 0 and report.observations_differ == 0
