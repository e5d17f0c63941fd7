"""A run's recipe: it pickles, rebuilds the recorded benchmark and agents anywhere, and
says what it uses (the cache) and what it imports (for a fork server to import once)."""

from __future__ import annotations

import pickle

import pytest

from deedbench.agents import AgentSettings, ModelAgent, settings_for
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.servicedesk import LLMUser
from deedbench.engine import EpisodeCache, RunConfig, new_run_config
from deedbench.recipes import RunRecipe
from deedbench.records import ModelUser


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
