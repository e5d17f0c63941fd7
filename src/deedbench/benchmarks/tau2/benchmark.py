"""τ²'s tasks as a deedbench benchmark: one class for every domain, a module per domain.

`Tau2Benchmark` reads a domain's data from a τ² checkout or ``$TAU2_DATA_DIR``
(`data.domain_folder`), runs each task as τ²'s half-duplex episode (the agent's
fixed greeting, or the task's opening conversation; both sides' tools; τ²'s
limits, 200 steps and 10 failed calls in all), and scores it with τ²'s evaluator
and the domain's procedure rules (`Tau2Scorer`). A subclass (``<domain>/benchmark.py``)
names the benchmark, says which `Tau2Domain` its options select and how the agent's
policy is assembled, and may add options.

The user is the script by default (``-T user=scripted``, for the baselines) or a model
playing τ²'s user simulator (``-T user=llm:SPEC``). ``-T mode=solo`` runs the tasks
that have a ticket with no user, as τ²'s solo agent does.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from difflib import get_close_matches
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from deedbench.benchmarks.servicedesk.benchmark import USER_OPTION
from deedbench.benchmarks.tau2.baselines import AGENT_STOP, Tau2Idle, Tau2Oracle
from deedbench.benchmarks.tau2.data import domain_folder
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.environment import Tau2Environment
from deedbench.benchmarks.tau2.evaluator import SCORED_ENDINGS, tau2_trajectory
from deedbench.benchmarks.tau2.judge import DEFAULT_JUDGE, JUDGE_READINGS, run_judge
from deedbench.benchmarks.tau2.metrics import TAU2_REPORT
from deedbench.benchmarks.tau2.scorer import (
    NL_JUDGING,
    NL_VERDICTS,
    TAU2_TERMINATIONS,
    Tau2Scorer,
)
from deedbench.benchmarks.tau2.shown import (
    domain_texts,
    listed_specs,
    user_tool_names,
    world_session,
)
from deedbench.benchmarks.tau2.source.locate import NO_SOURCE
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS, Tau2Prompts
from deedbench.benchmarks.tau2.source.texts import Tau2Texts
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.benchmarks.tau2.toolbox import DONE_TOOL, Tau2ToolBox
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.benchmarks.tau2.user import (
    ScriptedTau2User,
    Tau2LLMUser,
    guidelines,
    user_prompt,
)
from deedbench.benchmarks.tau2.validate import Tau2TaskCheck, validate_tasks
from deedbench.engine import (
    Agent,
    AgentContext,
    Benchmark,
    EpisodeSetup,
    EpisodeTranscript,
    HalfDuplex,
    Option,
    User,
)
from deedbench.errors import BenchmarkError
from deedbench.records import Message, Sample

__all__ = [
    "JUDGE_OPTION",
    "JUDGE_READING_OPTION",
    "LIMIT_OPTIONS",
    "MAX_ERRORS",
    "MAX_STEPS",
    "MODES",
    "MODE_OPTION",
    "PROMPT_VERSION",
    "SOURCE_OPTION",
    "TASKS_OPTION",
    "Tau2Benchmark",
    "agent_system_prompt",
    "split_option",
    "task_sample",
    "tau2_options",
]

MAX_STEPS = 200
MAX_ERRORS = 10
PROMPT_VERSION = "tau2-v1.0.1"
"""The user simulator's prompt: τ²'s guidelines and scenario block, as at τ² v1.0.1."""

_DEPRECATED = {"AGENT_INSTRUCTION": "agent_instruction", "SOLO_INSTRUCTION": "solo_instruction"}


def __getattr__(name: str) -> str:
    """The instructions that used to be τ²'s words held here: deedbench's own now (τ²'s are
    read from the user's τ² source, `Tau2Benchmark.texts`)."""
    if name in _DEPRECATED:
        field = _DEPRECATED[name]
        warnings.warn(
            f"deedbench.benchmarks.tau2.benchmark.{name} is deprecated and holds deedbench's "
            f"own wording: τ²'s is read from the user's τ² source, "
            f"Tau2Benchmark.texts.prompts.{field}",
            DeprecationWarning,
            stacklevel=2,
        )
        text: str = getattr(OWN_PROMPTS, field)
        return text
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def agent_system_prompt(
    policy: str, ticket: str | None = None, prompts: Tau2Prompts = OWN_PROMPTS
) -> str:
    """The agent system prompt from `prompts` (τ²'s when read from its source); with a
    ticket, its solo agent's."""
    return prompts.agent_system_prompt(policy, ticket)


def split_option(splits: tuple[str, ...]) -> Option:
    return Option(
        "split",
        f"which tasks: {', '.join(splits)} (base, the leaderboard's, by default)",
        default="base",
        choices=splits,
    )


def _task_ids(text: str) -> list[str]:
    ids = list(dict.fromkeys(part.strip() for part in text.split(",")))
    if not all(ids):
        raise ValueError("task ids separated by commas, none empty (e.g. 0,5,12)")
    return ids


TASKS_OPTION = Option(
    "tasks",
    "which tasks of the split, by id, separated by commas (τ²'s --task-ids), e.g. 0,5,12",
    parse=_task_ids,
)


JUDGE_OPTION = Option(
    "judge",
    f"the model judging NL assertions, any model spec (τ²'s own: {DEFAULT_JUDGE}); without "
    "one, the tasks judged on NL assertions are reported as needing a judge",
)
JUDGE_READING_OPTION = Option(
    "judge_reading",
    "how the judge's reply is read: strict (default: exactly the assertions asked, each with "
    "true or false, else asked again and then an infrastructure error) or lenient (τ²'s own "
    "reading: an empty or partial reply meets what it leaves out)",
    default="strict",
    choices=JUDGE_READINGS,
)


def _positive(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError("a whole number of at least 1 (ASCII digits)")
    return int(text)


LIMIT_OPTIONS = (
    Option(
        "max_steps",
        f"τ²'s --max-steps: messages passed before the episode ends ({MAX_STEPS} by default)",
        type=int,
        default=MAX_STEPS,
        parse=_positive,
    ),
    Option(
        "max_errors",
        f"τ²'s --max-errors: failed tool calls in all before it ends ({MAX_ERRORS} by default)",
        type=int,
        default=MAX_ERRORS,
        parse=_positive,
    ),
    Option(
        "enforce_protocol",
        "τ²'s --enforce-communication-protocol: a message with both text and tool calls ends "
        "the episode as its sender's error (off by default, as in τ²: the calls are run)",
        type=bool,
        default=False,
    ),
)

SOURCE_OPTION = Option(
    "source",
    "τ²'s source, whose tool descriptions and prompts the models are shown: a tau2-bench "
    "checkout, its src folder or the tau2 package folder (default: the checkout holding the "
    f"data, else an installed tau2 package); {NO_SOURCE}: deedbench's own wording",
)

MODES = ("conversation", "solo")
MODE_OPTION = Option(
    "mode",
    "conversation (default): with a user; solo: the tasks with a ticket, no user, the agent "
    "ends with the done tool (τ²'s solo agent)",
    default="conversation",
    choices=MODES,
)


class Tau2Benchmark(Benchmark[Tau2Environment]):
    """τ²'s tasks of one domain; subclasses set `name`, `description`, `option_specs`,
    and say which domain and policy the options select."""

    conditions = ("default",)
    default_epochs = 1
    data_option = "data"
    baseline_names = ("oracle", "reckless", "idle")
    baseline_purposes: ClassVar[dict[str, str]] = {
        "oracle": "performs each task's gold actions (the customer's through the scripted "
        "customer), asking consent before each write, says what the task needs said, stops: "
        "τ²'s reward where the gold actions meet the task's checks (validate lists where they "
        "do not); procedure verdicts fail only where the gold actions themselves break a rule "
        "(a write before any authentication)",
        "reckless": "the oracle without asking consent: the same τ² reward, and a consent "
        "violation on every task where the agent writes",
        "idle": "never acts: it passes only the tasks whose checks hold on the untouched world",
    }
    report = TAU2_REPORT

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.user: str = self.values["user"]
        self.solo = self.values.get("mode") == "solo"
        self._user_model: Agent | None = None
        self._judge_model: Agent | None = None
        selected = self.tasks  # read now: a bad data folder or split fails at once
        if not selected:
            raise BenchmarkError(f"{self.name}: no tasks in split {self.values['split']!r}")
        self.texts  # noqa: B018  (read now: a τ² source that cannot be read fails at once)

    # --- what a subclass says -------------------------------------------------------------

    @property
    @abstractmethod
    def domain(self) -> Tau2Domain:
        """The domain the options select."""

    @abstractmethod
    def policy_text(self, folder: Path) -> str:
        """The policy the agent reads, as τ²'s environment assembles it."""

    def task_policy(self, task: Tau2Task) -> str:
        """The policy for one task: the benchmark's, unless the domain makes one per task
        (τ³'s banking with golden retrieval)."""
        return self.policy

    # --- data -----------------------------------------------------------------------------

    @cached_property
    def folder(self) -> Path:
        marker = "tasks" if self.domain.tau2_name == "banking_knowledge" else "tasks.json"
        given: Path | None = self.values.get("data")
        return domain_folder(given, self.domain.folder_name, marker, self.name)

    @cached_property
    def data(self) -> Tau2Data:
        session = world_session(self.texts, self.domain)
        return Tau2Data(self.domain, self.folder, self.name, self.values["split"], session)

    @cached_property
    def texts(self) -> Tau2Texts:
        """What the models are shown that is τ²'s prose (tool descriptions, instructions,
        greeting, the judge's prompt): read from the user's τ² source (``-T source``, else
        the checkout holding the data, else an installed ``tau2``), or deedbench's own
        wording where there is none (`notices` says so, and the run records which)."""
        return domain_texts(self.domain, self.folder, self.values.get("source"))

    def notices(self) -> list[str]:
        if self.texts.source is not None:
            return [f"τ² texts: {self.texts.origin}"]
        return [
            "no τ² source found: the models are shown deedbench's own wording of τ²'s tool "
            "descriptions, instructions, greeting and judge prompt, so the scores are not "
            "comparable with τ²'s leaderboard; give -T source=PATH (a tau2-bench checkout)"
        ]

    @cached_property
    def split_tasks(self) -> dict[str, Tau2Task]:
        """The split's tasks (in solo mode, those with a ticket), before `tasks` selects."""
        tasks = self.data.tasks
        if self.solo:
            return {key: task for key, task in tasks.items() if task.ticket is not None}
        return tasks

    @cached_property
    def tasks(self) -> dict[str, Tau2Task]:
        """The tasks the benchmark runs: the split's, or those ``-T tasks`` names, in the
        split's order; an id not in the split is a BenchmarkError naming it."""
        tasks = self.split_tasks
        chosen: list[str] | None = self.values.get("tasks")
        if chosen is None:
            return tasks
        unknown = [t for t in chosen if t not in tasks]
        if unknown:
            where = f"split {self.values['split']!r}" + (" with a ticket" if self.solo else "")
            near = {t: found[0] for t in unknown if (found := get_close_matches(t, tasks, n=1))}
            hint = "".join(f" ({t!r}: did you mean {n!r}?)" for t, n in near.items())
            raise BenchmarkError(
                f"{self.name} option tasks: {', '.join(map(repr, unknown))} not in the "
                f"{where} ({len(tasks)} tasks){hint}"
            )
        wanted = set(chosen)
        return {key: task for key, task in tasks.items() if key in wanted}

    @cached_property
    def policy(self) -> str:
        return self.policy_text(self.folder)

    @cached_property
    def _hash(self) -> str:
        """The split's data (its tasks, the world, the policy), whichever tasks ``-T
        tasks`` selects: a run of some tasks shares its data with a run of all of them,
        so `compare` pairs them task by task."""
        tasks = json.dumps([t.raw for t in self.split_tasks.values()], sort_keys=True)
        world = json.dumps(self.data.base, sort_keys=True, default=str)
        user_world = json.dumps(self.data.user_base, sort_keys=True, default=str)
        text = f"{world}\n{user_world}\n{tasks}\n{self.policy}\n{self.texts.digest()}"
        return hashlib.sha256(text.encode()).hexdigest()

    def data_hash(self) -> str:
        return self._hash

    def data_files(self) -> dict[str, str]:
        return self.texts.record()

    # --- episodes -------------------------------------------------------------------------

    def samples(self) -> list[Sample]:
        return [task_sample(task, self.domain) for task in self.tasks.values()]

    def task(self, sample_id: str) -> Tau2Task:
        return self.tasks[sample_id]

    @property
    def user_prompt_version(self) -> str | None:
        return PROMPT_VERSION

    def user_model_spec(self) -> str | None:
        return self.user.removeprefix("llm:") if self.user.startswith("llm:") else None

    def use_user_model(self, agent: Agent) -> None:
        self._user_model = agent

    def judge_model_spec(self) -> str | None:
        spec: str | None = self.values.get("judge")
        return spec

    def use_judge_model(self, agent: Agent) -> None:
        self._judge_model = agent

    @cached_property
    def scorer(self) -> Tau2Scorer:  # type: ignore[override]  # the base's attribute, made lazily
        return Tau2Scorer(self.data, self.tasks, solo=self.solo)

    def setup(self, sample: Sample, condition: str, seed: int) -> EpisodeSetup[Tau2Environment]:
        task = self.tasks[sample.id]
        environment = self.data.start(task, self.solo)
        desk = self.domain.desk
        agent_tools = list(desk.agent_tools)
        user_toolbox: Tau2ToolBox | None = None
        names = [] if self.solo else self._user_tool_names(task)
        if names:
            allowed = set(task.user_tools) if task.user_tools is not None else None
            user_tools = [t for t in desk.user_tools if allowed is None or t.name in allowed]
            specs = listed_specs(self.texts, self._user_toolkit, include=names)
            user_toolbox = Tau2ToolBox(environment, "user", user_tools, specs)
        if self.solo:
            agent_tools += [*desk.user_tools, DONE_TOOL]
        toolbox = Tau2ToolBox(environment, "assistant", agent_tools, self._agent_specs)
        prompts = self.texts.prompts
        system = Message(
            role="system",
            content=prompts.agent_system_prompt(
                self.task_policy(task), task.ticket if self.solo else None
            ),
        )
        history = task.history()
        greeting = [Message(role="assistant", content=prompts.greeting)]
        opening = history or ([] if self.solo else greeting)
        return EpisodeSetup(
            messages=[system, *opening],
            toolbox=toolbox,
            user=None if self.solo else self._user(task, sample, condition, seed, user_toolbox),
            max_steps=self.values["max_steps"],
            half_duplex=HalfDuplex(
                is_agent_stop=lambda m: AGENT_STOP in m.content,
                user_tools=user_toolbox,
                max_errors=self.values["max_errors"],
                enforce_protocol=self.values["enforce_protocol"],
                solo=self.solo,
                stop_tool=DONE_TOOL.name if self.solo else None,
                stop_text=AGENT_STOP,
                tool_choice="required" if self.solo else "auto",  # τ²'s generate, solo's
            ),
            after=self._judging(task, sample, condition, seed),
        )

    @property
    def _user_toolkit(self) -> type[Toolkit]:
        toolkit = self.domain.user_toolkit
        assert toolkit is not None  # asked only where the user has tools
        return toolkit

    def _user_tool_names(self, task: Tau2Task) -> list[str]:
        """The customer's tools in `task`, as τ² picks them (none: no tools, and τ²'s
        plain guidelines)."""
        return user_tool_names(self.domain.user_toolkit, task.user_tools)

    @cached_property
    def _agent_specs(self) -> list[dict[str, Any]]:
        """The agent's tools as it is shown them: its toolkit's; in solo mode the
        customer's too, then the stop tool, as τ²'s solo agent has them."""
        specs = listed_specs(self.texts, self.domain.toolkit)
        if self.solo:
            if self.domain.user_toolkit is not None:
                specs += listed_specs(self.texts, self.domain.user_toolkit)
            specs.append(self.texts.prompts.done_spec or DONE_TOOL.spec)
        return specs

    def _judging(
        self, task: Tau2Task, sample: Sample, condition: str, seed: int
    ) -> Callable[[EpisodeTranscript[Tau2Environment]], Awaitable[None]] | None:
        """The judge's reading of the finished episode, for a task judged on NL assertions
        when a judge is configured (τ² judges only scored endings; so does this)."""
        model = self._judge_model
        criteria = task.evaluation_criteria
        if model is None or not task.needs_judge or criteria is None:
            return None
        assertions = list(criteria.nl_assertions or [])
        context = AgentContext(f"{sample.id}:judge", condition, 0, seed)

        async def judge(transcript: EpisodeTranscript[Tau2Environment]) -> None:
            if TAU2_TERMINATIONS.get(transcript.termination) not in SCORED_ENDINGS:
                return
            trajectory = tau2_trajectory(transcript.messages)
            reading = str(self.values.get("judge_reading", "strict"))
            checks, usage, attempts = await run_judge(
                model, trajectory, assertions, context, self.texts.prompts, reading=reading
            )
            transcript.annotations[NL_VERDICTS] = checks
            transcript.annotations[NL_JUDGING] = {"reading": reading, "attempts": attempts}
            if usage is not None:
                transcript.usage["judge"] = usage

        return judge

    def _user(
        self,
        task: Tau2Task,
        sample: Sample,
        condition: str,
        seed: int,
        tools: Tau2ToolBox | None,
    ) -> User:
        if self.user == "scripted":
            return ScriptedTau2User(task)
        if self._user_model is None:
            raise BenchmarkError(f"the user model {self.user!r} was never attached")
        prompt = self._user_prompt(task, with_tools=tools is not None)
        context = AgentContext(f"{sample.id}:user", condition, 0, seed, tool_choice="auto")
        return Tau2LLMUser(self._user_model, prompt, context, tools)

    def _user_prompt(self, task: Tau2Task, *, with_tools: bool) -> str:
        return user_prompt(guidelines(self.folder.parent.parent, with_tools), task)

    def user_instruction(self, sample_id: str) -> str | None:
        if self.solo:  # the agent works alone: no user
            return None
        task = self.task(sample_id)
        return self._user_prompt(task, with_tools=bool(self._user_tool_names(task)))

    # --- baselines and validation ---------------------------------------------------------

    def _writes(self, name: str) -> bool:
        return name in self.domain.desk.procedure_spec.write_tools

    def baselines(self) -> dict[str, Callable[[], Agent]]:
        return {
            "oracle": lambda: Tau2Oracle(self.task, self._writes, solo=self.solo),
            "reckless": lambda: Tau2Oracle(
                self.task, self._writes, ask_first=False, solo=self.solo
            ),
            "idle": Tau2Idle,
        }

    def validate(self) -> list[Tau2TaskCheck]:
        return validate_tasks(
            self.data,
            list(self.tasks.values()),
            solo=self.solo,
            faults=self.scorer.attribution.task_faults,
        )


def task_sample(task: Tau2Task, domain: Tau2Domain) -> Sample:
    """A task as the sample of a run (a live one, or one made from a τ² result file)."""
    return Sample(
        id=task.id,
        input=str(task.user_scenario),
        metadata={
            "task": task.id,
            "reward_basis": "+".join(task.reward_basis),
            "needs_judge": task.needs_judge,
            "tau2_domain": domain.tau2_name,
        },
    )


def tau2_options(
    *extra: Option, splits: tuple[str, ...] = ("base", "train", "test")
) -> tuple[Option, ...]:
    """The options every τ² benchmark takes, then `extra`."""
    data = Option(
        "data",
        "τ²'s data: a tau2-bench checkout, its data folder or data/tau2/domains/<domain> "
        "(default: $TAU2_DATA_DIR)",
        type=Path,
    )
    return (
        data,
        split_option(splits),
        TASKS_OPTION,
        USER_OPTION,
        JUDGE_OPTION,
        JUDGE_READING_OPTION,
        *LIMIT_OPTIONS,
        SOURCE_OPTION,
        *extra,
    )
