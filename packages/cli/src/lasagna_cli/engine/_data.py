"""The one question model and the one corpus model every door's data becomes.

A `Dataset` is one split of one benchmark, ready to run: its questions, the corpus its
setups search (when it has one), its name and revision, and what each track can measure.
The readers in `datasets/` build it from the user's files (JSONL, CSV, SQuAD, BEIR), from a
registered public benchmark's raw files, or from kag's DATASETS.json.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_synth import CorpusProvenance, TrackSupport

if TYPE_CHECKING:
    from lasagna_synth import EvidenceSpan, Skipped


@dataclass(frozen=True, slots=True)
class Question:
    """One question, with what a right answer and a useful retrieval look like.

    - `references`: any of them is a right answer (EM and F1 take the best); empty for a
      free-form question with nothing to compare against.
    - `unanswerable`: a refusal is the right answer (it has no references).
    - `options` / `correct_option`: a multiple-choice question (kag's MCQ).
    - `judgments`: `{doc_id: grade}` over the corpus; a grade above 0 is relevant.
    - `evidence`: strings a retrieved passage should contain (evidence recall); counted only
      in passages of the question's own `documents` when it names them.
    - `spans`: where its evidence sits in a folder of documents (`corpus:`): its judgments
      are the passages of a chunking that overlap them (`Corpus.judgments`).
    """

    id: str
    text: str
    references: tuple[str, ...] = ()
    unanswerable: bool = False
    options: Mapping[str, str] | None = None
    correct_option: str | None = None
    judgments: Mapping[str, int] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    category: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    spans: tuple[EvidenceSpan, ...] = ()

    @property
    def relevant(self) -> list[str]:
        """The documents judged relevant (grade above 0), in judgment order."""
        return [doc for doc, grade in self.judgments.items() if grade > 0]

    @property
    def is_mcq(self) -> bool:
        return self.options is not None

    def filter_values(self) -> dict[str, str]:
        """What `--filter key=value` matches: plain metadata values as text, and always
        `unanswerable`."""
        values = {
            key: filter_text(value)
            for key, value in self.metadata.items()
            if isinstance(value, str | int | float | bool)
        }
        values["unanswerable"] = filter_text(self.unanswerable)
        return values


def filter_text(value: str | int | float | bool) -> str:
    # JSON spells booleans in lower case, and so does a user typing --filter key=true.
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Corpus:
    """The passages retrieval searches, `{id: text}` in corpus order."""

    texts: Mapping[str, str]
    provenance: CorpusProvenance
    document_of: Mapping[str, str] = field(default_factory=dict)
    """Passage id -> the document it was cut from (empty: each passage is its document)."""
    rule: str = ""
    """How the passages were made from the documents (held fixed in the comparability key)."""
    titled: bool = False
    """Texts are BEIR's "title\\n\\nbody": a system may hold the body alone."""
    cut: bool = False
    """The passages were cut from longer documents (`document_of` names them), so a
    question's evidence and documents are recorded with its ranking."""
    spans: Mapping[str, tuple[str, int, int]] = field(default_factory=dict)
    """Passage id -> (document, start, end): where a chunked folder's passage sits."""
    document_texts: Mapping[str, str] = field(default_factory=dict)
    """Document id -> its text, which `spans` index (a chunked folder's)."""

    def __len__(self) -> int:
        return len(self.texts)

    def judgments(self, evidence: tuple[EvidenceSpan, ...]) -> dict[str, int]:
        """`{passage: 1}` for every passage overlapping an evidence span."""
        from lasagna_synth import relevant_passages

        return dict.fromkeys(relevant_passages(evidence, self.spans), 1)


@dataclass(frozen=True)
class Documents:
    """The documents of a corpus folder (`corpus:`), `{id: text}` in corpus order, with each
    text's sha256 and the files skipped; `datasets._documents` reads and cuts them."""

    root: Path
    texts: Mapping[str, str]
    sha256: Mapping[str, str]
    skipped: tuple[Skipped, ...] = ()

    @property
    def digest(self) -> str:
        """The sha256 over every (id, text sha256): an edited document is another corpus."""
        pairs = [[doc, digest] for doc, digest in self.sha256.items()]
        return hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()

    def describe(self) -> dict[str, Any]:
        """What results.json says of the corpus."""
        return {
            "path": str(self.root),
            "documents": len(self.texts),
            "sha256": self.digest,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


@dataclass(frozen=True)
class Dataset:
    """One split of one benchmark, ready to plan."""

    name: str
    """`local/<stem>@<12 hex>`, `<name>@<12 hex>` or kag's dataset key."""
    revision: str
    kind: str
    """jsonl, csv, beir, squad, benchmark (a registered one) or kag (DATASETS.json)."""
    split: str
    questions: tuple[Question, ...]
    corpus: Corpus | None = None
    tracks: Mapping[str, TrackSupport] = field(default_factory=dict)
    """What each track can measure here, and why (or why not)."""
    splits: tuple[str, ...] = ()
    """Every split the source has (for the message when another is asked for)."""
    notes: tuple[str, ...] = ()
    described: Mapping[str, Any] | None = None
    """A registered benchmark's facts for results.json (files, documents, passages)."""
    known_ids: frozenset[str] = frozenset()
    """Question ids the source has beyond these (a BEIR query no judgment names)."""
    id_prefix: str = ""
    """How a question's id is shown to a user's system (kag: `<dataset>/`)."""
    documents: Documents | None = None
    """The folder of documents searched (`corpus:`), which each setup's chunking cuts;
    `corpus` is its default chunking."""
    duplicates: Mapping[str, str] = field(default_factory=dict)
    """`{id: id of the first copy}`: questions of the source left out of `questions` because
    an earlier one asks the same (`datasets._own`), in source order."""
    _chunked: dict[Hashable, Corpus] = field(default_factory=dict, repr=False, compare=False)
    _chunk: Callable[[Documents, Any], Corpus] | None = field(
        default=None, repr=False, compare=False
    )

    def corpus_for(self, chunking: Hashable) -> Corpus | None:
        """What a setup with this chunking searches: the documents cut by it (once per
        chunking), or the dataset's one corpus."""
        if self.documents is None or self._chunk is None:
            return self.corpus
        if chunking not in self._chunked:
            self._chunked[chunking] = self._chunk(self.documents, chunking)
        return self._chunked[chunking]

    @property
    def corpus_provenance(self) -> CorpusProvenance:
        return self.corpus.provenance if self.corpus is not None else "none"

    def filterable(self) -> dict[str, list[str]]:
        """Metadata keys a filter can use, each with the values the questions hold."""
        values: dict[str, set[str]] = {}
        for question in self.questions:
            for key, value in question.filter_values().items():
                values.setdefault(key, set()).add(value)
        return {key: sorted(found) for key, found in sorted(values.items())}
