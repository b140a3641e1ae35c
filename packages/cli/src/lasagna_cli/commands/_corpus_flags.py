"""The flags that name a question set's corpus and how it is cut (`benchmark run`,
`validate-data`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from lasagna_cli.engine.config import ChunkingSpec

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


def chunking_from_flags(chunker: str, size: int, overlap: int) -> ChunkingSpec:
    from lasagna_cli.engine.config import ChunkingSpec, chunking_spec

    names = {"chunker": "--chunker", "size": "--chunk-size", "overlap": "--chunk-overlap"}
    values = {"chunker": chunker, "size": size, "overlap": overlap}
    return chunking_spec(values, "--chunker", ChunkingSpec(), names)
