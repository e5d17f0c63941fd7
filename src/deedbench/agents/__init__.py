"""Agents: anything that, given the conversation and the tool specs, returns the next turn.

They know no benchmark; baselines that use a benchmark's tools live with that benchmark.
Model agents (OpenAI-compatible, Anthropic) import their SDK only when created.
"""

from deedbench.agents.a2a_agent import A2AAgent
from deedbench.agents.cache import ResponseCache
from deedbench.agents.function import FunctionAgent
from deedbench.agents.limiter import AdaptiveLimiter, CallLimits, Limiter, SharedLimits
from deedbench.agents.model import ModelAgent
from deedbench.agents.registry import (
    Providers,
    agent_kinds,
    is_model_spec,
    resolve_agent,
    settings_for,
)
from deedbench.agents.roles import ROLES, ModelChoice, Role, role_settings

__all__ = [
    "ROLES",
    "A2AAgent",
    "AdaptiveLimiter",
    "CallLimits",
    "FunctionAgent",
    "Limiter",
    "ModelAgent",
    "ModelChoice",
    "Providers",
    "ResponseCache",
    "Role",
    "SharedLimits",
    "agent_kinds",
    "is_model_spec",
    "resolve_agent",
    "role_settings",
    "settings_for",
]
