"""The audits of a run: did the agent say it knew it was being tested? (eval awareness);
how faithful was the simulated user? (`users`, with a model judge in `user_judge`).

A lexical scanner reads every stored transcript in the agent's own words; an
optional LLM judge, any model agent, answers deedbench's rubric per episode with
a verdict, a confidence and quotes that are checked against the transcript.
Results are stored with the run, in the store's audits table (`store.py`). Only the CLI,
reports and the viewer import this package.
"""

from deedbench.audit.audit import AuditResult, AuditSummary, audit_run, summarize_audits
from deedbench.audit.judge import (
    RUBRIC,
    RUBRIC_VERSION,
    Judge,
    JudgeOutcome,
    JudgeVerdict,
    Quote,
)
from deedbench.audit.scanner import CATEGORIES, SCANNER_VERSION, Hit, scan
from deedbench.audit.store import (
    load_audits,
    load_user_judgments,
    save_audits,
    save_user_judgments,
)
from deedbench.audit.user_judge import (
    USER_RUBRIC_VERSION,
    USER_RULES,
    UserJudge,
    UserJudgment,
)
from deedbench.audit.users import UserAudit, failed, judge_users, user_audit, user_model

__all__ = [
    "CATEGORIES",
    "RUBRIC",
    "RUBRIC_VERSION",
    "SCANNER_VERSION",
    "USER_RUBRIC_VERSION",
    "USER_RULES",
    "AuditResult",
    "AuditSummary",
    "Hit",
    "Judge",
    "JudgeOutcome",
    "JudgeVerdict",
    "Quote",
    "UserAudit",
    "UserJudge",
    "UserJudgment",
    "audit_run",
    "failed",
    "judge_users",
    "load_audits",
    "load_user_judgments",
    "save_audits",
    "save_user_judgments",
    "scan",
    "summarize_audits",
    "user_audit",
    "user_model",
]
