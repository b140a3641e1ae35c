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
a commit is most of an insert's cost, and calls finishing together would each make
one. Until then `get` finds the entry among the pending ones; `close` commits them, and
so does any other access. Outside an event loop a write is committed at once.

The cache is an optimisation: a file that cannot be written (a full disk, a read-only one)
must not lose the replies already paid for. A write that fails, or a file that cannot be
opened for that reason, turns the cache off for the rest of the process: `failure` says
why in a line (the caller warns), reads find nothing, writes are dropped, and the calls go
on without it. A file that is not SQLite is still an error: it is not the disk's fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
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
# SQLite's primary result codes, and the errnos, of a disk that cannot take a write.
_DISK_CODES = frozenset({8, 10, 13})  # READONLY, IOERR, FULL
_DISK_ERRNOS = frozenset(
    code
    for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None), errno.EROFS, errno.EFBIG)
    if code is not None
)


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
        self.failure: str | None = None
        """Why the cache was turned off (it could not be written), or None while it works."""
        with self._lock:
            self._connect()

    def _fail(self, exc: BaseException) -> None:
        """Under _lock: turn the cache off for good, the pending writes dropped."""
        self.failure = (
            f"the LLM cache {self.path} cannot be written ({exc}); going on without it: "
            "the replies of this run are not cached (free space there, or set "
            "LASAGNA_CACHE_DIR elsewhere)"
        )
        self._pending.clear()
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _connect(self) -> sqlite3.Connection | None:
        """The open connection, opening it (again, after close) when needed; None once the
        cache is off; under _lock."""
        if self.failure is not None:
            return None
        if self._conn is not None:
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            if _disk_failure(exc):
                self._fail(exc)
                return None
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
            if _disk_failure(exc):
                self._fail(exc)
                return None
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
                conn = self._connect()
                try:
                    row = None
                    if conn is not None:
                        row = conn.execute(
                            "SELECT value FROM responses WHERE key = ?", (key,)
                        ).fetchone()
                except sqlite3.Error as exc:
                    if not _disk_failure(exc):
                        raise
                    self._fail(exc)
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
            if self.failure is not None:
                return
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
            self._commit()

    def _commit(self) -> None:
        """Under _lock. A write the disk refuses turns the cache off (`_fail`)."""
        if not self._pending:
            return
        rows = [(key, *entry) for key, entry in self._pending.items()]
        conn = self._connect()
        if conn is None:
            self._pending.clear()
            return
        try:
            conn.execute("BEGIN")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO responses (key, model, value, created) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except (OSError, sqlite3.Error) as exc:
            if not _disk_failure(exc):
                raise
            self._fail(exc)
            return
        self._pending.clear()

    def flush(self) -> None:
        """Commit the pending writes now (a batch's answers, before its state file goes)."""
        with self._lock:
            self._commit()

    def __len__(self) -> int:
        with self._lock:
            self._commit()
            conn = self._connect()
            if conn is None:
                return 0
            (count,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def close(self) -> None:
        """Commit what is pending and close the file; the next get or put opens it again."""
        with self._lock:
            try:
                self._commit()
            finally:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None


def _disk_failure(exc: BaseException) -> bool:
    """Whether an error is the disk's (full, read-only, failing), not the file's content."""
    if isinstance(exc, OSError):
        return exc.errno in _DISK_ERRNOS
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in _DISK_CODES
    text = str(exc).lower()
    return "disk" in text or "readonly" in text
