"""The records a run leaves behind: its configuration and one record per episode.

`FORMAT` is the format of these records and of the store that holds them. A change that
an older deedbench could not read, or that needs stored records rewritten, raises it,
and the store migrates older stores when it opens them and refuses newer ones
(`engine.store`). Never reorder or rename fields without raising it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    Tag,
    field_serializer,
    field_validator,
)

from deedbench.errors import PlanError
from deedbench.records.messages import Message, Usage
from deedbench.records.metrics import ReportSpec
from deedbench.records.sample import EpisodeKey
from deedbench.records.score import Score
from deedbench.records.settings import AgentSettings
from deedbench.secrets import has_secrets, redact

__all__ = [
    "FORMAT",
    "MAX_EPOCHS",
    "MAX_PLANNED_EPISODES",
    "AgentParams",
    "EpisodeRecord",
    "ModelRole",
    "ModelUser",
    "RunConfig",
    "ScorerSpec",
]

# 1: the first versioned format (stores and records of deedbench 0.1.0 before formats were
# recorded read as format 1: they are format 1 without the `format` field). 2: the store keeps
# a summary of each record beside it (`engine.store`); records themselves are unchanged. 3: the
# store keeps each run's kinds of episodes, an (epoch, kind) per episode and its calls' usage
# summed (`engine.store_schema`); records are unchanged.
FORMAT = 3

# Bounds on a plan, checked before a run is recorded: far above any real study, low enough
# that a typo (--epochs 99999999999) is an error instead of a run that can never end.
MAX_EPOCHS = 1_000
MAX_PLANNED_EPISODES = 1_000_000


def _params_kind(value: Any) -> str:
    """Settings recorded for a model agent always have `params`; anything else (nothing
    for a baseline, an Inspect import's provenance) is kept as the mapping it is."""
    if isinstance(value, AgentSettings) or (isinstance(value, dict) and "params" in value):
        return "settings"
    return "other"


AgentParams = Annotated[
    Annotated[AgentSettings, Tag("settings")] | Annotated[dict[str, Any], Tag("other")],
    Discriminator(_params_kind),
]


class ModelRole(BaseModel):
    """A model in a role of the run other than the agent (τ²'s NL judge), as the run
    records it: its agent spec, its effective settings (the key's variable, never the
    key) and the version of the prompt the benchmark gives it."""

    spec: str
    settings: AgentSettings = Field(default_factory=AgentSettings)
    prompt_version: str | None = None


class ModelUser(ModelRole):
    """A model-played user as the run records it: its agent spec, its settings and the
    version of the prompt the benchmark gives it."""


class ScorerSpec(BaseModel):
    """Which scorer scored a run: its class as ``module:QualName`` and, for a dataclass
    scorer, its fields (JSON values only), so that wherever the run's benchmark is rebuilt
    (a worker, a Ray actor, a resume) it scores with the same scorer, not its default."""

    target: str
    args: dict[str, Any] = Field(default_factory=dict)


class RunConfig(BaseModel):
    """Everything needed to repeat a run and to read its records.

    `agent_params` holds the model agent's settings, typed (`agent_settings`), or for other
    agents whatever their maker recorded (empty for a baseline; an Inspect import's
    provenance). `data_files` names the files the samples were read from, each with the
    sha256 of its bytes (empty for runs recorded before it, and for benchmarks that do not
    say). `user` is the model-played user, if the benchmark has one (stored as
    ``{}`` when not); `judge` the model judging episodes (τ²'s NL judge), if an option
    asks for one (left out when written otherwise; runs recorded before it judged with
    τ²'s settings: temperature 0, the provider's usual key). `imported` says what an
    imported run was made from (`imported_from`). `format` is the record format the run
    was written in (`FORMAT`).
    `scorer` is the scorer the benchmark held when the run was planned (None in runs
    recorded before it, which the benchmark's own scorer scored; left out when written).
    """

    run_id: str
    benchmark: str
    benchmark_options: dict[str, str] = Field(default_factory=dict)
    data_hash: str
    agent: str
    agent_params: AgentParams = Field(default_factory=dict)
    user: ModelUser | None = None
    conditions: list[str]
    epochs: int
    seed: int
    sample_ids: list[str]
    report: ReportSpec
    deedbench_version: str
    python_version: str
    created_at: str
    format: int = FORMAT
    data_files: dict[str, str] = Field(default_factory=dict)
    scorer: ScorerSpec | None = Field(default=None, exclude_if=lambda spec: spec is None)
    judge: ModelRole | None = Field(default=None, exclude_if=lambda judge: judge is None)
    imported: str | None = Field(default=None, exclude_if=lambda source: source is None)

    @field_validator("conditions")
    @classmethod
    def _once_each(cls, conditions: list[str]) -> list[str]:
        """A condition named twice is one condition (runs recorded with `base,base` by
        earlier versions could never complete)."""
        return list(dict.fromkeys(conditions))

    @field_validator("user", mode="before")
    @classmethod
    def _no_user(cls, user: Any) -> Any:
        return None if user == {} else user

    @field_serializer("user")
    def _user_or_nothing(self, user: ModelUser | None) -> ModelUser | dict[str, Any]:
        return {} if user is None else user

    @property
    def agent_settings(self) -> AgentSettings | None:
        """The model agent's settings, when the run recorded some."""
        params = self.agent_params
        return params if isinstance(params, AgentSettings) else None

    @property
    def imported_from(self) -> str | None:
        """What an imported run was made from ("τ² result file PATH"), None for a run
        deedbench ran (or can resume: Inspect logs of deedbench's tasks): an imported run's
        episodes are what its source held, so it has none to run and is never resumed.
        τ² runs imported before `imported` was recorded are told by the provenance their
        import kept in `agent_params`."""
        if self.imported is not None:
            return self.imported
        params = self.agent_params
        if isinstance(params, dict) and isinstance(params.get("tau2"), dict):
            return f"τ² result file {params['tau2'].get('file', '')}".rstrip()
        return None

    @property
    def role_settings(self) -> dict[str, tuple[str, AgentSettings]]:
        """Each model role of the run ("agent", "user", "judge") with its spec and its
        recorded settings; a role without a model (a baseline agent, a scripted user)
        is left out."""
        roles: dict[str, tuple[str, AgentSettings]] = {}
        if self.agent_settings is not None:
            roles["agent"] = (self.agent, self.agent_settings)
        for name, role in (("user", self.user), ("judge", self.judge)):
            if role is not None:
                roles[name] = (role.spec, role.settings)
        return roles

    @property
    def key_variables(self) -> list[str]:
        """The environment variables the run's models (agent, model-played user, judge)
        read their API keys from (their values are registered as secrets wherever the run
        is read)."""
        found = [settings.api_key_env for _, settings in self.role_settings.values()]
        return [v for v in dict.fromkeys(found) if v]

    @property
    def planned_episodes(self) -> int:
        """How many episodes the run is made of, counted, not listed."""
        return len(self.sample_ids) * len(self.conditions) * self.epochs

    def episode_keys(self) -> Iterator[EpisodeKey]:
        """Every episode the run is made of, in a stable order, one at a time."""
        for epoch in range(1, self.epochs + 1):
            for condition in self.conditions:
                for sample_id in self.sample_ids:
                    yield EpisodeKey(sample_id, condition, epoch)

    def check_plan(self) -> None:
        """Raise PlanError when the plan is beyond `MAX_EPOCHS` or `MAX_PLANNED_EPISODES`."""
        if self.epochs > MAX_EPOCHS:
            raise PlanError(f"{self.epochs} epochs is more than the limit of {MAX_EPOCHS:,}")
        if self.planned_episodes > MAX_PLANNED_EPISODES:
            raise PlanError(
                f"{len(self.sample_ids)} samples x {len(self.conditions)} conditions x "
                f"{self.epochs} epochs is {self.planned_episodes:,} episodes, more than the "
                f"limit of {MAX_PLANNED_EPISODES:,} per run"
            )


class EpisodeRecord(BaseModel):
    """One episode as stored: transcript, verdict, and how it ended.

    `status` is "scored" for an episode the agent finished (whatever the verdict)
    and "error" for one that infrastructure broke; errors count in no rate.
    `usage` sums model calls by the role that made them ("assistant" for the
    agent, "user" for a simulated user), so each is costed apart.
    """

    sample_id: str
    condition: str
    epoch: int
    seed: int
    status: Literal["scored", "error"]
    termination: str
    steps: int
    messages: list[Message]
    score: Score | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    chance: float | None = None
    error: str | None = None
    usage: dict[str, Usage] = Field(default_factory=dict)
    started_at: float
    duration_s: float

    @property
    def key(self) -> EpisodeKey:
        return EpisodeKey(self.sample_id, self.condition, self.epoch)

    def model_dump_json(self, **kwargs: Any) -> str:
        """The record as JSON with registered secrets redacted: the last guard before
        the store (model agents already remove keys from what providers answer)."""
        return redact(super().model_dump_json(**kwargs))

    def redacted(self) -> EpisodeRecord:
        """This record without registered secrets, for exports; itself when it has none."""
        if not has_secrets():
            return self
        text = super().model_dump_json()
        clean = redact(text)
        return self if clean == text else EpisodeRecord.model_validate_json(clean)
