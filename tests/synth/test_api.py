"""The public surface of lasagna_synth is what __all__ says, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import lasagna_synth


def test_all_is_pinned() -> None:
    assert sorted(lasagna_synth.__all__) == sorted(
        [
            "CHUNKERS",
            "CSV_CONTEXT_SEPARATOR",
            "DEFAULT_CHUNK_WORDS",
            "DEFAULT_MIX",
            "DROP_REASONS",
            "MIN_WORDS",
            "MIN_QUESTION_CHARACTERS",
            "MIN_QUESTION_WORDS",
            "QuestionIssues",
            "first_copies",
            "is_placeholder",
            "is_too_short",
            "near_duplicate_key",
            "normalize_question",
            "question_issues",
            "PROMPTS",
            "QUESTION_TYPES",
            "TEMP_PREFIX",
            "TRACKS",
            "BenchmarkData",
            "BenchmarkRow",
            "Chunker",
            "Corpus",
            "CorpusProvenance",
            "DataError",
            "Document",
            "DocumentInfo",
            "Estimate",
            "Mix",
            "Passage",
            "Plan",
            "PlanItem",
            "ReadLimits",
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
            "estimate",
            "generate",
            "iter_corpus",
            "load_corpus",
            "current_read_limits",
            "using_read_limits",
            "load_data",
            "make_row",
            "parse_mix",
            "passage_id",
            "passage_to_document",
            "pdf_reader_identity",
            "plan",
            "supported_suffixes",
            "sync_filesystem",
            "synthesize",
            "write_bytes_atomic",
            "run_blocking",
            "write_jsonl",
            "DATA_FORMATS",
            "EXPORT_FORMATS",
            "EXTRAS",
            "DataAndOutputs",
            "RecordedOutput",
            "documents_to_corpus",
            "load_data_and_outputs",
            "to_deepeval",
            "to_ragas",
            "write_rows",
            "EvidenceSpan",
            "chunk_spans",
            "is_license_file",
            "locate",
            "relevant_passages",
            "text_sha256",
        ]
    )
    for name in lasagna_synth.__all__:
        assert hasattr(lasagna_synth, name), name


def test_import_does_not_load_heavy_packages() -> None:
    code = (
        "import sys, lasagna_synth; print(sorted(m for m in ('unstructured', 'spacy', "
        "'pdfminer', 'nltk', 'sklearn', 'numpy', 'tiktoken', 'openai', 'instructor', "
        "'lasagna_judge', 'langchain_core', 'pyarrow', 'pandas', 'datasets') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
