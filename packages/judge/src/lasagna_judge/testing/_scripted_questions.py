"""How the scripted model writes questions from the passages it is shown, as a weak but
honest question writer would: a sentence of the passage turned into a question about one
of its facts (a year, a quantity, a name, a term in backticks, else its closing words),
whose answer is that fact as the passage writes it. A multihop question joins one from
each passage; an unanswerable one asks about the passage's subject what the passage does
not say. The n-th question asked of one passage takes its n-th fact, so the questions of
one passage differ, and synthesize's filters (placeholders, duplicates, too short) keep
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lasagna_judge.testing._scripted_text import (
    STOP_WORDS,
    coverage,
    is_whole,
    seed,
    sentences,
    words,
)

_PASSAGE = re.compile(r"<passage>\n(.*?)\n</passage>", re.DOTALL)
_USE = re.compile(r"this is question (\d+) from it")
_YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")
_QUANTITY = re.compile(r"\b\d+(?:[.,]\d+)?(?:\s+([A-Za-z]+))?")
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:(?:of|de|di|del|la|von|van)\s+)?[A-Z][\w'’-]*)*")
_CODE = re.compile(r"`([^`\n]{1,40})`")
_PRONOUN_START = {"it", "this", "these", "they", "he", "she", "that", "those", "its", "their"}
_CONNECTIVES = (
    "and ",
    "or ",
    "in ",
    "on ",
    "at ",
    "of ",
    "to ",
    "by ",
    "for ",
    "from ",
    "with ",
    "was ",
    "were ",
    "is ",
    "are ",
    "has ",
    "had ",
    "which ",
    "who ",
    "that ",
)
_OBJECT_STARTS = {
    "the",
    "a",
    "an",
    "of",
    "in",
    "on",
    "at",
    "with",
    "by",
    "from",
    "for",
    "into",
    "as",
    "than",
    "about",
    "through",
    "under",
    "over",
}
_LONG = 30
"""A question from a sentence longer than this many words keeps only the clause it asks in."""
UNANSWERABLE = (
    "Who first described {term}, and in which year?",
    "What is the annual worldwide production of {term}?",
    "Which award has {term} received?",
    "What do critics consider the main drawback of {term}?",
    "How much did {term} cost a hundred years ago?",
    "In which museum is {term} on display?",
)


@dataclass(frozen=True)
class Fact:
    """A span of a sentence to ask about (`start`, `end`), the words that ask for it, and
    where the asking words go (`lead`: the span with its article, "the Sorrel Rocks")."""

    sentence: str
    start: int
    end: int
    ask: str
    lead: int
    kind: int
    """How good a fact it is to ask about: 0 (a year, a quantity, a term in backticks),
    1 (a name), 2 (a sentence's closing words)."""

    @property
    def answer(self) -> str:
        return self.sentence[self.start : self.end].strip().strip("`*_").strip()

    @property
    def question(self) -> str:
        return self.asked(short=False)

    def asked(self, *, short: bool) -> str:
        """The sentence asking for the span; `short` (or a sentence of more than `_LONG`
        words) keeps only the span's clause after it."""
        before = self.sentence[: self.lead].rstrip()
        after = self.sentence[self.end :]
        clause = re.search(r"[,;:(]|\s[-–—]\s", after)
        if clause is not None and (short or len(self.sentence.split()) > _LONG):
            after = after[: clause.start()]
        if short:  # and the clause before it
            before = re.split(r"[,;:]\s+(?:and\s+|but\s+)?", before)[-1]
        ask = self.ask if before else self.ask[:1].upper() + self.ask[1:]
        text = " ".join(p for p in (before, ask, after.strip()) if p)
        text = re.sub(r"\s+([,;:])", r"\1", text).rstrip(" .!:;,")
        return text[:1].upper() + text[1:] + "?"


def facts(passage: str) -> list[Fact]:
    """The facts of a passage a question can ask about: the best kinds first, each in the
    passage's order. Only whole sentences of 5 to 45 words count (a passage cut from a
    longer text starts and ends mid-sentence), and one that opens with a pronoun (which a
    question could not name) comes after the others of its kind."""
    found: list[tuple[int, bool, int, Fact]] = []
    for index, sentence in enumerate(sentences(passage)):
        if not is_whole(sentence) or not 5 <= len(sentence.split()) <= 45:
            continue
        pronoun = words(sentence)[0] in _PRONOUN_START
        found += [(f.kind, pronoun, index, f) for f in _facts_of(sentence)]
    found.sort(key=lambda item: item[:3])
    return [fact for *_, fact in found]


def _facts_of(sentence: str) -> list[Fact]:
    found: list[Fact] = []

    def add(start: int, end: int, ask: str, kind: int) -> None:
        if any(start < f.end and f.start < end for f in found):
            return
        article = re.search(r"\b(?:the|a|an)\s+$", sentence[:start], re.IGNORECASE)
        lead = article.start() if article is not None else start
        found.append(Fact(sentence, start, end, ask, lead, kind))

    for match in _YEAR.finditer(sentence):
        add(match.start(), match.end(), "what year", 0)
    for match in _QUANTITY.finditer(sentence):
        unit = match.group(1)
        if unit and unit.islower() and unit not in STOP_WORDS:
            add(match.start(), match.end(), f"how many {unit}", 0)
    for match in _CODE.finditer(sentence):
        add(match.start(), match.end(), "what", 0)
    for match in _NAME.finditer(sentence):
        name = match.group()
        following = sentence[match.end() :].lstrip()
        attributive = following[:1].isdigit() or (
            following[:1].islower() and not following.startswith(_CONNECTIVES)
        )
        if match.start() > 0 and name.lower() not in STOP_WORDS and not attributive:
            add(match.start(), match.end(), "what", 1)
    closing = list(re.finditer(r"[\w'’-]+", sentence))
    kept = []
    for match in reversed(closing[-3:]):
        if match.group().lower() in STOP_WORDS:
            break
        kept.append(match)
    before = closing[-len(kept) - 1].group().lower() if len(closing) > len(kept) else ""
    if kept and before in _OBJECT_STARTS:  # a noun phrase: "to the inland markets"
        add(kept[-1].start(), kept[0].end(), "what", 2)
    return found


def names(passage: str) -> list[str]:
    """The names a passage uses (capitalised words not opening a sentence), the most used
    first."""
    counts: dict[str, int] = {}
    for sentence in sentences(passage):
        for match in _NAME.finditer(sentence):
            name = re.sub(r"['’]s$", "", match.group())
            if match.start() > 0 and name.lower() not in STOP_WORDS:
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])


def passages_of(prompt: str) -> list[str]:
    """The passages a writing or checking prompt shows."""
    return [p.strip() for p in _PASSAGE.findall(prompt)]


def use_of(prompt: str) -> int:
    """Which question of its passage a prompt asks for (1 for the first)."""
    match = _USE.search(prompt)
    return int(match.group(1)) if match else 1


def pick(passage: str, model: str, use: int) -> Fact | None:
    """The fact the `use`-th question of `passage` asks about (another for each use)."""
    found = facts(passage)
    if not found:
        return None
    return found[(seed(model, passage) + use - 1) % len(found)]


def factoid(prompt: str, model: str) -> dict[str, str] | None:
    passages = passages_of(prompt)
    fact = pick(passages[0], model, use_of(prompt)) if passages else None
    if fact is None:
        return None
    return {"question": fact.question, "answer": fact.answer}


def multihop(prompt: str, model: str) -> dict[str, str] | None:
    passages = passages_of(prompt)
    if len(passages) < 2:
        return factoid(prompt, model)
    use = use_of(prompt)
    first, second = pick(passages[0], model, use), pick(passages[1], model, use)
    if first is None or second is None:
        return factoid(prompt, model)
    other = second.asked(short=True)
    if words(other)[0] in STOP_WORDS:
        other = other[:1].lower() + other[1:]
    return {
        "question": f"{first.asked(short=True)[:-1]}, and {other}",
        "answer": f"{first.answer}; {second.answer}",
    }


def unanswerable(prompt: str, model: str) -> dict[str, str] | None:
    passages = passages_of(prompt)
    if not passages:
        return None
    use = use_of(prompt)
    terms = names(passages[0]) or sorted(
        {w for w in words(passages[0]) if len(w) > 5 and w not in STOP_WORDS and w.isalpha()}
    )
    if not terms:
        return None
    drawn = seed(model, passages[0]) + use - 1
    tries = [
        template.format(term=terms[(drawn + i) % len(terms)])
        for i in range(len(UNANSWERABLE))
        for template in [UNANSWERABLE[(drawn + i) % len(UNANSWERABLE)]]
    ]
    # As a careful writer would: not a question the passage goes some way to answer.
    lines = sentences(passages[0])
    fresh = [q for q in tries if all(coverage(q, line) < 0.5 for line in lines)]
    return {"question": (fresh or tries)[0]}
