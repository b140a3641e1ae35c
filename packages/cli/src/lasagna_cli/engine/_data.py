"""The one question model and the one corpus model every door's data becomes.

A `Dataset` is one split of one benchmark, ready to run: its questions, the corpus its
setups search (when it has one), its name and revision, and what each track can measure.
The readers in `datasets/` build it from the user's files (JSONL, CSV, SQuAD, BEIR), from a
registered public benchmark's raw files, or from kag's DATASETS.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lasagna_synth import CorpusProvenance, TrackSupport


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

    def __len__(self) -> int:
        return len(self.texts)


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
