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
  The scripts hold τ-bench's edges: call ids used again (a respond call's above all),
  replies whose text is JSON null, an opening message with the stop token, and tasks
  with a gold ``respond`` action (which τ-bench's gold replay counts as a reply).

Seeds are fixed; `--differential N` runs N of each per domain (the default is below).
A slice of each world (every record the chosen tasks need, and more) keeps hashing cheap.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import replace
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
from deedbench.engine import AgentContext, run_episode
from deedbench.records import Message, Termination, ToolCall
from deedbench.scoring import tau_hash

from . import _reference as reference
from ._generate import Slice, conversation, sequence, world_slice
from ._reference import STOP, Crash

pytestmark = [
    pytest.mark.reference("taubench"),
    pytest.mark.filterwarnings("ignore::SyntaxWarning"),  # τ-bench's eval of "2(3)"
]

SEQUENCES = 300
CONVERSATIONS = 150
REACT = 50
NULLS = 40
NONE_LOWER = "'NoneType' object has no attribute 'lower'"  # τ-bench's outputs check
TOOLS = {"retail": RETAIL_TOOLS, "airline": AIRLINE_TOOLS}
BENCHMARKS = {"retail": TaubenchRetailBenchmark, "airline": TaubenchAirlineBenchmark}
DOMAINS = {"retail": RETAIL, "airline": AIRLINE}


def count(request: pytest.FixtureRequest, default: int) -> int:
    chosen: int | None = request.config.getoption("--differential")
    return default if chosen is None else chosen


@pytest.fixture(scope="module", params=["retail", "airline"])
def world(request: pytest.FixtureRequest) -> Slice:
    """The tasks' customers and a dozen more; for the tool calls alone, fewer flights."""
    domain: str = request.param
    tasks = 25 if domain == "retail" else 10  # airline's flights make its hash the slow part
    rng = random.Random(f"slice-{domain}")
    return world_slice(domain, rng, tasks=tasks, extra_users=6, gold_replies=0.3)


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
    taken = crashes = 0
    # one base under every sequence's world: a world never changes its base (were one to,
    # the next sequences would part from τ-bench's fresh loads), and its text is made once
    base = world.load()
    for number in range(count(request, SEQUENCES)):
        seed = f"{world.domain}-calls-{number}"
        sequence_ = list(sequence(world.domain, world, random.Random(seed)))
        stepped = reference.calls(world.domain, world, sequence_)  # τ-bench's, kept
        mine = DeskWorld(base)
        box = TauToolBox(TOOLS[world.domain], mine)
        for index, (name, kwargs) in enumerate(sequence_):
            taken += 1
            ending = name == "transfer_to_human_agents"
            if ending and stepped.before_transfer != tau_hash(mine):
                mismatches.append(f"{seed}: database before call {index}")
            theirs = stepped.observations[index]
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
            if stepped.end != tau_hash(mine):
                mismatches.append(f"{seed}: database at the end")
    assert not mismatches, f"{len(mismatches)} of {taken} calls differ:\n" + "\n".join(
        mismatches[:15]
    )
    assert taken > 5 * count(request, SEQUENCES) and crashes >= 0


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
        text = turn.get("content")
        null = text is None and not calls
        return Message(role="assistant", content=text or "", tool_calls=calls, content_null=null)


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
        solved = reference.solved(world.domain, world, script.task, script.lines, script.turns)
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
        solved = reference.solved(world.domain, world, script.task, script.lines, turns, react=True)
        record = {"task_id": script.task["index"], "trial": number, "reward": solved.reward}
        records.append({**record, "info": solved.info, "traj": solved.traj})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records))
    report = rescore_file(path, [data_folder], DOMAINS[world.domain])
    differing = [f"record {v.index}: {v.differs}" for v in report.differing]
    assert not differing, "\n".join(differing[:15])
    assert report.reproduced == report.rescored > 0
    assert report.observations > 0 and report.observations_differ == 0


def test_null_replies_are_rescored_as_tau_bench_scored_them(
    world: Slice, data_folder: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A user that takes a reply sent as JSON null (τ-bench's human user prints it): the run
    goes on, and τ-bench's reward raises where its outputs check reaches that reply
    (``None.lower()``), which its run.py records as reward 0. Rescoring gives τ-bench's
    reward for the runs that finished, and 0 for those whose reward raised (rescored from
    the messages the run had when it raised)."""
    records: list[dict[str, Any]] = []
    raised = carried_on = 0
    fields = ("user_id", "actions", "instruction", "outputs")
    told = [t for t in world.tasks if t["outputs"]]  # where the outputs check can raise
    for number in range(count(request, NULLS)):
        rng = random.Random(f"{world.domain}-null-{number}")
        on = replace(world, tasks=told) if told and number % 2 else world
        script = conversation(world.domain, on, rng, null_replies=0.2)
        solved = reference.solved(
            world.domain, world, script.task, script.lines, script.turns, takes_null=True
        )
        record: dict[str, Any] = {"task_id": script.task["index"], "trial": number}
        if NONE_LOWER in solved.info.get("error", ""):
            raised += 1
            assert solved.partial is not None
            task = {k: script.task[k] for k in fields}
            records.append(
                {**record, "reward": 0.0, "info": {"task": task}, "traj": solved.partial}
            )
            continue
        if any(
            m["role"] == "assistant" and m.get("content") is None and not m.get("tool_calls")
            for m in solved.traj
        ):
            carried_on += 1
        records.append(
            {**record, "reward": solved.reward, "info": solved.info, "traj": solved.traj}
        )
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records))
    report = rescore_file(path, [data_folder], DOMAINS[world.domain])
    differing = [f"record {v.index}: {v.differs} {v.error or ''}" for v in report.differing]
    assert not differing, "\n".join(differing[:15])
    assert report.reproduced == report.rescored
    assert carried_on > 0 and (raised > 0 or not told), (raised, carried_on)


# --- τ-bench's edges, one scripted case each -------------------------------------------------


def _edge(
    name: str, task: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str], bool]:
    """One edge on `task` (one with outputs and no transfer): the task as both sides load
    it, the model's messages, the user's lines, and whether the user takes a null reply.
    Every case does the task's gold actions, one call a turn, then its own ending."""
    gold = [a for a in task["actions"] if a["name"] != "respond"]
    told = "Here it is: " + ", ".join(task["outputs"])

    def call(
        n: int, tool: str, kwargs: dict[str, Any], call_id: str | None = None
    ) -> dict[str, Any]:
        function = {"name": tool, "arguments": json.dumps(kwargs)}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id or f"call_{n}", "type": "function", "function": function}
            ],
        }

    turns = [call(n, a["name"], a["kwargs"]) for n, a in enumerate(gold)]
    lines = ["Hi, I need help with my account."]
    takes_null = False
    if name == "reused_id":  # the outputs only in a respond call; a failing call takes its id
        turns += [
            call(90, "respond", {"content": told}, "call_same"),
            call(91, "no_such_tool", {}, "call_same"),
            {"role": "assistant", "content": "Anything else?"},
        ]
        lines += ["ok", f"Thanks. {STOP}"]
    elif name == "null_reply":  # the user's API refuses None: τ-bench's run fails there
        turns += [{"role": "assistant", "content": told}, {"role": "assistant", "content": None}]
        lines += ["ok", f"Thanks. {STOP}"]
    elif name in ("null_before_outputs", "null_after_outputs"):  # a user that takes None
        replies = [{"role": "assistant", "content": None}, {"role": "assistant", "content": told}]
        turns += replies if name == "null_before_outputs" else replies[::-1]
        lines += ["ok", f"Thanks. {STOP}"]
        takes_null = True
    elif name == "gold_respond":  # the outputs only in the task's gold respond action
        task = {
            **task,
            "actions": [*task["actions"], {"name": "respond", "kwargs": {"content": told}}],
        }
        turns.append({"role": "assistant", "content": "All done."})
        lines.append(f"Thanks. {STOP}")
    elif name == "opening_stop":  # τ-bench's agent answers the opening, stop or not
        lines = [f"Hi. {STOP}"]
        turns.append({"role": "assistant", "content": told})
        lines.append(f"Thanks. {STOP}")
    return task, turns, lines, takes_null


EDGES = {  # the case, and τ-bench's reward on it
    "reused_id": 1.0,
    "null_reply": 0.0,
    "null_before_outputs": 0.0,
    "null_after_outputs": 1.0,
    "gold_respond": 1.0,
    "opening_stop": 1.0,
}


@pytest.mark.parametrize("edge", list(EDGES))
def test_tau_bench_edges_score_as_tau_bench_scores_them(
    world: Slice, edge: str, tmp_path: Path
) -> None:
    """Each edge through τ-bench's own tool-calling loop, deedbench's live episode (where
    its user is τ-bench's, which refuses None) and the rescore of τ-bench's record (or of
    the messages its run had when its reward raised)."""
    chosen = next(
        t
        for t in world.tasks
        if t["outputs"] and all(a["name"] != "transfer_to_human_agents" for a in t["actions"])
    )
    task, turns, lines, takes_null = _edge(edge, chosen)
    edited = replace(world, tasks=[task])
    folder = edited.write(tmp_path / "data")
    solved = reference.solved(world.domain, world, task, lines, turns, takes_null=takes_null)
    assert solved.reward == EDGES[edge], solved.info.get("error")
    if not takes_null:
        bench = BENCHMARKS[world.domain]({"data": str(folder), "split": "test"})
        sample = next(iter(bench.samples()))
        setup = bench.setup(sample, "default", 0)
        setup.user = _Lines(lines)
        context = AgentContext(sample.id, "default", 1, 0)
        transcript = asyncio.run(run_episode(_Script(turns), setup, context))
        assert bench.score(sample, transcript).values["reward_tau"] == solved.reward
    fields = ("user_id", "actions", "instruction", "outputs")
    record: dict[str, Any] = {"task_id": task["index"], "trial": 0, "reward": solved.reward}
    if NONE_LOWER in solved.info.get("error", ""):
        assert solved.partial
        record |= {"info": {"task": {k: task[k] for k in fields}}, "traj": solved.partial}
    elif solved.traj:
        record |= {"info": solved.info, "traj": solved.traj}
    else:
        return  # τ-bench's run failed and kept nothing to rescore
    path = tmp_path / "results.json"
    path.write_text(json.dumps([record]))
    report = rescore_file(path, [folder], DOMAINS[world.domain])
    assert report.rescored == report.reproduced == 1, report.differing
