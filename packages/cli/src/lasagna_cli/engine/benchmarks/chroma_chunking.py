"""Chroma's chunking evaluation: 472 questions over five corpora, each with the exact
character spans of its evidence.

Raw files (chunking_evaluation's general evaluation data, unchanged): questions_df.csv
(`question`, `references`: a JSON list of `{content, start_index, end_index}`, `corpus_id`)
and corpora/<corpus_id>.md.

Rules:
- one document per corpus, its text read as Chroma's code reads it (UTF-8, universal line
  ends), so the references' offsets index it; a reference whose `content` is not the text
  at its offsets is refused, naming the row;
- one question per row, its id the row's position (0 for the first, as Chroma's data frame
  numbers them), or the `id` column a sample writes; category = the corpus;
- evidence = the references, as spans (`spans`) and as their text; no reference answers:
  it judges retrieval only;
- the corpora are cut by each setup's own chunking (`--chunker tokens --chunk-size 200`),
  which is what the benchmark compares; retrieval is measured by characters: span recall,
  precision and IoU of the top-k passages (Chroma's definitions, `lasagna_metrics`);
- sampling draws questions only; the corpora they name are kept whole (as Chroma's code,
  a run searches the corpora its questions name).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._files import expect, write_bytes_atomic, write_text_atomic
from lasagna_cli.engine.benchmarks._model import (
    BenchmarkDocument,
    BenchmarkFileError,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)
from lasagna_metrics import parse_json

SPEC = BenchmarkSpec(
    name="chroma-chunking",
    title="Chroma's chunking evaluation",
    description=(
        "472 questions over five corpora (chat logs, finance, PubMed, State of the Union, "
        "Wikipedia), each with the exact character spans of its evidence: compares "
        "chunkings by span recall, precision and IoU. Retrieval only."
    ),
    licence="MIT (Copyright (c) 2024 Brandon Smith; LICENSE in the repository)",
    citation=(
        "Smith, Troynikov. Evaluating Chunking Strategies for Retrieval. Chroma Technical "
        "Report, July 2024. https://research.trychroma.com/evaluating-chunking"
    ),
    homepage="https://github.com/brandonstarxel/chunking_evaluation",
    splits=("test",),
    default_split="test",
    categories={
        "chatlogs": "chat logs",
        "finance": "a financial report",
        "pubmed": "PubMed abstracts",
        "state_of_the_union": "the 2024 State of the Union address",
        "wikitexts": "Wikipedia articles",
    },
    instructions={},
    default_instruction=(
        "Answer the question from the passages above, briefly, using only what they say."
    ),
    rubric="scale",
    files_help=(
        "Get chunking_evaluation/evaluation_framework/general_evaluation_data/ from "
        "https://github.com/brandonstarxel/chunking_evaluation (questions_df.csv and "
        "corpora/*.md) and pass that folder as --data-dir."
    ),
    sampling_unit="question",
)

QUESTIONS = "questions_df.csv"
CORPORA = "corpora"
_COLUMNS = ("question", "references", "corpus_id")


def _read_text(path: Path) -> str:
    """As Python's text mode reads it on Linux (Chroma's `open(path).read()`)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EngineError(
            f"{SPEC.name}: {path} is not UTF-8 ({exc}); re-download the file"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _rows(path: Path) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(_read_text(path), newline=""))
    missing = [c for c in _COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise EngineError(
            f"{SPEC.name}: {path} has no column {', '.join(missing)}; expected "
            f"{', '.join(_COLUMNS)} (Chroma's questions_df.csv); re-download the file"
        )
    return list(reader)


def _check_folder(source: Path) -> Path:
    if not source.is_dir():
        raise BenchmarkFileError(
            f"{SPEC.name}: --data-dir {source} is not a folder; expected the folder holding "
            f"{QUESTIONS} and {CORPORA}/. " + SPEC.files_help
        )
    questions = source / QUESTIONS
    if not questions.is_file():
        raise BenchmarkFileError(f"{SPEC.name}: {questions} is missing. " + SPEC.files_help)
    return questions


def _references(raw: str, where: str) -> list[dict[str, Any]]:
    try:
        references = parse_json(raw)
    except ValueError as exc:
        raise EngineError(f"{where}: references is not JSON ({exc})") from None
    expect(
        isinstance(references, list) and bool(references),
        f"{where}: references should be a non-empty list, found {references!r:.60}",
    )
    for ref in references:
        ok = isinstance(ref, dict) and isinstance(ref.get("content"), str)
        ok = ok and all(
            isinstance(ref.get(key), int) and not isinstance(ref.get(key), bool)
            for key in ("start_index", "end_index")
        )
        expect(ok, f"{where}: a reference should hold content, start_index and end_index")
    checked: list[dict[str, Any]] = references
    return checked


class ChromaChunkingAdapter(BenchmarkAdapter):
    spec = SPEC

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        path = _check_folder(source)
        rows = _rows(path)
        texts: dict[str, str] = {}
        files = [path]
        questions = []
        for number, row in enumerate(rows):
            where = f"{SPEC.name}: {path} row {number + 2}"
            corpus_id = row["corpus_id"].strip()
            expect(bool(corpus_id), f"{where}: corpus_id is empty")
            if corpus_id not in texts:
                document = source / CORPORA / f"{corpus_id}.md"
                if not document.is_file():
                    raise BenchmarkFileError(
                        f"{where}: its corpus {document} is missing. " + SPEC.files_help
                    )
                texts[corpus_id] = _read_text(document)
                files.append(document)
            text = texts[corpus_id]
            spans = []
            for ref in _references(row["references"], where):
                start, end = ref["start_index"], ref["end_index"]
                if not 0 <= start <= end <= len(text) or text[start:end] != ref["content"]:
                    raise EngineError(
                        f"{where}: a reference's content is not the text at {start}..{end} "
                        f"of {corpus_id}.md; the corpus and the questions do not match, "
                        "re-download both"
                    )
                spans.append((corpus_id, start, end))
            question_id = (row.get("id") or "").strip() or str(number)
            questions.append(
                BenchmarkQuestion(
                    id=question_id,
                    question=row["question"],
                    references=(),
                    evidence=tuple(text[s:e] for _, s, e in spans),
                    category=corpus_id,
                    doc_ids=(corpus_id,),
                    spans=tuple(spans),
                )
            )
        documents = [BenchmarkDocument(doc, text) for doc, text in texts.items()]
        notes = ["no reference answers: it judges retrieval only, by the evidence's spans"]
        return self.loaded(split, documents, questions, files, notes=notes)

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        path = _check_folder(source)
        rows = _rows(path)
        kept = [
            {**row, "id": (row.get("id") or "").strip() or str(number)}
            for number, row in enumerate(rows)
        ]
        kept = [row for row in kept if row["id"] in keep.question_ids]
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=[*_COLUMNS, "id"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(kept)
        questions = out_dir / QUESTIONS
        write_text_atomic(questions, buffer.getvalue())
        written = [questions]
        # Every corpus a kept question names, byte for byte: the offsets index them.
        for corpus_id in sorted({row["corpus_id"].strip() for row in kept}):
            document = out_dir / CORPORA / f"{corpus_id}.md"
            write_bytes_atomic(document, (source / CORPORA / f"{corpus_id}.md").read_bytes())
            written.append(document)
        return written
