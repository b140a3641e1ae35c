"""The state file of a batch job (`BatchState`) and the parts a job's requests are split
into (`split_parts`), each small enough for one batch of its provider."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lasagna_judge._batch_apis import BatchAPI, BatchError
from lasagna_judge._errors import JudgeUsageError
from lasagna_metrics import parse_json

STATE_VERSION = 2


class BatchState:
    """The state file of one batch job: which batch it follows, written by `write` (an
    atomic writer: `lasagna_synth.write_bytes_atomic`) so a kill leaves it whole or absent."""

    def __init__(self, path: Path | str, write: Callable[[Path, bytes], None]) -> None:
        self.path = Path(path)
        self._write = write

    def load(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            data = parse_json(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("batch_id"), str):  # version 1
            part = {"batch_id": data["batch_id"], "keys": data.get("keys") or []}
            data = {**data, "parts": [part]}
        parts = data.get("parts") if isinstance(data, dict) else None
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            raise BatchError(
                f"{self.path}: expected the JSON state of a batch job, found something else; "
                "delete it to submit the batch again"
            )
        assert isinstance(data, dict)
        return data

    def job(self) -> tuple[str, str | None]:
        """The model the job's batches are of, and the server it called (None for the
        provider's own); a JudgeUsageError when the file is missing or names no model."""
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            return str(saved["model"]), saved.get("endpoint")
        except (OSError, ValueError, KeyError, TypeError):
            raise JudgeUsageError(
                f"{self.path}: expected the state file of a --batch job (JSON naming its model "
                "and batches), found none or something else"
            ) from None

    def save(self, data: dict[str, Any]) -> None:
        self._write(self.path, json.dumps(data, indent=1).encode("utf-8"))

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def split_parts(api: BatchAPI, todo: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The parts of `todo` that each fit one batch (the provider's requests and bytes a
    batch), each with its intent: a nonce that names it, the time, how many requests."""
    groups: list[list[str]] = []
    keys: list[str] = []
    size = 0
    margin = 1024 * 1024  # the request's own envelope, and rounding
    for key, body in todo:
        item = api.item_size(key, body)
        if keys and (len(keys) >= api.max_requests or size + item > api.max_bytes - margin):
            groups.append(keys)
            keys, size = [], 0
        keys.append(key)
        size += item
    if keys:
        groups.append(keys)
    now = time.time()
    return [
        {"nonce": os.urandom(8).hex(), "since": now, "count": len(k), "keys": k} for k in groups
    ]
