"""The response cache: a model call already paid for is never paid again.

Keys cover everything that determines an answer (protocol, base URL, model, the
request as sent, and the episode's sample and epoch, so different epochs are not
served one answer). Values are the provider's raw response. Each entry is
committed at once: a killed run keeps every answer it paid for.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from deedbench.engine import redact

__all__ = ["ResponseCache", "cache_key"]


def cache_key(**parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses ("
            " key TEXT PRIMARY KEY, protocol TEXT NOT NULL, model TEXT NOT NULL,"
            " response_json TEXT NOT NULL)"
        )

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT response_json FROM responses WHERE key = ?", (key,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, protocol: str, model: str, response: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, protocol, model, response_json) "
            "VALUES (?, ?, ?, ?)",
            (key, protocol, model, redact(json.dumps(response))),  # a last guard for keys
        )

    def close(self) -> None:
        self._db.close()
