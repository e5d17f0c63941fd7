"""Agents: anything that, given the conversation and the tool specs, returns the next turn.

They know no benchmark; baselines that use a benchmark's tools live with that benchmark.
Model agents (OpenAI-compatible, Anthropic) import their SDK only when created.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

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


# Names this package listed before each name got one home (issue 27, commit 4ce4b4d),
# kept importable from here for a release: each warns, naming its home. Not in __all__.
_MOVED = {
    "Agent": "deedbench.engine",
    "AgentContext": "deedbench.engine",
    "AgentSettings": "deedbench.records",
    "AgentSpecError": "deedbench.errors",
    "GenerationParams": "deedbench.records",
    "RetryPolicy": "deedbench.records",
    "TransientError": "deedbench.errors",
}


def __getattr__(name: str) -> Any:
    """A name that moved, from its home, with a DeprecationWarning naming that home."""
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"importing {name} from {__name__} is deprecated: import it from {home}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(import_module(home), name)
