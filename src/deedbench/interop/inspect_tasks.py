"""deedbench's benchmarks as Inspect tasks: ``inspect eval deedbench/tac --model ...``.

Registered with Inspect through the ``inspect_ai`` entry point. The tasks are generated
from the benchmark registry (deedbench's and other packages'): one per condition of each
benchmark, ``deedbench/tac``, ``deedbench/tac_welfare``, ``deedbench/retail``,
``deedbench/taubench-retail``, ..., whose arguments (``-T``) are the benchmark's declared
options and ``seed``. The TAC baselines are models, ``--model deedbench/relevance``
(`inspect_model`, imported here).

What runs is deedbench's, so the numbers match a deedbench run of the same agent:

- the task's `setup` step asks the benchmark for the episode (system prompt, request,
  a fresh world for this sample) and gives the model deedbench's tools, wrapped as
  Inspect tools over that world; setup survives ``--solver``, so any Inspect agent
  can be evaluated on the same tools;
- the default solver is deedbench's own episode loop (step limit, tool-error limit,
  simulated customer or nudging user) whose agent is Inspect's model, called through
  Inspect's `generate` so Inspect's generation config, cache and limits apply;
- the scorer converts the Inspect transcript back to deedbench messages and asks the
  benchmark's own `score`, so the verdict and its evidence are deedbench's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score as InspectScore
from inspect_ai.scorer import Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool as InspectTool
from inspect_ai.tool import ToolDef, ToolParams
from inspect_ai.tool import ToolError as InspectToolError

from deedbench.benchmarks import benchmark_class, benchmarks, load_benchmark
from deedbench.engine import (
    AgentContext,
    Benchmark,
    EpisodeSetup,
    EpisodeTranscript,
    Tool,
    ToolBox,
    run_episode,
)
from deedbench.errors import BenchmarkError
from deedbench.interop.convert import from_inspect, to_inspect, usage_from_inspect
from deedbench.interop.inspect_model import SEED_KEY  # and registers the deedbench/ models
from deedbench.records import (
    EpisodeKey,
    Message,
    Sample,
    Score,
    Termination,
    ToolCall,
    episode_seed,
)

__all__ = [
    "SCORER_NAME",
    "SEED_KEY",
    "TASKS",
    "TERMINATION_KEY",
    "benchmark_task",
    "inspect_score",
    "task_names",
]

SCORER_NAME = "deedbench"
TERMINATION_KEY = "deedbench_termination"  # ... and why deedbench's episode loop ended


def task_names(name: str, conditions: Sequence[str]) -> dict[str, str]:
    """A benchmark's Inspect tasks by condition: the first condition is the bare name, as
    in ``deedbench/tac``, each other one ``<name>_<condition>``, as ``deedbench/tac_welfare``."""
    return {c: name if i == 0 else f"{name}_{c}" for i, c in enumerate(conditions)}


def _text(value: object) -> str:
    """An Inspect ``-T`` value (parsed as YAML) as the text deedbench's options take."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _task_for(
    name: str, condition: str, cls: type[Benchmark[Any]], task_name: str
) -> Callable[..., Task]:
    """The Inspect task of one condition: its arguments are the benchmark's declared
    options (each unset by default: the benchmark's default) and the run seed."""

    def create(**arguments: Any) -> Task:
        seed = int(arguments.pop("seed", 0))
        options = {k: _text(v) for k, v in arguments.items() if v is not None}
        return benchmark_task(name, condition, options, seed)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(o.name, keyword, default=None, annotation=str | None)
        for o in cls.option_specs
        if o.name != "seed"
    ]
    parameters.append(inspect.Parameter("seed", keyword, default=0, annotation=int))
    create.__signature__ = inspect.Signature(parameters, return_annotation=Task)  # type: ignore[attr-defined]
    create.__name__ = create.__qualname__ = task_name.replace("-", "_")
    args = "".join(f"\n        {o.name}: {o.help}" for o in cls.option_specs)
    create.__doc__ = (
        f"{cls.description} (condition {condition}).\n\n    Args:{args}\n        seed: The run "
        "seed that episode seeds derive from, as in `deedbench run --seed`.\n"
    )
    made: Callable[..., Task] = task(name=task_name)(create)
    return made


def _registered_tasks() -> dict[str, Callable[..., Task]]:
    """An Inspect task for each condition of each registered benchmark (a benchmark whose
    package fails to load has none, so it cannot take the others' away)."""
    tasks: dict[str, Callable[..., Task]] = {}
    for name in benchmarks():
        try:
            cls = benchmark_class(name)
        except BenchmarkError:
            continue
        for condition, task_name in task_names(name, cls.conditions).items():
            tasks[task_name] = _task_for(name, condition, cls, task_name)
    return tasks


@dataclass
class _Episode:
    """One sample run's deedbench side: its sample, seed, setup and how it ended (its world
    is any registered benchmark's: a task is made from a benchmark's name)."""

    sample: Sample
    seed: int
    setup: EpisodeSetup[Any]
    termination: Termination | None = None


def benchmark_task(name: str, condition: str, options: Mapping[str, str], seed: int = 0) -> Task:
    """An Inspect task for one condition of a deedbench benchmark."""
    bench = load_benchmark(name, options)
    samples = {s.id: s for s in bench.samples()}
    episodes: dict[str, _Episode] = {}  # by Inspect's sample uuid: one per sample run

    @solver
    def deedbench_setup() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            sample = samples[str(state.sample_id)]
            key = EpisodeKey(sample.id, condition, state.epoch)
            derived = episode_seed(seed, key)
            setup = bench.setup(sample, condition, derived)
            episodes[state.uuid] = _Episode(sample, derived, setup)
            state.store.set(SEED_KEY, derived)
            state.messages = [to_inspect(m) for m in setup.messages]
            state.tools = [_inspect_tool(t, setup.toolbox) for t in setup.toolbox.tools.values()]
            return state

        return solve

    @solver
    def deedbench_episode() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            episode = episodes[state.uuid]
            context = AgentContext(episode.sample.id, condition, state.epoch, episode.seed)
            agent = _InspectAgent(state, generate)
            transcript = await run_episode(agent, episode.setup, context)
            agent.sync(transcript.messages)
            episode.termination = transcript.termination
            state.store.set(TERMINATION_KEY, transcript.termination.value)
            return state

        return solve

    @scorer(metrics={"*": [mean(), stderr()]}, name=SCORER_NAME)
    def deedbench_scorer() -> Scorer:
        async def score(state: TaskState, target: Target) -> InspectScore:
            episode = episodes[state.uuid]
            transcript = _transcript(episode, [from_inspect(m) for m in state.messages])
            verdict = bench.score(episode.sample, transcript)
            return inspect_score(verdict, transcript.termination)

        return score

    async def forget(state: TaskState) -> None:
        episodes.pop(state.uuid, None)

    return Task(
        dataset=MemoryDataset(
            [_inspect_sample(s) for s in samples.values()], name=f"deedbench/{name}"
        ),
        setup=deedbench_setup(),
        solver=deedbench_episode(),
        cleanup=forget,
        scorer=deedbench_scorer(),
        config=GenerateConfig(**bench.generation_defaults),
        epochs=bench.default_epochs,
        version=bench.data_hash(),
        metadata={"benchmark": name, "condition": condition, "options": dict(options)},
    )


TASKS = _registered_tasks()
"""Every generated task by its name without the ``deedbench/`` prefix; each is registered
with Inspect when this module loads."""


def inspect_score(verdict: Score, termination: str) -> InspectScore:
    """deedbench's verdict as an Inspect score; its metadata keeps all of it."""
    explanation = "; ".join(
        " ".join(part for part in (e.rule and f"[{e.rule}]", e.excerpt) if part)
        for e in verdict.evidence
    )
    return InspectScore(
        value=dict(verdict.values),
        answer=verdict.outcome,
        explanation=explanation or None,
        metadata={
            "outcome": verdict.outcome,
            "evidence": [e.model_dump(exclude_none=True) for e in verdict.evidence],
            "choice": verdict.choice,
            "termination": termination,
        },
    )


def _inspect_sample(sample: Sample) -> InspectSample:
    """Sample metadata as deedbench records it, with the chance level beside it."""
    return InspectSample(
        id=sample.id,
        input=sample.input,
        metadata=sample.metadata | {"chance": sample.chance},
    )


def _transcript(episode: _Episode, messages: list[Message]) -> EpisodeTranscript[Any]:
    """The episode as deedbench's scorer reads it. Under another solver than deedbench's
    loop the episode ended when that solver stopped, or by a hand-off tool."""
    toolbox = episode.setup.toolbox
    termination = episode.termination or (
        Termination.TRANSFERRED if toolbox.ended_by else Termination.AGENT_FINISHED
    )
    steps = sum(1 for m in messages if m.role == "assistant")
    return EpisodeTranscript(messages, termination, steps, state=toolbox.state)


def _inspect_tool(tool: Tool[..., Any], toolbox: ToolBox[Any]) -> InspectTool:
    """A deedbench tool over this episode's world, as Inspect calls it: deedbench
    validates the arguments and runs it, and its error messages reach the model."""
    calls = 0

    async def execute(**kwargs: Any) -> str:
        nonlocal calls
        calls += 1
        call = ToolCall.decoded(f"{tool.name}-{calls}", tool.name, kwargs)
        result = toolbox.call(call)
        if result.error:
            raise InspectToolError(result.content.removeprefix("Error: "))
        return result.content

    parameters = ToolParams.model_validate(tool.parameters)
    definition = ToolDef(
        execute, name=tool.name, description=tool.description, parameters=parameters
    )
    return definition.as_tool()


class _InspectAgent:
    """deedbench's agent protocol over Inspect's model: each turn is one `generate`
    on the task state, whose messages mirror the episode's one for one."""

    def __init__(self, state: TaskState, generate: Generate) -> None:
        self.state = state
        self.generate = generate

    def sync(self, messages: Sequence[Message]) -> None:
        """Append to the task state what the episode added since the last turn."""
        self.state.messages.extend(to_inspect(m) for m in messages[len(self.state.messages) :])

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        self.sync(messages)
        self.state = await self.generate(self.state, tool_calls="none")
        output = self.state.output
        usage = usage_from_inspect(output.usage) if output.usage else None
        return from_inspect(output.message, usage)
