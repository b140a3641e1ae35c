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
lasagna_judge's SDKs) are imported by the functions that need them, not here; every name
loads on first use, so importing the package costs nothing until one is used, and reading
data and documents (what every `lasagna benchmark` command does) stays light.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_synth._atomic import (
        TEMP_PREFIX,
        atomic_writer,
        sync_filesystem,
        write_bytes_atomic,
    )
    from lasagna_synth._blocking import run_blocking
    from lasagna_synth._chunking import (
        CHUNKERS,
        DEFAULT_CHUNK_WORDS,
        MIN_WORDS,
        Chunker,
        check_chunking,
        chunk_document,
        chunk_documents,
        chunk_spans,
        describe_chunker,
    )
    from lasagna_synth._corpus import (
        Corpus,
        Document,
        DocumentInfo,
        Passage,
        Skipped,
        text_sha256,
    )
    from lasagna_synth._errors import SynthError, SynthUsageError
    from lasagna_synth._estimate import Estimate, estimate
    from lasagna_synth._evidence import EvidenceSpan, locate, relevant_passages
    from lasagna_synth._extras import EXTRAS
    from lasagna_synth._format_csv import CSV_CONTEXT_SEPARATOR
    from lasagna_synth._format_export import EXPORT_FORMATS, to_deepeval, to_ragas, write_rows
    from lasagna_synth._format_foreign import DATA_FORMATS
    from lasagna_synth._format_records import RecordedOutput
    from lasagna_synth._formats import DataAndOutputs, load_data, load_data_and_outputs
    from lasagna_synth._generate import DROP_REASONS, Synthesis, generate, make_row, synthesize
    from lasagna_synth._jsonl import write_jsonl
    from lasagna_synth._langchain import (
        corpus_to_documents,
        document_to_passage,
        passage_to_document,
    )
    from lasagna_synth._langchain_corpus import documents_to_corpus
    from lasagna_synth._limits import ReadLimits, current_read_limits, using_read_limits
    from lasagna_synth._loading import (
        is_license_file,
        iter_corpus,
        load_corpus,
        pdf_reader_identity,
        supported_suffixes,
    )
    from lasagna_synth._mix import DEFAULT_MIX, QUESTION_TYPES, Mix, parse_mix
    from lasagna_synth._naming import dataset_name, passage_id
    from lasagna_synth._plan import Plan, PlanItem, plan
    from lasagna_synth._prompts import PROMPTS
    from lasagna_synth._question_quality import (
        MIN_QUESTION_CHARACTERS,
        MIN_QUESTION_WORDS,
        QuestionIssues,
        first_copies,
        is_placeholder,
        is_too_short,
        near_duplicate_key,
        normalize_question,
        question_issues,
    )
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


_LAZY = {
    "TEMP_PREFIX": "lasagna_synth._atomic",
    "atomic_writer": "lasagna_synth._atomic",
    "sync_filesystem": "lasagna_synth._atomic",
    "write_bytes_atomic": "lasagna_synth._atomic",
    "run_blocking": "lasagna_synth._blocking",
    "CHUNKERS": "lasagna_synth._chunking",
    "DEFAULT_CHUNK_WORDS": "lasagna_synth._chunking",
    "MIN_WORDS": "lasagna_synth._chunking",
    "Chunker": "lasagna_synth._chunking",
    "check_chunking": "lasagna_synth._chunking",
    "chunk_document": "lasagna_synth._chunking",
    "chunk_documents": "lasagna_synth._chunking",
    "describe_chunker": "lasagna_synth._chunking",
    "Corpus": "lasagna_synth._corpus",
    "Document": "lasagna_synth._corpus",
    "DocumentInfo": "lasagna_synth._corpus",
    "Passage": "lasagna_synth._corpus",
    "Skipped": "lasagna_synth._corpus",
    "SynthError": "lasagna_synth._errors",
    "SynthUsageError": "lasagna_synth._errors",
    "EvidenceSpan": "lasagna_synth._evidence",
    "locate": "lasagna_synth._evidence",
    "relevant_passages": "lasagna_synth._evidence",
    "text_sha256": "lasagna_synth._corpus",
    "chunk_spans": "lasagna_synth._chunking",
    "is_license_file": "lasagna_synth._loading",
    "EXTRAS": "lasagna_synth._extras",
    "CSV_CONTEXT_SEPARATOR": "lasagna_synth._format_csv",
    "EXPORT_FORMATS": "lasagna_synth._format_export",
    "to_deepeval": "lasagna_synth._format_export",
    "to_ragas": "lasagna_synth._format_export",
    "write_rows": "lasagna_synth._format_export",
    "DATA_FORMATS": "lasagna_synth._format_foreign",
    "RecordedOutput": "lasagna_synth._format_records",
    "DataAndOutputs": "lasagna_synth._formats",
    "load_data": "lasagna_synth._formats",
    "load_data_and_outputs": "lasagna_synth._formats",
    "write_jsonl": "lasagna_synth._jsonl",
    "corpus_to_documents": "lasagna_synth._langchain",
    "document_to_passage": "lasagna_synth._langchain",
    "passage_to_document": "lasagna_synth._langchain",
    "documents_to_corpus": "lasagna_synth._langchain_corpus",
    "iter_corpus": "lasagna_synth._loading",
    "ReadLimits": "lasagna_synth._limits",
    "current_read_limits": "lasagna_synth._limits",
    "using_read_limits": "lasagna_synth._limits",
    "load_corpus": "lasagna_synth._loading",
    "pdf_reader_identity": "lasagna_synth._loading",
    "supported_suffixes": "lasagna_synth._loading",
    "DEFAULT_MIX": "lasagna_synth._mix",
    "QUESTION_TYPES": "lasagna_synth._mix",
    "Mix": "lasagna_synth._mix",
    "parse_mix": "lasagna_synth._mix",
    "dataset_name": "lasagna_synth._naming",
    "passage_id": "lasagna_synth._naming",
    "Plan": "lasagna_synth._plan",
    "PlanItem": "lasagna_synth._plan",
    "plan": "lasagna_synth._plan",
    "TRACKS": "lasagna_synth._rows",
    "BenchmarkData": "lasagna_synth._rows",
    "BenchmarkRow": "lasagna_synth._rows",
    "CorpusProvenance": "lasagna_synth._rows",
    "Track": "lasagna_synth._rows",
    "TrackSupport": "lasagna_synth._rows",
    "cl100k_base": "lasagna_synth._tokens",
    "count_tokens": "lasagna_synth._tokens",
    "DataError": "lasagna_synth._validate",
    "Estimate": "lasagna_synth._estimate",
    "estimate": "lasagna_synth._estimate",
    "DROP_REASONS": "lasagna_synth._generate",
    "Synthesis": "lasagna_synth._generate",
    "generate": "lasagna_synth._generate",
    "make_row": "lasagna_synth._generate",
    "synthesize": "lasagna_synth._generate",
    "PROMPTS": "lasagna_synth._prompts",
    "MIN_QUESTION_CHARACTERS": "lasagna_synth._question_quality",
    "MIN_QUESTION_WORDS": "lasagna_synth._question_quality",
    "QuestionIssues": "lasagna_synth._question_quality",
    "first_copies": "lasagna_synth._question_quality",
    "is_placeholder": "lasagna_synth._question_quality",
    "is_too_short": "lasagna_synth._question_quality",
    "near_duplicate_key": "lasagna_synth._question_quality",
    "normalize_question": "lasagna_synth._question_quality",
    "question_issues": "lasagna_synth._question_quality",
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
    "MIN_QUESTION_CHARACTERS",
    "MIN_QUESTION_WORDS",
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
    "EvidenceSpan",
    "Mix",
    "Passage",
    "Plan",
    "PlanItem",
    "QuestionIssues",
    "ReadLimits",
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
    "chunk_spans",
    "cl100k_base",
    "corpus_to_documents",
    "count_tokens",
    "current_read_limits",
    "dataset_name",
    "describe_chunker",
    "document_to_passage",
    "documents_to_corpus",
    "estimate",
    "first_copies",
    "generate",
    "is_license_file",
    "is_placeholder",
    "is_too_short",
    "iter_corpus",
    "load_corpus",
    "load_data",
    "load_data_and_outputs",
    "locate",
    "make_row",
    "near_duplicate_key",
    "normalize_question",
    "parse_mix",
    "passage_id",
    "passage_to_document",
    "pdf_reader_identity",
    "plan",
    "question_issues",
    "relevant_passages",
    "run_blocking",
    "supported_suffixes",
    "sync_filesystem",
    "synthesize",
    "text_sha256",
    "to_deepeval",
    "to_ragas",
    "using_read_limits",
    "write_bytes_atomic",
    "write_jsonl",
    "write_rows",
]
