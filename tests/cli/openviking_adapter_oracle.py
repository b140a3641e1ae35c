"""OpenViking's dataset adapters (benchmark/RAG/src/adapters/ @ 6e944cc) as the oracle of
lasagna's: the questions each one reads from a folder of ../shared/data, side by side.

Run it as a script to derive the pinned fixture from the upstream code (needs the mirror):

    uv run python tests/cli/openviking_adapter_oracle.py

which writes tests/cli/fixtures/openviking/oracle/adapters.json: per case, the count and,
per question in upstream's order, its id and the sha256 of what the test compares (sample
id, question text, gold answers, category as pipeline.py writes it, evidence). Only ids and digests
are committed, never the data.

Two choices of the harness, both stated in the fixture README:
- os.listdir is sorted while upstream runs: its adapters read a folder's files in
  os.listdir's order (the file system's, arbitrary on ext4), and the order decides which
  paper wins where two files hold the same one; lasagna reads them in name order;
- a CSV without the question columns (syllabi_meta_info.csv) becomes, upstream, one empty
  question per row under syllabus ""; lasagna leaves that file out, and so does the
  comparison (`UPSTREAM_ONLY`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "datasets"
FIXTURE = Path(__file__).parent / "fixtures" / "openviking" / "oracle" / "adapters.json"

#: case -> (upstream module, class, lasagna benchmark, path under the layout `build`
#: makes). Qasper and SyllabusQA are read as folders (every split file), the others as
#: their one file, as OpenViking's configs name them.
CASES: dict[str, tuple[str, str, str, str]] = {
    "qasper-shared": ("qasper_adapter", "QasperAdapter", "qasper", "qasper"),
    "qasper-splits": ("qasper_adapter", "QasperAdapter", "qasper", "Qasper"),
    "syllabusqa-shared": ("syllabusqa_adapter", "SyllabusQAAdapter", "syllabusqa", "syllabusqa"),
    "syllabusqa-splits": ("syllabusqa_adapter", "SyllabusQAAdapter", "syllabusqa", "SyllabusQA"),
    "locomo": ("locomo_adapter", "LocomoAdapter", "locomo", "locomo/locomo10.json"),
    "financebench": (
        "financebench_adapter",
        "FinanceBenchAdapter",
        "financebench",
        "financebench/financebench_open_source.jsonl",
    ),
}
#: Where upstream's question id is kept (LoCoMo's items have none: its `id` is None).
ID_KEYS = {"qasper": "question_id", "syllabusqa": "id", "financebench": "financebench_id"}
#: Upstream reads syllabi_meta_info.csv's rows as questions of syllabus "" (see above).
UPSTREAM_ONLY = {"syllabusqa": ""}

_RUNNER = """
import dataclasses, importlib, json, os, sys
sys.path.insert(0, sys.argv[1])
listdir = os.listdir
os.listdir = lambda path: sorted(listdir(path))  # the harness's order: see the docstring
adapter = getattr(importlib.import_module("adapters." + sys.argv[2]), sys.argv[3])
samples = adapter(raw_file_path=sys.argv[4]).load_and_transform()
rows = [
    {"sample_id": s.sample_id, "question": q.question, "gold_answers": q.gold_answers,
     "category": str(q.category), "evidence": q.evidence, "metadata": q.metadata}
    for s in samples for q in s.qa_pairs
]
json.dump(rows, sys.stdout, default=str)
"""


def build(folder: Path) -> Path:
    """../shared/data's folders as they are, and beside them Qasper's two splits as
    OpenViking's sample_dataset.py writes them (qasper-<split>-v0.3.json) and SyllabusQA's
    val and test splits as CSVs at the top (the shared test split is its JSON form)."""
    layout = folder / "layout"
    for name in ("qasper", "syllabusqa", "locomo", "financebench"):
        (layout / name).parent.mkdir(parents=True, exist_ok=True)
        (layout / name).symlink_to(SHARED / name)
    (layout / "Qasper").mkdir()
    for split in ("train", "dev"):
        target = SHARED / "qasper" / f"hf_dummy_qasper-{split}-v0.1.json"
        (layout / "Qasper" / f"qasper-{split}-v0.3.json").symlink_to(target)
    (layout / "SyllabusQA").mkdir()
    (layout / "SyllabusQA" / "val.csv").symlink_to(SHARED / "syllabusqa" / "val.csv")
    rows = json.loads((SHARED / "syllabusqa" / "test.json").read_text(encoding="utf-8"))
    with (layout / "SyllabusQA" / "test.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return layout


def canonical(benchmark: str, row: dict[str, Any]) -> dict[str, Any]:
    """What both sides must agree on, for one question."""
    return {
        "sample_id": row["sample_id"],
        "id": row["id"] if benchmark in ID_KEYS else None,
        "question": row["question"],
        "gold_answers": list(row["gold_answers"]),
        "category": row["category"],
        "evidence": list(row["evidence"]),
    }


def upstream_questions(rag: Path, layout: Path, case: str) -> list[dict[str, Any]]:
    """The questions upstream's adapter reads, run as a script of its own."""
    module, class_name, benchmark, where = CASES[case]
    found = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(rag / "src"), module, class_name, str(layout / where)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    rows = []
    for row in json.loads(found.stdout):
        if UPSTREAM_ONLY.get(benchmark) == row["sample_id"]:
            continue
        key = ID_KEYS.get(benchmark)
        rows.append(canonical(benchmark, {**row, "id": row["metadata"].get(key) if key else None}))
    return rows


def lasagna_questions(layout: Path, case: str) -> list[dict[str, Any]]:
    from lasagna_cli.engine.benchmarks import get_benchmark_spec, load_benchmark

    _, _, benchmark, where = CASES[case]
    split = "all" if "all" in get_benchmark_spec(benchmark).splits else None
    loaded = load_benchmark(benchmark, layout / where, split, with_text=False)
    return [
        canonical(
            benchmark,
            {
                "sample_id": q.doc_ids[0],
                "id": q.id,
                "question": q.question,
                "gold_answers": q.references,
                "category": str(q.metadata.get("openviking_category", q.category)),
                "evidence": q.metadata.get("openviking_evidence", q.evidence),
            },
        )
        for q in loaded.questions
    ]


def pinned(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def digest(row: dict[str, Any]) -> str:
        text = json.dumps(row, ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    return {"count": len(rows), "questions": [[row["id"], digest(row)] for row in rows]}


def main() -> None:
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from openviking_oracle import upstream

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rag = upstream(folder / "upstream")
        if rag is None:
            sys.exit("no mirror of OpenViking: set OPENVIKING_MIRROR")
        layout = build(folder)
        derived = {case: pinned(upstream_questions(rag, layout, case)) for case in CASES}
    FIXTURE.write_text(dump(derived), encoding="utf-8")
    print(f"{len(derived)} cases -> {FIXTURE}")


def dump(derived: dict[str, Any]) -> str:
    """JSON with one question a line (a diff then names the questions that changed)."""
    parts = []
    for case in sorted(derived):
        rows = ",\n".join(f"   {json.dumps(q)}" for q in derived[case]["questions"])
        parts.append(
            f' "{case}": {{"count": {derived[case]["count"]}, "questions": [\n{rows}\n ]}}'
        )
    return "{\n" + ",\n".join(parts) + "\n}\n"


if __name__ == "__main__":
    main()
