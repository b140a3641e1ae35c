"""A question set's own corpus: a folder of documents (`--corpus`, `corpus:`, or the folder
`synthesize` recorded in its rows), read by lasagna-synth's loader and cut by its chunkers,
as `synthesize` reads and cuts it.

The questions' evidence is kept as spans of the documents (`lasagna_synth.EvidenceSpan`):
the rows' own `evidence` where the document's text still has the sha256 the span names,
else each of the row's `contexts` located in the documents (`lasagna_synth.locate`). A
passage of any chunking is relevant to a question when it overlaps one of its spans, so
setups that chunk differently are judged on the same questions. Results are labelled
`corpus_provenance: documents`, never pooled gold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lasagna_cli.engine._data import Corpus, Documents
from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.config._config import ChunkingSpec
from lasagna_synth import BenchmarkRow, EvidenceSpan


def load_documents(root: Path, where: str) -> Documents:
    """Every readable document of `root`, as `synthesize` reads it; refused when none is."""
    from lasagna_synth import SynthUsageError, load_corpus, text_sha256

    if not root.exists():
        raise EngineUsageError(
            f"{where}: corpus {root} does not exist; give --corpus (or `corpus:` in a sweep "
            "file) the folder of documents the questions were written from"
        )
    try:
        corpus = load_corpus(root)
    except SynthUsageError as exc:
        raise EngineUsageError(f"{where}: corpus {root}: {exc}") from None
    if not corpus.documents:
        found = "is empty"
        if corpus.skipped:
            skipped = corpus.skipped[0]
            found = f"has no readable document (first skipped: {skipped.path}: {skipped.reason})"
        raise EngineError(
            f"{where}: corpus {root} {found}; give the folder the questions were written from"
        )
    texts = {doc.id: doc.text for doc in corpus.documents}
    return Documents(
        root=root,
        texts=texts,
        sha256={doc: text_sha256(text) for doc, text in texts.items()},
        skipped=corpus.skipped,
    )


def chunk_rule(chunking: ChunkingSpec) -> str:
    from lasagna_synth import check_chunking, describe_chunker

    chunker = check_chunking(chunking.chunker, chunking.size, chunking.overlap)
    return describe_chunker(chunker, chunking.size, chunking.overlap)


def chunked_corpus(documents: Documents, chunking: ChunkingSpec) -> Corpus:
    """The documents cut by `chunking`; each passage keeps where it sits (`spans`). A
    document too short for one passage stays searchable whole, as `<doc>#0`."""
    from lasagna_synth import check_chunking, chunk_spans

    chunker = check_chunking(chunking.chunker, chunking.size, chunking.overlap)
    texts: dict[str, str] = {}
    document_of: dict[str, str] = {}
    spans: dict[str, tuple[str, int, int]] = {}
    for doc, text in documents.texts.items():
        cut = chunk_spans(text, chunker, chunking.size, chunking.overlap)
        if not cut:
            stripped = text.strip()
            start = text.find(stripped)
            cut = [(start, start + len(stripped))]
        for index, (start, end) in enumerate(cut):
            passage = f"{doc}#{index}"
            texts[passage] = text[start:end]
            document_of[passage] = doc
            spans[passage] = (doc, start, end)
    return Corpus(
        texts=texts,
        provenance="documents",
        document_of=document_of,
        rule=chunk_rule(chunking),
        cut=True,
        spans=spans,
        document_texts=documents.texts,
    )


@dataclass(frozen=True)
class Located:
    """Each row's evidence spans (by row id), and how they were found."""

    spans: Mapping[str, tuple[EvidenceSpan, ...]]
    given: int
    """Rows whose own `evidence` spans still match their documents."""
    found: int
    """Rows whose `contexts` were all located in the documents."""
    partly: int
    """Rows of which some contexts were located, not all."""
    missing: int
    """Rows with contexts of which none was located."""

    def note(self, where: Path) -> str:
        total = self.given + self.found + self.partly + self.missing
        parts = []
        if self.given:
            parts.append(f"{self.given:,} by their evidence spans")
        if self.found:
            parts.append(f"{self.found:,} by their contexts' text")
        if self.partly:
            parts.append(f"{self.partly:,} in part")
        located = ", ".join(parts) or "none"
        text = f"located {total - self.missing:,} of {total:,} rows with passages in {where}: "
        text += located
        if self.missing:
            text += (
                f"; {self.missing:,} not found (their passages are not in these documents: "
                "they count in evidence recall only)"
            )
        return text


def locate_rows(rows: Sequence[BenchmarkRow], documents: Documents) -> Located:
    """Each answerable row's evidence as spans of `documents` (see the module docstring)."""
    from lasagna_synth import locate

    spans: dict[str, tuple[EvidenceSpan, ...]] = {}
    given = found = partly = missing = 0
    for row in rows:
        if row.unanswerable or not (row.contexts or row.evidence):
            continue
        current = [
            span
            for span in row.evidence
            if documents.sha256.get(span.doc) == span.sha256
            or (not span.sha256 and span.doc in documents.texts)
        ]
        if row.evidence and len(current) == len(row.evidence):
            spans[row.id] = tuple(current)
            given += 1
            continue
        # No spans, or spans of an edited document: the passages' text is looked for.
        placed = [locate(text, documents.texts) for text in row.contexts]
        kept = tuple(
            EvidenceSpan(span.doc, span.start, span.end, documents.sha256[span.doc])
            for span in placed
            if span is not None
        )
        if kept:
            spans[row.id] = kept
        if kept and len(kept) == len(placed):
            found += 1
        elif kept:
            partly += 1
        else:
            missing += 1
    return Located(spans, given, found, partly, missing)
