"""The public API: what each subpackage exports. Changing it should be a deliberate act."""

from __future__ import annotations

import importlib

import pytest

PUBLIC_PACKAGES = [
    "deedbench",
    "deedbench.engine",
    "deedbench.agents",
    "deedbench.scoring",
    "deedbench.stats",
    "deedbench.reports",
    "deedbench.benchmarks",
]

ENGINE_API = [
    "Agent",
    "AgentContext",
    "Benchmark",
    "BenchmarkError",
    "Built",
    "CacheEntry",
    "ContextExceeded",
    "EpisodeCache",
    "EpisodeJob",
    "EpisodeKey",
    "EpisodeRecord",
    "EpisodeSetup",
    "EpisodeTranscript",
    "Executor",
    "ExecutorError",
    "InProcessExecutor",
    "InfrastructureError",
    "Message",
    "Option",
    "PlanError",
    "ProcessExecutor",
    "Recipe",
    "RunAborted",
    "RunConfig",
    "RunStore",
    "Sample",
    "Scorer",
    "StoreError",
    "Termination",
    "Tool",
    "ToolBox",
    "ToolCall",
    "ToolError",
    "TurnOutcome",
    "Usage",
    "User",
    "episode_seed",
    "execute",
    "gather_or_abort",
    "new_run_config",
    "redact",
    "register_secret",
    "run",
    "run_episode",
    "tool",
]

AGENTS_API = [
    "AdaptiveLimiter",
    "Agent",
    "AgentContext",
    "AgentSettings",
    "AgentSpecError",
    "FunctionAgent",
    "GenerationParams",
    "ModelAgent",
    "Providers",
    "ResponseCache",
    "RetryPolicy",
    "TransientError",
    "agent_kinds",
    "is_model_spec",
    "resolve_agent",
]


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_all_is_declared_and_every_name_exists(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list | tuple), f"{name} declares no __all__"
    assert exported, f"{name}.__all__ is empty"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    missing = [item for item in exported if not hasattr(module, item)]
    assert missing == [], f"{name}.__all__ names missing attributes: {missing}"


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from deedbench.engine import *", namespace)
    namespace.pop("__builtins__")
    assert sorted(namespace) == ENGINE_API


def test_engine_api() -> None:
    import deedbench.engine

    assert sorted(deedbench.engine.__all__) == ENGINE_API


def test_agents_api() -> None:
    import deedbench.agents

    assert sorted(deedbench.agents.__all__) == AGENTS_API


def test_agents_reexport_the_engine_protocols() -> None:
    """`deedbench.agents.Agent` is the engine's protocol, not a copy."""
    import deedbench.agents
    import deedbench.engine

    assert deedbench.agents.Agent is deedbench.engine.Agent
    assert deedbench.agents.AgentContext is deedbench.engine.AgentContext


def test_version_matches_installed_metadata() -> None:
    """`deedbench.__version__` and pyproject's version must not drift apart."""
    from importlib.metadata import version

    import deedbench

    assert deedbench.__version__ == version("deedbench")
