"""What an adapter turns a public benchmark into: documents to search, questions to ask.

Every adapter reads the benchmark's own files, unchanged, and returns a `LoadedBenchmark`:
the corpus documents the retriever searches and the questions, each with its reference
answers, its evidence (strings a retrieved passage should contain) and its category.
`BenchmarkSpec` is the registry entry: licence, citation, splits, categories and the
per-category answer instructions the staged pipeline puts in its prompts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine._steps import Step, no_step

#: What the generator must write when the context does not answer the question; the
#: references of unanswerable questions say the same, so the refusal check can pair them.
MISSING_ANSWER = "Not mentioned"
MISSING_RULE = f'If the context does not contain the answer, write "{MISSING_ANSWER}".'


class BenchmarkFileError(EngineUsageError):
    """A benchmark file is missing or not where --data-dir points: a usage error."""


@dataclass(frozen=True)
class BenchmarkDocument:
    """One corpus document: what the retriever indexes (after chunking)."""

    id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchmarkQuestion:
    """One question with what a correct answer and a useful retrieval look like.

    `doc_ids` are the documents the question is about (document-level sampling keeps a
    question with its documents); `evidence` holds the strings a retrieved passage should
    contain (dialogue ids, evidence sentences or whole relevant passages). Questions with
    no evidence are scored apart, never as recall 0.
    """

    id: str
    question: str
    references: tuple[str, ...]
    evidence: tuple[str, ...]
    category: str
    doc_ids: tuple[str, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    spans: tuple[tuple[str, int, int], ...] = ()
    """Where the evidence sits, as (document id, start, end) character offsets into the
    document's text, when the benchmark says (Chroma's chunking evaluation): such a
    benchmark's documents are cut by each setup's own chunking and retrieval is measured by
    characters (span recall, precision, IoU)."""


@dataclass(frozen=True)
class LoadedBenchmark:
    """A benchmark read from its files: documents, questions and what was skipped."""

    name: str
    split: str
    documents: tuple[BenchmarkDocument, ...]
    questions: tuple[BenchmarkQuestion, ...]
    #: The raw files read, in reading order (their bytes define the benchmark revision).
    files: tuple[Path, ...]
    #: Questions left out by the adapter's rules, counted by reason.
    skipped: Mapping[str, int] = field(default_factory=dict)
    #: Free-form facts worth showing (how the corpus was built, repaired ids, ...).
    notes: tuple[str, ...] = ()

    def document(self, doc_id: str) -> BenchmarkDocument:
        for doc in self.documents:
            if doc.id == doc_id:
                return doc
        raise KeyError(doc_id)


SamplingUnit = Literal["document", "question"]


@dataclass(frozen=True)
class BenchmarkSpec:
    """A registered public benchmark: what it is, where it comes from, how to prompt it."""

    name: str
    title: str
    description: str
    licence: str
    citation: str
    homepage: str
    splits: tuple[str, ...]
    default_split: str
    #: category id -> what it means, in the benchmark's own order.
    categories: Mapping[str, str]
    #: category id -> how the generator should answer questions of that category.
    instructions: Mapping[str, str]
    #: Used for categories without an instruction of their own.
    default_instruction: str
    #: The judge rubric the staged pipeline grades with ("binary" or "scale").
    rubric: str
    #: The files --data-dir must hold, per split, and where to get them (for error messages).
    files_help: str
    #: "document": sampling draws documents and keeps their questions; "question": the
    #: corpus is kept whole and only questions are drawn (BEIR: distractors are the point).
    sampling_unit: SamplingUnit = "document"

    def instruction(self, category: str) -> str:
        return self.instructions.get(category, self.default_instruction)

    def build_prompt(self, question: str, category: str, contexts: Sequence[str]) -> str:
        """The generator's prompt: the contexts, the category's instruction, the missing-answer
        rule, then the question."""
        context_text = "\n\n".join(contexts) if contexts else "(no context was retrieved)"
        return (
            f"{context_text}\n\n---\n{self.instruction(category)}\n{MISSING_RULE}\n\n"
            f"Question: {question}\n\nAnswer:"
        )


@dataclass(frozen=True)
class ReadOptions:
    """How much of a benchmark `Adapter.load` reads."""

    #: False may leave document texts empty when reading them is slow (PDFs): enough for
    #: counting and sampling.
    with_text: bool = True
    #: A folder where texts extracted from PDFs are kept between runs, keyed by the sha256
    #: of the file and of the reader; None reads every PDF again.
    text_cache: Path | None = None
    #: Told the slow steps as they go (extracting PDFs): see `lasagna_cli.engine._steps`.
    on_step: Step = no_step


@dataclass(frozen=True)
class Subset:
    """The documents and questions a sample keeps."""

    doc_ids: frozenset[str]
    question_ids: frozenset[str]


class Adapter(Protocol):
    """Reads one benchmark's raw files; writes a subset of them in the same format."""

    spec: BenchmarkSpec

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        """Read the split from `source` (a folder, or the split's file itself)."""
        ...

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        """Write the kept documents and questions to `out_dir` in the raw format, so that
        `load(out_dir, split, ...)` reads exactly that subset. Returns the files written."""
        ...
