"""The dense-retrieval options, shared by `benchmark run` and the staged pipeline."""

from __future__ import annotations

from typing import Annotated

import typer

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
