"""Reproducible samples of a public benchmark: the same seed picks the same questions on any
machine and any Python version.

Nothing here uses `random` or relies on hash seeds or set order: "random" order is the order
of sha256(seed, kind, id), so a draw depends only on the seed and the ids, and adding a
document to the benchmark does not reshuffle the others.

- Document level (`num_docs`): the first N documents in seeded order, with every question
  they have.
- Question level (`sample_size`): documents are taken in seeded order, and their questions
  in seeded order, until N questions are chosen (with `num_docs` too, only among those
  documents). The corpus is the documents that gave a question.
- Stratified (`mode="stratified"`, with `sample_size`): the quota is split evenly across the
  categories present, the remainder going to the first categories in sorted order; a
  category with fewer questions than its quota gives the shortfall back, and it is handed
  out one question per category per round, in sorted order, to the categories that still
  have questions. A question is taken only while its category's quota is open.
- Benchmarks sampled by question (BEIR) keep the whole corpus: only questions are drawn.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.benchmarks._files import write_text_atomic
from lasagna_cli.engine.benchmarks._model import (
    BenchmarkQuestion,
    LoadedBenchmark,
    SamplingUnit,
    Subset,
)
from lasagna_cli.engine.benchmarks._registry import get_adapter

SampleMode = Literal["stratified", "random"]
SAMPLE_MODES: tuple[SampleMode, ...] = ("stratified", "random")
METADATA_FILE = "sampling_metadata.json"


class SamplingUsageError(EngineUsageError):
    """Bad sampling arguments."""


@dataclass(frozen=True)
class Sample:
    """The chosen documents and questions, in benchmark order, and how they were chosen."""

    benchmark: str
    split: str
    doc_ids: tuple[str, ...]
    question_ids: tuple[str, ...]
    metadata: dict[str, Any]


def _order_key(seed: int, kind: str, item_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{kind}\x00{item_id}".encode()).digest()


def seeded_order(ids: Sequence[str], seed: int, kind: str) -> list[str]:
    """`ids` in the seed's pseudo-random order (sha256 of seed, kind and id)."""
    return sorted(ids, key=lambda item_id: (_order_key(seed, kind, item_id), item_id))


def category_quotas(
    sample_size: int, available: dict[str, int]
) -> tuple[dict[str, int], dict[str, int]]:
    """(quota per category, the even split before redistribution), categories sorted.

    The even split gives the remainder to the first categories; shortfalls (categories with
    fewer questions than their share) are handed out one per category per round to those
    with questions left. When the pool is smaller than the sample, every question is taken.
    """
    categories = sorted(available)
    if not categories:
        return {}, {}
    base, remainder = divmod(sample_size, len(categories))
    targets = {c: base + (1 if i < remainder else 0) for i, c in enumerate(categories)}
    quotas = {c: min(targets[c], available[c]) for c in categories}
    shortfall = sample_size - sum(quotas.values())
    while shortfall > 0:
        given = 0
        for category in categories:
            if shortfall > 0 and quotas[category] < available[category]:
                quotas[category] += 1
                shortfall -= 1
                given += 1
        if given == 0:
            break
    return quotas, targets


def _questions_by_doc(bench: LoadedBenchmark) -> dict[str, list[BenchmarkQuestion]]:
    by_doc: dict[str, list[BenchmarkQuestion]] = {}
    for question in bench.questions:
        # A question is drawn with its first document (the one it was written on).
        by_doc.setdefault(question.doc_ids[0] if question.doc_ids else "", []).append(question)
    return by_doc


def _check_arguments(
    num_docs: int | None, sample_size: int | None, full: bool, mode: str, unit: SamplingUnit
) -> None:
    if mode not in SAMPLE_MODES:
        raise SamplingUsageError(f"unknown sampling mode {mode!r}: expected stratified or random")
    if full and (num_docs is not None or sample_size is not None):
        raise SamplingUsageError(
            "--full takes the whole benchmark: give it alone, without --num-docs or --sample-size"
        )
    if not full and num_docs is None and sample_size is None:
        raise SamplingUsageError(
            "say how much to sample: --num-docs N (documents), --sample-size N (questions) "
            "or --full"
        )
    for flag, value in (("--num-docs", num_docs), ("--sample-size", sample_size)):
        if value is not None and value < 1:
            raise SamplingUsageError(f"{flag} must be at least 1, found {value}")
    if num_docs is not None and unit == "question":
        raise SamplingUsageError(
            "this benchmark is sampled by question (its whole corpus is kept as "
            "distractors): use --sample-size N instead of --num-docs"
        )


def check_sample_output(mode: str, out: Path, overwrite: bool) -> SampleMode:
    """`benchmark sample`'s --mode (returned), and its folder: a folder, empty unless
    `overwrite`."""
    if mode not in SAMPLE_MODES:
        raise SamplingUsageError(f"--mode: expected stratified or random, found {mode!r}")
    if out.exists() and not out.is_dir():
        raise SamplingUsageError(f"-o {out}: expected a folder, found a file; choose a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise SamplingUsageError(
            f"-o {out} is not empty; choose a new folder, or pass --overwrite to write the "
            "sample over it"
        )
    return mode


def sample_benchmark(
    bench: LoadedBenchmark,
    *,
    num_docs: int | None = None,
    sample_size: int | None = None,
    full: bool = False,
    seed: int = 42,
    mode: SampleMode = "stratified",
    unit: SamplingUnit = "document",
) -> Sample:
    """Choose documents and questions as the module docstring describes."""
    _check_arguments(num_docs, sample_size, full, mode, unit)
    by_doc = _questions_by_doc(bench)
    all_doc_ids = [doc.id for doc in bench.documents]
    if unit == "question":
        # One pool: the whole corpus stays; questions are drawn on their own.
        pools = {"": list(bench.questions)}
        doc_order = [""]
    else:
        pools = by_doc
        known = set(all_doc_ids)
        eligible = [doc_id for doc_id in all_doc_ids if doc_id in by_doc]
        eligible += [doc_id for doc_id in by_doc if doc_id not in known]
        doc_order = seeded_order(eligible, seed, "document")
        if num_docs is not None:
            doc_order = doc_order[:num_docs]

    chosen: list[BenchmarkQuestion] = []
    quotas: dict[str, int] = {}
    targets: dict[str, int] = {}
    open_quota: dict[str, int] = {}
    if full or sample_size is None:
        for doc_id in doc_order:
            chosen.extend(pools[doc_id])
    else:
        pool_questions = [q for doc_id in doc_order for q in pools[doc_id]]
        if mode == "stratified":
            quotas, targets = category_quotas(
                sample_size, dict(Counter(q.category for q in pool_questions))
            )
            open_quota = dict(quotas)
        remaining = sample_size
        for doc_id in doc_order:
            if remaining == 0:
                break
            questions = {q.id: q for q in pools[doc_id]}
            for question_id in seeded_order(list(questions), seed, "question"):
                if remaining == 0:
                    break
                question = questions[question_id]
                if mode == "stratified":
                    if open_quota.get(question.category, 0) == 0:
                        continue
                    open_quota[question.category] -= 1
                chosen.append(question)
                remaining -= 1

    chosen_ids = {q.id for q in chosen}
    question_ids = tuple(q.id for q in bench.questions if q.id in chosen_ids)
    if unit == "question":
        doc_ids = tuple(all_doc_ids)
    else:
        used = {q.doc_ids[0] for q in chosen if q.doc_ids}
        # A question's document may not be in the corpus (a FinanceBench filing without
        # its PDF): it is still the question's, and the subset keeps its rows.
        unread = [d for d in by_doc if d not in set(all_doc_ids)]
        doc_ids = tuple(doc_id for doc_id in all_doc_ids + unread if doc_id in used)

    requested = None if full else sample_size
    metadata: dict[str, Any] = {
        "benchmark": bench.name,
        "split": bench.split,
        "seed": seed,
        "mode": mode if sample_size is not None else None,
        "unit": unit,
        "num_docs": num_docs,
        "sample_size": sample_size,
        "full": full,
        "method": (
            "documents and questions in the order of sha256(seed, kind, id); "
            + (
                "every question of the first num_docs documents"
                if sample_size is None and not full
                else "the whole benchmark"
                if full
                else "documents added in that order until sample_size questions"
                + (" with per-category quotas" if mode == "stratified" else "")
            )
        ),
        "original": {
            "documents": len(bench.documents),
            "questions": len(bench.questions),
            "categories": dict(sorted(Counter(q.category for q in bench.questions).items())),
        },
        "sampled": {
            "documents": len(doc_ids),
            "questions": len(question_ids),
            "categories": dict(sorted(Counter(q.category for q in chosen).items())),
        },
        "skipped_by_adapter": dict(bench.skipped),
        "document_ids": list(doc_ids),
        "question_ids": list(question_ids),
    }
    if quotas:
        metadata["category_targets"] = targets
        metadata["category_quotas"] = quotas
    if requested is not None and len(question_ids) < requested:
        metadata["shortfall"] = requested - len(question_ids)
    return Sample(bench.name, bench.split, doc_ids, question_ids, metadata)


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_sample(
    sample: Sample, bench: LoadedBenchmark, data_dir: str | Path, out_dir: str | Path
) -> list[Path]:
    """Write the sample in the benchmark's own format under `out_dir` (so that
    `--data-dir out_dir` runs it) and sampling_metadata.json. Returns the files written."""
    out = Path(out_dir)
    source = Path(data_dir)
    if out.resolve() == (source if source.is_dir() else source.parent).resolve():
        raise SamplingUsageError(
            f"-o {out} is the benchmark's own folder: writing the sample there would overwrite "
            "the raw files; choose another folder"
        )
    adapter = get_adapter(sample.benchmark)
    keep = Subset(frozenset(sample.doc_ids), frozenset(sample.question_ids))
    written = adapter.write_subset(source, sample.split, out, keep)
    root = source if source.is_dir() else source.parent
    metadata = {
        **sample.metadata,
        "source_files": [
            {"file": _relative(path, root), "sha256": _file_digest(path)} for path in bench.files
        ],
        "files_written": [_relative(path, out) for path in written],
    }
    target = out / METADATA_FILE
    write_text_atomic(
        target, json.dumps(metadata, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    )
    return [*written, target]


def _relative(path: Path, root: Path) -> str:
    # Relative names only: absolute paths would make the metadata differ between machines.
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name
