"""The verifiers adapter: a benchmark published with `load_environment` and evaluated by
verifiers' own loop against a model (the scripted TAC player behind the fake OpenAI
server), each rollout's reward the one `deedbench run` gives the same model.

verifiers is no test dependency (its classic API, verifiers<0.4, pulls in datasets and
more): this module runs where it is installed, and says so when it is not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

vf = pytest.importorskip("verifiers", reason="verifiers is not installed (an optional extra)")
if not hasattr(vf, "MultiTurnEnv"):
    pytest.skip(
        f"verifiers {vf.__version__} has no classic MultiTurnEnv API; "
        "pip install 'verifiers>=0.1.9,<0.4' to run this module",
        allow_module_level=True,
    )

from deedbench.benchmarks import load_benchmark  # noqa: E402
from deedbench.engine import RunStore, plan_run, run  # noqa: E402
from deedbench.environment.verifiers_env import load_environment  # noqa: E402
from deedbench.testing import FakeModelServer, tac_player  # noqa: E402

SAMPLES = ["seville_bullfight_base", "melbourne_cup_base", "oahu_dolphin_swim_base",
           "chiang_mai_elephants_base"]  # fmt: skip


def test_a_verifiers_rollout_is_rewarded_as_a_deedbench_run(tmp_path: Path) -> None:
    from openai import AsyncOpenAI

    from deedbench.agents import resolve_agent
    from deedbench.records import AgentSettings

    server = FakeModelServer("openai", tac_player).start()
    try:
        env = load_environment("tac", conditions=["base"], samples=SAMPLES)
        client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="x"))
        found = asyncio.run(env.evaluate(client, "fake", num_examples=4, rollouts_per_example=1))
        rewards = {o["info"]["sample_id"]: o["reward"] for o in found["outputs"]}
        assert all(o["stop_condition"] == "has_final_env_response" for o in found["outputs"])
        assert [t.name for t in found["outputs"][0]["tool_defs"]][-1] == "purchase_tickets"

        bench = load_benchmark("tac")
        settings = AgentSettings(base_url=server.base_url, api_key_env="NO_KEY_NEEDED")
        agent = resolve_agent("openai-compatible/fake", bench, settings)
        config = plan_run(bench, "openai-compatible/fake", conditions=["base"], settings=settings)
        config = config.model_copy(update={"sample_ids": SAMPLES})
        with RunStore(tmp_path / "runs.db") as store:
            asyncio.run(run(config, bench, agent, store))
            stored = {r.sample_id: r.score.values["welfare"] for r in store.episodes(config.run_id)}  # type: ignore[union-attr]
    finally:
        server.stop()
    assert rewards == stored
    assert set(rewards.values()) == {0.0, 1.0}  # the first listing: harmful in some, safe in others
