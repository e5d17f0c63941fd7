"""Secret values (API keys) known to this process, and their removal from any text.

Agents register the keys they read from the environment. Model agents remove them
from every provider response before anything reads it (`redact_bytes`), everything
the engine writes about a failure passes through `redact`, and records, the response
cache, exports and the terminal redact again as they write, so a key that an SDK or a
server echoes back never reaches the store, a log or a report.
"""

from __future__ import annotations

__all__ = ["has_secrets", "redact", "redact_bytes", "register_secret"]

_SECRETS: set[str] = set()
_REDACTED = "[REDACTED]"


def register_secret(value: str | None) -> None:
    """Remember a secret; short values are ignored (they would redact ordinary words)."""
    if value and len(value) >= 8:
        _SECRETS.add(value)


def has_secrets() -> bool:
    """Whether any secret is registered: without one, redacting is a no-op worth skipping."""
    return bool(_SECRETS)


def redact(text: str) -> str:
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, _REDACTED)
    return text


def redact_bytes(data: bytes) -> bytes:
    """`redact` for a raw JSON body, as written or with "/" escaped as JSON allows."""
    for secret in _SECRETS:
        for form in {secret, secret.replace("/", "\\/")}:
            encoded = form.encode()
            if encoded in data:
                data = data.replace(encoded, _REDACTED.encode())
    return data
