"""Every error deedbench raises on purpose, under one base class.

Each carries a message written for the person who runs deedbench (it names the file,
the record, the field or the setting), so a caller can show `str(error)` as it is; the
command line catches `DeedbenchError` and prints it on one line, never a traceback.
Where it matters, a class also derives from the built-in error it refines, so code that
caught that keeps working (`PlanError` is a `ValueError`, `InspectNotInstalled` an
`ImportError`).

The hierarchy (httpx's `_exceptions.py` is the model):

* DeedbenchError
  * UsageError: what the user asked for cannot be done as asked; fix the input
    * BenchmarkError: bad benchmark input (a data file, an option, a condition)
    * AgentSpecError: an agent spec that names no agent (the message lists the valid ones)
    * PlanError: a run plan beyond the bounds (epochs, episodes per run)
    * ResumeError: a resumed run asked for settings other than the ones it recorded
    * InspectNotInstalled: Inspect AI is needed and not installed
    * InspectLogError: an Inspect log that cannot be read as a run
  * StoreError: the run store, or a run in it, cannot serve
    * StoreFormatError: the store was written in a format this deedbench cannot read
  * OutputError: an output file that cannot be written
  * RunError: running a run's episodes went wrong
    * RunAborted: a failure that dooms every episode alike (bad credentials, a rejected
      request); the run stops
    * ExecutorError: an executor could not go on (a worker died, a recipe failed to build)
  * EpisodeError: one episode cannot go on; it is recorded, the run goes on
    * InfrastructureError: a failure outside the agent's control (an outage, a dead
      connection); kept out of every rate and run again on resume
      * Interrupted: whoever played a side from outside stopped the episode (a person's
        Ctrl-C); kept with what was played, in no rate, played again on resume
    * ContextExceeded: the conversation no longer fits the model's context window;
      the episode is scored on what happened until then
  * TransientError: one model call failed in a way worth retrying (inside model agents)
  * ToolError: raised inside a tool; the agent reads it as the tool's answer
  * JudgeReplyError: a judge's reply that cannot be trusted (recorded as a judge error)
"""

from __future__ import annotations

__all__ = [
    "AgentSpecError",
    "BenchmarkError",
    "ContextExceeded",
    "DeedbenchError",
    "EpisodeError",
    "ExecutorError",
    "InfrastructureError",
    "InspectLogError",
    "InspectNotInstalled",
    "Interrupted",
    "JudgeReplyError",
    "OutputError",
    "PlanError",
    "ResumeError",
    "RunAborted",
    "RunError",
    "StoreError",
    "StoreFormatError",
    "ToolError",
    "TransientError",
    "UsageError",
]


class DeedbenchError(Exception):
    """The base of every error deedbench raises on purpose; its message is for the user."""


class UsageError(DeedbenchError):
    """What was asked for cannot be done as asked: the input needs fixing."""


class BenchmarkError(UsageError):
    """Bad benchmark input (data file, option, condition), with a message for the user."""


class AgentSpecError(UsageError):
    """An agent spec that names no agent; the message lists the valid ones."""


class PlanError(UsageError, ValueError):
    """A run plan beyond the bounds, with a message that says the limit."""


class ResumeError(UsageError):
    """A resumed run keeps its recorded configuration: settings that contradict it are
    refused, and the message names each one with the value recorded."""


class InspectNotInstalled(UsageError, ImportError):
    """Inspect AI is needed for this and is not installed."""


class InspectLogError(UsageError):
    """An Inspect log that cannot be read as a deedbench run, with a message naming it."""


class StoreError(DeedbenchError):
    """A problem with the store or a run in it, with a message for the user."""


class StoreFormatError(StoreError):
    """The store was written in a format this deedbench does not read (a newer one)."""


class OutputError(DeedbenchError):
    """An output file that cannot be written, with a message naming it."""


class RunError(DeedbenchError):
    """Running a run's episodes went wrong as a whole."""


class RunAborted(RunError):
    """A failure that dooms every episode alike (bad credentials, a rejected request).

    The runner stops the whole run instead of recording one error per episode.
    """


class ExecutorError(RunError, RuntimeError):
    """An executor could not go on (a worker died, a recipe failed to build)."""


class EpisodeError(DeedbenchError):
    """One episode cannot go on; the episode loop records why and the run goes on."""


class InfrastructureError(EpisodeError):
    """A failure outside the agent's control (a provider outage, a dead connection).

    Episodes that end this way are kept out of every rate and run again on resume.
    """


class Interrupted(InfrastructureError):
    """Whoever played a side of the episode from outside stopped it (a person's Ctrl-C).

    The episode ends with `Termination.INTERRUPTED`: kept with what was played, as an
    error record that counts in no rate, and played again on resume.
    """


class ContextExceeded(EpisodeError):
    """The conversation no longer fits the model's context window (the provider said so).

    Only this episode is doomed, and asking again would overflow again: it ends with
    `Termination.CONTEXT_EXCEEDED` and is scored on what happened until then.
    """


class TransientError(DeedbenchError):
    """A failure worth retrying (429, 5xx, timeout, dropped connection, garbled body)."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        rate_limited: bool = False,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.timed_out = timed_out


class ToolError(DeedbenchError):
    """Raised inside a tool to report a problem the agent should read and fix."""


class JudgeReplyError(DeedbenchError, ValueError):
    """A judge reply that cannot be trusted: not JSON, the wrong shape, or invented quotes."""
