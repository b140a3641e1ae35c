"""What loading and chunking produce: documents, the files skipped, and passages."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


def text_sha256(text: str) -> str:
    """The sha256 of a document's text as read (UTF-8): what evidence spans are offsets
    into, so a span names the text it was cut from, whatever reader extracted it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
    sha256: str = ""
    """Of its text as read (`text_sha256`)."""


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
    """A span of one document's original text; `id` is `<doc_id>#<index>`, index from 0.
    `start` and `end` are its character offsets in the document's text (-1: not known, a
    passage made elsewhere), `doc_sha256` that text's `text_sha256`."""

    id: str
    doc_id: str
    index: int
    text: str
    start: int = -1
    end: int = -1
    doc_sha256: str = ""
