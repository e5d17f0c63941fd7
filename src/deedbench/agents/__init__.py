"""Agents: anything that, given the conversation and the tool specs, returns the next turn.

They know no benchmark; baselines that use a benchmark's tools live with that benchmark.
"""

from deedbench.agents.function import FunctionAgent
from deedbench.agents.registry import AgentSpecError, agent_kinds, resolve_agent
from deedbench.engine import Agent, AgentContext

__all__ = [
    "Agent",
    "AgentContext",
    "AgentSpecError",
    "FunctionAgent",
    "agent_kinds",
    "resolve_agent",
]
