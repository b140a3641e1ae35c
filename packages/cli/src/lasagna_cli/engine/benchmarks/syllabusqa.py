"""SyllabusQA: questions students ask about course syllabi.

Raw files: the split's questions as `<split>.json` (a list of records) or `<split>.csv`
(upstream: data/dataset_split/), each with `id`, `syllabus_name`, `question_type`,
`question`, `answer`, `answer_span_1..5` and `reasoning_step_1..5`; and the syllabi as text,
`<syllabus_name>.txt` in syllabi_text_<split>/ (or syllabi/syllabi_redacted/text/ upstream).

Rules:
- the question is prefixed `Based on the syllabus "<name>", `;
- question type "no answer" is skipped;
- evidence = the non-empty answer_span_1..5 then reasoning_step_1..5, stripped and
  de-duplicated in order;
- category = question_type; the syllabus texts are the corpus (the upstream text files are
  Mac Roman with CR line ends when they are not UTF-8; both are read).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._files import (
    decode_text,
    dump_json,
    expect,
    read_json,
    write_text_atomic,
)
from lasagna_cli.engine.benchmarks._model import (
    MISSING_ANSWER,
    BenchmarkDocument,
    BenchmarkFileError,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)

SPEC = BenchmarkSpec(
    name="syllabusqa",
    title="SyllabusQA",
    description=(
        "Course-logistics questions about 63 real university syllabi, written by annotators "
        "role-playing students; answers come with the spans and reasoning steps behind them."
    ),
    licence="no licence file in the source repository; research use (ask the authors)",
    citation=(
        "Fernandez, Scarlatos, Lan. SyllabusQA: A Course Logistics Question Answering "
        "Dataset. ACL 2024. arXiv:2403.14666"
    ),
    homepage="https://github.com/umass-ml4ed/SyllabusQA",
    splits=("train", "val", "test"),
    default_split="test",
    categories={
        "single factual": "one fact stated in the syllabus",
        "multi factual": "several facts stated in the syllabus",
        "single reasoning": "one step of reasoning over stated facts",
        "multi reasoning": "several steps of reasoning over stated facts",
        "summarization": "a summary of a part of the syllabus",
        "yes/no": "a yes/no question",
        "no answer": "the syllabus does not answer it (skipped)",
    },
    instructions={
        "single factual": (
            "Give the one fact that answers the question, in the syllabus's own words where "
            "possible, with no explanation."
        ),
        "multi factual": (
            "Give every fact that answers the question, in the syllabus's own words where "
            "possible, separated by commas."
        ),
        "single reasoning": (
            "Reason from the facts in the syllabus to a direct conclusion and state only the "
            "conclusion; invent nothing."
        ),
        "multi reasoning": (
            "Combine the facts in the syllabus to reach the answer and state it briefly; "
            "invent nothing."
        ),
        "summarization": (
            "Summarise what the syllabus says on this point, briefly, keeping every important "
            "detail and its wording where possible."
        ),
        "yes/no": (
            'Start with "Yes" or "No", add no explanation, and use only what the syllabus says.'
        ),
    },
    default_instruction="Answer the question from the syllabus above, inventing nothing.",
    rubric="scale",
    files_help=(
        "Get data/dataset_split/<split>.csv (or .json) and syllabi/syllabi_redacted/text/ "
        "from https://github.com/umass-ml4ed/SyllabusQA, and pass the repository folder, or a "
        "folder with <split>.json and syllabi_text_<split>/, as --data-dir."
    ),
)

_SPAN_FIELDS = [f"answer_span_{i}" for i in range(1, 6)]
_STEP_FIELDS = [f"reasoning_step_{i}" for i in range(1, 6)]


def _records(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as handle:
            rows: list[dict[str, Any]] = list(csv.DictReader(handle))
    else:
        data = read_json(path, benchmark=SPEC.name)
        if isinstance(data, dict):  # {syllabus_name: [records]}, as OpenViking merges them
            rows = [
                {"syllabus_name": name, **record}
                for name, records in data.items()
                for record in (records if isinstance(records, list) else [])
            ]
        else:
            rows = data
    expect(
        isinstance(rows, list) and all(isinstance(r, dict) for r in rows),
        f"syllabusqa: {path} should hold question records (objects), found something else; "
        "is it a SyllabusQA split file?",
    )
    for number, row in enumerate(rows, start=1):
        for key in ("syllabus_name", "question", "question_type"):
            expect(
                isinstance(row.get(key), str) and row[key] != "",
                f"syllabusqa: {path} record {number} has no {key}; "
                "expected the SyllabusQA columns (id, syllabus_name, question_type, ...)",
            )
    return rows


def _text_dir(source: Path, split: str) -> Path:
    base = source if source.is_dir() else source.parent
    candidates = [
        base / f"syllabi_text_{split}",
        base / "syllabi_text",
        base / "syllabi" / "syllabi_redacted" / "text",
        base.parent.parent / "syllabi" / "syllabi_redacted" / "text",
    ]
    for folder in candidates:
        if folder.is_dir():
            return folder
    raise BenchmarkFileError(
        f"syllabusqa: no syllabus texts for split {split!r}: looked for "
        f"syllabi_text_{split}/ and syllabi/syllabi_redacted/text/ under {base}. " + SPEC.files_help
    )


def _syllabus_file(folder: Path, name: str) -> Path:
    path = folder / f"{name}.txt"
    if not path.is_file():
        raise BenchmarkFileError(
            f"syllabusqa: the syllabus {name!r} is missing: expected {path}. "
            "Copy it from syllabi/syllabi_redacted/text/ of https://github.com/umass-ml4ed/SyllabusQA."
        )
    return path


def _clean(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _evidence(record: dict[str, Any]) -> tuple[str, ...]:
    items: list[str] = []
    for key in _SPAN_FIELDS + _STEP_FIELDS:
        text = _clean(record.get(key))
        if text and text not in items:
            items.append(text)
    return tuple(items)


def _question_id(split: str, number: int, record: dict[str, Any]) -> str:
    raw = record.get("id")
    return str(raw) if raw not in (None, "") else f"{split}/row{number}"


class SyllabusQAAdapter(BenchmarkAdapter):
    spec = SPEC

    def _split_file(self, source: Path, split: str) -> Path:
        names = [f"{split}.json", f"{split}.csv"]  # then as in the upstream repository
        return self.find(source, split, names + [f"data/dataset_split/{n}" for n in names])

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        path = self._split_file(source, split)
        records = _records(path)
        folder = _text_dir(source, split)
        names: list[str] = []
        questions: list[BenchmarkQuestion] = []
        skipped = 0
        for number, record in enumerate(records, start=1):
            name = record["syllabus_name"]
            if name not in names:
                names.append(name)
            if record["question_type"] == "no answer":
                skipped += 1
                continue
            answer = _clean(record.get("answer"))
            questions.append(
                BenchmarkQuestion(
                    id=_question_id(split, number, record),
                    question=f'Based on the syllabus "{name}", {record["question"]}',
                    references=(answer or MISSING_ANSWER,),
                    evidence=_evidence(record),
                    category=record["question_type"],
                    doc_ids=(name,),
                )
            )
        files = [path]
        documents = []
        for name in names:
            text_path = _syllabus_file(folder, name)
            files.append(text_path)
            text = decode_text(text_path.read_bytes(), "mac_roman") if options.with_text else ""
            documents.append(BenchmarkDocument(id=name, title=name, text=text))
        return self.loaded(
            split, documents, questions, files, skipped={"question type 'no answer'": skipped}
        )

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        path = self._split_file(source, split)
        kept = []
        for number, record in enumerate(_records(path), start=1):
            qid = _question_id(split, number, record)
            if record["syllabus_name"] in keep.doc_ids and qid in keep.question_ids:
                kept.append({"id": qid, **record})  # a row-number id would not survive
        target = out_dir / f"{split}.json"
        write_text_atomic(target, dump_json(kept))
        written = [target]
        folder = _text_dir(source, split)
        for name in sorted({record["syllabus_name"] for record in kept}):
            copy = out_dir / f"syllabi_text_{split}" / f"{name}.txt"
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(_syllabus_file(folder, name), copy)
            written.append(copy)
        return written
