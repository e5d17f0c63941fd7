"""What a study's runs will ask of their models, before they run: calls, tokens, cost.

For each run, per role (the agent, a model-played user, τ²'s judge), the calls and tokens one
episode takes come from the best source at hand:

1. **the store**: episodes already recorded by runs of the same benchmark with the same
   model (this run's own, when it is resumed, or earlier ones): their recorded usage;
2. else **the store, other models**: recorded episodes of the same benchmark by any model;
3. else **the benchmark's own baseline, played here**: its first baseline (TAC's
   `random`, the desk's `oracle`, which browse and act as a model is asked to) plays
   `SIMULATED` episodes in memory with the scripted user. Each of its turns stands for one
   model call; a call's input is the tool specs and the conversation so far, its output
   the turn, both counted at 4 characters a token; a judge is one call per episode whose
   task needs one, reading the whole conversation and writing `_JUDGE_OUTPUT` tokens.
   This ignores what a model adds
   (reasoning, retries, longer replies), so it is a floor rather than a forecast.

Cost is calls x tokens x the price of the spec (the study's own, `--prices`, or the
shipped table); a model without a price has no cost estimate, never $0. Only episodes
still to run are counted, and answers the cache holds are not subtracted.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from itertools import islice

from deedbench.agents import is_model_spec
from deedbench.benchmarks import load_benchmark
from deedbench.engine import AgentContext, RunStore, run_episode
from deedbench.records import Message, Usage
from deedbench.reports.cost import PriceTable
from deedbench.study.planner import PlannedRun

__all__ = ["SIMULATED", "RoleEstimate", "RunEstimate", "estimate_runs"]

SIMULATED = 8  # episodes of the baseline played per benchmark when the store has none
_STORE_EPISODES = 500  # recorded episodes read per source, at most
_CHARS_PER_TOKEN = 4
_JUDGE_OUTPUT = 100  # tokens of a judge's verdicts, a floor: τ²'s asks a reason per assertion


@dataclass(frozen=True)
class RoleEstimate:
    """One role's model calls in the episodes still to run."""

    role: str  # "agent", "user" or "judge"
    spec: str
    calls_per_episode: float
    input_per_call: float
    output_per_call: float
    basis: str
    episodes: int
    cost_usd: float | None

    @property
    def calls(self) -> float:
        return self.calls_per_episode * self.episodes


@dataclass(frozen=True)
class RunEstimate:
    run: PlannedRun
    to_run: int
    roles: list[RoleEstimate]

    @property
    def calls(self) -> float:
        return sum(r.calls for r in self.roles)

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.roles]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def estimate_runs(runs: list[PlannedRun], store: RunStore, prices: PriceTable) -> list[RunEstimate]:
    simulated: dict[str, dict[str, tuple[float, float, float]]] = {}
    estimates = []
    for run in runs:
        to_run = max(0, run.planned - run.scored)
        roles = []
        for role, spec in _roles(run):
            found = _from_store(store, run, role, spec)
            if found is None:
                key = run.config.benchmark + json.dumps(run.config.benchmark_options)
                if key not in simulated:
                    simulated[key] = _simulate(run)
                per_episode = simulated[key].get(role)
                basis = f"{run.config.benchmark}'s baseline played here"
                found = (*per_episode, basis) if per_episode else (0.0, 0.0, 0.0, basis)
            calls, tokens_in, tokens_out, basis = found
            price = prices.find(spec)
            cost = None
            if price is not None:
                usage = Usage(
                    input_tokens=round(calls * tokens_in * to_run),
                    output_tokens=round(calls * tokens_out * to_run),
                )
                cost = price.cost(usage)
            name = "agent" if role == "assistant" else role
            roles.append(
                RoleEstimate(name, spec, calls, tokens_in, tokens_out, basis, to_run, cost)
            )
        estimates.append(RunEstimate(run, to_run, roles))
    return estimates


def _roles(run: PlannedRun) -> list[tuple[str, str]]:
    roles = []
    if is_model_spec(run.config.agent):
        roles.append(("assistant", run.config.agent))
    for role, model in (("user", run.config.user), ("judge", run.config.judge)):
        if model is not None and is_model_spec(model.spec):
            roles.append((role, model.spec))
    return roles


def _from_store(
    store: RunStore, run: PlannedRun, role: str, spec: str
) -> tuple[float, float, float, str] | None:
    """(calls per episode, input and output tokens per call, basis) from recorded runs."""
    same, other = [], []
    for run_id in store.run_ids():
        config = store.get_run(run_id)
        if config is None or config.benchmark != run.config.benchmark:
            continue
        model = {"user": config.user, "judge": config.judge}.get(role)
        used = config.agent if role == "assistant" else (model and model.spec)
        if used == spec:
            same.append(run_id)
        elif isinstance(used, str) and is_model_spec(used):
            other.append(run_id)
    for run_ids, basis in ((same, f"store: {spec} on"), (other, "store: other models on")):
        episodes = calls = tokens_in = tokens_out = 0
        for run_id in run_ids:
            for record in islice(store.episodes(run_id), _STORE_EPISODES - episodes):
                usage = record.usage.get(role)
                episodes += 1
                if usage is not None:
                    calls += usage.calls
                    tokens_in += usage.input_tokens
                    tokens_out += usage.output_tokens
            if episodes >= _STORE_EPISODES:
                break
        if episodes and calls:
            label = f"{basis} {run.config.benchmark} ({episodes} episodes)"
            return calls / episodes, tokens_in / calls, tokens_out / calls, label
    return None


def _simulate(run: PlannedRun) -> dict[str, tuple[float, float, float]]:
    """Per role, (calls per episode, input and output tokens per call) of the benchmark's
    first baseline playing a few episodes (with the scripted user, if it has a user)."""
    options = {k: v for k, v in run.config.benchmark_options.items() if k != "user"}
    bench = load_benchmark(run.config.benchmark, options)
    baselines = bench.baselines()
    if not baselines:
        return {}
    agent = next(iter(baselines.values()))()
    samples = bench.samples()[:SIMULATED]
    condition = run.config.conditions[0]

    async def play() -> list[tuple[int, int, list[Message], bool]]:
        played = []
        for sample in samples:
            setup = bench.setup(sample, condition, 0)
            given, specs = len(setup.messages), len(json.dumps(setup.toolbox.specs()))
            transcript = await run_episode(agent, setup, AgentContext(sample.id, condition, 1, 0))
            judged = bool(sample.metadata.get("needs_judge"))
            played.append((given, specs, transcript.messages, judged))
        return played

    totals: dict[str, list[float]] = {}
    episodes = asyncio.run(play())
    for given, specs, messages, judged in episodes:
        if judged:  # one call reading the conversation
            found = totals.setdefault("judge", [0.0, 0.0, 0.0])
            found[0] += 1
            found[1] += sum(_chars(m) for m in messages) / _CHARS_PER_TOKEN
            found[2] += _JUDGE_OUTPUT
        seen = specs
        for index, message in enumerate(messages):
            size = _chars(message)
            role = message.role
            # every agent turn is a call; a user turn is one when the episode made it
            if role == "assistant" or (role == "user" and index >= given):
                found = totals.setdefault(role, [0.0, 0.0, 0.0])
                found[0] += 1
                found[1] += seen / _CHARS_PER_TOKEN
                found[2] += size / _CHARS_PER_TOKEN
            seen += size
    return {
        role: (calls / len(episodes), tokens_in / calls, tokens_out / calls)
        for role, (calls, tokens_in, tokens_out) in totals.items()
        if calls
    }


def _chars(message: Message) -> int:
    calls = sum(len(c.name) + len(c.arguments) for c in message.tool_calls)
    return len(message.content) + calls
