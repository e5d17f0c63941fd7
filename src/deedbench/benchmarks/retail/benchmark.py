"""The retail service desk: a customer, a written policy, a database the tools change.

Scored three ways, each reported on its own with evidence: the final database
against the gold one (canonically, and by τ-bench's hash rule), what the agent
told the customer (τ-bench's substring rule and a strict one), and the procedure
(identification, consent before every change, ...), which τ-bench never checks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from functools import cached_property
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

from deedbench.benchmarks.retail.baselines import IdleAgent, OracleAgent
from deedbench.benchmarks.retail.domain import RETAIL, Domain
from deedbench.benchmarks.retail.generate import generate_world
from deedbench.benchmarks.retail.llm_user import PROMPT_VERSION, LLMUser
from deedbench.benchmarks.retail.scorer import RetailScorer
from deedbench.benchmarks.retail.tasks import RetailTask
from deedbench.benchmarks.retail.user import ScriptedUser
from deedbench.benchmarks.retail.world import RetailWorld
from deedbench.engine import (
    Agent,
    AgentContext,
    Benchmark,
    BenchmarkError,
    EpisodeSetup,
    EpisodeTranscript,
    Message,
    Sample,
    ToolBox,
    User,
)
from deedbench.scoring import MetricSpec, ReportSpec, Score

if TYPE_CHECKING:
    from deedbench.benchmarks.retail.validate import TaskCheck

__all__ = ["RetailBenchmark", "builtin_tasks", "policy_text"]

WORLD_SEED = 0
OPTIONS = {"user": "the simulated customer: scripted (default) or llm:AGENT-SPEC"}


def policy_text() -> str:
    return resources.files("deedbench.benchmarks.retail").joinpath("policy.md").read_text()


def builtin_tasks() -> list[RetailTask]:
    text = resources.files("deedbench.benchmarks.retail").joinpath("tasks.json").read_text()
    return [RetailTask.model_validate(t) for t in json.loads(text)]


class RetailBenchmark(Benchmark):
    name = "retail"
    description = "Service desk (retail): outcome, outputs and procedure, with a simulated customer"
    conditions = ("default",)
    default_epochs = 1
    user_prompt_version = PROMPT_VERSION
    baseline_names = ("oracle", "reckless", "idle")
    domain: ClassVar[Domain] = RETAIL
    max_tool_errors: int | None = 10
    """Consecutive failed tool calls that end an episode (None: no limit)."""
    report = ReportSpec(
        metrics=[
            MetricSpec(
                name="reward_verified",
                value="reward_verified",
                description="canonical outcome x strict outputs x no procedure violation",
            ),
            MetricSpec(
                name="reward_tau",
                value="reward_tau",
                description="τ-bench's reward: hash-rule outcome x substring outputs, for an "
                "episode the customer or a transfer ended (any other end scores 0)",
            ),
            MetricSpec(name="outcome", value="outcome_canonical"),
            MetricSpec(name="outcome_tau", value="outcome_tau"),
            MetricSpec(name="outputs_strict", value="outputs_strict"),
            MetricSpec(name="outputs_compat", value="outputs_compat"),
            MetricSpec(name="procedure_ok", value="procedure_ok"),
        ],
        primary="reward_verified",
        group_by=["template", "task"],
        pass_hat_k=["reward_tau", "reward_verified"],
        show_rules=True,
    )

    option_help: ClassVar[dict[str, str]] = OPTIONS

    def __init__(
        self, options: Mapping[str, str] | None = None, tasks: list[RetailTask] | None = None
    ) -> None:
        """`tasks` replaces the shipped task file (used when rebuilding it)."""
        super().__init__(options)
        unknown = sorted(set(self.options) - set(self.option_help))
        if unknown:
            valid = "; ".join(f"{k}: {v}" for k, v in self.option_help.items())
            raise BenchmarkError(f"unknown {self.name} option(s) {unknown}. Valid options: {valid}")
        self.user = self.options.get("user", "scripted").removeprefix("user/")  # user/llm:X too
        if self.user != "scripted" and not self.user.startswith("llm:"):
            raise BenchmarkError(
                f"{self.name} option user must be 'scripted' or 'llm:AGENT-SPEC'; got {self.user!r}"
            )
        self._user_model: Agent | None = None
        self.tasks = {t.id: t for t in (self.load_tasks() if tasks is None else tasks)}
        self.policy = self.load_policy()

    def load_tasks(self) -> list[RetailTask]:
        return builtin_tasks()

    def load_policy(self) -> str:
        return policy_text()

    @cached_property
    def base(self) -> dict[str, Any]:
        """The world every episode starts from (generated on first use: `list` needs none)."""
        return generate_world(seed=WORLD_SEED)

    @cached_property
    def scorer(self) -> RetailScorer:
        return RetailScorer(self.base, self.domain)

    @cached_property
    def _hash(self) -> str:
        """The world by τ-bench's hash, then the tasks and the policy the agent reads."""
        from deedbench.scoring.state import tau_hash

        tasks = json.dumps([t.model_dump(mode="json") for t in self.tasks.values()], sort_keys=True)
        rest = hashlib.sha256(f"{tasks}\n{self.policy}".encode()).hexdigest()
        return f"world:{tau_hash(self.base)}|tasks+policy:{rest}"

    def data_hash(self) -> str:
        return self._hash

    def samples(self) -> list[Sample]:
        return [
            Sample(
                id=task.id,
                input=task.instructions.wants[0].say,
                metadata={"template": task.template, "task": task.id, "writes": task.writes},
            )
            for task in self.tasks.values()
        ]

    def task(self, sample_id: str) -> RetailTask:
        return self.tasks[sample_id]

    def user_model_spec(self) -> str | None:
        return self.user.removeprefix("llm:") if self.user.startswith("llm:") else None

    def use_user_model(self, agent: Agent) -> None:
        self._user_model = agent

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup:
        task = self.tasks[sample.id]
        user: User
        if self.user == "scripted":
            user = ScriptedUser(task.instructions, self.domain.procedure.write_tools)
        elif self._user_model is None:
            raise BenchmarkError(f"the user model {self.user!r} was never attached")
        else:
            context = AgentContext(f"{sample.id}:user", condition, 0, seed)
            user = LLMUser(self._user_model, task.instructions, context)
        return EpisodeSetup(
            messages=[Message(role="system", content=self.policy)],
            toolbox=self.toolbox(RetailWorld(self.base)),
            user=user,
            max_steps=30,
            max_tool_errors=self.max_tool_errors,
        )

    def toolbox(self, world: RetailWorld) -> ToolBox:
        """The episode's tools over its world: deedbench checks every call's arguments."""
        return ToolBox(self.domain.tools, world)

    def score(self, sample: Sample, transcript: EpisodeTranscript) -> Score:
        return self.scorer.score(self.tasks[sample.id], transcript)

    def validate(self) -> list[TaskCheck]:
        from deedbench.benchmarks.retail.validate import validate_benchmark

        return validate_benchmark(self)

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        return {
            "oracle": lambda: OracleAgent(self.task, self.domain),
            "reckless": lambda: OracleAgent(self.task, self.domain, ask_first=False),
            "idle": IdleAgent,
        }
