"""Scoring a τ² episode: τ²'s reward as τ² computes it, and the procedure beside it.

The reward and each component come from `evaluator.evaluate` and are kept whole in
the score's details (τ²'s ``reward_info``), so a report can say which component
failed and a rescore needs no model. An episode whose task needs τ²'s judge and
was given none is "needs judge": not scored 1 or 0, and counted in its own
column. An episode τ²'s evaluator raises on (an assertion function failing on a
state the trajectory never reached, as τ²'s own run would fail) is an evaluator
error, kept out of every rate as well.

Beside the reward: the domain's procedure rules (authentication, explicit consent
before each write, ...) over what the agent and the customer said to each other,
the customer's own tool traffic left out (it happens on their device), and the
domain's rules over the whole transcript (telecom: the device actions the agent
asked for were performed before it claimed success).
``reward_verified`` is τ²'s reward with no rule broken.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deedbench.benchmarks.tau2.attribution import Tau2Attribution, state_differences
from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.environment import Tau2Environment
from deedbench.benchmarks.tau2.evaluator import Judge, NeedsJudge, evaluate
from deedbench.benchmarks.tau2.reward import NLAssertionCheck, Tau2Reward
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.engine import EpisodeTranscript
from deedbench.records import AGENT_SCOPE, Evidence, Message, Sample, Score, Termination

__all__ = ["NL_JUDGING", "NL_VERDICTS", "TAU2_TERMINATIONS", "Tau2Scorer", "reward_values"]

NL_VERDICTS = "nl_assertions"
"""The transcript annotation holding the judge's verdicts (`judge.run_judge`)."""
NL_JUDGING = "nl_judging"
"""The transcript annotation saying how the judge's reply was read and how often it was
asked; kept in the score's details (``judge``)."""

TAU2_TERMINATIONS: dict[str, str] = {
    Termination.AGENT_FINISHED: "agent_stop",
    Termination.USER_STOPPED: "user_stop",
    Termination.MAX_STEPS: "max_steps",
    Termination.TOO_MANY_TOOL_ERRORS: "too_many_errors",
    Termination.AGENT_ERROR: "agent_error",
    Termination.USER_ERROR: "user_error",
}
"""τ²'s name for each way a deedbench τ² episode ends; any other end (a provider's limit)
is none of τ²'s and scores 0 as τ²'s premature ends do."""


def reward_values(reward: Tau2Reward) -> dict[str, float]:
    """τ²'s reward and each component's verdict, whether or not the basis counts it. An
    episode τ² evaluated no component of (an ending other than a stop, a task without
    criteria: no basis) has the reward alone, never components reported as passed."""
    if reward.reward_basis is None:
        return {"reward": reward.reward}
    db = reward.db_check.db_reward if reward.db_check is not None else 1.0
    env = 1.0
    for check in reward.env_assertions or []:
        env *= check.reward
    actions = float(all(check.action_match for check in reward.action_checks or []))
    said = float(all(check.met for check in reward.communicate_checks or []))
    values = {
        "reward": reward.reward,
        "db": db,
        "env_assertion": env,
        "action": actions,
        "communicate": said,
    }
    if reward.nl_assertions is not None:
        values["nl_assertion"] = float(all(check.met for check in reward.nl_assertions))
        values["judged"] = 1.0
    return values


class Tau2Scorer:
    """τ²'s verdict and the procedure's on a benchmark's episodes."""

    def __init__(
        self,
        data: Tau2Data,
        tasks: Mapping[str, Tau2Task],
        *,
        solo: bool = False,
    ) -> None:
        self.data = data
        self.tasks = tasks
        self.solo = solo
        self.attribution = Tau2Attribution(data)

    def score(self, sample: Sample, transcript: EpisodeTranscript[Tau2Environment]) -> Score:
        ending = TAU2_TERMINATIONS.get(transcript.termination, str(transcript.termination))
        verdicts = transcript.annotations.get(NL_VERDICTS)
        score = self.score_task(self.tasks[sample.id], transcript.messages, ending, verdicts)
        judging = transcript.annotations.get(NL_JUDGING)
        if judging is not None and score.details is not None:
            score.details["judge"] = judging
        return score

    def score_task(
        self,
        task: Tau2Task,
        messages: list[Message],
        ending: str,
        verdicts: list[NLAssertionCheck] | None = None,
        *,
        strict: bool = True,
    ) -> Score:
        """Any task's verdict on `messages` (the system prompt first, as an episode records
        it), ended by τ²'s reason `ending`, with the judge's `verdicts` if there are any;
        `strict` as `evaluate`'s (lenient for result files, as τ² re-grades them)."""
        evidence: list[Evidence] = []
        details: dict[str, Any] = {"termination": ending}
        violations = self._violations(messages, 1 + len(task.history()))
        for violation in violations:
            evidence.append(violation)
        procedure = {"procedure_ok": float(not violations), "violations": float(len(violations))}
        try:
            found = evaluate(
                self.data,
                task,
                messages,
                ending,
                solo=self.solo,
                judge=_recorded(verdicts),
                strict=strict,
            )
        except NeedsJudge as exc:
            evidence.append(Evidence(rule="needs_judge", excerpt=str(exc)))
            values = {"needs_judge": 1.0, **procedure}
            return Score(outcome="needs_judge", values=values, evidence=evidence, details=details)
        except Exception as exc:  # τ²'s evaluator raises here too (tests/benchmarks/tau2)
            excerpt = f"τ²'s evaluator cannot score this trajectory: {type(exc).__name__}: {exc}"
            evidence.append(Evidence(rule="evaluator_error", excerpt=excerpt))
            values = {"evaluator_error": 1.0, **procedure}
            return Score(
                outcome="evaluator_error", values=values, evidence=evidence, details=details
            )
        reward = found.reward
        details["reward_info"] = reward.tau2_json()
        if found.skipped_gold:
            details["skipped_gold"] = [
                {"index": s.index, "name": s.name, "error": s.error} for s in found.skipped_gold
            ]
        if found.replay_notes:
            details["replay_notes"] = found.replay_notes
        values = {"scored": 1.0, **reward_values(reward), **procedure}
        values["reward_verified"] = values["reward"] * values["procedure_ok"]
        evidence += _component_evidence(reward, found.environment, found.gold)
        attribution = self.attribution.attribute(task, messages, reward, ending, solo=self.solo)
        values[AGENT_SCOPE] = float(attribution.agent_scope)
        if values["reward_verified"]:
            outcome = "pass"
        elif values["reward"] and violations:
            outcome = "pass_broke_procedure"
        else:
            outcome = "fail"
        return Score(
            outcome=outcome,
            values=values,
            evidence=evidence,
            details=details,
            attribution=attribution,
        )

    def _violations(self, messages: list[Message], opening: int) -> list[Evidence]:
        """The procedure rules over the conversation the agent took part in, each verdict
        pointing at its message in the whole transcript; what the task's own opening
        conversation did (before this agent spoke) is not this agent's."""
        positions = [i for i, m in enumerate(messages) if m.visible_to_agent]
        seen = [messages[i] for i in positions]
        found = [
            v.model_copy(update={"message_index": positions[v.message_index]})
            for v in self.data.domain.desk.violations(seen, self.data.before())
        ]
        whole = self.data.domain.transcript_check
        if whole is not None:
            found = sorted([*found, *whole(messages)], key=lambda v: v.message_index)
        return [v.to_evidence() for v in found if v.message_index >= opening]


def _recorded(verdicts: list[NLAssertionCheck] | None) -> Judge | None:
    """The judge's verdicts, recorded when the episode ended, as the evaluator asks for them."""
    if verdicts is None:
        return None
    found = list(verdicts)

    def judge(messages: Sequence[Message], assertions: list[str]) -> list[NLAssertionCheck]:
        return found

    return judge


_SHOWN_DIFFERENCES = 8
"""How many differences of the databases a DB verdict quotes (then how many more there are)."""


def _component_evidence(
    reward: Tau2Reward, ours: Tau2Environment | None, gold: Tau2Environment | None
) -> list[Evidence]:
    """What each failed check of τ²'s verdict says, one line each; a database that differs
    from the gold replay's, by what differs (table, record, field, ours against gold's)."""
    found = []
    info = reward.info or {}
    if "note" in info:
        found.append(Evidence(rule="tau2", excerpt=str(info["note"])))
    if reward.db_check is not None and not reward.db_check.db_match:
        lines = state_differences(ours, gold) if ours is not None and gold is not None else []
        if len(lines) > _SHOWN_DIFFERENCES:
            more = len(lines) - _SHOWN_DIFFERENCES
            lines = [*lines[:_SHOWN_DIFFERENCES], f"and {more} more"]
        excerpt = "; ".join(lines) or "the databases hash differently from the gold replay's"
        found.append(Evidence(rule="DB", excerpt=f"differs from the gold replay: {excerpt}"))
    for check in reward.env_assertions or []:
        if not check.met:
            call = check.env_assertion
            found.append(
                Evidence(rule="ENV_ASSERTION", excerpt=f"{call.func_name}({call.arguments}) failed")
            )
    for action in reward.action_checks or []:
        if not action.action_match:
            wanted = action.action
            found.append(
                Evidence(
                    rule="ACTION", excerpt=f"no call matched {wanted.name}({wanted.arguments})"
                )
            )
    for said in reward.communicate_checks or []:
        if not said.met:
            found.append(Evidence(rule="COMMUNICATE", excerpt=said.justification))
    for judged in reward.nl_assertions or []:
        if not judged.met:
            found.append(
                Evidence(
                    rule="NL_ASSERTION", excerpt=f"{judged.nl_assertion}: {judged.justification}"
                )
            )
    return found
