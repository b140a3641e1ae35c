"""A SQLite cache of model replies, keyed by the sha256 of the request.

One row per request: the key is the sha256 of a canonical JSON (sorted keys, no spaces) of
the model (with the server's base URL when one is given), the messages, the parameters and
the response schema, so a rerun of the same job makes no new calls. WAL mode and a busy
timeout make the file safe to share between the tasks of one process and between
processes. Only calls that got a reply are stored, "unparsed" ones included (at
temperature 0 a rerun would pay for the same output); a failed call is retried by simply
running again. API keys are never part of a key or a value.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from lasagna_judge._errors import JudgeError

CACHE_FILENAME = "llm-cache.sqlite"


def default_cache_path() -> Path:
    """`<user cache dir>/lasagna/llm-cache.sqlite`, e.g. ~/.cache/lasagna/... on Linux
    ($XDG_CACHE_HOME honoured)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("lasagna", appauthor=False)) / CACHE_FILENAME


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(request: dict[str, Any]) -> str:
    """The sha256 (hex) of the canonical JSON of a request description."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ResponseCache:
    """Get and put JSON values by key in one SQLite file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with self._lock:
            self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The open connection, opening it (again, after close) when needed; under _lock."""
        if self._conn is not None:
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise JudgeError(
                f"cannot open the LLM cache at {self.path}: {exc}; pass another cache path "
                "or turn the cache off (cache=False, --no-cache)"
            ) from exc
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, value TEXT NOT NULL,"
                " created REAL NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JudgeError(
                f"the LLM cache {self.path} is not a usable SQLite database ({exc}): delete "
                "it, or turn the cache off (cache=False, --no-cache)"
            ) from exc
        self._conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = (
                self._connect()
                .execute("SELECT value FROM responses WHERE key = ?", (key,))
                .fetchone()
            )
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, model: str, value: dict[str, Any]) -> None:
        text = canonical_json(value)
        with self._lock:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, value, created) VALUES (?, ?, ?, ?)",
                (key, model, text, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the file; the next get or put opens it again."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
