"""What deedbench shows the models in a τ² episode equals what τ²'s own code shows them,
character for character, for every task of every domain, both telecom policies (and
solo mode) and all six offline banking retrieval variants: the agent's system prompt, the
opening messages, the agent's tools as JSON, the user simulator's prompt and its tools;
and the NL judge's prompt.

τ²'s side is its own ``build_text_orchestrator`` and ``initialize`` (what ``tau2 run``
does), run in τ²'s Python by `_reference.shown`, once per domain for all its runs. The
texts deedbench shows are read from the same τ² source (``../shared/tau2``, the
checkout holding the data), never from deedbench's files. Without a source, deedbench's
own wording is shown, and the same comparison finds the differences (the test that
proves the comparison can fail).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from deedbench.agents import FunctionAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.banking.retrieval import RETRIEVAL_VARIANTS
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.judge import judge_messages
from deedbench.records import Message

from . import _reference

CHECKOUT = _reference.TAU2
RUNS: dict[str, list[dict[str, str]]] = {
    "airline": [{}],
    "retail": [{}],
    "telecom": [
        {"policy": policy, "mode": mode}
        for policy in ("manual", "workflow")
        for mode in ("conversation", "solo")
    ],
    "banking": [{"retrieval": variant} for variant in RETRIEVAL_VARIANTS],
}
FIELDS = ("agent_system", "opening", "agent_tools", "user_system", "user_tools")


def _unused(*_: Any) -> Message:
    raise AssertionError("no model is asked here")


def _bench(domain: str, options: dict[str, str]) -> Tau2Benchmark:
    bench = load_benchmark(
        f"tau2-{domain}", {"data": str(CHECKOUT), "user": "llm:openai/user"} | options
    )
    assert isinstance(bench, Tau2Benchmark)
    bench.use_user_model(FunctionAgent(_unused))
    return bench


def _opening(message: Message) -> dict[str, Any]:
    calls = [{"name": c.name, "arguments": c.args} for c in message.tool_calls]
    return {"role": message.role, "content": message.content, "tool_calls": calls}


def _theirs_opening(raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "content": raw["content"] or ""}


def shown_by_deedbench(bench: Tau2Benchmark) -> Iterator[tuple[str, dict[str, Any]]]:
    """What deedbench shows the models in each task's episode."""
    for sample in bench.samples():
        setup = bench.setup(sample, "default", 0)
        users = setup.half_duplex.user_tools if setup.half_duplex is not None else None
        user = setup.user
        yield (
            sample.id,
            {
                "agent_system": setup.messages[0].content,
                "agent_tools": setup.toolbox.specs(),
                "opening": [_opening(m) for m in setup.messages[1:]],
                "user_system": getattr(user, "prompt", None),
                "user_tools": users.specs() if users is not None else None,
            },
        )


def _run_spec(bench: Tau2Benchmark) -> dict[str, Any]:
    return {
        "domain": bench.domain.tau2_name,
        "tasks": [task.raw for task in bench.tasks.values()],
        "solo": bench.solo,
        "retrieval": bench.values.get("retrieval"),
    }


def differences(bench: Tau2Benchmark, theirs: dict[str, Any]) -> tuple[int, list[str]]:
    """How many texts were compared, and each that differs (task and field)."""
    compared, found = 0, []
    for task, ours in shown_by_deedbench(bench):
        expected = theirs[task]
        assert "crash" not in expected, (task, expected)
        expected = {**expected, "opening": [_theirs_opening(m) for m in expected["opening"]]}
        for name in FIELDS:
            compared += 1
            if json.dumps(ours[name], sort_keys=True) != json.dumps(expected[name], sort_keys=True):
                found.append(f"{task}.{name}")
    return compared, found


Shown = tuple[str, list[Tau2Benchmark], dict[str, Any]]

pytestmark = pytest.mark.reference("tau2")


@pytest.fixture(scope="module", params=sorted(RUNS))
def domain_runs(request: pytest.FixtureRequest) -> Shown:
    """A domain's benchmarks and what τ²'s code shows for each (one call of τ²'s Python
    per domain: 2 to 10 s on a loaded machine)."""
    benches = [_bench(request.param, options) for options in RUNS[request.param]]
    return request.param, benches, _reference.shown([_run_spec(bench) for bench in benches])


def test_the_models_are_shown_what_taus_code_shows_them(domain_runs: Shown) -> None:
    _, benches, theirs = domain_runs
    for bench, shown in zip(benches, theirs["runs"], strict=True):
        assert bench.texts.source is not None
        compared, found = differences(bench, shown)
        label = f"{bench.name} {bench.options}"
        print(f"{label}: {compared} texts compared, {len(found)} differences")
        assert compared == len(bench.tasks) * len(FIELDS)
        assert not found, (label, found[:10])


def test_the_judge_is_asked_in_taus_words(domain_runs: Shown) -> None:
    _, benches, theirs = domain_runs
    trajectory = [
        Message(role="assistant", content="Hello {there}."),
        Message(role="user", content="I need help."),
    ]
    sent = judge_messages(trajectory, ["Agent helps.", "It's 'done'."], benches[0].texts.prompts)
    assert [{"role": m.role, "content": m.content} for m in sent] == theirs["judge"]


def test_without_a_source_the_comparison_finds_deedbenchs_own_wording(domain_runs: Shown) -> None:
    domain, _, theirs = domain_runs
    bench = _bench(domain, {**RUNS[domain][0], "source": "none"})
    assert bench.texts.source is None
    _, found = differences(bench, theirs["runs"][0])
    fields = {item.rpartition(".")[2] for item in found}
    assert {"agent_system", "agent_tools"} <= fields  # every task's instruction and tools
    assert sum(item.endswith(".agent_tools") for item in found) == len(bench.tasks)


def test_a_banking_task_that_gives_the_user_no_tools_gets_the_plain_guidelines() -> None:
    """The bug: the 16 banking tasks whose ``user_tools`` is ``[]`` gave the simulated user
    an empty toolbox and the tools guidelines (another transfer rule, and told it had
    tools); τ² gives them no tools and the plain guidelines."""
    bench = _bench("banking", {})
    guidelines = CHECKOUT / "data" / "tau2" / "user_simulator"
    plain = (guidelines / "simulation_guidelines.md").read_text(encoding="utf-8")
    tools = (guidelines / "simulation_guidelines_tools.md").read_text(encoding="utf-8")
    empty = [task for task in bench.tasks.values() if task.user_tools == []]
    assert len(empty) == 16
    given = next(t for t in bench.tasks.values() if t.user_tools)
    for task in [*empty, given]:
        sample = next(s for s in bench.samples() if s.id == task.id)
        setup = bench.setup(sample, "default", 0)
        assert setup.half_duplex is not None
        prompt = getattr(setup.user, "prompt", "")
        if task is given:
            names = [s["function"]["name"] for s in setup.half_duplex.user_tools.specs()]  # type: ignore[union-attr]
            assert names == [n for n in names if n in (given.user_tools or [])] and names
            assert prompt.startswith(tools.replace("<PERSONA_GUIDELINES>", ""))
            continue
        assert setup.half_duplex.user_tools is None, task.id
        assert prompt.startswith(plain.replace("<PERSONA_GUIDELINES>", "")), task.id
        assert bench.user_instruction(task.id) == prompt
