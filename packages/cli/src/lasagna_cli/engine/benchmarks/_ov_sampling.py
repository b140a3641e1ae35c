"""OpenViking's dataset sampling (benchmark/RAG/scripts/sample_dataset.py), draw for draw.

`sample_openviking(dataset, source, out, sample_size, num_docs, seed, mode)` reads the raw
files as that script reads them, draws with Python's `random` seeded as it seeds it, in the
same order of calls, and writes the same files (the same bytes) and sampling_metadata.json
with its keys, so a sample can be set beside OpenViking's published numbers. Python's
Mersenne Twister, `random.seed(int)`, `shuffle` and `sample` give the same draws on every
CPython 3 release since 3.2.

The draws, per dataset (`num_docs` first when both are given):
- `num_docs` alone: that many documents (`random.sample`; FinanceBench, and Qasper when a
  `sample_size` follows, take the documents with the most questions, ties in seeded order),
  every question kept;
- with `sample_size`: `sample_size` questions among those documents, stratified (an even
  quota per category, sorted; the remainder to the first; shortfalls handed out one per
  category per round) or at random;
- `sample_size` alone: whole documents, category by category in seeded order, while the
  category's quota holds (stratified), or in seeded order until the size (random);
- neither: everything.
Questions the benchmark leaves out (LoCoMo category 5, SyllabusQA "no answer", Qasper
questions every annotator found unanswerable) are kept in the files, beside the sample,
and not counted, as the script does.

Where the script cannot run, lasagna goes on (see docs/coming-from/openviking.md): raw files
in lasagna's flat layout are read too; a Qasper question with several answer types is
counted under its first annotator's (the script takes a set's first element, which depends
on the process's hash seed); and a sample smaller than the number of categories is drawn at
random (the script fails there).

Its four samplers follow the one script's four functions side by side, so that each can be
read against its original (the shared draws are in `_ov_draws`).
"""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.benchmarks._files import expect, read_json, read_jsonl, write_text_atomic
from lasagna_cli.engine.benchmarks._ov_draws import (
    docs_random,
    docs_stratified,
    draw_random,
    draw_stratified,
    group,
)

METADATA_FILE = "sampling_metadata.json"
QASPER_SPLITS = ("train", "dev", "test")
SYLLABUSQA_SPLITS = ("train.csv", "val.csv", "test.csv")
FINANCEBENCH_FILE = "financebench_open_source.jsonl"


class OpenVikingSamplingError(EngineUsageError):
    """A raw file the script needs is missing (a usage error: --raw-dir)."""


@dataclass(frozen=True)
class Drawn:
    """What was written: the files and the metadata (OpenViking's keys)."""

    files: tuple[Path, ...]
    metadata: dict[str, Any]


def _dump(obj: Any) -> str:
    # save_json_data: indent 2, non-ASCII kept, no newline at the end.
    return json.dumps(obj, indent=2, ensure_ascii=False)


def _meta(
    name: str, sample_size: int | None, num_docs: int | None, seed: int, mode: str, **counts: Any
) -> dict[str, Any]:
    return {
        "dataset": name,
        **counts,
        "sample_size": sample_size,
        "num_docs": num_docs,
        "seed": seed,
        "sample_mode": mode,
        "is_full": sample_size is None and num_docs is None,
    }


# --------------------------------------------------------------------------- LoCoMo


def _locomo(
    source: Path, out: Path, size: int | None, docs: int | None, seed: int, mode: str
) -> Drawn:
    path = source / "locomo10.json" if source.is_dir() else source
    if not path.is_file():
        raise OpenVikingSamplingError(f"Locomo: no locomo10.json in {source}")
    data = read_json(path, benchmark="Locomo")
    data = data if isinstance(data, list) else [data]
    expect(
        all(isinstance(d, dict) for d in data),
        f"Locomo: {path}: expected a list of conversation objects; re-download the file",
    )
    # Per document: its counted questions (category 5 left out) by category, file order.
    doc_categories = [
        group(
            [
                (str(q.get("category")), q)
                for q in doc.get("qa", [])
                if str(q.get("category")) != "5"
            ]
        )
        for doc in data
    ]
    by_category: dict[str, list[tuple[int, Any]]] = {}
    for i, cats in enumerate(doc_categories):
        for category, questions in cats.items():
            by_category.setdefault(category, []).extend((i, q) for q in questions)
    total = sum(len(v) for v in by_category.values())
    chosen = list(range(len(data)))
    if docs is not None:
        if docs < len(data):
            random.seed(seed)
            chosen = random.sample(range(len(data)), docs)
        if size is not None:
            pool: dict[str, list[tuple[int, Any]]] = {}
            for i in chosen:
                for category, questions in doc_categories[i].items():
                    pool.setdefault(category, []).extend((i, q) for q in questions)
            if mode == "stratified":
                keep = {(i, _position(data[i], q)) for i, q in draw_stratified(size, pool, seed)}
            else:
                # (position among the chosen, position in the qa list), per category.
                indexed = [
                    (n, _position(data[i], q))
                    for n, i in enumerate(chosen)
                    for questions in doc_categories[i].values()
                    for q in questions
                ]
                kept = set(draw_random(size, indexed, seed))
                keep = {(chosen[n], p) for n, p in kept}
            for i in chosen:
                data[i]["qa"] = [
                    q
                    for p, q in enumerate(data[i].get("qa", []))
                    if (i, p) in keep or str(q.get("category")) == "5"
                ]
    elif size is not None:
        counts = {i: sum(len(q) for q in cats.values()) for i, cats in enumerate(doc_categories)}
        doc_ids: list[Any] = list(range(len(data)))
        if mode == "stratified":
            cats_by_doc = dict(enumerate(doc_categories))
            picked = docs_stratified(size, by_category, cats_by_doc, doc_ids, seed)
        else:
            picked = docs_random(size, counts, doc_ids, seed)
        chosen = [int(i) for i in picked]
    selected = [data[i] for i in chosen]
    target = out / "locomo10.json"
    write_text_atomic(target, _dump(selected))
    sampled = sum(1 for doc in selected for q in doc.get("qa", []) if str(q.get("category")) != "5")
    metadata = _meta(
        "Locomo",
        size,
        docs,
        seed,
        mode,
        original_num_docs=len(data),
        original_total_qas=total,
        sampled_num_docs=len(selected),
        sampled_total_qas=sampled,
    )
    metadata["note"] = "Category 5 questions are excluded from QA count"
    return Drawn((target,), metadata)


def _position(doc: dict[str, Any], question: Any) -> int:
    """The first place of an equal question in the document's qa list (as the script
    finds it)."""
    for p, item in enumerate(doc.get("qa", [])):
        if item == question:
            return p
    return -1


# ----------------------------------------------------------------------- SyllabusQA


def _syllabusqa(
    source: Path, out: Path, size: int | None, docs: int | None, seed: int, mode: str
) -> Drawn:
    split_dir = source / "data" / "dataset_split"
    split_dir = split_dir if split_dir.is_dir() else source  # lasagna's flat layout
    rows: list[dict[str, Any]] = []
    for name in SYLLABUSQA_SPLITS:
        path = split_dir / name
        if path.is_file():
            with path.open(encoding="utf-8", newline="") as handle:
                rows.extend({**row, "_source_file": name} for row in csv.DictReader(handle))
    if not rows:
        raise OpenVikingSamplingError(
            f"SyllabusQA: no train.csv, val.csv or test.csv in {source / 'data/dataset_split'} "
            f"(or {source})"
        )
    groups = group([(row.get("syllabus_name", "unknown"), row) for row in rows])
    doc_categories = {
        name: group(
            [(r.get("question_type"), r) for r in items if r.get("question_type") != "no answer"]
        )
        for name, items in groups.items()
    }
    by_category: dict[str, list[tuple[str, Any]]] = {}
    for name, cats in doc_categories.items():
        for category, items in cats.items():
            by_category.setdefault(category, []).extend((name, r) for r in items)
    valid = sum(len(v) for v in by_category.values())
    names = list(groups)
    chosen: list[str] = names
    if docs is not None:
        if docs < len(names):
            random.seed(seed)
            chosen = random.sample(names, docs)
        if size is not None:
            if mode == "stratified":
                pool: dict[str, list[Any]] = {}
                for name in chosen:
                    for category, items in doc_categories[name].items():
                        pool.setdefault(category, []).extend(items)
                sampled = draw_stratified(size, pool, seed)
            else:
                answerable = [
                    r
                    for name in chosen
                    for r in groups[name]
                    if r.get("question_type") != "no answer"
                ]
                sampled = draw_random(size, answerable, seed)
            sampled = sampled + [
                r for name in chosen for r in groups[name] if r.get("question_type") == "no answer"
            ]
            groups = defaultdict(
                list, group([(r.get("syllabus_name", "unknown"), r) for r in sampled])
            )
    elif size is not None:
        ids: list[Any] = list(names)
        if mode == "stratified":
            per_doc = dict(doc_categories)
            chosen = [str(n) for n in docs_stratified(size, by_category, per_doc, ids, seed)]
        else:
            counts: dict[Any, int] = {
                n: sum(len(v) for v in c.values()) for n, c in doc_categories.items()
            }
            chosen = [str(n) for n in docs_random(size, counts, ids, seed)]
    selected = [row for name in chosen for row in groups.get(name, [])]
    written: list[Path] = []
    for split in SYLLABUSQA_SPLITS:
        part = [r for r in selected if r.get("_source_file") == split]
        if not part:
            continue
        for row in part:
            row.pop("_source_file", None)
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, fieldnames=list(part[0]))
        writer.writeheader()
        writer.writerows(part)
        target = out / split
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(buffer.getvalue().encode("utf-8"))
        written.append(target)
    names_kept = {r.get("syllabus_name") for r in selected if r.get("syllabus_name")}
    written += _copy_syllabi(source, out, sorted(str(n) for n in names_kept))
    metadata = _meta(
        "SyllabusQA",
        size,
        docs,
        seed,
        mode,
        original_num_docs=len(names),
        original_total_qas=len(rows),
        original_valid_qas=valid,
        sampled_num_docs=len(chosen),
        sampled_total_qas=len(selected),
        sampled_valid_qas=sum(1 for r in selected if r.get("question_type") != "no answer"),
    )
    metadata["note"] = "'no answer' type questions are excluded from QA count"
    return Drawn(tuple(written), metadata)


def _copy_syllabi(source: Path, out: Path, names: list[str]) -> list[Path]:
    """syllabi/syllabi_redacted/{pdf,text,word}/<name>.<ext> of the kept syllabi; from
    lasagna's flat layout (syllabi_text_<split>/), their texts go to text/."""
    copied = []
    upstream = source / "syllabi"
    folders: list[tuple[Path, str]] = []
    if upstream.exists():
        (out / "syllabi").mkdir(parents=True, exist_ok=True)
        for sub in ("pdf", "text", "word"):
            if (upstream / "syllabi_redacted" / sub).exists():
                folders.append((upstream / "syllabi_redacted" / sub, sub))
                (out / "syllabi" / "syllabi_redacted" / sub).mkdir(parents=True, exist_ok=True)
    else:
        folders += [(f, "text") for f in sorted(source.glob("syllabi_text*")) if f.is_dir()]
    for folder, sub in folders:
        target_dir = out / "syllabi" / "syllabi_redacted" / sub
        for name in names:
            for ext in (".pdf", ".txt", ".docx"):
                found = folder / f"{name}{ext}"
                if found.exists():
                    target_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(found, target_dir / found.name)
                    copied.append(target_dir / found.name)
                    break
    return copied


# --------------------------------------------------------------------------- Qasper


def qasper_files(source: Path) -> list[Path]:
    """qasper-{train,dev,test}-v0.3.json in that order (the script's names); a split
    without one takes its highest other version (`*qasper-<split>-v0.*.json`)."""
    found = []
    for split in QASPER_SPLITS:
        exact = source / f"qasper-{split}-v0.3.json"
        others = sorted(p for p in source.glob(f"*qasper-{split}-v0.*.json") if p.is_file())
        if exact.is_file():
            found.append(exact)
        elif others:
            found.append(others[-1])
    return found


def _unanswerable(qa: dict[str, Any]) -> bool:
    return all(a.get("answer", {}).get("unanswerable", False) for a in qa.get("answers", []))


def qasper_type(qa: dict[str, Any]) -> str:
    """The question's category: its first annotator's answer type (see the module notes)."""
    for wrapper in qa.get("answers", []):
        answer = wrapper.get("answer", {})
        if answer.get("unanswerable", False):
            continue
        if answer.get("extractive_spans"):
            return "extractive"
        if answer.get("free_form_answer", "").strip():
            return "free_form"
        if answer.get("yes_no") is not None:
            return "yes_no"
    return "extractive"


def _qasper(
    source: Path, out: Path, size: int | None, docs: int | None, seed: int, mode: str
) -> Drawn:
    files = qasper_files(source) if source.is_dir() else [source]
    if not files:
        raise OpenVikingSamplingError(f"Qasper: no qasper-<split>-v0.3.json in {source}")
    paper_ids: list[str] = []
    papers: dict[str, tuple[dict[str, Any], str]] = {}
    doc_categories: dict[str, dict[str, list[Any]]] = {}
    by_category: dict[str, list[tuple[str, Any]]] = {}
    for path in files:
        papers_in = read_json(path, benchmark="Qasper")
        expect(
            isinstance(papers_in, dict) and all(isinstance(p, dict) for p in papers_in.values()),
            f"Qasper: {path}: expected an object of papers by id; re-download the file",
        )
        for paper_id, paper in papers_in.items():
            paper_ids.append(paper_id)
            papers[paper_id] = (paper, path.name)
            counted = [(qasper_type(q), q) for q in paper.get("qas", []) if not _unanswerable(q)]
            doc_categories[paper_id] = group(counted)
            for category, qa in counted:
                by_category.setdefault(category, []).append((paper_id, qa))
    total = sum(len(v) for v in by_category.values())
    count = {p: sum(len(v) for v in doc_categories[p].values()) for p in paper_ids}
    chosen = paper_ids
    if docs is not None:
        if docs < len(paper_ids):
            random.seed(seed)
            if size is not None:  # the papers with the most questions, ties seeded
                order = paper_ids.copy()
                random.shuffle(order)
                order.sort(key=lambda p: count[p], reverse=True)
                chosen = order[:docs]
            else:
                chosen = random.sample(paper_ids, docs)
        if size is not None:
            indexed = [
                (p, qasper_type(qa), i, qa)
                for p in chosen
                for i, qa in enumerate(papers[p][0].get("qas", []))
                if not _unanswerable(qa)
            ]
            if mode == "stratified":
                pool = group([(c, (p, i)) for p, c, i, _ in indexed])
                keep = set(draw_stratified(size, pool, seed))
            else:
                keep = {(p, i) for p, _, i, _ in draw_random(size, indexed, seed)}
            for p in chosen:
                paper = papers[p][0]
                paper["qas"] = [
                    qa
                    for i, qa in enumerate(paper.get("qas", []))
                    if _unanswerable(qa) or (p, i) in keep
                ]
    elif size is not None:
        ids: list[Any] = list(paper_ids)
        if mode == "stratified":
            per_doc = dict(doc_categories)
            chosen = [str(p) for p in docs_stratified(size, by_category, per_doc, ids, seed)]
        else:
            chosen = [str(p) for p in docs_random(size, dict(count), ids, seed)]
    by_file: dict[str, dict[str, Any]] = {}
    for p in chosen:
        paper, name = papers[p]
        by_file.setdefault(name, {})[p] = paper
    written = []
    for name, content in by_file.items():
        write_text_atomic(out / name, _dump(content))
        written.append(out / name)
    sampled = sum(1 for p in chosen for qa in papers[p][0].get("qas", []) if not _unanswerable(qa))
    metadata = _meta(
        "Qasper",
        size,
        docs,
        seed,
        mode,
        original_num_docs=len(paper_ids),
        original_total_qas=total,
        sampled_num_docs=len(chosen),
        sampled_total_qas=sampled,
    )
    metadata["note"] = "Unanswerable questions are excluded from QA count"
    return Drawn(tuple(written), metadata)


# --------------------------------------------------------------------- FinanceBench


def _financebench(
    source: Path, out: Path, size: int | None, docs: int | None, seed: int, mode: str
) -> Drawn:
    candidates = [source / "data" / FINANCEBENCH_FILE, source / FINANCEBENCH_FILE, source]
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        raise OpenVikingSamplingError(
            f"FinanceBench: no {FINANCEBENCH_FILE} in {source / 'data'} (or {source})"
        )
    rows = [row for _, _, row in read_jsonl(path, benchmark="FinanceBench")]
    expect(
        all(isinstance(r, dict) for r in rows),
        f"FinanceBench: {path}: expected one JSON object a line; re-download the file",
    )
    groups: dict[str, list[Any]] = group([(r.get("doc_name", "unknown"), r) for r in rows])
    doc_categories = {
        name: group([(r.get("question_type", "domain-relevant"), r) for r in items])
        for name, items in groups.items()
    }
    by_category: dict[str, list[tuple[str, Any]]] = {}
    for name, cats in doc_categories.items():
        for category, items in cats.items():
            by_category.setdefault(category, []).extend((name, r) for r in items)
    names = list(groups)
    chosen = names
    if docs is not None:
        if docs < len(names):
            random.seed(seed)
            order = sorted(names, key=lambda n: len(groups[n]), reverse=True)
            random.shuffle(order)
            chosen = sorted(order, key=lambda n: len(groups[n]), reverse=True)[:docs]
        if size is not None:
            if mode == "stratified":
                pool: dict[str, list[Any]] = {}
                for name in chosen:
                    for category, items in doc_categories[name].items():
                        pool.setdefault(category, []).extend(items)
                sampled = draw_stratified(size, pool, seed)
            else:
                sampled = draw_random(size, [r for n in chosen for r in groups[n]], seed)
            groups = group([(r.get("doc_name", "unknown"), r) for r in sampled])
    elif size is not None:
        ids: list[Any] = list(names)
        if mode == "stratified":
            per_doc = dict(doc_categories)
            chosen = [str(n) for n in docs_stratified(size, by_category, per_doc, ids, seed)]
        else:
            counts: dict[Any, int] = {n: len(items) for n, items in groups.items()}
            chosen = [str(n) for n in docs_random(size, counts, ids, seed)]
    selected = [r for name in chosen for r in groups.get(name, [])]
    target = out / FINANCEBENCH_FILE
    write_text_atomic(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in selected))
    written = [target]
    pdfs = source / "pdfs" if source.is_dir() else source.parent / "pdfs"
    if pdfs.exists():
        (out / "pdfs").mkdir(parents=True, exist_ok=True)
        for name in chosen:
            pdf = pdfs / f"{name}.pdf"
            if pdf.exists():
                shutil.copy2(pdf, out / "pdfs" / pdf.name)
                written.append(out / "pdfs" / pdf.name)
    metadata = _meta(
        "Financebench",
        size,
        docs,
        seed,
        mode,
        original_num_docs=len(names),
        original_total_qas=len(rows),
        sampled_num_docs=len(chosen),
        sampled_total_qas=len(selected),
    )
    return Drawn(tuple(written), metadata)


# ------------------------------------------------------------------------------ API

Sampler = Callable[[Path, Path, "int | None", "int | None", int, str], Drawn]
SAMPLERS: dict[str, Sampler] = {
    "Locomo": _locomo,
    "SyllabusQA": _syllabusqa,
    "Qasper": _qasper,
    "FinanceBench": _financebench,
}


def sample_openviking(
    dataset: str,
    source: Path,
    out: Path,
    *,
    sample_size: int | None = None,
    num_docs: int | None = None,
    seed: int = 42,
    mode: str = "stratified",
) -> Drawn:
    """Sample `dataset` (OpenViking's spelling: Locomo, SyllabusQA, Qasper, FinanceBench)
    from its raw folder `source` into `out`, as sample_dataset.py does; sampling_metadata.json
    is written last, with the script's keys."""
    if mode not in ("stratified", "random"):
        raise EngineUsageError(f"--sample-mode {mode!r}: expected stratified or random")
    for flag, value in (("--sample-size", sample_size), ("--num-docs", num_docs)):
        if value is not None and value < 1:
            raise EngineUsageError(f"{flag} must be at least 1, found {value}")
    drawn = SAMPLERS[dataset](source, out, sample_size, num_docs, seed, mode)
    target = out / METADATA_FILE
    write_text_atomic(target, _dump(drawn.metadata))
    return Drawn((*drawn.files, target), drawn.metadata)
