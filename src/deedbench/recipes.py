"""How a recorded run's benchmark and agents are rebuilt, in whatever process runs them.

A `RunRecipe` is the run's configuration and nothing live: it pickles, so the driver of
a run can hand it to a worker process (or, later, a cluster), which loads the benchmark
by name and options and resolves the agent (and a model-played user) from the settings
the run recorded, with that process's response cache and its share of the concurrency.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from deedbench.agents import CallLimits, Providers, is_model_spec, resolve_agent, settings_for
from deedbench.agents.registry import MODEL_PROTOCOLS
from deedbench.benchmarks import BUILTIN, load_benchmark
from deedbench.engine import Agent, Benchmark, EpisodeCache
from deedbench.engine.benchmark import rebuild_scorer
from deedbench.engine.executor import Built
from deedbench.engine.planning import JUDGE_DEFAULTS
from deedbench.records import AgentSettings, RunConfig

__all__ = ["RunRecipe", "attach_parties", "modules_to_preload"]


@dataclass(frozen=True)
class RunRecipe:
    """A run's recipe; `cache` False (``--no-cache``) keeps its agents off the cache.

    `benchmark` is the run's benchmark where the caller has already built it (to plan the
    run): this process builds with it rather than load it again. It never travels: a
    pickled recipe (for a worker, a cluster) leaves it behind, and is rebuilt there by
    name and options.
    """

    config: RunConfig
    cache: bool = True
    benchmark: Benchmark[Any] | None = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "benchmark": None}

    @property
    def name(self) -> str:
        return self.config.run_id

    @property
    def uses_cache(self) -> bool:
        config = self.config
        models = is_model_spec(config.agent) or config.user is not None or config.judge is not None
        return self.cache and models

    @property
    def modules(self) -> tuple[str, ...]:
        """What building imports, for a fork server to import once for all workers: the
        module of one of deedbench's benchmarks, each model's agent module and SDK. (Not
        another package's or a python/ benchmark's or agent's module: a fork server dies of
        any error but ImportError in what it preloads.)"""
        roles = self.config.role_settings
        specs = [self.config.agent, *(spec for spec, _ in roles.values())]
        return modules_to_preload(self.config.benchmark, specs)

    def build(
        self, cache: EpisodeCache | None, concurrency: int, limits: CallLimits | None = None
    ) -> Built:
        """The benchmark and agent, their model calls through `cache` where the run uses it
        and within `limits` where the process shares them among runs.

        Raises BenchmarkError, AgentSpecError or RunAborted (a key missing) as the CLI
        reports them.
        """
        benchmark = self.benchmark
        if benchmark is None:
            benchmark = load_benchmark(self.config.benchmark, self.config.benchmark_options)
        recorded = self.config.scorer
        if recorded is not None and benchmark.scorer_spec() != recorded:
            benchmark.scorer = rebuild_scorer(recorded)  # the run's, not the default
        providers = Providers(cache if self.uses_cache else None, concurrency, limits)
        agent = attach_parties(self.config, benchmark, providers)
        return Built(benchmark, agent, providers.aclose)


def modules_to_preload(benchmark: str, specs: Iterable[str]) -> tuple[str, ...]:
    """What building a recipe of `benchmark` with agents `specs` imports (`RunRecipe.modules`)."""
    names = [__name__]
    if benchmark in BUILTIN:
        names.append(BUILTIN[benchmark].partition(":")[0])
    for spec in specs:
        protocol, _, model = spec.partition("/")
        if model and protocol in MODEL_PROTOCOLS:  # another package's provider imports itself
            module, _, package = MODEL_PROTOCOLS[protocol]
            names += [module, package]
    return tuple(dict.fromkeys(names))


def attach_parties(
    config: RunConfig,
    benchmark: Benchmark[Any],
    providers: Providers,
    *,
    agent: Agent | None = None,
    user: Agent | None = None,
) -> Agent:
    """The run's agent, after giving the benchmark its model-played user and its judge, if
    it has them, each with the settings the run recorded. `agent` and `user` (a user's
    model) are used as they are instead of the recorded specs (a side played from
    outside: `engine.seat.Seat`)."""
    if config.user is not None:
        if user is None:
            user = resolve_agent(config.user.spec, benchmark, config.user.settings, providers)
        benchmark.use_user_model(user)
    judge = benchmark.judge_model_spec()
    if judge is not None:
        settings: AgentSettings | None = None
        if config.judge is not None:
            settings = config.judge.settings
        else:  # a run recorded before its judge was: τ²'s settings
            settings = settings_for(judge, JUDGE_DEFAULTS) if is_model_spec(judge) else None
        benchmark.use_judge_model(resolve_agent(judge, benchmark, settings, providers))
    if agent is not None:
        return agent
    if not is_model_spec(config.agent):  # a baseline, python/, a2a/ (closed with the rest)
        return resolve_agent(config.agent, benchmark, None, providers)
    return resolve_agent(config.agent, benchmark, config.agent_settings, providers)
