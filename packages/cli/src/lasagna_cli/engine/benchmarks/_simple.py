"""`BaseAdapter`: a new dataset the way OpenViking's RAG benchmark adds one, with its
BaseAdapter's two reading hooks; lasagna does the rest.

    class PetsAdapter(BaseAdapter):
        name = "pets"
        categories = {"fact": "one document answers it"}
        instructions = {"fact": "Answer with the exact words of the context."}

        def load_documents(self, source, split):      # OpenViking's data_prepare
            for path in sorted((source / "docs").glob("*.md")):
                yield BenchmarkDocument(id=path.stem, text=path.read_text())

        def load_questions(self, source, split):      # OpenViking's load_and_transform
            ...  # BenchmarkQuestion(id, question, references, evidence, category, doc_ids)

OpenViking's other hooks are lasagna's own steps: its documents are cut into passages as
every benchmark's are (the fixed 200-word chunker), `build_prompt` is the prompt of every
registered benchmark (the category's instruction, the "Not mentioned" rule), and the
answer is stripped as `post_process_answer`'s default does. The spec is built from the
class attributes. Sampling writes the kept documents and questions as two JSONL files
(`documents.jsonl`, `questions.jsonl`), which `load` reads back in place of the hooks.

Name it in OpenViking's config (`adapter: {module: ..., class_name: ...}`), or register
it: `register_benchmark(PetsAdapter())` or the `lasagna.benchmarks` entry-point group.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._model import (
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)
from lasagna_metrics import parse_json

SNAPSHOT_DOCUMENTS = "documents.jsonl"
SNAPSHOT_QUESTIONS = "questions.jsonl"


class BaseAdapter(BenchmarkAdapter):
    """Set `name` (and any of the other class attributes), write `load_documents` and
    `load_questions`."""

    name: ClassVar[str]
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    licence: ClassVar[str] = "unknown"
    citation: ClassVar[str] = ""
    homepage: ClassVar[str] = ""
    splits: ClassVar[tuple[str, ...]] = ("test",)
    #: category id -> what it means; category id -> how to answer it.
    categories: ClassVar[Mapping[str, str]] = {}
    instructions: ClassVar[Mapping[str, str]] = {}
    default_instruction: ClassVar[str] = "Answer the question from the context, briefly."
    #: The judge's rubric: "scale" (0-4, OpenViking's Generic_0-4) or "binary" (0 or 4).
    rubric: ClassVar[str] = "scale"
    files_help: ClassVar[str] = ""

    def __init__(self) -> None:
        self.spec = BenchmarkSpec(
            name=self.name,
            title=self.title or self.name,
            description=self.description,
            licence=self.licence,
            citation=self.citation,
            homepage=self.homepage,
            splits=self.splits,
            default_split=self.splits[0],
            categories=dict(self.categories),
            instructions=dict(self.instructions),
            default_instruction=self.default_instruction,
            rubric=self.rubric,
            files_help=self.files_help or f"the files {type(self).__name__} reads",
        )

    @abstractmethod
    def load_documents(self, source: Path, split: str) -> Iterable[BenchmarkDocument]:
        """The documents to search (OpenViking's data_prepare)."""

    @abstractmethod
    def load_questions(self, source: Path, split: str) -> Iterable[BenchmarkQuestion]:
        """The questions, each with its references, evidence, category and the ids of the
        documents it is about (OpenViking's load_and_transform)."""

    def files(self, source: Path, split: str) -> list[Path]:
        """The files read, whose bytes make the data revision: by default every file
        under `source`."""
        if source.is_file():
            return [source]
        return sorted(p for p in source.rglob("*") if p.is_file())

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        if not source.exists():
            raise EngineError(f"{self.name}: {source} does not exist; give {self.spec.files_help}")
        snapshot = source / SNAPSHOT_DOCUMENTS, source / SNAPSHOT_QUESTIONS
        if all(p.is_file() for p in snapshot):
            documents = [BenchmarkDocument(**row) for row in _rows(snapshot[0])]
            questions = [_question(row) for row in _rows(snapshot[1])]
            return self.loaded(split, documents, questions, snapshot)
        try:
            documents = list(self.load_documents(source, split))
            questions = list(self.load_questions(source, split))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EngineError(
                f"{self.name} ({type(self).__name__}): reading {source} failed: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        return self.loaded(split, documents, questions, self.files(source, split))

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        from lasagna_synth import write_bytes_atomic

        bench = self.load(source, split, ReadOptions())
        documents = [d for d in bench.documents if d.id in keep.doc_ids]
        questions = [q for q in bench.questions if q.id in keep.question_ids]
        written = []
        for name, rows in (
            (SNAPSHOT_DOCUMENTS, [_document_row(d) for d in documents]),
            (SNAPSHOT_QUESTIONS, [_question_row(q) for q in questions]),
        ):
            text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
            write_bytes_atomic(out_dir / name, text.encode("utf-8"))
            written.append(out_dir / name)
        return written


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [parse_json(line) for line in handle if line.strip()]


def _document_row(document: BenchmarkDocument) -> dict[str, Any]:
    return {
        "id": document.id,
        "text": document.text,
        "title": document.title,
        "metadata": dict(document.metadata),
    }


def _question_row(question: BenchmarkQuestion) -> dict[str, Any]:
    return {
        "id": question.id,
        "question": question.question,
        "references": list(question.references),
        "evidence": list(question.evidence),
        "category": question.category,
        "doc_ids": list(question.doc_ids),
        "metadata": dict(question.metadata),
    }


def _question(row: dict[str, Any]) -> BenchmarkQuestion:
    return BenchmarkQuestion(
        id=row["id"],
        question=row["question"],
        references=tuple(row["references"]),
        evidence=tuple(row["evidence"]),
        category=row["category"],
        doc_ids=tuple(row["doc_ids"]),
        metadata=row.get("metadata") or {},
    )
