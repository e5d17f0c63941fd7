"""The eval-awareness audit: did the agent say it knew it was being tested?

A lexical scanner reads every stored transcript in the agent's own words.
Only the CLI and reports import this package.
"""

from deedbench.audit.scanner import CATEGORIES, SCANNER_VERSION, Hit, scan

__all__ = ["CATEGORIES", "SCANNER_VERSION", "Hit", "scan"]
