"""BEIR folders: a corpus, queries and graded relevance judgments, and no reference answers.

Raw files (BEIR's own download layout): corpus.jsonl (`_id`, `title`, `text`),
queries.jsonl (`_id`, `text`) and qrels/<split>.tsv (query-id, corpus-id, score; header
optional), read by lasagna-synth's BEIR reader (`load_data`), so a folder is read exactly
as `lasagna benchmark run FOLDER` reads it.

Rules:
- one document per corpus entry (title and text);
- one question per query with a relevant document (score above 0) in the split;
- no reference answers (BEIR judges retrieval only): the staged pipeline's answer metrics
  count these questions apart;
- evidence = the texts of the relevant documents, so evidence recall is the share of them the
  retrieved passages contain; category = "query";
- sampling draws queries only and keeps the whole corpus: the other documents are the
  distractors that make retrieval hard.
"""

from __future__ import annotations

from pathlib import Path

from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._files import read_jsonl, write_bytes_atomic, write_text_atomic
from lasagna_cli.engine.benchmarks._model import (
    BenchmarkDocument,
    BenchmarkFileError,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)

SPEC = BenchmarkSpec(
    name="beir",
    title="BEIR (any BEIR-format folder)",
    description=(
        "Zero-shot retrieval benchmarks in BEIR's layout (MS MARCO, DBpedia-Entity, SciFact, "
        "FiQA, ...): a corpus, queries and graded relevance judgments; no reference answers."
    ),
    licence="per dataset (MS MARCO: non-commercial; DBpedia-Entity: CC BY-SA; see BEIR)",
    citation=(
        "Thakur, Reimers, Rücklé, Srivastava, Gurevych. BEIR: A Heterogeneous Benchmark for "
        "Zero-shot Evaluation of Information Retrieval Models. NeurIPS 2021 Datasets and "
        "Benchmarks. arXiv:2104.08663"
    ),
    homepage="https://github.com/beir-cellar/beir",
    splits=("test", "dev", "train"),
    default_split="test",
    categories={"query": "a search query with graded relevant documents"},
    instructions={},
    default_instruction=(
        "Answer the query from the passages above, briefly, using only what they say."
    ),
    rubric="scale",
    files_help=(
        "Download a dataset from https://github.com/beir-cellar/beir (for example "
        "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip), "
        "unzip it and pass the folder holding corpus.jsonl, queries.jsonl and qrels/ as "
        "--data-dir."
    ),
    sampling_unit="question",
)

_FILES = ("corpus.jsonl", "queries.jsonl")


def _check_folder(source: Path, split: str) -> None:
    if not source.is_dir():
        raise BenchmarkFileError(
            f"beir: --data-dir {source} is not a folder; expected a BEIR folder. " + SPEC.files_help
        )
    for name in (*_FILES, f"qrels/{split}.tsv"):
        if not (source / name).is_file():
            raise BenchmarkFileError(
                f"beir: {source / name} is missing (split {split!r}). " + SPEC.files_help
            )


class BeirAdapter(BenchmarkAdapter):
    spec = SPEC

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        from lasagna_synth import load_data

        _check_folder(source, split)
        # Judgments naming a missing document or query are dropped, and the note says how
        # many: a partial copy of a BEIR set (as the leaderboards ship) is still usable.
        data = load_data(source, drop_unknown_judgments=True)
        rows = data.rows(split)
        documents = tuple(
            BenchmarkDocument(doc_id, text, "") for doc_id, text in data.corpus.items()
        )
        questions = tuple(
            BenchmarkQuestion(
                id=row.id,
                question=row.question,
                references=(),
                evidence=tuple(data.corpus[doc_id] for doc_id in row.relevant),
                category="query",
                doc_ids=tuple(row.relevant),
                metadata={"judgments": dict(row.judgments)},
            )
            for row in rows
        )
        read = [source / name for name in data.files]
        notes = [n for n in data.notes if f"/{split}.tsv" in n]
        notes.append("no reference answers: answer metrics count these questions apart")
        return self.loaded(split, documents, questions, read, notes=notes)

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        _check_folder(source, split)
        # The whole corpus, byte for byte: sampling BEIR draws queries only.
        corpus = out_dir / "corpus.jsonl"
        write_bytes_atomic(corpus, (source / "corpus.jsonl").read_bytes())
        queries = out_dir / "queries.jsonl"
        kept = [
            raw
            for _, raw, record in read_jsonl(source / "queries.jsonl", benchmark=SPEC.name)
            if isinstance(record, dict) and str(record.get("_id", "")).strip() in keep.question_ids
        ]
        write_text_atomic(queries, "".join(line + "\n" for line in kept))
        qrels = out_dir / "qrels" / f"{split}.tsv"
        lines = (source / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        judged = [
            line
            for number, line in enumerate(lines)
            if (number == 0 and line.split("\t")[:2] == ["query-id", "corpus-id"])
            or (line.strip() and line.split("\t")[0].strip() in keep.question_ids)
        ]
        write_text_atomic(qrels, "".join(line + "\n" for line in judged))
        return [corpus, queries, qrels]
