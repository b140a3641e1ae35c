"""Documents to passages.

fixed: words are runs of non-whitespace; windows of `words` words, no overlap; a passage is
the original text from its first word to its last; windows under 20 words are dropped.
sentences: nltk's Punkt splits the text into sentences, packed whole, in order, into
passages of at most `words` words; a sentence longer than that is cut into fixed windows;
passages under 20 words are dropped too. Passage ids are `<doc>#<i>`, i counting from 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Literal

from lasagna_synth._corpus import Document, Passage
from lasagna_synth._errors import SynthUsageError

Chunker = Literal["fixed", "sentences"]
"""A chunker's name: `fixed` word windows, or whole `sentences` packed to the budget."""
CHUNKERS: tuple[Chunker, ...] = ("fixed", "sentences")
"""Every chunker's name, for `--chunker`."""
MIN_WORDS = 20
"""Windows of fewer words are dropped."""
DEFAULT_CHUNK_WORDS = 200
"""The word budget of a passage when none is given (`--chunk-words`)."""

_WORD = re.compile(r"\S+")


@cache
def _window(words: int) -> re.Pattern[str]:
    # One match per window: the regex engine walks the words, Python sees only windows.
    return re.compile(rf"\S++(?:\s++\S++){{0,{words - 1}}}+")


def describe_chunker(chunker: Chunker, words: int) -> str:
    """The chunker's rule in one line, for the dry run."""
    if chunker == "fixed":
        return (
            f"fixed chunker: {words}-word windows, no overlap, windows under "
            f"{MIN_WORDS} words dropped"
        )
    return (
        f"sentences chunker: whole sentences (nltk Punkt, English) packed up to {words} words, "
        f"passages under {MIN_WORDS} words dropped"
    )


def check_chunking(chunker: str, words: int) -> Chunker:
    """Validate the chunker name and word budget; return the chunker."""
    if chunker not in CHUNKERS:
        raise SynthUsageError(f"unknown chunker {chunker!r}: expected one of {', '.join(CHUNKERS)}")
    if words < MIN_WORDS:
        raise SynthUsageError(
            f"chunk size {words} words is too small: windows under {MIN_WORDS} words are "
            f"dropped, so give at least {MIN_WORDS}"
        )
    return chunker


def _fixed_spans(text: str, words: int) -> Iterable[tuple[int, int]]:
    # The regex is greedy, so every window but a document's last has exactly `words` words:
    # only the last can fall under MIN_WORDS, and only its words are counted.
    last: tuple[int, int] | None = None
    for match in _window(words).finditer(text):
        if last is not None:
            yield last
        last = match.span()
    if last is not None and len(text[last[0] : last[1]].split()) >= MIN_WORDS:
        yield last


def _sentence_spans(text: str, words: int) -> Iterable[tuple[int, int]]:
    from lasagna_synth._punkt import sentence_spans

    start = end = -1
    count = 0
    for s_start, s_end in sentence_spans(text):
        n = len(_WORD.findall(text, s_start, s_end))
        if n > words:
            if count:
                yield start, end
                start, count = -1, 0
            # A sentence longer than the budget: cut it into fixed windows.
            for w_start, w_end in _fixed_spans(text[s_start:s_end], words):
                yield s_start + w_start, s_start + w_end
            continue
        if count and count + n > words:
            yield start, end
            count = 0
        if count == 0:
            start = s_start
        end = s_end
        count += n
    if count:
        yield start, end


def chunk_document(
    document: Document, chunker: Chunker = "fixed", words: int = DEFAULT_CHUNK_WORDS
) -> list[Passage]:
    """The passages of one document, in text order."""
    text = document.text
    spans = _fixed_spans(text, words) if chunker == "fixed" else _sentence_spans(text, words)
    passages: list[Passage] = []
    for start, end in spans:
        piece = text[start:end]
        if chunker == "sentences" and len(piece.split()) < MIN_WORDS:
            continue
        index = len(passages)
        passages.append(Passage(f"{document.id}#{index}", document.id, index, piece))
    return passages


def chunk_documents(
    documents: Sequence[Document], chunker: Chunker = "fixed", words: int = DEFAULT_CHUNK_WORDS
) -> list[Passage]:
    """The passages of every document, in corpus order."""
    check_chunking(chunker, words)
    passages: list[Passage] = []
    for document in documents:
        passages.extend(chunk_document(document, chunker, words))
    return passages
