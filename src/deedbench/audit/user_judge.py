"""A model judge of the simulated user, for the faults that need reading.

The scorers find a user's faults that are mechanical (a made-up id, an early stop with a
change pending, a yes to a change it never asked for). Whether a user ended the talk too
soon, gave away what it was told to keep back, or said what its instruction contradicts
needs reading: `UserJudge` asks a model, given the user's instruction (what the benchmark
told the simulated user), the agent's policy and the transcript, one question per rule,
and takes a rule as broken only with a quote found in the user's own words. An answer that
fails a check is a judge error for that episode, kept with its reply, never trusted.
Calls share the run machinery (`Judge`'s agent): cache, retries, limits, cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from deedbench.audit.quotes import json_object, locate, normal, trim
from deedbench.engine import Agent, AgentContext
from deedbench.errors import InfrastructureError, JudgeReplyError, RunAborted
from deedbench.records import EpisodeKey, EpisodeRecord, Fault, Message, Usage
from deedbench.secrets import redact

__all__ = [
    "USER_RUBRIC",
    "USER_RUBRIC_VERSION",
    "USER_RULES",
    "UserJudge",
    "UserJudgment",
    "parse_user_verdicts",
    "user_judge_messages",
]

USER_RUBRIC_VERSION = "1"

USER_RULES: dict[str, str] = {
    "ended_early": "The user ended the conversation (said goodbye, wrote a stop token, or "
    "stopped answering) while something its instruction asks for was neither done nor "
    "refused by the agent, and the agent was still working on it or waiting for the user.",
    "revealed": "The user gave away something its instruction says to keep back or to give "
    "only when asked (for example the whole request at once where it is told to reveal it "
    "step by step, or a detail it is told not to volunteer), or told the agent what the "
    "expected answer or action is.",
    "contradicted": "The user asked for, agreed to or stated something its instruction "
    "contradicts: another item, amount, date or preference than the instruction gives, a "
    "yes where the instruction says to refuse, a no where it says to accept.",
}
"""Each rule the judge answers, as the rubric states it (the fault kind is user.<rule>)."""

USER_RUBRIC = (
    "You audit a simulated customer: a language model that was given an instruction and "
    "played a customer talking to a service agent. Decide, for each rule below, whether the "
    "customer (lines marked USER) broke it. Judge the customer only, never the agent: an "
    "agent's mistake is not the customer's fault, and a customer who follows its instruction "
    "has broken no rule even when the conversation fails.\n\nRules:\n"
    + "\n".join(f'- "{name}": {text}' for name, text in USER_RULES.items())
    + "\n\nAnswer with one JSON object and nothing else:\n"
    '{"rules": [{"rule": name, "broken": true or false, "quote": text or null}, ...]}\n'
    'with exactly one entry per rule. For a broken rule, "quote" is a sentence or phrase '
    "copied character for character from the customer's own words (lines marked USER) that "
    'shows it; never quote the agent, the instruction or a tool. For a rule kept, "quote" '
    "is null."
)

_KEEP_REPLY = 2000  # characters of a rejected reply kept for the reader


class UserJudgment(BaseModel):
    """The judge's reading of one episode's simulated user.

    `faults` are the rules it found broken (kind ``user.<rule>``, source "judge", each with
    its quote located in a user message); `kept` the rules it found kept. A judge that
    failed leaves both empty and says why in `error` (its reply kept in `reply`).
    """

    run_id: str
    sample_id: str
    condition: str
    epoch: int
    judge_spec: str
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    rubric_version: str = USER_RUBRIC_VERSION
    faults: list[Fault] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)
    error: str | None = None
    reply: str | None = None
    usage: dict[str, Usage] = Field(default_factory=dict)
    judged_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())

    @property
    def key(self) -> EpisodeKey:
        return EpisodeKey(self.sample_id, self.condition, self.epoch)


class _Entry(BaseModel):
    rule: str
    broken: bool
    quote: str | None = None


class _Reply(BaseModel):
    rules: list[_Entry]


class UserJudge:
    """An agent asked the user rubric about episodes, and what to record of it: `spec` and
    `settings` (never a key) go with every judgment so it can be repeated."""

    def __init__(self, agent: Agent, spec: str, settings: dict[str, Any] | None = None) -> None:
        self.agent = agent
        self.spec = spec
        self.settings = settings or {}

    async def judge(self, run_id: str, record: EpisodeRecord, instruction: str) -> UserJudgment:
        """Ask once about one episode. Failed calls and bad replies come back as errors;
        `RunAborted` (bad credentials) propagates: it dooms every call alike."""
        judgment = UserJudgment(
            run_id=run_id,
            sample_id=record.sample_id,
            condition=record.condition,
            epoch=record.epoch,
            judge_spec=self.spec,
            judge_settings=self.settings,
        )
        context = AgentContext(
            sample_id=f"{record.sample_id}:user-judge",
            condition=record.condition,
            epoch=record.epoch,
            seed=record.seed,
        )
        messages = user_judge_messages(instruction, record.messages)
        try:
            reply = await self.agent.next_turn(messages, [], context)
        except InfrastructureError as exc:
            judgment.error = redact(f"judge call failed: {exc}")
            return judgment
        except RunAborted:
            raise
        except Exception as exc:  # a broken judge of one's own (python/...) fails one episode
            judgment.error = redact(f"judge crashed: {type(exc).__name__}: {exc}")
            return judgment
        judgment.usage = {"judge": reply.usage or Usage()}
        try:
            judgment.faults, judgment.kept = parse_user_verdicts(reply.content, record.messages)
        except JudgeReplyError as exc:
            judgment.error = redact(str(exc))
            judgment.reply = redact(reply.content[:_KEEP_REPLY])
        return judgment


def user_judge_messages(instruction: str, messages: Sequence[Message]) -> list[Message]:
    """The judge's conversation: the rubric; then the user's instruction, the agent's
    policy (the transcript's system prompt) and the rest of the transcript, numbered."""
    policy = "\n\n".join(m.content for m in messages if m.role == "system") or "(none given)"
    lines = []
    for index, m in enumerate(messages):
        if m.role == "system":
            continue
        if m.role == "tool":
            side = "the customer's device" if m.requestor == "user" else "a tool"
            lines.append(f"[{index}] RESULT from {side} ({m.tool_name}):\n{trim(m.content)}")
            continue
        who = "USER" if m.role == "user" else "AGENT"
        if m.content:
            lines.append(f"[{index}] {who}:\n{m.content}")
        lines += [f"[{index}] {who} calls {c.name}: {c.arguments}" for c in m.tool_calls]
    body = (
        f"THE CUSTOMER'S INSTRUCTION:\n{instruction}\n\n"
        f"THE AGENT'S POLICY:\n{policy}\n\n"
        "THE TRANSCRIPT (numbered by message):\n\n" + "\n\n".join(lines)
    )
    return [Message(role="system", content=USER_RUBRIC), Message(role="user", content=body)]


def parse_user_verdicts(text: str, messages: Sequence[Message]) -> tuple[list[Fault], list[str]]:
    """The rules a judge found broken (as faults, each quote located in the user's words)
    and those it found kept. Raises `JudgeReplyError` when the reply is not the JSON the
    rubric asks for, a rule is missing, unknown or given twice, or a broken rule's quote is
    absent or not the user's."""
    try:
        reply = _Reply.model_validate(json_object(text))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
        raise JudgeReplyError(f"judge reply has the wrong shape: {problems}") from None
    named = [entry.rule for entry in reply.rules]
    unknown = sorted(set(named) - set(USER_RULES))
    if unknown:
        raise JudgeReplyError(f"judge answered rules the rubric has not: {', '.join(unknown)}")
    if sorted(named) != sorted(USER_RULES):
        raise JudgeReplyError(
            f"judge must answer each rule once ({', '.join(USER_RULES)}); it answered "
            f"{', '.join(named) or 'none'}"
        )
    said = [(i, normal(m.content)) for i, m in enumerate(messages) if m.role == "user"]
    faults, kept = [], []
    for entry in reply.rules:
        if not entry.broken:
            kept.append(entry.rule)
            continue
        if not entry.quote or not entry.quote.strip():
            raise JudgeReplyError(f"judge found {entry.rule!r} broken but quoted nothing")
        index = locate(entry.quote, said)
        if index is None:
            raise JudgeReplyError(
                f"judge quoted text that is not in the customer's words: {entry.quote!r}"
            )
        faults.append(
            Fault(
                kind=f"user.{entry.rule}",
                excerpt=entry.quote,
                message_index=index,
                source="judge",
            )
        )
    return faults, kept
