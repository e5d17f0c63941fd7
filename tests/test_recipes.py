"""A run's recipe: it pickles, rebuilds the recorded benchmark and agents anywhere, and
says what it uses (the cache) and what it imports (for a fork server to import once)."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import pytest

from _scorers import FixedScorer
from deedbench.agents import ModelAgent, settings_for
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.servicedesk import LLMUser
from deedbench.engine import EpisodeCache, Launch, ProcessExecutor, RunStore, new_run_config
from deedbench.errors import BenchmarkError
from deedbench.recipes import RunRecipe
from deedbench.records import AgentSettings, ModelUser, RunConfig, ScorerSpec


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-recipe-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-recipe-1111")


def tac(agent: str, **settings: object) -> RunConfig:
    bench = load_benchmark("tac")
    return new_run_config(
        run_id="r", benchmark=bench, agent=agent, agent_params=settings, conditions=["base"],
        epochs=1, seed=0, samples=bench.samples()[:2],
    )  # fmt: skip


def test_a_baseline_run_uses_no_cache_and_imports_its_benchmark() -> None:
    recipe = RunRecipe(tac("baseline/random"))
    assert not recipe.uses_cache
    assert recipe.modules == ("deedbench.recipes", "deedbench.benchmarks.tac")
    built = recipe.build(None, 4)
    assert built.benchmark.name == "tac" and set(recipe.config.sample_ids) <= set(built.samples)


def test_a_model_run_builds_its_agent_with_the_cache_it_is_given() -> None:
    config = tac("openai/gpt-4o", **AgentSettings(base_url="http://127.0.0.1:9/v1").model_dump())
    recipe = pickle.loads(pickle.dumps(RunRecipe(config)))  # what travels to a worker
    assert recipe.uses_cache and recipe.name == "r"
    assert recipe.modules[-2:] == ("deedbench.agents.openai_agent", "openai")
    cache = EpisodeCache(lambda entry: None)
    agent = recipe.build(cache, 4).agent
    assert isinstance(agent, ModelAgent) and agent.cache is cache
    assert agent.base_url == "http://127.0.0.1:9/v1"
    uncached = RunRecipe(config, cache=False)
    assert not uncached.uses_cache
    agent = uncached.build(cache, 4).agent
    assert isinstance(agent, ModelAgent) and agent.cache is None  # --no-cache


def test_a_model_played_user_is_rebuilt_and_its_sdk_imported() -> None:
    bench = load_benchmark("retail", {"user": "llm:anthropic/claude-test"})
    settings = settings_for("anthropic/claude-test", AgentSettings())
    config = new_run_config(
        run_id="desk", benchmark=bench, agent="baseline/oracle", agent_params={},
        conditions=list(bench.conditions), epochs=1, seed=0, samples=bench.samples()[:1],
        user=ModelUser(spec="anthropic/claude-test", settings=settings),
    )  # fmt: skip
    recipe = RunRecipe(config)
    assert recipe.uses_cache  # the customer's calls are cached
    assert recipe.modules[-2:] == ("deedbench.agents.anthropic_agent", "anthropic")
    built = recipe.build(EpisodeCache(lambda entry: None), 2)
    sample = built.samples[config.sample_ids[0]]
    user = built.benchmark.setup(sample, config.conditions[0], 1).user
    assert isinstance(user, LLMUser) and isinstance(user.model, AnthropicAgent)


def test_a_replaced_scorer_is_recorded_and_scores_where_the_run_is_rebuilt(
    tmp_path: Path,
) -> None:
    """`bench.scorer = ...` holds beyond this process: the run records the scorer, and a
    recipe rebuilt from the record alone (a worker's) scores with it, not the default."""
    bench = load_benchmark("tac")
    bench.scorer = FixedScorer("refused")
    config = new_run_config(
        run_id="fixed", benchmark=bench, agent="baseline/relevance", agent_params={},
        conditions=["base"], epochs=1, seed=0, samples=bench.samples()[:4],
    )  # fmt: skip
    assert config.scorer == ScorerSpec(target="_scorers:FixedScorer", args={"outcome": "refused"})
    rebuilt = pickle.loads(pickle.dumps(RunRecipe(config, benchmark=bench))).build(None, 4)
    assert rebuilt.benchmark is not bench and rebuilt.benchmark.scorer == FixedScorer("refused")
    with RunStore(tmp_path / "runs.db") as store:
        started = asyncio.run(Launch(config, store, RunRecipe(config)).run(ProcessExecutor(2, 4)))
        assert started == 4
        outcomes = [r.score.outcome if r.score else None for r in store.episodes("fixed")]
        assert outcomes == ["refused"] * 4
        assert store.get_run("fixed") == config


def test_the_default_scorer_is_recorded_and_kept() -> None:
    config = tac("baseline/random")
    assert config.scorer == ScorerSpec(target="deedbench.benchmarks.tac.scorer:TacScorer")
    assert type(RunRecipe(config).build(None, 4).benchmark.scorer).__name__ == "TacScorer"


def test_a_scorer_that_cannot_be_rebuilt_stops_the_run_naming_it() -> None:
    class Local(FixedScorer):  # defined in a function: no other process can import it
        pass

    bench = load_benchmark("tac")
    bench.scorer = Local()
    config = new_run_config(
        run_id="local", benchmark=bench, agent="baseline/random", agent_params={},
        conditions=["base"], epochs=1, seed=0, samples=bench.samples()[:1],
    )  # fmt: skip
    message = "the run was scored by test_recipes:test_a_scorer_that_cannot_be_rebuilt"
    with pytest.raises(BenchmarkError, match=message):
        RunRecipe(config).build(None, 4)
