"""A SQLite cache of model replies, keyed by the sha256 of the request.

One row per request: the key is the sha256 of a canonical JSON (sorted keys, no spaces) of
the model (with the server's base URL when one is given), the messages, the parameters and
the response schema, so a rerun of the same job makes no new calls. WAL mode and a busy
timeout make the file safe to share between the tasks of one process and between
processes. Only calls that got a reply are stored, "unparsed" ones included (at
temperature 0 a rerun would pay for the same output); a failed call is retried by simply
running again. API keys are never part of a key or a value.

Writes made on an event loop are gathered and committed together in one transaction at the
loop's next turn (before it waits on the network again), instead of one transaction each:
a commit is most of an insert's cost, about 70 us, and 50 calls finishing together made 50
of them. Until then `get` finds the entry among the pending ones; `close` commits them, and
so does any other access. Outside an event loop a write is committed at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lasagna_judge._errors import JudgeError
from lasagna_metrics import parse_json

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


def cache_key_of_parts(parts: Mapping[str, str]) -> str:
    """`cache_key` of the request whose top-level values have the canonical JSON `parts`:
    the same key, without encoding a value shared by many requests (a schema) each time."""
    text = "{" + ",".join(f"{canonical_json(k)}:{parts[k]}" for k in sorted(parts)) + "}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Get and put JSON values by key in one SQLite file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        # key -> (model, value text, time), waiting for the loop's next turn; under _lock
        self._pending: dict[str, tuple[str, str, float]] = {}
        self._scheduled = False
        self._error: BaseException | None = None  # a failed commit of the pending writes
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
            pending = self._pending.get(key)
            if pending is not None:
                text = pending[1]
            else:
                row = (
                    self._connect()
                    .execute("SELECT value FROM responses WHERE key = ?", (key,))
                    .fetchone()
                )
                if row is None:
                    return None
                text = row[0]
        try:
            value = parse_json(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, model: str, value: dict[str, Any]) -> None:
        entry = (model, canonical_json(value), time.time())
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            self._raise_error()  # a write that failed fails the next one, as it did at once
            self._pending[key] = entry
            if loop is None:
                self._commit()
                return
            if self._scheduled:
                return
            self._scheduled = True
        loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        with self._lock:
            self._scheduled = False
            try:
                self._commit()
            except (OSError, sqlite3.Error) as exc:
                self._error = exc  # raised by the next put, or close; the writes stay pending

    def _raise_error(self) -> None:
        """Under _lock: raise a failed commit's error once."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _commit(self) -> None:
        """Under _lock."""
        if not self._pending:
            return
        rows = [(key, *entry) for key, entry in self._pending.items()]
        conn = self._connect()
        conn.execute("BEGIN")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO responses (key, model, value, created) VALUES (?, ?, ?, ?)",
                rows,
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        self._pending.clear()

    def __len__(self) -> int:
        with self._lock:
            self._commit()
            (count,) = self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def close(self) -> None:
        """Commit what is pending and close the file; the next get or put opens it again."""
        with self._lock:
            try:
                self._error = None  # committed again now, or raised again
                self._commit()
            finally:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
