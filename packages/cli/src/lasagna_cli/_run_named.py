"""A registered public benchmark in a sweep file (`name: locomo`, `data_dir: ...`) as run data.

The adapter's questions and documents (engine.benchmarks) become the rows and corpus the runner
already handles, so a named benchmark runs beside the user's own files with the same setups,
metrics, result files and leaderboard:

- The corpus is the benchmark's own (`corpus_provenance: native`, never pooled gold). SQuAD
  and BEIR judge whole documents (a paragraph; a BEIR document), so their documents are
  indexed whole and the judgments are their qrels (SQuAD: an answerable question's own
  paragraph). The others' documents (conversations, syllabi, papers, filings) are cut into
  the staged pipeline's passages (fixed 200-word windows), and their questions have no
  qrels: retrieval is measured by evidence recall alone.
- Evidence recall (soft and strict) looks for the question's evidence in the top-k passages
  of the question's own documents: every LoCoMo conversation has a turn "D1:3", so a passage
  of another conversation holding "[D1:3]" is not evidence. A question with neither
  judgments nor evidence is counted apart (`counts.without_evidence`), never scored 0.
- References: the adapter's, "Not mentioned" left out; a question whose only reference is
  "Not mentioned" is unanswerable (a refusal is its right answer). BEIR has no references:
  it supports the retrieval track only.
- Filters see `category` (the adapter's category: LoCoMo "1".."4", SQuAD "answerable", ...),
  `question_type` where the raw files call it that (SyllabusQA, FinanceBench), `document`
  for benchmarks cut into passages, and the adapter's plain metadata.
- `n_samples` is the engine's seeded draw (`sample_benchmark`, by question, no quotas):
  the first N question ids in the order of sha256(seed, id), so it is the same on any
  machine; the corpus stays whole.
- The dataset runs as `<name>@<12 hex>`; its revision is the staged pipeline's: the sha256
  over the raw files read (names and bytes).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from lasagna_cli._errors import DATA_ERROR, CliError, exit_code_for
from lasagna_cli.engine.benchmarks import MISSING_ANSWER
from lasagna_synth import (
    BenchmarkData,
    BenchmarkRow,
    TrackSupport,
    dataset_name,
)

if TYPE_CHECKING:
    from lasagna_cli._run_config import BenchmarkEntry, RetrieverSpec
    from lasagna_cli.engine.benchmarks import BenchmarkQuestion, LoadedBenchmark
    from lasagna_synth import CorpusProvenance, Track

NAMED_KIND: Final = "benchmark"
#: Benchmarks whose documents are the units their relevance judgments name.
_JUDGED_DOCUMENTS = ("beir", "squad")
#: Where the raw files call the adapter's category `question_type`, filters may too.
_QUESTION_TYPE = ("syllabusqa", "financebench")


def _whole_documents_rule() -> str:
    return "the benchmark's documents, whole (the units its relevance judgments name)"


def _passages_rule() -> str:
    from lasagna_cli._pipeline._index import CHUNK_RULE

    return f"the benchmark's documents in passages: {CHUNK_RULE}"


@dataclass(frozen=True)
class NamedBenchmarkData(BenchmarkData):
    """A registered benchmark's split as the runner's data: rows, corpus, revision, and what
    evidence recall needs (each question's evidence and documents, each passage's document)."""

    benchmark: str = ""
    loaded: LoadedBenchmark | None = None
    """The adapter's questions and documents (for seeded sampling)."""
    evidence: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Row id -> the strings a retrieved passage should contain."""
    own_documents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Row id -> the documents the question is about (evidence counts only in these)."""
    passage_document: Mapping[str, str] = field(default_factory=dict)
    """Corpus id -> the document it was cut from."""
    corpus_rule: str = ""
    """How the corpus was made from the documents: held fixed in the comparability key."""
    whole_documents: bool = False
    """The documents are indexed whole (SQuAD, BEIR), not cut into passages."""
    file_digests: tuple[tuple[str, str], ...] = ()
    """(file name, sha256) of every raw file read, in reading order."""

    @property
    def label(self) -> str:
        return self.benchmark

    @property
    def corpus_provenance(self) -> CorpusProvenance:
        return "native" if self.corpus else "none"

    def name(self, given: str | None = None) -> str:
        """`<benchmark>@<12 hex>`: named by the benchmark, whatever the entry says."""
        return dataset_name(self.path, self.sha256, is_folder=True, name=self.benchmark)

    def track_support(self) -> dict[Track, TrackSupport]:
        rows = self.rows()
        judged = sum(1 for r in rows if r.relevant)
        with_evidence = sum(1 for r in rows if self.evidence.get(r.id))
        answered = sum(1 for r in rows if r.answers)
        unanswerable = sum(1 for r in rows if r.unanswerable)
        documents = len(set(self.passage_document.values()))
        if not self.corpus:
            retrieval = TrackSupport(
                "retrieval", False, f"{self.benchmark} has no document text here", ""
            )
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
                f"{' and '.join(scored)} of {len(rows):,} questions, over {len(self.corpus):,} "
                f"passages of its {documents:,} documents",
            )
        if not answered and not unanswerable:
            why = f"{self.benchmark} has no reference answers (it judges retrieval only)"
            fix = "run the retrieval track only (tracks: [retrieval])"
            generation = TrackSupport("generation", False, why, fix)
            closed_book = TrackSupport("closed-book", False, why, fix)
        else:
            scored_text = f"{answered:,} questions with references"
            if unanswerable:
                scored_text += f" and {unanswerable:,} unanswerable (a refusal is the right answer)"
            generation = TrackSupport(
                "generation",
                True,
                f"{scored_text}; the generator answers from the top-k retrieved passages",
            )
            closed_book = TrackSupport(
                "closed-book", True, f"{scored_text}; the generator answers without passages"
            )
        return {"retrieval": retrieval, "generation": generation, "closed-book": closed_book}

    def retrieval_metrics(
        self, row: BenchmarkRow, ranking: Sequence[str], texts: Sequence[str], spec: RetrieverSpec
    ) -> dict[str, float | None] | None:
        """Ranking metrics from the qrels, and evidence recall in the question's own
        documents; None when the question has neither (counted apart)."""
        from lasagna_cli._run_tasks import ranking_metrics
        from lasagna_metrics import evidence_recall

        evidence = self.evidence.get(row.id, ())
        if not row.relevant and not evidence:
            return None
        metrics: dict[str, float | None] = {}
        if row.relevant:
            metrics.update(ranking_metrics(row, ranking, spec.top_k))
        if evidence:
            own = set(self.own_documents.get(row.id, ()))
            top = [
                text
                for doc_id, text in zip(ranking[: spec.top_k], texts[: spec.top_k], strict=False)
                if not own or self.passage_document.get(doc_id) in own
            ]
            metrics["evidence_recall"] = evidence_recall(top, evidence)
            metrics["evidence_recall_strict"] = evidence_recall(
                top, evidence, min_soft_match_tokens=sys.maxsize
            )
        return metrics

    def query_facts(self, row_id: str) -> dict[str, Any]:
        """What recomputing a question's evidence recall from results.json needs beyond its
        ranking: the evidence and the question's documents (a passage id is `<doc>#<i>`).
        Documents indexed whole are judged by the qrels, which results.json has already."""
        if self.whole_documents:
            return {}
        return {
            "evidence": list(self.evidence.get(row_id, ())),
            "documents": list(self.own_documents.get(row_id, ())),
        }

    def describe(self) -> dict[str, Any]:
        """What results.json records about the benchmark (no machine-specific path)."""
        loaded = self.loaded
        return {
            "name": self.benchmark,
            "files": [{"file": name, "sha256": digest} for name, digest in self.file_digests],
            "documents": len(loaded.documents) if loaded is not None else None,
            "passages": len(self.corpus),
            "corpus": self.corpus_rule,
            "skipped_by_adapter": dict(loaded.skipped) if loaded is not None else {},
        }


def _sweep_message(exc: BaseException) -> str:
    # The adapters speak to `--data-dir` users; here the folder is the entry's `data_dir:`.
    return str(exc).replace("--data-dir", "`data_dir:`")


def _read(entry: BenchmarkEntry, *, with_text: bool) -> LoadedBenchmark:
    from lasagna_cli.engine.benchmarks import EngineError, load_benchmark
    from lasagna_synth import SynthError

    assert entry.benchmark is not None and entry.data_dir is not None
    cache = None
    if with_text:
        from lasagna_cli._pipeline._command import _text_cache

        cache = _text_cache()
    try:
        return load_benchmark(
            entry.benchmark, entry.data_dir, entry.split, with_text=with_text, text_cache=cache
        )
    except (EngineError, SynthError) as exc:
        raise CliError(f"{entry.where}: {_sweep_message(exc)}", exit_code_for(exc)) from None


def probe(entry: BenchmarkEntry) -> LoadedBenchmark:
    """Read the entry's questions without the slow part of the documents (PDFs, syllabus
    texts): a missing or malformed raw file is refused before any benchmark is loaded."""
    return _read(entry, with_text=False)


def load_named(entry: BenchmarkEntry, probed: LoadedBenchmark | None = None) -> NamedBenchmarkData:
    """The entry's benchmark as run data (see the module docstring)."""
    from lasagna_cli._pipeline._index import chunk_benchmark, data_revision, file_digests

    # BEIR reads everything either way; the others read their document texts now.
    loaded = probed if probed is not None and entry.benchmark == "beir" else None
    if loaded is None:
        loaded = _read(entry, with_text=True)
    if not loaded.questions:
        raise CliError(
            f"{entry.where}: the {loaded.split} split has no question to ask (the adapter "
            f"skipped {sum(loaded.skipped.values()):,}); check the files in data_dir",
            DATA_ERROR,
        )
    twice = [i for i, n in Counter(q.id for q in loaded.questions).items() if n > 1]
    if twice:
        raise CliError(
            f'{entry.where}: question id "{twice[0]}" is used twice in the raw files; a run needs '
            "distinct ids (one task file each)",
            DATA_ERROR,
        )
    whole = loaded.name in _JUDGED_DOCUMENTS
    corpus: dict[str, str] = {}
    passage_document: dict[str, str] = {}
    if whole:
        for doc in loaded.documents:
            corpus.setdefault(doc.id, doc.text)
            passage_document.setdefault(doc.id, doc.id)
    else:
        passage_ids, doc_ids, texts = chunk_benchmark(loaded)
        for passage_id, doc_id, text in zip(passage_ids, doc_ids, texts, strict=True):
            corpus.setdefault(passage_id, text)
            passage_document.setdefault(passage_id, doc_id)
    rows = [_row(loaded.name, q, whole) for q in loaded.questions]
    digests = file_digests(loaded)
    revision = data_revision(loaded, digests)
    assert entry.data_dir is not None
    return NamedBenchmarkData(
        path=entry.data_dir,
        kind=NAMED_KIND,
        sha256=revision,
        splits={entry.split: rows},
        corpus=corpus,
        files=tuple(name for name, _ in digests),
        notes=tuple(loaded.notes),
        benchmark=loaded.name,
        loaded=loaded,
        evidence={q.id: tuple(q.evidence) for q in loaded.questions},
        own_documents={q.id: tuple(q.doc_ids) for q in loaded.questions},
        passage_document=passage_document,
        corpus_rule=_whole_documents_rule() if whole else _passages_rule(),
        whole_documents=whole,
        file_digests=tuple(digests),
    )


def _row(benchmark: str, question: BenchmarkQuestion, whole: bool) -> BenchmarkRow:
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
    return BenchmarkRow(
        id=question.id,
        question=question.question,
        answers=references,
        judgments=judgments,
        unanswerable=unanswerable,
        metadata=metadata,
    )


def sample_rows(
    data: NamedBenchmarkData, rows: Sequence[BenchmarkRow], n_samples: int, seed: int
) -> list[BenchmarkRow]:
    """`n_samples` of `rows` by the engine's seeded draw (by question, no quotas)."""
    from lasagna_cli.engine.benchmarks import sample_benchmark

    assert data.loaded is not None
    kept = {row.id for row in rows}
    pool = replace(data.loaded, questions=tuple(q for q in data.loaded.questions if q.id in kept))
    sample = sample_benchmark(
        pool, sample_size=n_samples, seed=seed, mode="random", unit="question"
    )
    chosen = set(sample.question_ids)
    return [row for row in rows if row.id in chosen]
