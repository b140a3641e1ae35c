"""The engine's datasets layer: every source of questions becomes one `Dataset`.

- `_own`: the user's files (JSONL, CSV, SQuAD JSON, BEIR folders), read by lasagna-synth;
- `_named`: the registered public benchmarks (`engine.benchmarks`), read from their raw files;
- kag's DATASETS.json is read by the kag door (`engine.kag`);
- `_passages`: the one way documents are cut into passages;
- `_select`: filters, seeded samples and the first N questions.
"""

from lasagna_cli.engine.datasets._describe import (
    benchmark_info,
    data_lines,
    info_lines,
    list_json,
    list_lines,
    sample_lines,
    validate_data,
    validation_lines,
    write_benchmark_sample,
)
from lasagna_cli.engine.datasets._documents import load_documents, locate_rows
from lasagna_cli.engine.datasets._load import DatasetLoader
from lasagna_cli.engine.datasets._named import (
    JUDGED_DOCUMENTS,
    NAMED_KIND,
    PASSAGES_RULE,
    WHOLE_DOCUMENTS_RULE,
    data_revision,
    file_digests,
    named_corpus,
    named_dataset,
    read_named,
)
from lasagna_cli.engine.datasets._own import duplicates_note, own_dataset, read_own
from lasagna_cli.engine.datasets._passages import CHUNK_RULE, chunk_rule, cut_documents
from lasagna_cli.engine.datasets._select import select_questions

__all__ = [
    "CHUNK_RULE",
    "JUDGED_DOCUMENTS",
    "NAMED_KIND",
    "PASSAGES_RULE",
    "WHOLE_DOCUMENTS_RULE",
    "DatasetLoader",
    "benchmark_info",
    "chunk_rule",
    "cut_documents",
    "data_lines",
    "data_revision",
    "duplicates_note",
    "file_digests",
    "info_lines",
    "list_json",
    "list_lines",
    "load_documents",
    "locate_rows",
    "named_corpus",
    "named_dataset",
    "own_dataset",
    "read_named",
    "read_own",
    "sample_lines",
    "select_questions",
    "validate_data",
    "validation_lines",
    "write_benchmark_sample",
]
