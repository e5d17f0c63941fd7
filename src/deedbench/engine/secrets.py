"""Secret values (API keys) known to this process, and their removal from any text.

Agents register the keys they read from the environment; everything the engine
writes about a failure passes through `redact`, so a key that an SDK or a server
echoes back never reaches the store, a log or a report.
"""

from __future__ import annotations

__all__ = ["redact", "register_secret"]

_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret; short values are ignored (they would redact ordinary words)."""
    if value and len(value) >= 8:
        _SECRETS.add(value)


def redact(text: str) -> str:
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, "[REDACTED]")
    return text
