"""The bottom layer: the records every other part of deedbench reads and writes.

Messages and tool calls, samples and the key of an episode, why an episode ended, scores
with their evidence, the metrics a report computes (`ReportSpec`), a model agent's
settings, and the run's configuration and episode records with their format version.
It imports nothing of deedbench but `errors` and `secrets`, so the engine, scoring,
the reports and the benchmarks all stand on it without standing on each other.
"""

from deedbench.records.attribution import AGENT_SCOPE, Attribution, Fault, Party, party_of
from deedbench.records.messages import AnsweredCall, Message, Role, ToolCall, Usage, answered_calls
from deedbench.records.metrics import MetricSpec, ReportSpec
from deedbench.records.run import (
    FORMAT,
    MAX_EPOCHS,
    MAX_PLANNED_EPISODES,
    AgentParams,
    EpisodeRecord,
    ModelRole,
    ModelUser,
    RunConfig,
    ScorerSpec,
)
from deedbench.records.sample import EpisodeKey, Sample, episode_seed
from deedbench.records.score import NO_CHOICE, Evidence, Score
from deedbench.records.settings import AgentSettings, GenerationParams, RetryPolicy
from deedbench.records.termination import Termination

__all__ = [
    "AGENT_SCOPE",
    "FORMAT",
    "MAX_EPOCHS",
    "MAX_PLANNED_EPISODES",
    "NO_CHOICE",
    "AgentParams",
    "AgentSettings",
    "AnsweredCall",
    "Attribution",
    "EpisodeKey",
    "EpisodeRecord",
    "Evidence",
    "Fault",
    "GenerationParams",
    "Message",
    "MetricSpec",
    "ModelRole",
    "ModelUser",
    "Party",
    "ReportSpec",
    "RetryPolicy",
    "Role",
    "RunConfig",
    "Sample",
    "Score",
    "ScorerSpec",
    "Termination",
    "ToolCall",
    "Usage",
    "answered_calls",
    "episode_seed",
    "party_of",
]
