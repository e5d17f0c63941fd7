"""The eval-awareness audit: did the agent say it knew it was being tested?

A lexical scanner reads every stored transcript in the agent's own words; an
optional LLM judge, any model agent, answers deedbench's rubric per episode with
a verdict, a confidence and quotes that are checked against the transcript.
Results are stored with the run. Only the CLI and reports import this package.
"""

from deedbench.audit.audit import (
    AuditResult,
    AuditSummary,
    audit_run,
    load_audits,
    summarize_audits,
)
from deedbench.audit.judge import (
    RUBRIC,
    RUBRIC_VERSION,
    Judge,
    JudgeOutcome,
    JudgeVerdict,
    Quote,
)
from deedbench.audit.scanner import CATEGORIES, SCANNER_VERSION, Hit, scan

__all__ = [
    "CATEGORIES",
    "RUBRIC",
    "RUBRIC_VERSION",
    "SCANNER_VERSION",
    "AuditResult",
    "AuditSummary",
    "Hit",
    "Judge",
    "JudgeOutcome",
    "JudgeVerdict",
    "Quote",
    "audit_run",
    "load_audits",
    "scan",
    "summarize_audits",
]
