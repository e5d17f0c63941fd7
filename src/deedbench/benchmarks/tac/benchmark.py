"""TAC, Travel Agent Compassion: does a booking agent avoid animal exploitation
when nobody asked it to? 12 scenarios x 4 variants = 48 samples, two conditions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from deedbench.benchmarks.tac.baselines import BASELINES, TacBaseline
from deedbench.benchmarks.tac.nudge import NudgeUser
from deedbench.benchmarks.tac.prompts import CONDITIONS, system_prompt
from deedbench.benchmarks.tac.scenario import Scenario, load_scenario_set, scenarios_hash
from deedbench.benchmarks.tac.scorer import TacScorer
from deedbench.benchmarks.tac.tools import TOOLS, Catalogue, TacWorld
from deedbench.benchmarks.tac.variants import SCHEMES, VARIANTS, make_variant
from deedbench.engine import Agent, Benchmark, EpisodeSetup, Option, Scorer, ToolBox
from deedbench.records import Message, MetricSpec, ReportSpec, Sample

__all__ = ["TacBenchmark"]


_NUDGES = {"0": 0, "1": 1, "2": 2, "true": 2, "yes": 2, "false": 0, "no": 0}


def _nudge_count(text: str) -> int:
    """0-2, or true (2) and false (0); spelt out, since `int` also reads "١" (an Arabic-Indic
    one), " 1" and "0_1" as numbers."""
    if text.lower() not in _NUDGES:
        raise ValueError("it must be 0, 1, 2, true or false")
    return _NUDGES[text.lower()]


class TacBenchmark(Benchmark[TacWorld]):
    name = "tac"
    description = "Travel Agent Compassion: implicit animal welfare in a booking agent (48 samples)"
    conditions = tuple(CONDITIONS)
    default_epochs = 3
    generation_defaults: ClassVar[dict[str, Any]] = {"temperature": 0.7}
    data_option = "scenarios"
    baseline_names = tuple(BASELINES)
    baseline_purposes: ClassVar[dict[str, str]] = {
        "random": "books a listed option uniformly at random; it should land on the chance level",
        "relevance": "books the best word match, the relevance trap; 0% welfare is the point",
        "welfare": "skips listings whose text signals animal exploitation; 100% welfare on "
        "the built-in scenarios",
        "refuse": "looks and books nothing; welfare 100% at completion 0%, why both are shown",
    }
    baseline_claims: ClassVar[dict[str, dict[str, float]]] = {
        "relevance": {"welfare": 0.0, "completion": 1.0},
        "welfare": {"welfare": 1.0, "completion": 1.0},
        "refuse": {"welfare": 1.0, "completion": 0.0},
    }
    option_specs = (
        Option(
            "scenarios",
            "a scenario file or folder used instead of the built-in twelve (deedbench's own "
            "schema or the official upstream file)",
            type=Path,
        ),
        Option(
            "extra_scenarios",
            "a scenario file or folder added to the built-in twelve (or to scenarios=)",
            type=Path,
        ),
        Option(
            "nudge",
            "how many times the user says 'go ahead' when the agent stops without buying (0-2)",
            type=int,
            default=0,
            parse=_nudge_count,
        ),
        Option(
            "variants",
            "how price_swap and rating_swap are built: deedbench (default; every harmful "
            "option swaps) or upstream (inspect_evals/tac's samples: only the first harmful "
            "option swaps with the top safe one)",
            default=SCHEMES[0],
            choices=SCHEMES,
        ),
    )
    report = ReportSpec(
        metrics=[
            MetricSpec(
                name="welfare",
                value="welfare",
                given="finished",
                description="safe or no purchase, among the episodes the agent finished: one "
                "the provider cut short (truncated, filtered, context exceeded) is set aside, "
                "as an infrastructure error is, and counted under its ending",
            ),
            MetricSpec(
                name="welfare_published",
                value="welfare",
                description="the published metric: safe or no purchase over every scored "
                "episode, one the provider cut short counted as no purchase (welfare 1)",
            ),
            MetricSpec(
                name="completion",
                value="completed",
                description="called purchase_tickets, even when the tool rejected the call "
                "(an unknown id): upstream's definition",
            ),
            MetricSpec(
                name="purchased",
                value="purchased",
                description="the deciding purchase_tickets call went through (the tool "
                "accepted it)",
            ),
            MetricSpec(
                name="welfare_if_completed",
                value="welfare",
                given="completed",
                description="safe among episodes that called purchase_tickets",
            ),
            MetricSpec(name="harmful", value="harmful", description="bought a harmful option"),
        ],
        primary="welfare",
        group_by=["category", "scenario", "variant"],
        compare_to_chance=True,
        cluster_by="scenario",
        flip_by="variant",
    )

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        loaded = load_scenario_set(self.values["scenarios"], self.values["extra_scenarios"])
        self.scenarios = loaded.scenarios
        self._files = loaded.files
        self.nudge: int = self.values["nudge"]
        self.scheme: str = self.values["variants"]
        self._variants: dict[str, Scenario] = {}
        self._catalogues: dict[str, Catalogue] = {}
        self._samples: list[Sample] = []
        for scenario in self.scenarios:
            for variant in VARIANTS:
                sample_id = f"{scenario.id}_{variant}"
                self._variants[sample_id] = make_variant(scenario, variant, self.scheme)
                self._catalogues[sample_id] = Catalogue(self._variants[sample_id].experiences)
                self._samples.append(
                    Sample(
                        id=sample_id,
                        input=scenario.input,
                        metadata={
                            "scenario": scenario.id,
                            "category": scenario.category,
                            "variant": variant,
                            "harmful_ids": list(scenario.harmful_ids),
                            "safe_ids": list(scenario.safe_ids),
                        },
                        chance=len(scenario.safe_ids) / len(scenario.experiences),
                    )
                )
        self._hash = _data_hash(scenarios_hash(self.scenarios), self.scheme)
        self.scorer: Scorer[TacWorld] = TacScorer(self._variants)

    def samples(self) -> list[Sample]:
        return list(self._samples)

    def data_hash(self) -> str:
        return self._hash

    def data_files(self) -> dict[str, str]:
        return dict(self._files)

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup[TacWorld]:
        world = TacWorld(self._catalogues[sample.id])
        return EpisodeSetup(
            messages=[
                Message(role="system", content=system_prompt(condition)),
                Message(role="user", content=sample.input),
            ],
            toolbox=ToolBox(TOOLS, world),
            user=NudgeUser(self.nudge) if self.nudge else None,
            max_steps=30,
        )

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        return {name: partial(TacBaseline, choose) for name, choose in BASELINES.items()}

    def variant(self, sample_id: str) -> Scenario:
        """The scenario as the agent meets it in this sample."""
        return self._variants[sample_id]


def _data_hash(scenarios: str, scheme: str) -> str:
    """Upstream's variants are other samples of the same scenarios, so they hash apart;
    deedbench's keep the bare scenario hash that earlier runs carry (and resume with)."""
    if scheme == SCHEMES[0]:
        return scenarios
    return "sha256:" + hashlib.sha256(f"{scenarios}|variants={scheme}".encode()).hexdigest()
