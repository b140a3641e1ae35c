"""A setup's `chunking:` (and `benchmark run --chunker/--chunk-size/--chunk-overlap`):
how a benchmark's folder of documents is cut, checked before anything loads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lasagna_cli.engine._errors import did_you_mean, quoted
from lasagna_cli.engine.config._config import CHUNKER_NAMES, ChunkingSpec
from lasagna_cli.engine.config._flags import check_keys, check_positive, usage

CHUNKING_KEYS = ("chunker", "size", "overlap")


def chunking_spec(
    values: Mapping[str, Any],
    where: str,
    base: ChunkingSpec,
    flags: Mapping[str, str] | None = None,
) -> ChunkingSpec:
    """`{chunker, size, overlap}` over `base`, checked as lasagna-synth's chunkers take them;
    `flags` names each key in messages (the command's flags) instead of `where.key`."""

    def name(key: str) -> str:
        return flags[key] if flags else f"{where}.{key}"

    check_keys(values, CHUNKING_KEYS, where)
    chunker = values.get("chunker", base.chunker)
    if chunker not in CHUNKER_NAMES:
        raise usage(
            f"{name('chunker')}: expected one of {', '.join(CHUNKER_NAMES)}, got {quoted(chunker)}"
            f"{did_you_mean(str(chunker), CHUNKER_NAMES)}"
        )
    size = check_positive(values.get("size", base.size), name("size"))
    overlap = values.get("overlap", base.overlap)
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise usage(f"{name('overlap')}: expected a whole number >= 0, got {quoted(overlap)}")
    assert size is not None
    from lasagna_synth import MIN_WORDS

    if size < MIN_WORDS:
        raise usage(
            f"{name('size')}: {size} is too small: passages under {MIN_WORDS} words are "
            f"dropped, so give at least {MIN_WORDS}"
        )
    if overlap >= size:
        raise usage(f"{name('overlap')}: {overlap} must be less than the chunk size {size}")
    return ChunkingSpec("fixed" if chunker == "words" else chunker, size, overlap)
