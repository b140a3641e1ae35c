"""Documents to passages to verified benchmark questions, and the benchmark row formats.

    from lasagna_synth import plan, estimate, synthesize, write_jsonl
    p = plan("docs/", n=100, mix="factoid=0.6,multihop=0.3,unanswerable=0.1", seed=42)
    print(estimate(p).input_tokens)                  # no call made
    rows = synthesize("docs/", n=100, seed=42, llm=make_llm("openai/gpt-4o-mini", ...))
    write_jsonl(rows, "synthetic_qa.jsonl")
    write_rows(rows, "ragas.jsonl", format="ragas")   # or "deepeval"

    data, outputs = load_data_and_outputs("ragas_results.jsonl")  # RAGAS, DeepEval, HF
    corpus = documents_to_corpus(langchain_documents)  # for plan(corpus) / synthesize(corpus)

Heavy dependencies (unstructured, pyarrow, pdfminer, nltk, numpy, tiktoken, langchain-core,
lasagna_judge's SDKs)
are imported by the functions that need them, not here; the writing and checking of
questions (pydantic's schemas, the judge) load on first use of their names, so reading
data and documents (what every `lasagna benchmark` command does) stays light.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from lasagna_synth._atomic import TEMP_PREFIX, atomic_writer, sync_filesystem, write_bytes_atomic
from lasagna_synth._blocking import run_blocking
from lasagna_synth._chunking import (
    CHUNKERS,
    DEFAULT_CHUNK_WORDS,
    MIN_WORDS,
    Chunker,
    check_chunking,
    chunk_document,
    chunk_documents,
    describe_chunker,
)
from lasagna_synth._corpus import Corpus, Document, DocumentInfo, Passage, Skipped
from lasagna_synth._errors import SynthError, SynthUsageError
from lasagna_synth._extras import EXTRAS
from lasagna_synth._format_csv import CSV_CONTEXT_SEPARATOR
from lasagna_synth._format_export import EXPORT_FORMATS, to_deepeval, to_ragas, write_rows
from lasagna_synth._format_foreign import DATA_FORMATS
from lasagna_synth._format_records import RecordedOutput
from lasagna_synth._formats import DataAndOutputs, load_data, load_data_and_outputs
from lasagna_synth._jsonl import write_jsonl
from lasagna_synth._langchain import (
    corpus_to_documents,
    document_to_passage,
    passage_to_document,
)
from lasagna_synth._langchain_corpus import documents_to_corpus
from lasagna_synth._loading import (
    iter_corpus,
    load_corpus,
    pdf_reader_identity,
    supported_suffixes,
)
from lasagna_synth._mix import DEFAULT_MIX, QUESTION_TYPES, Mix, parse_mix
from lasagna_synth._naming import dataset_name, passage_id
from lasagna_synth._plan import Plan, PlanItem, plan
from lasagna_synth._rows import (
    TRACKS,
    BenchmarkData,
    BenchmarkRow,
    CorpusProvenance,
    Track,
    TrackSupport,
)
from lasagna_synth._tokens import cl100k_base, count_tokens
from lasagna_synth._validate import DataError

if TYPE_CHECKING:
    from lasagna_synth._estimate import Estimate, estimate
    from lasagna_synth._generate import DROP_REASONS, Synthesis, generate, make_row, synthesize
    from lasagna_synth._prompts import PROMPTS

_LAZY = {
    "Estimate": "lasagna_synth._estimate",
    "estimate": "lasagna_synth._estimate",
    "DROP_REASONS": "lasagna_synth._generate",
    "Synthesis": "lasagna_synth._generate",
    "generate": "lasagna_synth._generate",
    "make_row": "lasagna_synth._generate",
    "synthesize": "lasagna_synth._generate",
    "PROMPTS": "lasagna_synth._prompts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lasagna_synth' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CHUNKERS",
    "CSV_CONTEXT_SEPARATOR",
    "DATA_FORMATS",
    "DEFAULT_CHUNK_WORDS",
    "DEFAULT_MIX",
    "DROP_REASONS",
    "EXPORT_FORMATS",
    "EXTRAS",
    "MIN_WORDS",
    "PROMPTS",
    "QUESTION_TYPES",
    "TEMP_PREFIX",
    "TRACKS",
    "BenchmarkData",
    "BenchmarkRow",
    "Chunker",
    "Corpus",
    "CorpusProvenance",
    "DataAndOutputs",
    "DataError",
    "Document",
    "DocumentInfo",
    "Estimate",
    "Mix",
    "Passage",
    "Plan",
    "PlanItem",
    "RecordedOutput",
    "Skipped",
    "SynthError",
    "SynthUsageError",
    "Synthesis",
    "Track",
    "TrackSupport",
    "atomic_writer",
    "check_chunking",
    "chunk_document",
    "chunk_documents",
    "cl100k_base",
    "corpus_to_documents",
    "count_tokens",
    "dataset_name",
    "describe_chunker",
    "document_to_passage",
    "documents_to_corpus",
    "estimate",
    "generate",
    "iter_corpus",
    "load_corpus",
    "load_data",
    "load_data_and_outputs",
    "make_row",
    "parse_mix",
    "passage_id",
    "passage_to_document",
    "pdf_reader_identity",
    "plan",
    "run_blocking",
    "supported_suffixes",
    "sync_filesystem",
    "synthesize",
    "to_deepeval",
    "to_ragas",
    "write_bytes_atomic",
    "write_jsonl",
    "write_rows",
]
