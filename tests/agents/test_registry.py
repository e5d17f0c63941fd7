"""Agent specs: ``baseline/NAME`` and ``python/MODULE:ATTRIBUTE`` resolved to agents."""

from __future__ import annotations

import asyncio
import itertools
import textwrap
from pathlib import Path

import pytest

from deedbench.agents import FunctionAgent, agent_kinds, resolve_agent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tac import TacBenchmark
from deedbench.engine import AgentContext, Benchmark
from deedbench.errors import AgentSpecError
from deedbench.records import Message

CONTEXT = AgentContext(sample_id="s1", condition="plain", epoch=1, seed=3)
_module_numbers = itertools.count()

AGENT_MODULE = """
from deedbench.records import Message


class EchoAgent:
    instances = 0

    def __init__(self):
        EchoAgent.instances += 1

    async def next_turn(self, messages, tools, context):
        return Message(role="assistant", content="class:" + messages[-1].content)


agent = EchoAgent()


def turn(messages, tools, context):
    return "function:" + messages[-1].content


async def async_turn(messages, tools, context):
    return "async:" + context.sample_id


not_callable = 42
"""


@pytest.fixture(scope="module")
def tac() -> Benchmark:
    return load_benchmark("tac")


@pytest.fixture
def module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh importable module holding agents in every form a spec may name."""
    name = f"deedbench_test_agents_{next(_module_numbers)}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def reply(agent: object, text: str = "hello") -> Message:
    messages = [Message(role="user", content=text)]
    return asyncio.run(agent.next_turn(messages, [], CONTEXT))  # type: ignore[attr-defined]


def test_agent_kinds_lists_baselines_first_and_python_last(tac: Benchmark) -> None:
    kinds = agent_kinds(tac)
    assert kinds[:4] == [
        "baseline/random",
        "baseline/relevance",
        "baseline/welfare",
        "baseline/refuse",
    ]
    assert kinds[-1] == "python/MODULE:ATTRIBUTE"
    assert not any(k.startswith("baseline/") for k in agent_kinds())
    assert agent_kinds()[-1] == "python/MODULE:ATTRIBUTE"


def test_baseline_random_resolves_to_a_working_agent(tac: Benchmark) -> None:
    agent = resolve_agent("baseline/random", tac)
    assert hasattr(agent, "next_turn")
    assert isinstance(tac, TacBenchmark)
    sample = tac.samples()[0]
    setup = tac.setup(sample, tac.conditions[0], seed=1)
    turn = asyncio.run(agent.next_turn(setup.messages, setup.toolbox.specs(), CONTEXT))
    # A TAC baseline starts by searching the catalogue.
    assert [c.name for c in turn.tool_calls] == ["search_experiences"]


@pytest.mark.parametrize(
    "spec",
    ["baseline/nope", "nope", "random", "model/gpt", "python/no_colon_here", ""],
)
def test_unknown_spec_lists_valid_agents(tac: Benchmark, spec: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        resolve_agent(spec, tac)
    message = str(info.value)
    assert repr(spec) in message
    assert "'tac'" in message
    assert "Valid agents: " in message
    for kind in agent_kinds(tac):
        assert kind in message


def test_python_spec_imports_an_agent_object(tac: Benchmark, module_name: str) -> None:
    agent = resolve_agent(f"python/{module_name}:agent", tac)
    module = __import__(module_name)
    assert agent is module.agent
    assert reply(agent).content == "class:hello"


def test_python_spec_wraps_a_function(tac: Benchmark, module_name: str) -> None:
    agent = resolve_agent(f"python/{module_name}:turn", tac)
    assert isinstance(agent, FunctionAgent)
    assert reply(agent, "hey") == Message(role="assistant", content="function:hey")
    async_agent = resolve_agent(f"python/{module_name}:async_turn", tac)
    assert reply(async_agent).content == "async:s1"


def test_python_spec_instantiates_an_agent_class(tac: Benchmark, module_name: str) -> None:
    module = __import__(module_name)
    before = module.EchoAgent.instances
    agent = resolve_agent(f"python/{module_name}:EchoAgent", tac)
    assert isinstance(agent, module.EchoAgent)
    assert module.EchoAgent.instances == before + 1
    assert reply(agent).content == "class:hello"


def test_python_spec_imports_from_the_working_folder(tac: Benchmark, working_folder: Path) -> None:
    """`python/cheapest:cheapest` beside cheapest.py, without PYTHONPATH=."""
    name = f"deedbench_test_agents_{next(_module_numbers)}"
    (working_folder / f"{name}.py").write_text(textwrap.dedent(AGENT_MODULE))
    agent = resolve_agent(f"python/{name}:turn", tac)
    assert reply(agent, "hey") == Message(role="assistant", content="function:hey")


@pytest.mark.parametrize(
    ("target", "problem"),
    [("no_such_module_xyz:agent", "No module named"), ("{module}:missing", "missing")],
)
def test_python_spec_that_cannot_be_imported(
    tac: Benchmark, module_name: str, target: str, problem: str
) -> None:
    spec = "python/" + target.format(module=module_name)
    with pytest.raises(AgentSpecError, match="cannot import agent") as info:
        resolve_agent(spec, tac)
    assert problem in str(info.value)
    assert spec in str(info.value)


def test_without_a_benchmark_only_models_resolve() -> None:
    with pytest.raises(AgentSpecError) as caught:
        resolve_agent("baseline/random", None)
    message = str(caught.value)
    assert "for benchmark" not in message and "baseline/" not in message.split("Valid")[1]
    assert "openai/MODEL" in message
