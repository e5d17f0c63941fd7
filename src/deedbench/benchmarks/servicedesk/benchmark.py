"""A service desk as a benchmark: a customer, a written policy, a database the tools change.

`ServiceDeskBenchmark` runs any `Domain`: a subclass names the benchmark, sets
its `domain`, and says where the world, the tasks and the policy come from
(`load_base`, `load_tasks`, `load_policy`). Scored three ways, each reported on
its own with evidence: the final database against the gold one (canonically,
and by τ-bench's hash rule), what the agent told the customer (τ-bench's
substring rule and a strict one), and the procedure (identification, consent
before every change, ...), which τ-bench never checks.
"""

from __future__ import annotations

import hashlib
import json
from abc import abstractmethod
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import ClassVar

from deedbench.benchmarks.servicedesk.baselines import IdleAgent, OracleAgent
from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.llm_user import LLMUser, user_prompt
from deedbench.benchmarks.servicedesk.scorer import DeskScorer
from deedbench.benchmarks.servicedesk.task import DeskTask
from deedbench.benchmarks.servicedesk.user import ScriptedUser
from deedbench.benchmarks.servicedesk.validate import TaskCheck, validate_benchmark
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.engine import Agent, AgentContext, Benchmark, EpisodeSetup, Option, ToolBox, User
from deedbench.errors import BenchmarkError
from deedbench.records import AGENT_SCOPE, Message, MetricSpec, ReportSpec, Sample

__all__ = ["USER_OPTION", "ServiceDeskBenchmark"]


def _user(text: str) -> str:
    """The customer's spec: scripted or llm:SPEC (user/llm:SPEC too)."""
    user = text.removeprefix("user/")
    if user != "scripted" and not user.startswith("llm:"):
        raise ValueError("it must be 'scripted' or 'llm:AGENT-SPEC'")
    return user


USER_OPTION = Option(
    "user",
    "the simulated customer: scripted (default) or llm:AGENT-SPEC",
    default="scripted",
    parse=_user,
)


class ServiceDeskBenchmark(Benchmark[DeskWorld]):
    """A desk over `domain`; subclasses set `name`, `description` and `domain` and load
    the world, the tasks and the policy."""

    domain: ClassVar[Domain]
    conditions = ("default",)
    default_epochs = 1
    baseline_names = ("oracle", "reckless", "idle")
    baseline_purposes: ClassVar[dict[str, str]] = {
        "oracle": "does what each task needs, asking consent first; 100% on every measure",
        "reckless": "makes the right changes without asking consent: reward_tau 100%, "
        "reward_verified only where nothing is written (26.1% of the built-in tasks)",
        "idle": "does nothing; it passes only the tasks that need no change (8.7% of the "
        "built-in tasks)",
    }
    baseline_claims: ClassVar[dict[str, dict[str, float]]] = {
        "oracle": {"reward_tau": 1.0, "reward_verified": 1.0, "procedure_ok": 1.0},
        "reckless": {"reward_tau": 1.0, "reward_verified": 24 / 92},
        "idle": {"reward_tau": 8 / 92, "reward_verified": 8 / 92},
    }
    max_tool_errors: int | None = 10
    """Consecutive failed tool calls that end an episode (None: no limit)."""
    opening_stops: ClassVar[bool] = True
    """Whether a stop in the customer's opening message ends the episode (`EpisodeSetup`)."""
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
            MetricSpec(
                name="reward_tau_agent",
                value="reward_tau",
                given=AGENT_SCOPE,
                description="τ-bench's reward among the episodes that passed or failed by the "
                "agent's doing (`attribution`): the agent's own share; a failure put on the "
                "simulated customer, the task or on several is set aside, counted under its party",
            ),
            MetricSpec(
                name="outcome",
                value="outcome_canonical",
                description="the final database equals the gold one, compared canonically "
                "(100 equals 100.0, unordered lists as multisets); a task for a human also "
                "needs the transfer",
            ),
            MetricSpec(
                name="outcome_tau",
                value="outcome_tau",
                description="the final database equals the gold one by τ-bench's rule "
                "(equal str() of every record either side touched: equal hashes)",
            ),
            MetricSpec(
                name="outputs_strict",
                value="outputs_strict",
                description="every required output is in the agent's replies, numbers as "
                'numbers and words on word boundaries ("10" is not in "$100")',
            ),
            MetricSpec(
                name="outputs_compat",
                value="outputs_compat",
                description="every required output is in the agent's replies by τ-bench's "
                'rule: a lower-cased substring, commas removed ("10" is in "$100")',
            ),
            MetricSpec(
                name="procedure_ok",
                value="procedure_ok",
                description="no procedure rule broken (consent before each write, "
                "authentication first, one user, one tool call per turn, one change per "
                "order, nothing after a transfer)",
            ),
        ],
        primary="reward_verified",
        group_by=["template", "task"],
        pass_hat_k=["reward_tau", "reward_verified"],
        show_rules=True,
    )

    option_specs: ClassVar[tuple[Option, ...]] = (USER_OPTION,)

    def __init__(
        self, options: Mapping[str, str] | None = None, tasks: list[DeskTask] | None = None
    ) -> None:
        """`tasks` replaces the benchmark's own (used when rebuilding a task file)."""
        super().__init__(options)
        self.user: str = self.values["user"]
        self._user_model: Agent | None = None
        self.tasks = {t.id: t for t in (self.load_tasks() if tasks is None else tasks)}
        ways = self.domain.talk.identities
        for task in self.tasks.values():
            way = task.instructions.identify_by
            if way not in ways:
                raise BenchmarkError(
                    f"{self.name} task {task.id}: field instructions.identify_by: "
                    f"{way!r} is no way a {self.domain.name} customer "
                    f"identifies themselves ({', '.join(ways)})"
                )
            missing = self.domain.missing_details(task.instructions)
            if missing:
                raise BenchmarkError(
                    f"{self.name} task {task.id}: the instructions lack {', '.join(missing)}, "
                    f"which a {self.domain.name} customer identifying by {way} gives"
                )
        self.policy = self.load_policy()

    @abstractmethod
    def load_base(self) -> Tables:
        """The world every episode starts from."""

    @abstractmethod
    def load_tasks(self) -> list[DeskTask]:
        """The benchmark's tasks."""

    @abstractmethod
    def load_policy(self) -> str:
        """The policy the agent reads as its system prompt."""

    @property
    def user_prompt_version(self) -> str | None:
        """The model-played customer's prompt version, recorded with a run."""
        return self.domain.talk.prompt_version

    @cached_property
    def base(self) -> Tables:
        """The world every episode starts from (loaded on first use: `list` needs none)."""
        return self.load_base()

    @cached_property
    def scorer(self) -> DeskScorer:  # type: ignore[override]  # the base's attribute, made lazily
        """Built on first use, like the world it compares against (`list` loads neither)."""
        scripted = self.user == "scripted"
        return DeskScorer(self.base, self.domain, self.tasks, scripted_user=scripted)

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

    def task(self, sample_id: str) -> DeskTask:
        return self.tasks[sample_id]

    def user_model_spec(self) -> str | None:
        return self.user.removeprefix("llm:") if self.user.startswith("llm:") else None

    def user_instruction(self, sample_id: str) -> str | None:
        return user_prompt(self.tasks[sample_id].instructions, self.domain)

    def use_user_model(self, agent: Agent) -> None:
        self._user_model = agent

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup[DeskWorld]:
        task = self.tasks[sample.id]
        user: User
        if self.user == "scripted":
            user = ScriptedUser(task.instructions, self.domain)
        elif self._user_model is None:
            raise BenchmarkError(f"the user model {self.user!r} was never attached")
        else:
            context = AgentContext(f"{sample.id}:user", condition, 0, seed)
            user = LLMUser(self._user_model, task.instructions, self.domain, context)
        return EpisodeSetup(
            messages=[Message(role="system", content=self.policy)],
            toolbox=self.toolbox(DeskWorld(self.base)),
            user=user,
            max_steps=30,
            max_tool_errors=self.max_tool_errors,
            opening_stops=self.opening_stops,
        )

    def toolbox(self, world: DeskWorld) -> ToolBox[DeskWorld]:
        """The episode's tools over its world: deedbench checks every call's arguments."""
        return ToolBox(self.domain.agent_tools, world)

    def validate(self) -> list[TaskCheck]:
        return validate_benchmark(self)

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        return {
            "oracle": lambda: OracleAgent(self.task, self.domain),
            "reckless": lambda: OracleAgent(self.task, self.domain, ask_first=False),
            "idle": IdleAgent,
        }
