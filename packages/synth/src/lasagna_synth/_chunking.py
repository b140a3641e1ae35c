"""Documents to passages.

fixed (also called `words`): words are runs of non-whitespace; windows of `words` words,
each starting `words - overlap` words after the one before; a passage is the original text
from its first word to its last; windows under 20 words are dropped.
sentences: nltk's Punkt splits the text into sentences, packed whole, in order, into
passages of at most `words` words; a sentence longer than that is cut into fixed windows.
markdown: the same packing with sections instead of sentences: a section runs from a
Markdown heading (`#` to `######` at a line's start) to the next, so a passage never
starts inside a section unless the section alone is over budget.
tokens: windows of `words` cl100k_base tokens (tiktoken), `overlap` tokens shared; only a
last window under 20 tokens is dropped (a window of code may hold few words).
With sentences and markdown, `overlap` words of whole trailing units start the next passage.
Passages under 20 words are dropped by the other chunkers. Passage ids are `<doc>#<i>`, i
counting from 0; each passage keeps its character offsets in the document's text, so
evidence given as spans of the document finds its passages under any chunking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Literal

from lasagna_synth._corpus import Document, Passage, text_sha256
from lasagna_synth._errors import SynthUsageError

Chunker = Literal["fixed", "sentences", "markdown", "tokens"]
"""A chunker's name: `fixed` word windows, whole `sentences` or Markdown sections
(`markdown`) packed to the budget, or `tokens` windows."""
CHUNKERS: tuple[Chunker, ...] = ("fixed", "sentences", "markdown", "tokens")
"""Every chunker's name, for `--chunker` (`words` is another name for `fixed`)."""
MIN_WORDS = 20
"""Windows of fewer words are dropped."""
DEFAULT_CHUNK_WORDS = 200
"""The word budget of a passage when none is given (`--chunk-words`)."""

_WORD = re.compile(r"\S+")
_HEADING = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)
_ALIASES = {"words": "fixed", "word": "fixed", "sentence": "sentences", "headers": "markdown"}


@cache
def _window(words: int) -> re.Pattern[str]:
    # One match per window: the regex engine walks the words, Python sees only windows.
    return re.compile(rf"\S++(?:\s++\S++){{0,{words - 1}}}+")


def describe_chunker(chunker: Chunker, words: int, overlap: int = 0) -> str:
    """The chunker's rule in one line, for the dry run and results."""
    shared = f", {overlap} {'tokens' if chunker == 'tokens' else 'words'} of overlap"
    tail = shared if overlap else ""
    if chunker == "fixed":
        return (
            f"fixed chunker: {words}-word windows, "
            + (f"{overlap} words of overlap" if overlap else "no overlap")
            + f", windows under {MIN_WORDS} words dropped"
        )
    if chunker == "tokens":
        return (
            f"tokens chunker: {words}-token windows (cl100k_base){tail}, a last window under "
            f"{MIN_WORDS} tokens dropped"
        )
    unit = "sentences (nltk Punkt, English)" if chunker == "sentences" else "Markdown sections"
    return (
        f"{chunker} chunker: whole {unit} packed up to {words} words{tail}, passages under "
        f"{MIN_WORDS} words dropped"
    )


def check_chunking(chunker: str, words: int, overlap: int = 0) -> Chunker:
    """Validate the chunker name, size and overlap; return the chunker (`words` -> fixed)."""
    name = _ALIASES.get(chunker, chunker)
    if name not in CHUNKERS:
        raise SynthUsageError(
            f"unknown chunker {chunker!r}: expected one of words, {', '.join(CHUNKERS)}"
        )
    if words < MIN_WORDS:
        raise SynthUsageError(
            f"chunk size {words} is too small: passages under {MIN_WORDS} words are "
            f"dropped, so give at least {MIN_WORDS}"
        )
    if overlap < 0 or overlap >= words:
        raise SynthUsageError(
            f"chunk overlap {overlap} must be at least 0 and less than the chunk size {words}"
        )
    return name


def _fixed_spans(text: str, words: int, overlap: int = 0) -> Iterable[tuple[int, int]]:
    if overlap:
        yield from _overlapping_spans(text, words, overlap)
        return
    # The regex is greedy, so every window but a document's last has exactly `words` words:
    # only the last can fall under MIN_WORDS, and only its words are counted.
    last: tuple[int, int] | None = None
    for match in _window(words).finditer(text):
        if last is not None:
            yield last
        last = match.span()
    if last is not None and len(text[last[0] : last[1]].split()) >= MIN_WORDS:
        yield last


def _overlapping_spans(text: str, words: int, overlap: int) -> Iterator[tuple[int, int]]:
    spans = [m.span() for m in _WORD.finditer(text)]
    step = words - overlap
    for first in range(0, len(spans), step):
        window = spans[first : first + words]
        if len(window) < MIN_WORDS and first > 0:
            return  # the tail is in the window before
        if len(window) >= MIN_WORDS:
            yield window[0][0], window[-1][1]
        if first + words >= len(spans):
            return


def _token_spans(text: str, size: int, overlap: int) -> Iterator[tuple[int, int]]:
    from lasagna_synth._tokens import cl100k_base

    encoding = cl100k_base()
    tokens = encoding.encode(text, disallowed_special=())
    if not tokens:
        return
    _, offsets = encoding.decode_with_offsets(tokens)
    step = size - overlap
    for first in range(0, len(tokens), step):
        last = min(first + size, len(tokens))
        if first and last - first < MIN_WORDS:
            return  # a short tail: its tokens end the window before
        start = offsets[first]
        end = offsets[last] if last < len(tokens) else len(text)
        # A window's edges fall on token boundaries; its text is cut to its first and last word.
        words = [m.span() for m in _WORD.finditer(text, start, end)]
        if words:
            yield words[0][0], words[-1][1]
        if last >= len(tokens):
            return


def _section_spans(text: str) -> Iterator[tuple[int, int]]:
    starts = [m.start() for m in _HEADING.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        words = [m.span() for m in _WORD.finditer(text, start, end)]
        if words:
            yield words[0][0], words[-1][1]


def _packed_spans(
    text: str, units: Iterable[tuple[int, int]], words: int, overlap: int
) -> Iterable[tuple[int, int]]:
    """Whole units packed in order up to `words` words; a unit over budget is cut into
    fixed windows; the next passage starts with the trailing units of up to `overlap` words."""
    packed: list[tuple[int, int, int]] = []
    count = 0
    for u_start, u_end in units:
        n = len(_WORD.findall(text, u_start, u_end))
        if n > words:
            if packed:
                yield packed[0][0], packed[-1][1]
                packed, count = [], 0
            for w_start, w_end in _fixed_spans(text[u_start:u_end], words, overlap):
                yield u_start + w_start, u_start + w_end
            continue
        if packed and count + n > words:
            yield packed[0][0], packed[-1][1]
            kept: list[tuple[int, int, int]] = []
            carried = 0
            for unit in reversed(packed[1:]):
                if carried + unit[2] > overlap or carried + unit[2] + n > words:
                    break
                kept.insert(0, unit)
                carried += unit[2]
            packed, count = kept, carried
        packed.append((u_start, u_end, n))
        count += n
    if packed:
        yield packed[0][0], packed[-1][1]


def _sentence_spans(text: str, words: int, overlap: int = 0) -> Iterable[tuple[int, int]]:
    from lasagna_synth._punkt import sentence_spans

    return _packed_spans(text, sentence_spans(text), words, overlap)


def chunk_spans(
    text: str, chunker: Chunker = "fixed", words: int = DEFAULT_CHUNK_WORDS, overlap: int = 0
) -> list[tuple[int, int]]:
    """The (start, end) character offsets of a text's passages, in text order."""
    if chunker == "fixed":
        spans: Iterable[tuple[int, int]] = _fixed_spans(text, words, overlap)
    elif chunker == "sentences":
        spans = _sentence_spans(text, words, overlap)
    elif chunker == "markdown":
        spans = _packed_spans(text, _section_spans(text), words, overlap)
    else:
        spans = _token_spans(text, words, overlap)
    if chunker == "tokens" or (chunker == "fixed" and not overlap):
        return list(spans)
    return [(s, e) for s, e in spans if len(text[s:e].split()) >= MIN_WORDS]


def chunk_document(
    document: Document,
    chunker: Chunker = "fixed",
    words: int = DEFAULT_CHUNK_WORDS,
    overlap: int = 0,
) -> list[Passage]:
    """The passages of one document, in text order, each with its offsets in the text."""
    text = document.text
    digest = text_sha256(text)
    return [
        Passage(f"{document.id}#{index}", document.id, index, text[start:end], start, end, digest)
        for index, (start, end) in enumerate(chunk_spans(text, chunker, words, overlap))
    ]


def chunk_documents(
    documents: Sequence[Document],
    chunker: Chunker = "fixed",
    words: int = DEFAULT_CHUNK_WORDS,
    overlap: int = 0,
) -> list[Passage]:
    """The passages of every document, in corpus order."""
    chunker = check_chunking(chunker, words, overlap)
    passages: list[Passage] = []
    for document in documents:
        passages.extend(chunk_document(document, chunker, words, overlap))
    return passages
