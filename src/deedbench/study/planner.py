"""From a study file to its runs: one `RunConfig` per (benchmark, agent), checked whole.

Every check that `deedbench run` makes of one run is made here of all of them before
anything runs, and each failure is a `Problem` on the line of the setting behind it:
unknown benchmarks, conditions, options, data or agents, settings a baseline does not
take or no provider takes, run ids beyond the rule, plans beyond the bounds. The parts of
a file that is wrong in places are checked too (`read_study`), so one pass lists every
problem, each once. A run the store already holds is resumed when the file still
describes it; a setting that differs from what the run was made with (finished or not) is
a problem naming that setting, as `run` refuses a resume that contradicts the recorded run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deedbench.agents import agent_kinds, is_model_spec
from deedbench.agents.roles import ModelChoice, role_settings
from deedbench.benchmarks import benchmark_class, load_benchmark
from deedbench.engine import Benchmark, RunStore
from deedbench.engine.planning import JUDGE_DEFAULTS, new_run_config, select_samples
from deedbench.errors import PlanError, UsageError
from deedbench.records import AgentSettings, ModelRole, ModelUser, RunConfig
from deedbench.reports.cost import Price, PriceTable
from deedbench.study.model import (
    LABEL,
    LABEL_RULE,
    AgentEntry,
    BenchmarkEntry,
    Loc,
    Problem,
    StudyDraft,
    StudyError,
    StudyFile,
    locate,
    read_study,
    where,
)

__all__ = ["PlannedRun", "StudyPlan", "plan_study"]

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # `deedbench run`'s rule


@dataclass
class PlannedRun:
    """One run of the study: its configuration, as recorded when it exists already."""

    run_id: str
    benchmark: BenchmarkEntry
    benchmark_index: int
    agent: AgentEntry
    agent_index: int
    config: RunConfig
    bench: Benchmark[Any]
    exists: bool
    scored: int

    @property
    def planned(self) -> int:
        return self.config.planned_episodes

    @property
    def finished(self) -> bool:
        return self.scored >= self.planned


@dataclass
class StudyPlan:
    """A valid study and its runs, in file order (benchmark by benchmark, agent by agent)."""

    study: StudyFile
    path: Path
    text: str
    runs: list[PlannedRun]
    prices: PriceTable

    def by_benchmark(self) -> Iterator[tuple[BenchmarkEntry, list[PlannedRun]]]:
        for entry in self.study.benchmarks:
            yield entry, [r for r in self.runs if r.benchmark is entry]


class _Problems:
    """Problems found so far, each placed on its line, each once (a benchmark's plan
    beyond the bounds is one problem, however many agents run it)."""

    def __init__(self, text: str, found: list[Problem]) -> None:
        self.text = text
        self.found = list(found)

    def add(self, loc: Loc, message: str) -> None:
        problem = Problem(line=locate(self.text, loc), where=where(loc), message=message)
        if problem not in self.found:
            self.found.append(problem)


def plan_study(path: Path, store: RunStore, prices: PriceTable | None = None) -> StudyPlan:
    """The study's runs, or StudyError listing every problem with its line; costs at
    `prices` (default: deedbench's table), the study's own prices winning."""
    if prices is None:
        prices = PriceTable.load()
    draft = read_study(path)
    problems = _Problems(draft.text, draft.problems)
    _check_roles(draft, problems)
    benches = _benchmarks(draft, path, problems)
    ready = _check_agents(draft, problems)
    runs: list[PlannedRun] = []
    for bi, entry in enumerate(draft.benchmarks):
        bench = benches[bi]
        if entry is None or bench is None or draft.name is None:
            continue  # its problems are listed; no run of it can be planned
        for ai in ready:
            agent = draft.agents[ai]
            if agent is None or (
                agent.benchmarks is not None and entry.key not in agent.benchmarks
            ):
                continue
            planned = _plan_run(draft, draft.name, entry, bi, bench, agent, ai, store, problems)
            if planned is not None:
                runs.append(planned)
    if not problems.found and not runs:
        problems.add(("agents",), "no agent runs any of the study's benchmarks")
    if problems.found or draft.study is None:
        ordered = sorted(problems.found, key=lambda p: (p.line or 0, p.where))
        raise StudyError(path, ordered)
    study = draft.study
    return StudyPlan(study, path, draft.text, runs, _with_study_prices(prices, study))


def _with_study_prices(prices: PriceTable, study: StudyFile) -> PriceTable:
    """The price table with the study's own prices winning (by agent spec)."""
    extra: dict[str, Price] = {a.spec: a.price for a in study.agents if a.price is not None}
    for role in (study.user, study.judge):
        if role is not None and role.price is not None:
            extra[role.spec] = role.price
    if not extra:
        return prices
    as_of = f"{prices.as_of}; the study's prices"
    return PriceTable(as_of=as_of, models={**prices.models, **extra})


def _option_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _benchmarks(study: StudyDraft, path: Path, problems: _Problems) -> list[Benchmark[Any] | None]:
    """Each benchmark entry loaded with its options, or None with its problems noted."""
    loaded: list[Benchmark[Any] | None] = []
    seen: set[str] = set()
    takes_user = takes_judge = False
    for bi, entry in enumerate(study.benchmarks):
        loaded.append(None)
        if entry is None:
            continue  # its problems are listed
        at: Loc = ("benchmarks", bi)
        if entry.key in seen:
            problems.add(
                (*at, "label"),
                f"{entry.key!r} is listed twice: give one of them a distinct label",
            )
            continue
        seen.add(entry.key)
        if entry.label is not None and not LABEL.fullmatch(entry.label):
            problems.add((*at, "label"), f"a label is {LABEL_RULE}")
            continue
        try:
            cls = benchmark_class(entry.name)
        except UsageError as exc:
            problems.add((*at, "name"), str(exc))
            continue
        options = {k: _option_text(v) for k, v in entry.options.items()}
        if entry.data is not None:
            data = Path(entry.data).expanduser()
            data = data if data.is_absolute() else (path.parent / data)
            if cls.data_option is None:
                problems.add((*at, "data"), f"benchmark {entry.name!r} takes no data")
                continue
            if not data.exists():
                problems.add((*at, "data"), f"{data} does not exist")
                continue
            options[cls.data_option] = str(data.resolve())
        declared = {option.name for option in cls.option_specs}
        takes_user |= "user" in declared
        takes_judge |= "judge" in declared
        if study.user is not None and "user" in declared and "user" not in options:
            options["user"] = f"llm:{study.user.spec}"
        if study.judge is not None and "judge" in declared and "judge" not in options:
            options["judge"] = study.judge.spec
        try:
            bench = load_benchmark(entry.name, options)
        except UsageError as exc:  # a bad option, or data that cannot be read
            key = "options" if entry.options else ("data" if entry.data else None)
            problems.add((*at, key) if key else at, str(exc))
            continue
        unknown = [c for c in entry.conditions or () if c not in bench.conditions]
        if unknown or entry.conditions == []:
            problems.add(
                (*at, "conditions"),
                f"unknown condition(s) {unknown or entry.conditions}. Valid conditions of "
                f"{entry.name}: {', '.join(bench.conditions)}",
            )
            continue
        loaded[-1] = bench
    if study.user is not None and not takes_user:
        problems.add(("user",), "no benchmark of the study has a model-played user")
    if study.judge is not None and not takes_judge:
        problems.add(("judge",), "no benchmark of the study takes a judging model")
    return loaded


def _check_roles(study: StudyDraft, problems: _Problems) -> None:
    """The settings of the model-played user and the judge that no provider takes (a base
    URL missing too); a role with a problem is left out of the rest of the checks."""
    for role in ("user", "judge"):
        entry: ModelChoice | None = getattr(study, role)
        if entry is not None and _role_settings(role, entry, (role,), problems) is None:
            setattr(study, role, None)


def _role_settings(
    role: str,
    entry: ModelChoice,
    at: Loc,
    problems: _Problems,
    defaults: Mapping[str, Any] | None = None,
) -> AgentSettings | None:
    """The settings `deedbench run` records for the same flags (`role_settings`: the one
    function every way of making a run uses), or None with their problems, each on the
    line of its key."""
    spec: str = getattr(entry, "spec", "")
    found = entry.given().problems()
    for name, message in found.items():
        problems.add((*at, name), message)
    if found:
        return None
    try:
        return role_settings(role, spec, entry, defaults=defaults)
    except UsageError as exc:  # a base URL missing
        problems.add((*at, "base_url"), str(exc))
        return None


def _check_agents(study: StudyDraft, problems: _Problems) -> list[int]:
    """The indexes of the agents without a problem of their own, in file order."""
    labels = [entry.key for entry in study.benchmarks if entry is not None]
    seen: set[str] = set()
    ready = []
    for ai, agent in enumerate(study.agents):
        if agent is None:
            continue  # its problems are listed
        at: Loc = ("agents", ai)
        before = len(problems.found)
        if agent.key in seen or not agent.key:
            problems.add(
                (*at, "name"),
                f"agent name {agent.key!r} is used twice (or is empty): give each agent a "
                "distinct name",
            )
        elif not LABEL.fullmatch(agent.key):
            problems.add((*at, "name"), f"an agent name is {LABEL_RULE}")
        seen.add(agent.key)
        if None not in study.benchmarks:  # a label in an entry with problems is unknown
            for label in agent.benchmarks or ():
                if label not in labels:
                    problems.add(
                        (*at, "benchmarks"),
                        f"no benchmark labelled {label!r} in the study ({', '.join(labels)})",
                    )
        _check_spec(study, agent, at, problems)
        if len(problems.found) == before:
            ready.append(ai)
    return ready


def _check_spec(study: StudyDraft, agent: AgentEntry, at: Loc, problems: _Problems) -> None:
    """What is wrong with an agent's spec and the settings it takes."""
    prefix, _, rest = agent.spec.partition("/")
    if is_model_spec(agent.spec):
        _role_settings("agent", agent, at, problems)
        return
    if agent.model_settings:
        first = next(iter(agent.model_settings))
        problems.add(
            (*at, first),
            f"only model agents take settings ({', '.join(agent.model_settings)}); "
            f"{agent.spec!r} is not one",
        )
    if prefix == "python" and ":" in rest:
        return  # imported where episodes run, when the run is prepared
    if prefix != "baseline":
        problems.add(
            (*at, "spec"),
            f"unknown agent {agent.spec!r}. Valid agents: {', '.join(agent_kinds())}",
        )
        return
    lacking = {  # one problem, however many benchmarks lack it
        entry.key: baselines
        for entry in study.benchmarks
        if entry is not None and (agent.benchmarks is None or entry.key in agent.benchmarks)
        for baselines in [_baselines(entry.name)]
        if baselines is not None and rest not in baselines
    }
    if lacking:
        common = [b for b in next(iter(lacking.values())) if all(b in v for v in lacking.values())]
        valid = ", ".join(f"baseline/{name}" for name in common) or "none they share"
        problems.add(
            (*at, "spec"),
            f"unknown agent {agent.spec!r} for benchmark{'s' if len(lacking) > 1 else ''} "
            f"{', '.join(map(repr, lacking))}. "
            f"Valid agents: {valid}; list the benchmarks this agent runs in its `benchmarks`",
        )


def _baselines(benchmark: str) -> tuple[str, ...] | None:
    """A benchmark's baselines, from its class (an entry whose options are wrong still
    has them); None for an unknown benchmark, a problem listed already."""
    try:
        return benchmark_class(benchmark).baseline_names
    except UsageError:
        return None


def _plan_run(
    study: StudyDraft,
    name: str,
    entry: BenchmarkEntry,
    bi: int,
    bench: Benchmark[Any],
    agent: AgentEntry,
    ai: int,
    store: RunStore,
    problems: _Problems,
) -> PlannedRun | None:
    run_id = f"{name}-{entry.key}-{agent.key}"
    if not _RUN_ID.fullmatch(run_id):
        problems.add(
            ("agents", ai, "name"),
            f"the run id {run_id!r} is longer than 128 characters: shorten the names",
        )
        return None
    try:
        samples = select_samples(bench, entry.samples)
    except UsageError as exc:
        problems.add(("benchmarks", bi, "samples"), str(exc))
        return None
    try:
        user, judge = _user(study, bench), _judge(study, bench)
    except UsageError as exc:  # a model the benchmark's own options name, without a base URL
        problems.add(("benchmarks", bi, "options"), str(exc))
        return None
    try:
        config = new_run_config(
            run_id=run_id,
            benchmark=bench,
            agent=agent.spec,
            agent_params=_agent_settings(agent, bench),
            conditions=list(entry.conditions or bench.conditions),
            epochs=entry.epochs or study.epochs or bench.default_epochs,
            seed=study.seed if entry.seed is None else entry.seed,
            samples=samples[: entry.limit] if entry.limit else samples,
            user=user,
            judge=judge,
        )
    except PlanError as exc:
        problems.add(("benchmarks", bi, "epochs"), f"{exc}: plan a smaller run (or several)")
        return None
    existing = store.get_run(run_id)
    scored = store.count(run_id).get("scored", 0) if existing is not None else 0
    planned = PlannedRun(run_id, entry, bi, agent, ai, config, bench, existing is not None, scored)
    if existing is not None:
        recorded = existing.planned_episodes  # its state as recorded, not as the file says
        state = "finished" if scored >= recorded else f"{scored} of {recorded} scored"
        for loc, message in _changes(existing, config, study, entry, bi, agent, ai):
            problems.add(
                loc,
                f"run {run_id!r} ({state}) was made with {message}. Put the setting back, or "
                "give the study (or the agent) a new name to start new runs",
            )
        planned.config = existing
    return planned


def _agent_settings(agent: AgentEntry, bench: Benchmark[Any]) -> AgentSettings | dict[str, Any]:
    """What `deedbench run` records for the same flags."""
    if not is_model_spec(agent.spec):
        return {}
    return role_settings("agent", agent.spec, agent, defaults=bench.generation_defaults)


def _user(study: StudyDraft, bench: Benchmark[Any]) -> ModelUser | None:
    """The model-played user, with the study's `user` table's settings (else the role's)."""
    spec = bench.user_model_spec()
    if spec is None:
        return None
    settings = role_settings("user", spec, study.user)
    return ModelUser(spec=spec, settings=settings, prompt_version=bench.user_prompt_version)


def _judge(study: StudyDraft, bench: Benchmark[Any]) -> ModelRole | None:
    """The judging model, with the study's `judge` table's settings (else the role's)."""
    spec = bench.judge_model_spec()
    if spec is None:
        return None
    if not is_model_spec(spec):  # python/MODULE:ATTR: no model settings to make
        return ModelRole(spec=spec, settings=JUDGE_DEFAULTS)
    return ModelRole(spec=spec, settings=role_settings("judge", spec, study.judge))


def _changes(
    old: RunConfig,
    new: RunConfig,
    study: StudyDraft,
    entry: BenchmarkEntry,
    bi: int,
    agent: AgentEntry,
    ai: int,
) -> Iterator[tuple[Loc, str]]:
    """Each setting the file now gives differently from the recorded run, with the key
    behind it."""
    bench_at: Loc = ("benchmarks", bi)
    agent_at: Loc = ("agents", ai)
    if old.benchmark != new.benchmark:
        yield (*bench_at, "name"), f"benchmark {old.benchmark!r}; the file says {new.benchmark!r}"
    for key in sorted(set(old.benchmark_options) | set(new.benchmark_options)):
        was, now = old.benchmark_options.get(key), new.benchmark_options.get(key)
        if was == now:
            continue
        if key in ("user", "judge"):
            table = study.user if key == "user" else study.judge
            loc: Loc = (key, "spec") if table else (*bench_at, "options")
        elif key == benchmark_class(new.benchmark).data_option:
            loc = (*bench_at, "data")
        else:
            loc = (*bench_at, "options")
        yield loc, f"option {key} = {was!r}; the file says {now!r}"
    if old.data_hash != new.data_hash and old.benchmark_options == new.benchmark_options:
        yield (*bench_at, "data"), f"data {old.data_hash}; the data now hashes to {new.data_hash}"
    if old.agent != new.agent:
        yield (*agent_at, "spec"), f"agent {old.agent!r}; the file says {new.agent!r}"
    elif is_model_spec(new.agent):
        recorded, given = _settings(old.agent_params), _settings(new.agent_params)
        for name, was, now in _differences(recorded, given):
            key = "extra" if name.startswith("params.extra") else name.split(".")[-1]
            setting = name.removeprefix("params.")
            yield (*agent_at, key), f"{setting} = {was!r}; the file says {now!r}"
    for role, was_role, now_role in (("user", old.user, new.user), ("judge", old.judge, new.judge)):
        if was_role is None or now_role is None or was_role.spec != now_role.spec:
            continue  # a spec that changed is an option that changed, named above
        was_settings, now_settings = _settings(was_role.settings), _settings(now_role.settings)
        for name, was, now in _differences(was_settings, now_settings):
            setting = name.removeprefix("params.")
            yield (
                (role, name.split(".")[-1]),
                (f"{role} {setting} = {was!r}; the file says {now!r}"),
            )
    if old.conditions != new.conditions:
        yield (
            (*bench_at, "conditions"),
            (f"conditions {old.conditions}; the file says {new.conditions}"),
        )
    if old.epochs != new.epochs:
        loc = (*bench_at, "epochs") if entry.epochs is not None else ("epochs",)
        yield loc, f"epochs = {old.epochs}; the file says {new.epochs}"
    if old.seed != new.seed:
        loc = (*bench_at, "seed") if entry.seed is not None else ("seed",)
        yield loc, f"seed = {old.seed}; the file says {new.seed}"
    if old.sample_ids != new.sample_ids and old.data_hash == new.data_hash:
        yield (
            (*bench_at, "samples" if entry.samples is not None else "limit"),
            (f"{len(old.sample_ids)} samples; the file gives {len(new.sample_ids)}"),
        )


def _settings(recorded: AgentSettings | Mapping[str, Any]) -> dict[str, Any]:
    """Recorded agent settings as this version records them (fields added since filled in)."""
    if isinstance(recorded, AgentSettings):
        return recorded.model_dump()
    return AgentSettings.model_validate(dict(recorded)).model_dump()


def _differences(
    old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = ""
) -> Iterator[tuple[str, Any, Any]]:
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key), new.get(key)
        name = f"{prefix}{key}"
        if isinstance(was, Mapping) and isinstance(now, Mapping):
            yield from _differences(was, now, name + ".")
        elif was != now:
            yield name, was, now
