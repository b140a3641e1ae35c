"""The scripted model's reading of text: words, content words, sentences, the sections of a
prompt, and the seed a request gives. Pure functions of strings (`_scripted`,
`_scripted_questions`).
"""

from __future__ import annotations

import hashlib
import re

_WORD = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:['’]\w+)*")
_STOP_TEXT = """a an the of in on at for to from by with and or but nor is are was were be been
being do does did what which who whom whose when where why how that this these those it its as
into onto than then there their they them he she his her we you your our i me my not no yes can
could should would will shall might must has have had about over under after before during if
so such also any all each some more most other only own same too very just one s t"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that carry no fact of their own (articles, auxiliaries, pronouns, prepositions)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`*_]?[A-Z0-9])")
_BLOCK_START = re.compile(r"^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|>|\[\d+\]\s)")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*|\[\d+\]\s+)+")


def words(text: str) -> list[str]:
    """The words of `text`, lower case; a number's thousands separators dropped ("1,577"
    is "1577")."""
    return [re.sub(r"(?<=\d),(?=\d{3})", "", w.lower()) for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """The words of `text` that carry its meaning (no articles, auxiliaries, pronouns)."""
    return [w for w in words(text) if w not in STOP_WORDS]


def coverage(part: str, whole: str) -> float:
    """The share of `part`'s content words (its words, when it has none) found in `whole`."""
    wanted = set(content_words(part)) or set(words(part))
    if not wanted:
        return 0.0
    return len(wanted & set(words(whole))) / len(wanted)


def blocks(text: str) -> list[str]:
    """The paragraphs of `text`, each on one line: a blank line ends one, and a Markdown
    heading, list item or quote, or a passage's `[n]`, starts one (hard-wrapped lines of a
    paragraph are joined)."""
    found: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or _BLOCK_START.match(line):
            found.append([])
        if line.strip():
            found[-1].append(line.strip())
            if line.lstrip().startswith("#"):  # a heading is a block of its own
                found.append([])
    return [" ".join(lines) for lines in found if lines]


def sentences(text: str) -> list[str]:
    """The sentences of `text`, without Markdown's heading, list and quote marks or a
    passage's `[n]` number; pieces that hold no word are left out."""
    found = []
    for block in blocks(text):
        for piece in _SENTENCE_END.split(_MARKUP.sub("", block)):
            if words(piece):
                found.append(piece.strip())
    return found


def is_whole(sentence: str) -> bool:
    """Whether `sentence` starts and ends as a sentence does (a passage cut from a longer
    text starts and ends mid-sentence)."""
    first = sentence.lstrip("\"'(`*_")[:1]
    return (first.isupper() or first.isdigit()) and sentence.rstrip("\"')`*_").endswith(
        (".", "!", "?")
    )


def seed(*parts: str) -> int:
    """A number drawn from `parts`: the same request always draws the same."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return int(digest[:12], 16)


def between(text: str, start: str, end: str | None = None) -> str | None:
    """The text after the last `start`, up to `end` (to the end of `text` when `end` is
    None or not found), stripped; None when `start` is not in it."""
    at = text.rfind(start)
    if at < 0:
        return None
    rest = text[at + len(start) :]
    stop = rest.find(end) if end is not None else -1
    return (rest if stop < 0 else rest[:stop]).strip()


def clip(text: str, limit: int = 40) -> str:
    """`text` cut to `limit` words, an ellipsis where it was cut."""
    parts = text.split()
    return text if len(parts) <= limit else " ".join(parts[:limit]) + " ..."
