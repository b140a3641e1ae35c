"""Writing question sets for other tools: RAGAS rows and DeepEval goldens, as JSONL.

A row in lasagna's own format (what `synthesize` returns, or a JSONL row: `id`,
`question`, `answer` or `answers`, `context` or `contexts`, `expected_docs`, `metadata`)
becomes, field by field with the same meaning (see `_format_foreign`):

- RAGAS (v0.2+, `EvaluationDataset.from_jsonl` and test set rows): `user_input`, `reference`
  (the first reference answer: RAGAS takes one; with several, all of them go to
  `metadata.references` too), `reference_contexts` (the gold passages);
- DeepEval (goldens, `EvaluationDataset.add_goldens_from_json_file`'s fields): `input`,
  `expected_output` (the first reference; all of them in `additional_metadata.references`
  with several), `context` (the gold passages);

and, in both, `id` and the row's metadata (`metadata`; DeepEval's `additional_metadata`),
with `unanswerable: true` where the row is, and `expected_docs` kept in it. Neither tool
reads `id`; lasagna does, so a set written here reads back as the same rows
(`load_data`), and its outputs, once RAGAS or DeepEval have filled `response` /
`actual_output` in, become predictions (`load_data_and_outputs`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from lasagna_synth._atomic import atomic_writer
from lasagna_synth._errors import SynthUsageError

EXPORT_FORMATS = ("lasagna", "ragas", "deepeval")
"""The formats `write_rows(format=...)` and `synthesize --format` write."""


def _parts(row: Mapping[str, Any]) -> tuple[list[Any], list[Any], dict[str, Any]]:
    answers = row.get("answers", row.get("answer"))
    references = (
        [] if answers in (None, "") else answers if isinstance(answers, list) else [answers]
    )
    contexts = row.get("contexts", row.get("context"))
    gold = [] if contexts is None else contexts if isinstance(contexts, list) else [contexts]
    metadata = dict(row.get("metadata") or {})
    if "expected_docs" in row:
        metadata["expected_docs"] = row["expected_docs"]
    if len(references) > 1:
        metadata["references"] = references
    return references, gold, metadata


def to_ragas(row: Mapping[str, Any]) -> dict[str, Any]:
    """One row as a RAGAS v0.2+ sample (with `id` and `metadata` beside it)."""
    references, gold, metadata = _parts(row)
    out: dict[str, Any] = {}
    if "id" in row:
        out["id"] = row["id"]
    out["user_input"] = row["question"]
    if references:
        out["reference"] = references[0]
    out["reference_contexts"] = gold
    if metadata:
        out["metadata"] = metadata
    return out


def to_deepeval(row: Mapping[str, Any]) -> dict[str, Any]:
    """One row as a DeepEval golden (with `id` beside it)."""
    references, gold, metadata = _parts(row)
    out: dict[str, Any] = {}
    if "id" in row:
        out["id"] = row["id"]
    out["input"] = row["question"]
    if references:
        out["expected_output"] = references[0]
    out["context"] = gold
    if metadata:
        out["additional_metadata"] = metadata
    return out


def _with_corpus(row: Mapping[str, Any], corpus: Path, out: Path) -> dict[str, Any]:
    """The row with `corpus`, the folder it was written from, relative to the output's
    folder (absolute when they share no root), before its metadata."""
    try:
        named = os.path.relpath(corpus.resolve(), out.resolve().parent)
    except ValueError:  # another drive (Windows)
        named = str(corpus.resolve())
    ordered = {k: v for k, v in row.items() if k != "metadata"}
    ordered["corpus"] = Path(named).as_posix()
    if "metadata" in row:
        ordered["metadata"] = row["metadata"]
    return ordered


def write_rows(
    rows: Iterable[Mapping[str, Any]],
    path: str | os.PathLike[str],
    *,
    format: str = "lasagna",
    corpus: str | os.PathLike[str] | None = None,
) -> Path:
    """Write rows as JSONL in `format`: "lasagna" (as `write_jsonl`), "ragas" (RAGAS v0.2+
    samples) or "deepeval" (DeepEval goldens); atomically, one object per line. Returns the
    path written. `corpus`, the folder the rows' passages came from, is recorded in each
    lasagna row (relative to the file's folder), so that a run finds its corpus."""
    converters: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
        "lasagna": dict,
        "ragas": to_ragas,
        "deepeval": to_deepeval,
    }
    convert = converters.get(format)
    if convert is None:
        raise SynthUsageError(
            f"unknown output format {format!r}: expected one of {', '.join(EXPORT_FORMATS)}"
        )
    target = Path(path)
    if corpus is not None and format == "lasagna":
        folder = Path(corpus)
        rows = (_with_corpus(row, folder, target) for row in rows)
    with atomic_writer(target) as out:
        for row in rows:
            out.write(json.dumps(convert(row), ensure_ascii=False).encode("utf-8") + b"\n")
    return target
