"""Agent specs: the strings users pass to ``--agent``, resolved to agents.

- ``baseline/NAME``: a model-free agent of the chosen benchmark.
- ``python/MODULE:ATTRIBUTE``: an importable agent object, agent class (called with no
  arguments) or turn function (wrapped in `FunctionAgent`), for your own agents and tests.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from deedbench.agents.function import FunctionAgent
from deedbench.engine import Agent, Benchmark

__all__ = ["AgentSpecError", "agent_kinds", "resolve_agent"]


class AgentSpecError(Exception):
    """An agent spec that names no agent; the message lists the valid ones."""


def agent_kinds(benchmark: Benchmark | None = None) -> list[str]:
    """The specs a user can pass, for help and error messages."""
    kinds = []
    if benchmark is not None:
        kinds += [f"baseline/{name}" for name in benchmark.baselines()]
    kinds.append("python/MODULE:ATTRIBUTE")
    return kinds


def resolve_agent(spec: str, benchmark: Benchmark) -> Agent:
    prefix, _, rest = spec.partition("/")
    if prefix == "baseline":
        baselines = benchmark.baselines()
        if rest in baselines:
            return baselines[rest]()
    elif prefix == "python" and ":" in rest:
        return _import_agent(rest)
    valid = ", ".join(agent_kinds(benchmark))
    raise AgentSpecError(
        f"unknown agent {spec!r} for benchmark {benchmark.name!r}. Valid agents: {valid}"
    )


def _import_agent(target: str) -> Agent:
    module_name, _, attribute = target.partition(":")
    try:
        found: Any = getattr(import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise AgentSpecError(f"cannot import agent python/{target}: {exc}") from None
    if hasattr(found, "next_turn"):
        return found
    if isinstance(found, type):
        return found()
    return FunctionAgent(found)
