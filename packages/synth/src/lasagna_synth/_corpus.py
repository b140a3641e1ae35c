"""What loading and chunking produce: documents, the files skipped, and passages."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Document:
    """One readable file. `id` is its path relative to the corpus folder, with `/`."""

    id: str
    text: str
    kind: str  # how it was read: "text", "pdf", or the unstructured partitioner's type


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document a plan was made from: its id and how it was read (its text is in the
    plan's passages)."""

    id: str
    kind: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out of the corpus, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Corpus:
    """The documents of a folder (or one file) in sorted path order, and the files skipped."""

    root: str
    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True, slots=True)
class Passage:
    """A span of one document's original text; `id` is `<doc_id>#<index>`, index from 0."""

    id: str
    doc_id: str
    index: int
    text: str
