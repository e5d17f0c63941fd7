"""A benchmark opened to be played from outside: one side of its episodes is a `Seat`.

`Environment` builds the benchmark and the parties once (the side played from outside
as a `Seat`, the other as the run would have it: the benchmark's own simulated user, or
the agent named), plans the episodes as `deedbench run` plans a run (a `RunConfig`:
samples, conditions, epochs, the run seed every episode seed derives from), and opens
`Rollout`s, each one episode stepped from outside. With a store, it is that run's one
writer: it records the run (or resumes it, as `deedbench run` does), takes its lock,
opens only the episodes the store does not hold scored, and stores each record as it
ends; `deedbench report`, `compare` and the viewer then show it beside any other run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import Any

from deedbench.agents import Providers
from deedbench.benchmarks import load_benchmark
from deedbench.engine import Agent, Benchmark, RunStore, plan_run, resume_run
from deedbench.engine.executor import Built
from deedbench.engine.rollout import Rollout
from deedbench.engine.runner import pending_keys
from deedbench.engine.seat import Party, Seat
from deedbench.errors import BenchmarkError, UsageError
from deedbench.recipes import attach_parties
from deedbench.records import AgentSettings, EpisodeKey, EpisodeRecord, RunConfig, episode_seed

__all__ = ["Environment", "outcome_info", "reward_of"]


class Environment:
    """`benchmark` (a name, or one already built) with the side `play` ("agent" or
    "user") played from outside, recorded as the agent spec `player` (``human/NAME``
    for a person). The other side: for ``play="agent"`` the benchmark's simulated user
    as its options make it (``user=llm:SPEC`` a model, with `user_settings`); for
    ``play="user"`` the agent `partner`, a spec (with `partner_settings`) or an object
    (recorded as `partner_spec`). `conditions`, `epochs`, `seed` and `samples` (ids)
    plan the episodes as a run's; `store` records them as run `run_id` (a new id when
    None; an existing run resumes, checked as `deedbench run` checks a resume).
    """

    def __init__(
        self,
        benchmark: str | Benchmark[Any],
        *,
        options: Mapping[str, str] | None = None,
        play: Party = "agent",
        player: str = "outside/player",
        partner: str | Agent | None = None,
        partner_spec: str | None = None,
        partner_settings: AgentSettings | None = None,
        user_settings: AgentSettings | None = None,
        conditions: Sequence[str] | None = None,
        epochs: int | None = None,
        seed: int = 0,
        samples: Sequence[str] | None = None,
        store: RunStore | None = None,
        run_id: str | None = None,
        concurrency: int = 16,
    ) -> None:
        if play not in ("agent", "user"):
            raise UsageError(f"play is 'agent' or 'user', not {play!r}")
        self.play: Party = play
        self.player = player
        self.seat = Seat(play)
        self.store = store
        bench = _benchmark(benchmark, options, play, player)
        agent_spec, partner_agent = player, None
        if play == "user":
            if partner is None:
                raise UsageError("playing the user needs an agent to play against (partner=)")
            if isinstance(partner, str):
                agent_spec = partner
            else:
                partner_agent = partner
                kind = type(partner)
                agent_spec = partner_spec or f"python/{kind.__module__}:{kind.__qualname__}"
        existing = store.get_run(run_id) if store is not None and run_id else None
        if existing is not None:
            assert store is not None and run_id is not None
            self.config = resume_run(
                store, run_id, bench, agent=agent_spec, conditions=conditions, epochs=epochs
            )
        else:
            config = plan_run(
                bench,
                agent_spec,
                run_id=run_id,
                settings=partner_settings if isinstance(partner, str) else None,
                conditions=conditions,
                epochs=epochs,
                seed=seed,
                user_settings=user_settings,
            )
            self.config = _only(config, samples, bench.name)
        self.providers = Providers(None, concurrency)
        parties: dict[str, Agent] = {"agent": self.seat} if play == "agent" else {"user": self.seat}
        if partner_agent is not None:
            parties["agent"] = partner_agent
        agent = attach_parties(self.config, bench, self.providers, **parties)
        self.built = Built(bench, agent, self.providers.aclose)
        self._exit = ExitStack()
        if store is not None:
            self._exit.enter_context(store.lock_run(self.config.run_id))
            if existing is None:
                store.create_run(self.config)
        self._in_flight: set[EpisodeKey] = set()
        self._keys = self._key_source()

    @property
    def benchmark(self) -> Benchmark[Any]:
        return self.built.benchmark

    @property
    def run_id(self) -> str:
        return self.config.run_id

    def open(
        self,
        sample_id: str | None = None,
        condition: str | None = None,
        epoch: int | None = None,
        seed: int | None = None,
    ) -> Rollout:
        """A rollout of one episode, not started: the sample, condition and epoch named,
        else the plan's next (with a store: the next one it does not hold scored); its
        seed `seed`, else derived from the run seed and the key, as in a run."""
        if sample_id is None:
            key = next(self._keys, None)
            if key is None:
                raise UsageError(f"run {self.run_id!r} has no episode left to play")
        else:
            key = self._key(sample_id, condition, epoch)
        if key in self._in_flight:
            raise UsageError(f"episode {key} is in play already")
        self._in_flight.add(key)
        if seed is None:
            seed = episode_seed(self.config.seed, key)
        return Rollout(self.built, key, seed, run_id=self.run_id, on_record=self._record)

    def reward(self, record: EpisodeRecord) -> float:
        """The benchmark's reward for a finished episode (`reward_of`)."""
        return reward_of(self.config, record)

    async def aclose(self) -> None:
        """Close the agents' connections, store what ended, release the run's lock."""
        try:
            await self.built.close()
        finally:
            self.close_store()

    def close_store(self) -> None:
        if self.store is not None:
            self.store.flush()
        self._exit.close()

    async def __aenter__(self) -> Environment:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _record(self, record: EpisodeRecord) -> None:
        self._in_flight.discard(record.key)
        if self.store is not None:
            self.store.add(self.run_id, record)
            self.store.heartbeat(self.run_id)

    def _key(self, sample_id: str, condition: str | None, epoch: int | None) -> EpisodeKey:
        config = self.config
        if sample_id not in self.built.samples:
            raise BenchmarkError(f"no sample {sample_id!r} in {config.benchmark}")
        condition = condition or config.conditions[0]
        if condition not in config.conditions:
            valid = ", ".join(config.conditions)
            raise BenchmarkError(f"unknown condition {condition!r}. Valid conditions: {valid}")
        key = EpisodeKey(sample_id, condition, epoch or 1)
        if self.store is None:
            return key
        if sample_id not in config.sample_ids or key.epoch > config.epochs:
            raise UsageError(f"episode {key} is not in the plan of run {self.run_id!r}")
        if sample_id in self.store.scored_samples(self.run_id, condition, key.epoch):
            raise UsageError(f"episode {key} of run {self.run_id!r} is stored scored already")
        return key

    def _key_source(self) -> Iterator[EpisodeKey]:
        """The plan's keys: with a store, those it does not hold scored, once; without,
        the plan over and over, each pass's epochs after the last's."""
        if self.store is not None:
            return (k for k in pending_keys(self.config, self.store) if k not in self._in_flight)
        config = self.config
        return (
            EpisodeKey(key.sample_id, key.condition, key.epoch + laps * config.epochs)
            for laps in itertools.count()
            for key in config.episode_keys()
        )


def _benchmark(
    benchmark: str | Benchmark[Any], options: Mapping[str, str] | None, play: Party, player: str
) -> Benchmark[Any]:
    """The benchmark, built with its user's model to be the seat when the user is played."""
    if not isinstance(benchmark, str):
        if options:
            raise UsageError("options are given with a benchmark's name, not a built one")
        if play == "user" and benchmark.user_model_spec() != player:
            raise UsageError(
                f"to play the user of a built benchmark, build it with user=llm:{player}"
            )
        return benchmark
    chosen = dict(options or {})
    if play == "user":
        if "user" in chosen:
            raise UsageError("the user is played from outside: leave out the user option")
        chosen["user"] = f"llm:{player}"
        try:
            return load_benchmark(benchmark, chosen)
        except BenchmarkError as exc:
            if "unknown" in str(exc) and "'user'" in str(exc):
                raise UsageError(
                    f"{benchmark} has no simulated user to play: play its agent"
                ) from None
            raise
    return load_benchmark(benchmark, chosen)


def _only(config: RunConfig, samples: Sequence[str] | None, benchmark: str) -> RunConfig:
    """The plan narrowed to `samples` (ids, each once, in the order given; None: all)."""
    if samples is None:
        return config
    chosen = list(dict.fromkeys(samples))
    unknown = [s for s in chosen if s not in config.sample_ids]
    if unknown or not chosen:
        raise BenchmarkError(f"no sample(s) {unknown or list(samples)!r} in {benchmark}")
    return config.model_copy(update={"sample_ids": chosen})


def reward_of(config: RunConfig, record: EpisodeRecord) -> float:
    """A finished episode's reward: the value of the run's primary metric (τ²: its reward;
    TAC: welfare), 0 for an episode with none (an error, one that needs a judge)."""
    if record.score is None:
        return 0.0
    report = config.report
    return float(record.score.values.get(report.metric(report.primary).value, 0.0))


def outcome_info(config: RunConfig, record: EpisodeRecord) -> dict[str, Any]:
    """What a finished episode tells a trainer beside its reward: every score value (the
    reward's components, the procedure's verdicts, ``reward_verified`` where the benchmark
    has it), the outcome, the evidence, whose failure it was, how it ended, and the record."""
    score = record.score
    values = dict(score.values) if score is not None else {}
    info: dict[str, Any] = {
        "run_id": config.run_id,
        "sample_id": record.sample_id,
        "termination": record.termination,
        "status": record.status,
        "reward": reward_of(config, record),
        "values": values,
        "record": record,
    }
    if score is not None:
        info["outcome"] = score.outcome
        info["evidence"] = [e.model_dump(exclude_none=True) for e in score.evidence]
        if score.attribution is not None:
            info["attribution"] = score.attribution.model_dump(mode="json")
    for name in ("reward_verified", "procedure_ok"):
        if name in values:
            info[name] = values[name]
    if record.error is not None:
        info["error"] = record.error
    return info
