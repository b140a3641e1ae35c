"""SyllabusQA: questions students ask about course syllabi.

Raw files: the split's questions as `<split>.csv` (upstream: data/dataset_split/) or
`<split>.json` (a list of records, or `{syllabus_name: [records]}` as OpenViking merges
them), each with `id`, `syllabus_name`, `question_type`, `question`, `answer`,
`answer_span_1..5` and `reasoning_step_1..5`; the syllabi as Word files,
`<syllabus_name>.docx` in syllabi/syllabi_redacted/word/ (or syllabi/), or as text,
`<syllabus_name>.txt` in syllabi_text_<split>/ (or syllabi/syllabi_redacted/text/).

Rules (OpenViking's syllabusqa_adapter.py, which they are checked against):
- split "all" reads every CSV split of the folder in name order, as OpenViking's adapter
  reads a folder (then data/dataset_split/, then lasagna's `<split>.json` files); a CSV
  without the question columns (syllabi_meta_info.csv) is no split and is left out;
- questions are grouped by syllabus, in the order the syllabi first appear;
- the question is prefixed `Based on the syllabus "<name>", `; question type "no answer"
  is skipped; the reference is the answer as written ("Not mentioned" when empty);
- evidence = the non-empty answer_span_1..5 then reasoning_step_1..5, stripped and
  de-duplicated in order;
- category = question_type; the syllabi are the corpus: the .docx when there is one, read
  by lasagna-synth's loader (the `documents` extra), else the text file (the upstream text
  files are Mac Roman with CR line ends when they are not UTF-8; both are read).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError
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
    splits=("train", "val", "test", "all"),
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
        "Get data/dataset_split/<split>.csv (or .json) and syllabi/syllabi_redacted/word/ (or "
        "text/) from https://github.com/umass-ml4ed/SyllabusQA, and pass the repository "
        "folder, or a folder with <split>.csv or .json and syllabi_text_<split>/, as "
        "--data-dir."
    ),
)

_SPAN_FIELDS = [f"answer_span_{i}" for i in range(1, 6)]
_STEP_FIELDS = [f"reasoning_step_{i}" for i in range(1, 6)]


_COLUMNS = ("syllabus_name", "question", "question_type")


def _rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return list(csv.DictReader(handle))
    data = read_json(path, benchmark=SPEC.name)
    if isinstance(data, dict):  # {syllabus_name: [records]}, as OpenViking merges them
        return [
            {"syllabus_name": name, **record}
            for name, records in data.items()
            for record in (records if isinstance(records, list) else [])
        ]
    return data  # type: ignore[no-any-return]


def _is_split(path: Path) -> bool:
    """Whether a CSV has the question columns (syllabi_meta_info.csv has not)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        header = next(csv.reader(handle), [])
    return all(column in header for column in _COLUMNS)


def _records(path: Path) -> list[dict[str, Any]]:
    rows = _rows(path)
    expect(
        isinstance(rows, list) and all(isinstance(r, dict) for r in rows),
        f"syllabusqa: {path} should hold question records (objects), found something else; "
        "is it a SyllabusQA split file?",
    )
    for number, row in enumerate(rows, start=1):
        for key in _COLUMNS:
            expect(
                isinstance(row.get(key), str) and row[key] != "",
                f"syllabusqa: {path} record {number} has no {key}; "
                "expected the SyllabusQA columns (id, syllabus_name, question_type, ...)",
            )
    return rows


def _syllabus_dirs(source: Path, splits: list[str]) -> list[Path]:
    """Where a syllabus may be, in order: OpenViking's .docx folders, then the text ones
    (beside the split files, or at the top of the upstream repository)."""
    base = source if source.is_dir() else source.parent
    roots = [base, base.parent.parent]
    words = [r / "syllabi" / "syllabi_redacted" / "word" for r in roots] + [base / "syllabi"]
    texts = [base / f"syllabi_text_{split}" for split in splits] + [base / "syllabi_text"]
    texts += [r / "syllabi" / "syllabi_redacted" / "text" for r in roots]
    return [folder for folder in words + texts if folder.is_dir()]


def _syllabus_file(folders: list[Path], name: str) -> Path | None:
    for folder in folders:
        for suffix in (".docx", ".txt"):
            path = folder / f"{name}{suffix}"
            if path.is_file():
                return path
    return None


def _missing(source: Path, folders: list[Path], splits: list[str], name: str) -> Exception:
    looked = ", ".join(str(f) for f in folders) or (
        f"syllabi/syllabi_redacted/word/ and syllabi_text_{splits[0]}/ under {source} "
        "(neither exists)"
    )
    return BenchmarkFileError(
        f"syllabusqa: the syllabus {name!r} is missing: expected {name}.docx or {name}.txt "
        f"in {looked}. Copy it from syllabi/syllabi_redacted/ of "
        "https://github.com/umass-ml4ed/SyllabusQA."
    )


def _syllabus_text(path: Path) -> str:
    if path.suffix == ".txt":
        return decode_text(path.read_bytes(), "mac_roman")
    from lasagna_synth import SynthError, load_corpus

    try:
        corpus = load_corpus(path)
    except SynthError as exc:  # the `documents` extra is missing: its install line
        raise EngineError(f"syllabusqa: {path}: {exc}") from None
    if not corpus.documents:
        reason = corpus.skipped[0].reason if corpus.skipped else "no text"
        raise EngineError(f"syllabusqa: {path} has no readable text ({reason})")
    return corpus.documents[0].text


def _clean(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _evidence(record: dict[str, Any]) -> tuple[str, ...]:
    items: list[str] = []
    for key in _SPAN_FIELDS + _STEP_FIELDS:
        text = _clean(record.get(key))
        if text and text not in items:
            items.append(text)
    return tuple(items)


def _question_id(label: str, number: int, record: dict[str, Any]) -> str:
    raw = record.get("id")
    return str(raw) if raw not in (None, "") else f"{label}/row{number}"


def _reference(record: dict[str, Any]) -> str:
    answer = record.get("answer")
    return answer if isinstance(answer, str) and answer else MISSING_ANSWER


class SyllabusQAAdapter(BenchmarkAdapter):
    spec = SPEC

    def _split_file(self, source: Path, split: str) -> Path:
        names = [f"{split}.json", f"{split}.csv"]  # then as in the upstream repository
        return self.find(source, split, names + [f"data/dataset_split/{n}" for n in names])

    def _split_files(self, source: Path, split: str) -> tuple[list[tuple[str, Path]], list[str]]:
        """(label, file) of each split file read, and notes on files left out."""
        if split != "all" or not source.is_dir():
            return [(split, self._split_file(source, split))], []
        for folder in (source, source / "data" / "dataset_split"):
            csvs = sorted(p for p in folder.glob("*.csv") if p.is_file())
            splits = [p for p in csvs if _is_split(p)]
            if splits:
                notes = [
                    f"{p.name}: not a question file (no {', '.join(_COLUMNS)} columns); left out"
                    for p in csvs
                    if p not in splits
                ]
                return [(p.stem, p) for p in splits], notes
        found = [source / f"{s}.json" for s in SPEC.splits if (source / f"{s}.json").is_file()]
        if found:
            return [(p.stem, p) for p in found], []
        return [(split, self._split_file(source, "test"))], []  # the error names the files

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        split_files, notes = self._split_files(source, split)
        labels = [label for label, _ in split_files]
        by_syllabus: dict[str, list[BenchmarkQuestion]] = {}
        skipped = 0
        for label, path in split_files:
            for number, record in enumerate(_records(path), start=1):
                name = record["syllabus_name"]
                grouped = by_syllabus.setdefault(name, [])
                if record["question_type"] == "no answer":
                    skipped += 1
                    continue
                grouped.append(
                    BenchmarkQuestion(
                        id=_question_id(label, number, record),
                        question=f'Based on the syllabus "{name}", {record["question"]}',
                        references=(_reference(record),),
                        evidence=_evidence(record),
                        category=record["question_type"],
                        doc_ids=(name,),
                    )
                )
        files = [path for _, path in split_files]
        folders = _syllabus_dirs(source, labels)
        documents = []
        for name in by_syllabus:
            found = _syllabus_file(folders, name)
            if found is None and options.with_text:
                raise _missing(source, folders, labels, name)
            if found is not None:
                files.append(found)
            text = _syllabus_text(found) if found is not None and options.with_text else ""
            documents.append(BenchmarkDocument(id=name, title=name, text=text))
        questions = [q for grouped in by_syllabus.values() for q in grouped]
        return self.loaded(
            split,
            documents,
            questions,
            files,
            skipped={"question type 'no answer'": skipped},
            notes=notes,
        )

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        kept = []
        labels = []
        for label, path in self._split_files(source, split)[0]:
            labels.append(label)
            for number, record in enumerate(_records(path), start=1):
                qid = _question_id(label, number, record)
                if record["syllabus_name"] in keep.doc_ids and qid in keep.question_ids:
                    kept.append({"id": qid, **record})  # a row-number id would not survive
        target = out_dir / f"{split}.json"
        write_text_atomic(target, dump_json(kept))
        written = [target]
        folders = _syllabus_dirs(source, labels)
        for name in sorted({record["syllabus_name"] for record in kept}):
            found = _syllabus_file(folders, name)
            if found is None:
                raise _missing(source, folders, labels, name)
            copy = out_dir / f"syllabi_text_{split}" / f"{name}{found.suffix}"
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, copy)
            written.append(copy)
        return written
