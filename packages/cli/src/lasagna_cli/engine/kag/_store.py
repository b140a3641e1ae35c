"""kag's result files: where a sweep task's record lives and how it looks on disk.

A task's file is `<output>/<dataset>/<question>/<prefix><setup>.json` and holds
`{"ok": {"result": ..., "stats": {...}}}` or `{"error": "..."}`, exactly the two shapes
kag's users parse (`kag stats` reads only those: nothing of lasagna's sits beside `ok` or
`error`). The engine's record is encoded into them: the answer is the `result`; `stats`
has kag's own fields (`prompt`, `retrieval`, `config`, `time`: `_result_stats`) and
lasagna's beside them (generation and retrieval time in seconds, tokens, context length,
the retrieved passages, the exact setup) and the record's `task` and `fingerprint`, by
which a resumed sweep knows whether the file is this task's result with these very
settings. A file without a fingerprint (written by kag itself, or by lasagna before 0.2) is
kept as kag keeps it: a file that exists and is not empty is finished.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine.config._config import Setup
from lasagna_cli.engine.kag._describe import describe_setup
from lasagna_cli.engine.kag._result_stats import duration, kag_config
from lasagna_cli.engine.records._records import TASK_FORMAT
from lasagna_cli.engine.records._store import Record, TaskKey, dump_task_json, task_json


def result_path(output: Path, dataset: str, question: str, prefix: str, setup: str) -> Path:
    # One join, not three: pathlib parses each part, and a sweep makes a path per task.
    return output / f"{dataset}/{question}/{prefix}{setup}.json"


class KagStore:
    """The records of a sweep, in kag's layout."""

    batched = False

    def __init__(self, root: Path, prefix: str, setups: Mapping[str, Setup]) -> None:
        self.root = root
        self.prefix = prefix
        # Each setup's description is the same in all its files: encoded once (half of a
        # file's encoding).
        self._described = {name: task_json(describe_setup(setup)) for name, setup in setups.items()}
        self._top_k = {name: setup.top_k for name, setup in setups.items()}
        self._config = {name: kag_config(setup) for name, setup in setups.items()}

    def path(self, task: TaskKey) -> Path:
        return self.at(task.dataset_name, task.item, task.setup_name)

    def at(self, dataset: str, question: str, setup: str) -> Path:
        return result_path(self.root, dataset, question, self.prefix, setup)

    def encode(self, record: Record) -> bytes:
        """`dump_task_json` of the file's content, byte for byte, with the setup's part
        encoded once per setup (the keys of `stats` before "setup" are encoded together,
        then the setup, then "task" and "time": the order `sort_keys` gives)."""
        if record.get("error") is not None:
            return dump_task_json({"error": record["error"]})
        setup = record["task"]["setup"]
        answer = record["generation"]
        retrieval = record.get("retrieval")
        system = answer.get("mode") == "system"
        passages: Any = answer.get("passages")
        if retrieval is not None:
            top = retrieval["ranking"][: self._top_k[setup]]
            passages = [{"id": doc, "score": score} for doc, score in top]
        retrieval_s = retrieval.get("seconds") if retrieval is not None else None
        # kag's `time` is its whole generate(): the retrieval, the prompt and the call.
        total_s = (retrieval_s or 0.0) + float(answer.get("seconds", answer["latency_s"]))
        before_setup = {
            "prompt": answer.get("prompt", answer.get("question", "")),
            "retrieval": None,
            "config": self._config[setup],
            "generation_time_s": answer["latency_s"],
            "retrieval_time_s": retrieval_s,
            "passages": passages,
            "input_tokens": None if system else answer["input_tokens"],
            "output_tokens": None if system else answer["output_tokens"],
            "context_length": answer["context_length"],
            "attempts": None if system else answer["attempts"],
            "cached": bool(answer.get("cached", False)),
            "fingerprint": record["fingerprint"],
        }
        if answer.get("batch"):  # through a batch API: the report prices it at the batch price
            before_setup["batch"] = True
        stats = (
            f'{task_json(before_setup)[:-1]}, "setup": {self._described[setup]}, '
            f'"task": {task_json(record["task"])}, "time": {task_json(duration(total_s))}}}'
        )
        text = f'{{"ok": {{"result": {task_json(answer["prediction"])}, "stats": {stats}}}}}\n'
        return text.encode("utf-8")

    def decode(self, data: Any) -> Record | None:
        return decode_result(data)


def decode_result(data: Any) -> Record | None:
    """A kag result file's content as a record (`answer` and kag's `stats` kept as they
    are), or None when it is neither of kag's two shapes."""
    if not isinstance(data, dict):
        return None
    ok = data.get("ok")
    if isinstance(ok, dict) and isinstance(ok.get("result"), str):
        raw = ok.get("stats")
        stats: dict[str, Any] = raw if isinstance(raw, dict) else {}
        record: Record = {
            "format": TASK_FORMAT,
            "task": stats.get("task"),
            "fingerprint": stats.get("fingerprint"),
            "error": None,
            "generation": {"prediction": ok["result"]},
            "stats": stats,
        }
        if record["fingerprint"] is None:
            record["legacy"] = True
        return record
    if "error" in data:
        return {"error": str(data["error"] or "malformed result file"), "legacy": True}
    return None
