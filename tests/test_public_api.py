"""The public API of the engine and the agents, name by name: changing it should be a
deliberate act (tests/test_exported_names.py checks every package's __all__)."""

from __future__ import annotations

ENGINE_API = [
    "Agent",
    "AgentContext",
    "Benchmark",
    "BenchmarkError",
    "Built",
    "CacheEntry",
    "Check",
    "ContextExceeded",
    "EpisodeCache",
    "EpisodeJob",
    "EpisodeKey",
    "EpisodeRecord",
    "EpisodeSetup",
    "EpisodeTranscript",
    "Executor",
    "ExecutorError",
    "HalfDuplex",
    "InProcessExecutor",
    "InfrastructureError",
    "Launch",
    "Message",
    "Option",
    "PlanError",
    "ProcessExecutor",
    "Recipe",
    "ResumeError",
    "RunAborted",
    "RunConfig",
    "RunStore",
    "Sample",
    "Scorer",
    "StoreError",
    "StoreFormatError",
    "Termination",
    "Tool",
    "ToolBox",
    "ToolCall",
    "ToolError",
    "ToolKind",
    "TurnOutcome",
    "Usage",
    "User",
    "episode_seed",
    "gather_or_abort",
    "new_run_config",
    "plan_run",
    "redact",
    "register_secret",
    "resume_run",
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
    "CallLimits",
    "FunctionAgent",
    "GenerationParams",
    "Limiter",
    "ModelAgent",
    "Providers",
    "ResponseCache",
    "RetryPolicy",
    "SharedLimits",
    "TransientError",
    "agent_kinds",
    "is_model_spec",
    "resolve_agent",
    "settings_for",
]


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
