"""The benchmark row model: one question, and the data set it belongs to.

A `BenchmarkRow` is what every reader produces (JSONL, CSV, BEIR folder, SQuAD JSON) and
what the runner scores: the question, its reference answers, its passages, and its graded
judgments over the data set's corpus. A `BenchmarkData` is one validated file or folder:
its rows per split, the corpus retrieval searches, and the digest that names it; and what
each track (retrieval, generation, closed-book) needs of it (`track_support`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lasagna_synth._evidence import EvidenceSpan
from lasagna_synth._naming import dataset_name

#: "benchmark": a registered public benchmark read through its adapter (the CLI's sweep files
#: build such data from `name:` and `data_dir:`), searched in the benchmark's own corpus.
#: "json": a JSON array of row objects (DeepEval's and RAGAS's own JSON files); "hf": a
#: Hugging Face dataset saved to disk, or a Parquet or Arrow table.
DataKind = Literal["jsonl", "csv", "beir", "squad", "json", "hf", "benchmark"]
CorpusProvenance = Literal["native", "documents", "pooled_gold", "none"]
"""Where the searched corpus came from: the benchmark's own (`native`), the user's folder of
documents chunked (`documents`), the rows' gold passages pooled (`pooled_gold`, an easier
search), or no corpus (`none`)."""
Track = Literal["retrieval", "generation", "closed-book"]
"""What a run measures: retrieval, answers from retrieved passages, or answers without."""
TRACKS: tuple[Track, ...] = ("retrieval", "generation", "closed-book")
"""Every track, in the order results list them."""


@dataclass(frozen=True, slots=True)
class BenchmarkRow:
    """One question.

    `answers`: references, any of which EM and F1 accept; the first is the one a judge sees.
    `judgments`: `{doc_id: grade}` over the data set's corpus; a grade above 0 is relevant.
    An unanswerable row has no answers and no relevant document.
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    judgments: Mapping[str, int] = field(default_factory=dict)
    unanswerable: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[EvidenceSpan, ...] = ()
    """Where its passages sit in the corpus documents (the `evidence` field)."""

    @property
    def relevant(self) -> list[str]:
        """The documents judged relevant (grade above 0), in judgment order."""
        return [doc for doc, grade in self.judgments.items() if grade > 0]

    def filter_values(self) -> dict[str, str]:
        """The metadata a `--filter key=value` can match: plain values, as text.

        `unanswerable` is always present, so `--filter unanswerable=true` works on any file.
        """
        values = {
            key: _filter_text(value)
            for key, value in self.metadata.items()
            if isinstance(value, str | int | float | bool)
        }
        values["unanswerable"] = _filter_text(self.unanswerable)
        return values


def _filter_text(value: str | int | float | bool) -> str:
    # JSON spells booleans in lower case, and so does a user typing --filter key=true.
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True, slots=True)
class TrackSupport:
    """Whether the data supports a track, and why (or why not)."""

    track: Track
    supported: bool
    reason: str
    fix: str = ""


@dataclass(frozen=True)
class BenchmarkData:
    """One validated data file or BEIR folder."""

    path: Path
    kind: DataKind
    sha256: str
    """The full digest: of the file's bytes, or of the files a BEIR folder is read from."""
    splits: Mapping[str, Sequence[BenchmarkRow]]
    corpus: Mapping[str, str]
    """`{doc_id: text}` in corpus order: the BEIR corpus, or every row's passages pooled."""
    files: tuple[str, ...] = ()
    """The files read, relative to the folder (a BEIR folder), in digest order."""
    notes: tuple[str, ...] = ()
    """What was done to the data on the way in (judgments dropped on request, ...)."""
    documents: Path | None = None
    """The folder of documents the rows name as their corpus (`corpus`), resolved against
    the file's folder; None when they name none."""

    @property
    def label(self) -> str:
        """How messages name the data: its file or folder name."""
        return self.path.name

    @property
    def revision(self) -> str:
        """The dataset revision recorded with every result."""
        return f"sha256:{self.sha256}"

    @property
    def corpus_provenance(self) -> CorpusProvenance:
        if not self.corpus:
            return "none"
        return "native" if self.kind in ("beir", "benchmark") else "pooled_gold"

    def name(self, given: str | None = None) -> str:
        """`local/<stem>@<12 hex>`, or `<given>@<12 hex>`: as lasagna-rag 0.1.0 names it."""
        folder = self.kind == "beir" or (self.kind == "hf" and self.path.is_dir())
        return dataset_name(self.path, self.sha256, is_folder=folder, name=given)

    def rows(self, split: str | None = None) -> list[BenchmarkRow]:
        """The rows of one split, or of every split when `split` is None."""
        if split is not None:
            return list(self.splits[split])
        return [row for rows in self.splits.values() for row in rows]

    def filterable(self) -> dict[str, list[str]]:
        """Metadata keys a filter can use, each with the values the rows hold."""
        values: dict[str, set[str]] = {}
        for row in self.rows():
            for key, value in row.filter_values().items():
                values.setdefault(key, set()).add(value)
        return {key: sorted(found) for key, found in sorted(values.items())}

    def track_support(self) -> dict[Track, TrackSupport]:
        """For each track, whether this data supports it, and the reason."""
        return track_support(self)

    def supported_tracks(self) -> list[Track]:
        return [t for t, s in self.track_support().items() if s.supported]


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def track_support(data: BenchmarkData) -> dict[Track, TrackSupport]:
    """What each track needs, checked against the data, with a reason either way."""
    rows = data.rows()
    judged = sum(1 for r in rows if r.relevant)
    answered = sum(1 for r in rows if r.answers)
    unanswerable = sum(1 for r in rows if r.unanswerable)
    docs = _count(len(data.corpus), "document")

    if not data.corpus:
        retrieval = TrackSupport(
            "retrieval",
            False,
            "no row has contexts, so there is nothing to retrieve",
            'add "contexts" to the rows, or use a BEIR folder',
        )
    elif not judged:
        retrieval = TrackSupport(
            "retrieval",
            False,
            "every row with contexts is unanswerable, so no passage is relevant to any question",
            'add "contexts" to answerable rows',
        )
    elif data.kind == "beir":
        retrieval = TrackSupport(
            "retrieval",
            True,
            f"{_count(judged, 'query', 'queries')} judged over a corpus of {docs}",
        )
    else:
        retrieval = TrackSupport(
            "retrieval",
            True,
            f"{_count(judged, 'question')} with relevant passages, searched in a pool of {docs} "
            "(every row's passages: an easier search than a real corpus, labelled pooled_gold)",
        )

    if data.kind == "beir":
        why = "a BEIR folder has relevance judgments but no answers"
        fix = 'use a JSONL file with "answer" fields'
        generation = TrackSupport("generation", False, why, fix)
        closed_book = TrackSupport("closed-book", False, why, fix)
    elif not answered and not unanswerable:
        why = 'no row has an "answer"'
        fix = 'add an "answer" to the rows'
        generation = TrackSupport("generation", False, why, fix)
        closed_book = TrackSupport("closed-book", False, why, fix)
    else:
        scored = f"{_count(answered, 'question')} with answers"
        if unanswerable:
            scored += f" and {unanswerable:,} unanswerable (a refusal is the right answer)"
        if data.corpus:
            how = "the generator answers from the top-k retrieved passages"
        else:
            how = "no contexts, so the generator answers closed-book"
        generation = TrackSupport("generation", True, f"{scored}; {how}")
        closed_book = TrackSupport(
            "closed-book", True, f"{scored}; the generator answers without passages"
        )
    return {"retrieval": retrieval, "generation": generation, "closed-book": closed_book}
