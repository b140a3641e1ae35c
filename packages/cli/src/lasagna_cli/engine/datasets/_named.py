"""A registered public benchmark, read from its raw files, as a `Dataset`.

The adapter's questions and documents (`engine.benchmarks`) become questions and a corpus
like any other data, so a named benchmark runs through every door with the same setups,
metrics and result files:

- The corpus is the benchmark's own (`corpus_provenance: native`, never pooled gold). SQuAD
  and BEIR judge whole documents (a paragraph; a BEIR document), so their documents are
  indexed whole and the judgments are their qrels (SQuAD: an answerable question's own
  paragraph). The others' documents (conversations, syllabi, papers, filings) are cut into
  passages (`_passages`), and their questions have no qrels: retrieval is measured by
  evidence recall, counted in the question's own documents.
- References: the adapter's, "Not mentioned" left out; a question whose only reference is
  "Not mentioned" is unanswerable (a refusal is its right answer). BEIR has no references:
  it supports the retrieval track only.
- Filters see `category` (LoCoMo "1".."4", SQuAD "answerable", ...), `question_type` where
  the raw files call it that (SyllabusQA, FinanceBench), `document` for benchmarks cut into
  passages, and the adapter's plain metadata.
- A benchmark whose evidence is given as character spans (Chroma's chunking evaluation)
  is a folder of documents like the user's own (`corpus:`): each setup's chunking cuts it,
  a passage is relevant when it overlaps the evidence, and retrieval is measured by
  characters (span recall, precision, IoU).
- The dataset runs as `<name>@<12 hex>`; its revision is the sha256 over the raw files read
  (names and bytes).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any, Final

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._data import Corpus, Dataset, Documents, Question
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.benchmarks import (
    MISSING_ANSWER,
    BenchmarkQuestion,
    LoadedBenchmark,
    load_benchmark,
)
from lasagna_cli.engine.config._config import BenchmarkEntry, ChunkingSpec
from lasagna_cli.engine.datasets._documents import chunked_corpus
from lasagna_cli.engine.datasets._passages import CHUNK_RULE, cut_documents
from lasagna_synth import EvidenceSpan, TrackSupport, dataset_name

NAMED_KIND: Final = "benchmark"
#: Benchmarks whose documents are the units their relevance judgments name.
JUDGED_DOCUMENTS = ("beir", "squad")
#: Where the raw files call the adapter's category `question_type`, filters may too.
_QUESTION_TYPE = ("syllabusqa", "financebench")
WHOLE_DOCUMENTS_RULE = "the benchmark's documents, whole (the units its relevance judgments name)"
PASSAGES_RULE = f"the benchmark's documents in passages: {CHUNK_RULE}"


def file_digests(bench: LoadedBenchmark) -> list[tuple[str, str]]:
    """(name, sha256 of the bytes) of every raw file read, in reading order."""
    found = []
    for path in bench.files:
        with path.open("rb") as handle:
            found.append((path.name, hashlib.file_digest(handle, "sha256").hexdigest()))
    return found


def data_revision(digests: list[tuple[str, str]]) -> str:
    """sha256 over the raw files read (names and bytes): an edited file is a new revision."""
    text = json.dumps(
        [[name, digest] for name, digest in digests],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_named(
    entry: BenchmarkEntry,
    *,
    with_text: bool,
    text_cache: Path | None = None,
    data_dir_label: str = "`data_dir:`",
    on_step: Step = no_step,
) -> LoadedBenchmark:
    """The entry's raw files through the adapter; `with_text=False` reads the questions
    without the slow part of the documents (PDFs, syllabus texts). The adapters' messages
    name the folder `--data-dir`; `data_dir_label` is how this entry's user gave it."""
    assert entry.benchmark is not None and entry.data_dir is not None
    try:
        return load_benchmark(
            entry.benchmark,
            entry.data_dir,
            entry.split,
            with_text=with_text,
            text_cache=text_cache,
            on_step=on_step,
        )
    except EngineError as exc:
        message = str(exc).replace("--data-dir", data_dir_label)
        raise type(exc)(f"{entry.where}: {message}") from None


def named_corpus(loaded: LoadedBenchmark) -> Corpus:
    """The benchmark's documents, whole or in passages (see the module docstring)."""
    texts: dict[str, str] = {}
    document_of: dict[str, str] = {}
    whole = loaded.name in JUDGED_DOCUMENTS
    if whole:
        for doc in loaded.documents:
            texts.setdefault(doc.id, doc.text)
            document_of.setdefault(doc.id, doc.id)
    else:
        ids, doc_ids, chunks = cut_documents((doc.id, doc.text) for doc in loaded.documents)
        for passage_id, doc_id, text in zip(ids, doc_ids, chunks, strict=True):
            texts.setdefault(passage_id, text)
            document_of.setdefault(passage_id, doc_id)
    return Corpus(
        texts=texts,
        provenance="native" if texts else "none",
        document_of=document_of,
        rule=WHOLE_DOCUMENTS_RULE if whole else PASSAGES_RULE,
        titled=loaded.name == "beir",
        cut=not whole,
    )


def named_dataset(
    entry: BenchmarkEntry, loaded: LoadedBenchmark, corpus: Corpus | None = None
) -> Dataset:
    """The benchmark as a Dataset; `corpus` when its passages were kept from an earlier run."""
    if not loaded.questions:
        raise EngineError(
            f"{entry.where}: the {loaded.split} split has no question to ask (the adapter "
            f"skipped {sum(loaded.skipped.values()):,}); check the files in data_dir"
        )
    twice = [i for i, n in Counter(q.id for q in loaded.questions).items() if n > 1]
    if twice:
        raise EngineError(
            f'{entry.where}: question id "{twice[0]}" is used twice in the raw files; a run needs '
            "distinct ids (one task file each)"
        )
    spanned = any(q.spans for q in loaded.questions)
    documents = spanned_documents(loaded, entry.data_dir) if spanned else None
    if documents is not None:
        corpus = chunked_corpus(documents, ChunkingSpec())
    corpus = corpus if corpus is not None else named_corpus(loaded)
    whole = loaded.name in JUDGED_DOCUMENTS
    questions = tuple(_question(loaded.name, q, whole, documents) for q in loaded.questions)
    digests = file_digests(loaded)
    revision = data_revision(digests)
    assert entry.data_dir is not None
    return Dataset(
        name=dataset_name(entry.data_dir, revision, is_folder=True, name=loaded.name),
        revision=f"sha256:{revision}",
        kind=NAMED_KIND,
        split=loaded.split,
        questions=questions,
        corpus=corpus,
        tracks=_tracks(loaded.name, questions, corpus),
        splits=(loaded.split,),
        notes=tuple(loaded.notes),
        described={
            "name": loaded.name,
            "files": [{"file": name, "sha256": digest} for name, digest in digests],
            "documents": len(loaded.documents),
            "passages": len(corpus),
            "corpus": corpus.rule,
            "skipped_by_adapter": dict(loaded.skipped),
        },
        documents=documents,
        _chunk=chunked_corpus if documents is not None else None,
    )


def spanned_documents(loaded: LoadedBenchmark, data_dir: Path | None) -> Documents:
    """The documents of a benchmark whose evidence is given as spans: each setup cuts them
    by its own chunking, as a folder of the user's documents (`corpus:`) is cut."""
    from lasagna_synth import text_sha256

    texts = {doc.id: doc.text for doc in loaded.documents}
    return Documents(
        root=Path(data_dir or "."),
        texts=texts,
        sha256={doc: text_sha256(text) for doc, text in texts.items()},
    )


def _question(
    benchmark: str, question: BenchmarkQuestion, whole: bool, documents: Documents | None = None
) -> Question:
    references = tuple(r for r in question.references if r != MISSING_ANSWER)
    unanswerable = not references and bool(question.references)
    judgments: dict[str, int] = {}
    if benchmark == "beir":
        raw = question.metadata.get("judgments") or {}
        judgments = {str(doc): int(grade) for doc, grade in raw.items()}
    elif whole and references and question.doc_ids:
        judgments = {question.doc_ids[0]: 1}  # SQuAD: the paragraph it was written on
    metadata: dict[str, Any] = {
        key: value
        for key, value in question.metadata.items()
        if isinstance(value, str | int | float | bool)
    }
    metadata["category"] = question.category
    if benchmark in _QUESTION_TYPE:
        metadata["question_type"] = question.category
    if not whole and question.doc_ids:
        metadata["document"] = question.doc_ids[0]
    return Question(
        id=question.id,
        text=question.question,
        references=references,
        unanswerable=unanswerable,
        judgments=judgments,
        evidence=tuple(question.evidence),
        documents=tuple(question.doc_ids),
        category=question.category,
        metadata=metadata,
        spans=tuple(
            EvidenceSpan(doc, start, end, documents.sha256.get(doc, ""))
            for doc, start, end in question.spans
        )
        if documents is not None
        else (),
    )


def _tracks(
    benchmark: str, questions: tuple[Question, ...], corpus: Corpus
) -> dict[str, TrackSupport]:
    judged = sum(1 for q in questions if q.relevant)
    with_evidence = sum(1 for q in questions if q.evidence)
    answered = sum(1 for q in questions if q.references)
    unanswerable = sum(1 for q in questions if q.unanswerable)
    documents = len(set(corpus.document_of.values()))
    if not corpus:
        retrieval = TrackSupport("retrieval", False, f"{benchmark} has no document text here", "")
    elif not judged and not with_evidence:
        retrieval = TrackSupport(
            "retrieval",
            False,
            "no question has relevance judgments or evidence",
            "choose other filters, or run the generation track",
        )
    else:
        scored = []
        if judged:
            scored.append(f"{judged:,} judged by the benchmark's qrels")
        if with_evidence:
            scored.append(f"{with_evidence:,} with evidence")
        retrieval = TrackSupport(
            "retrieval",
            True,
            f"{' and '.join(scored)} of {counted(len(questions), 'question')}, over "
            f"{counted(len(corpus), 'passage')} of its {counted(documents, 'document')}",
        )
    if not answered and not unanswerable:
        why = f"{benchmark} has no reference answers (it judges retrieval only)"
        fix = "run the retrieval track only (tracks: [retrieval])"
        generation = TrackSupport("generation", False, why, fix)
        closed_book = TrackSupport("closed-book", False, why, fix)
    else:
        text = f"{answered:,} questions with references"
        if unanswerable:
            text += f" and {unanswerable:,} unanswerable (a refusal is the right answer)"
        generation = TrackSupport(
            "generation", True, f"{text}; the generator answers from the top-k retrieved passages"
        )
        closed_book = TrackSupport(
            "closed-book", True, f"{text}; the generator answers without passages"
        )
    return {"retrieval": retrieval, "generation": generation, "closed-book": closed_book}
