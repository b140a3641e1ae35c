"""`benchmark run`'s options that take more than a line, shared with the commands that read
the same things: --judge (once, or more for a jury), --rubric, --prices, --dry-run; the
corpus of a question set and how it is cut (`validate-data` too); the dense-retrieval
options (the staged pipeline too); and which options a command line gave (`given_flags`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: `benchmark run --judge`, once or more (a jury: `engine.run._jury`).
JudgesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        help="provider/model that grades the answers; repeat it for a jury (each judge "
        "grades every answer; the grade is the mean of their parsed grades, with "
        "Krippendorff's alpha between them).",
    ),
]
RubricOption = Annotated[
    str, typer.Option("--rubric", help="Judge rubric: binary, scale, or a rubric file.")
]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="JSON or TOML {model: [USD per 1M input, per 1M output tokens]}: the cost "
        "of the answers and grades, in results.json, the report and the export; with "
        "--dry-run, what the run will cost at most.",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the plan (setups x questions), the calls per role (generator, each judge, "
        "the claim calls of --diagnostics), tokens estimated and, with --prices, the cost; "
        "call nothing, write nothing.",
    ),
]


CorpusOption = Annotated[
    str | None,
    typer.Option(
        "--corpus",
        help="The folder of documents the questions were written from: retrieval searches "
        "it, chunked, and a passage is relevant where it overlaps a question's evidence "
        "[default: the folder `synthesize` recorded in the rows; else the rows' passages "
        "pooled].",
        show_default=False,
    ),
]
ChunkerOption = Annotated[
    str,
    typer.Option("--chunker", help="--corpus: words, sentences, markdown (headings) or tokens."),
]
ChunkSizeOption = Annotated[
    int, typer.Option("--chunk-size", help="--corpus: words a passage (tokens for tokens).")
]
ChunkOverlapOption = Annotated[
    int, typer.Option("--chunk-overlap", help="--corpus: words (tokens) shared by neighbours.")
]


RetrieverOption = Annotated[
    str,
    typer.Option(
        "--retriever",
        help="bm25, dense (the embedder's vectors, cosine) or hybrid (reciprocal rank "
        "fusion of both).",
    ),
]
EmbedderOption = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="dense/hybrid: provider/name, e.g. openai/text-embedding-3-small, "
        "ollama/nomic-embed-text [default: local/wordllama, in-process, no key].",
        show_default=False,
    ),
]
VectorStoreOption = Annotated[
    str | None,
    typer.Option(
        "--vector-store",
        help="dense/hybrid: a Chroma server's URL (http://127.0.0.1:8000) to search instead "
        "of the in-process index.",
        show_default=False,
    ),
]
CollectionOption = Annotated[
    str | None,
    typer.Option(
        "--collection",
        help="--vector-store: an existing collection to search as it is [default: one "
        "lasagna fills, named after the corpus and the embedder].",
        show_default=False,
    ),
]
IngestModeOption = Annotated[
    str,
    typer.Option(
        "--ingest-mode",
        help="NAME, dense/hybrid: directory (the corpus embedded as one job) or per_file "
        "(one job per source document), as OpenViking's ingest_mode.",
    ),
]
IngestWorkersOption = Annotated[
    int,
    typer.Option("--ingest-workers", help="NAME, dense/hybrid: embedding requests in flight."),
]


def given_flags(ctx: typer.Context) -> dict[str, str]:
    """Each option the command line gave (not left at its default), by its parameter's
    name -> its flag (`--top-k`), as the engine's checks of a run's options take them."""
    given = {}
    for param in ctx.command.params:
        # By name: typer may carry its own copy of click, whose enum is not click's.
        source = ctx.get_parameter_source(param.name or "")
        if param.name and source is not None and source.name != "DEFAULT":
            given[param.name] = param.opts[0]
    return given
