"""Scoring a service-desk episode: outcome, outputs and procedure, each with evidence.

- outcome: the final database against the gold one (the task's gold actions
  replayed on a fresh world), compared canonically (100 equals 100.0; lists
  declared unordered compared as multisets) and by τ-bench's rule (equal `str()`
  of every record, which is what equal hashes mean); only records either side
  touched are compared, since the rest are shared. A task that must be handed to
  a human also needs the episode to end with the transfer.
- outputs: τ-bench's substring rule and deedbench's strict rule, over the agent's
  replies: the text of its turns without tool calls and its ``respond`` calls
  (`agent_replies`), which is what the customer read; text that came with a tool
  call never reached the customer, and τ-bench does not count it either.
- procedure: the policy's rules over the transcript.

reward_tau is τ-bench's reward: outcome_tau x outputs_compat for an episode that
ended as τ-bench's end (the customer's stop or a transfer to a human), and 0 for
any other end (the step limit, an action τ-bench's run cannot carry out), whatever
the database. reward_verified = outcome x outputs_strict x no procedure violation.
"""

from __future__ import annotations

from collections.abc import Mapping

from deedbench.benchmarks.servicedesk.attribution import DeskAttribution
from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.replay import replay
from deedbench.benchmarks.servicedesk.task import DeskTask
from deedbench.benchmarks.servicedesk.tau_toolbox import agent_replies, tau_replies
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.engine import EpisodeTranscript
from deedbench.records import AGENT_SCOPE, Evidence, Sample, Score, Termination
from deedbench.scoring.outputs import missing_outputs, outputs_compat
from deedbench.scoring.state import worlds_diff, worlds_equal_canonical, worlds_equal_tau

__all__ = ["TAU_ENDINGS", "DeskScorer"]

TAU_ENDINGS = frozenset({Termination.USER_STOPPED, Termination.TRANSFERRED})
"""The ends of an episode that τ-bench calls done, and scores; any other end scores 0."""


class DeskScorer:
    """Holds the shared base world and each task's gold world (replayed once); `score`
    judges a benchmark's sample by its task in `tasks`, `score_task` any task."""

    def __init__(
        self,
        base: Tables,
        domain: Domain,
        tasks: Mapping[str, DeskTask] | None = None,
        *,
        scripted_user: bool = True,
    ) -> None:
        self.base = base
        self.domain = domain
        self.tasks = tasks or {}
        self._gold: dict[str, DeskWorld] = {}
        self.attribution = DeskAttribution(base, domain, scripted_user=scripted_user)

    def gold(self, task: DeskTask) -> DeskWorld:
        if task.id not in self._gold:
            self._gold[task.id] = replay(self.base, task.actions, self.domain.agent_tools)[0]
        return self._gold[task.id]

    def score(self, sample: Sample, transcript: EpisodeTranscript[DeskWorld]) -> Score:
        return self.score_task(self.tasks[sample.id], transcript)

    def score_task(self, task: DeskTask, transcript: EpisodeTranscript[DeskWorld]) -> Score:
        world = transcript.state
        gold = self.gold(task)
        evidence: list[Evidence] = []
        outcome_tau = worlds_equal_tau(world, gold)
        outcome = worlds_equal_canonical(world, gold, self.domain.unordered)
        if not outcome or not outcome_tau:  # strict: show what only τ-bench's rule tells apart
            for line in worlds_diff(gold, world, limit=10, strict=outcome):
                evidence.append(Evidence(rule="outcome", excerpt=line))
        if task.must_transfer and transcript.termination != Termination.TRANSFERRED:
            outcome = outcome_tau = False
            evidence.append(
                Evidence(rule="outcome", excerpt="the task needed a transfer to a human")
            )
        replies = agent_replies(transcript.messages)
        compat = outputs_compat(task.outputs, tau_replies(transcript.messages, task.actions))
        missing = missing_outputs(task.outputs, replies)
        for output in missing:
            evidence.append(Evidence(rule="outputs", excerpt=f"never stated: {output!r}"))
        violations = self.domain.violations(transcript.messages, DeskWorld(self.base))
        for v in violations:
            evidence.append(
                Evidence(
                    rule=v.rule,
                    message_index=v.message_index,
                    tool_call_id=v.tool_call_id,
                    excerpt=f"{v.detail}: {v.excerpt}" if v.detail else v.excerpt,
                )
            )
        values = {
            "outcome_tau": float(outcome_tau),
            "outcome_canonical": float(outcome),
            "outputs_compat": float(compat),
            "outputs_strict": float(not missing),
            "procedure_ok": float(not violations),
            "violations": float(len(violations)),
        }
        done = transcript.termination in TAU_ENDINGS
        if not done:
            last = next((m for m in reversed(transcript.messages) if m.role == "assistant"), None)
            null = last is not None and last.content_null and not last.tool_calls
            why = (
                "the agent's last message came with its text as JSON null, which τ-bench's "
                "agent sends its user as a reply, and its run fails there"
                if null and transcript.termination == Termination.INVALID_ACTION
                else "only the customer's stop or a transfer ends one"
            )
            evidence.append(
                Evidence(
                    rule="reward_tau",
                    excerpt=f"the episode ended by {transcript.termination}, which τ-bench "
                    f"scores 0: {why}",
                )
            )
        if compat and not outputs_compat(task.outputs, replies):
            evidence.append(
                Evidence(
                    rule="outputs",
                    excerpt="τ-bench's rule finds an output only in the task's gold respond "
                    "actions, which its gold replay counts as the agent's replies",
                )
            )
        elif task.outputs and not compat and outputs_compat(task.outputs, replies):
            evidence.append(
                Evidence(
                    rule="outputs",
                    excerpt="τ-bench's outputs check reaches a reply sent as JSON null "
                    "before it finds every output, and fails there (None.lower())",
                )
            )
        values["reward_tau"] = float(done) * values["outcome_tau"] * values["outputs_compat"]
        values["reward_verified"] = (
            values["outcome_canonical"] * values["outputs_strict"] * values["procedure_ok"]
        )
        stopped = transcript.termination == Termination.USER_STOPPED
        attribution = self.attribution.attribute(
            task, transcript.messages, values, gold, done, stopped
        )
        values[AGENT_SCOPE] = float(attribution.agent_scope)
        if values["reward_verified"]:
            label = "pass"
        elif values["reward_tau"] and violations:
            label = "pass_tau_broke_procedure"
        elif values["reward_tau"]:
            label = "pass_tau_only"
        else:
            label = "fail"
        return Score(outcome=label, values=values, evidence=evidence, attribution=attribution)
