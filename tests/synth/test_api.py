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
            "MISSING_ANSWER",
            "PROMPTS",
            "QUESTION_TYPES",
            "SAMPLE_MODES",
            "TRACKS",
            "BenchmarkData",
            "BenchmarkDocument",
            "BenchmarkFileError",
            "BenchmarkQuestion",
            "BenchmarkRow",
            "BenchmarkSpec",
            "Corpus",
            "DataError",
            "Document",
            "DocumentInfo",
            "Estimate",
            "LoadedBenchmark",
            "Mix",
            "Passage",
            "Plan",
            "PlanItem",
            "Sample",
            "Skipped",
            "SynthError",
            "SynthUsageError",
            "Synthesis",
            "TrackSupport",
            "benchmark_names",
            "chunk_documents",
            "corpus_to_documents",
            "dataset_name",
            "document_to_passage",
            "estimate",
            "generate",
            "get_benchmark_spec",
            "is_benchmark",
            "iter_corpus",
            "list_benchmarks",
            "load_benchmark",
            "load_corpus",
            "load_data",
            "make_row",
            "parse_mix",
            "passage_id",
            "passage_to_document",
            "plan",
            "sample_benchmark",
            "supported_suffixes",
            "synthesize",
            "write_jsonl",
            "write_sample",
        ]
    )
    for name in lasagna_synth.__all__:
        assert hasattr(lasagna_synth, name), name


def test_import_does_not_load_heavy_packages() -> None:
    code = (
        "import sys, lasagna_synth; print(sorted(m for m in ('unstructured', 'spacy', "
        "'pdfminer', 'nltk', 'sklearn', 'numpy', 'tiktoken', 'openai', 'instructor', "
        "'lasagna_judge', 'langchain_core') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
