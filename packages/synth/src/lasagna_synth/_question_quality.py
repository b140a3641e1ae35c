"""What a question set should not hold: placeholders, questions too short to mean anything,
and duplicates. One judge of question text, used by `synthesize` (which drops them),
`benchmark validate-data` (which warns of them) and `benchmark run` (which scores a duplicate
once).

Every rule starts from SQuAD's normalisation (`lasagna_metrics.normalize_answer`: lower case,
ASCII punctuation and the articles a/an/the deleted, whitespace collapsed), the one the
answer metrics already use.

- Placeholder: text that is no question (or answer) of its own. It normalises to nothing
  ("", "?"); it is only a template's filler ("What is the answer to the question", "Question
  1", "TODO"; an answer "a", "n/a"); it is one bracketed slot ("{question}", "<answer>",
  "[your question here]"); or it echoes the instructions the model was given: it normalises
  to one sentence (of 2 words or more) of lasagna's prompts or of its schemas' descriptions
  ("A question and its short reference answer."), or, for a question of 2 words or more, to
  a run of words inside one. A small model that cannot do the task copies what it was
  shown, and a filter that lists fillers by hand misses each new echo; comparing with the
  texts actually sent catches them all. Answers are held to equality only: a short answer
  ("a number") may well be words a prompt also uses.
- Too short: fewer than `MIN_QUESTION_WORDS` words and fewer than `MIN_QUESTION_CHARACTERS`
  letters or digits ("Why?", "Bo's age?"; "What's httpx?" passes on its 10 letters). A
  character of a script written without spaces (Chinese, Japanese, Korean, Thai) counts as
  a word.
- Exact duplicate: the same normalised text ("What is HTTPX?" = "what is httpx").
- Near duplicate: the same words in the same order once the exact normalisation is done
  and a short list of auxiliaries and prepositions is set aside (`FUNCTION_WORDS`): "What is
  the default timeout in httpx?" = "What was the default timeout of httpx". A similarity
  threshold was the other choice, and it fails where it matters: token-set Jaccard gives
  "Which function sends a GET request in httpx?" and "... a POST request in httpx?" 0.75,
  and any 10-word question with one word changed 0.82, so a threshold that catches
  rephrasings also drops distinct questions; it is not transitive either, so which copy
  survives would depend on order. A key is an equivalence (the first copy is kept, whatever
  the order) and a dict lookup: no pair is ever compared, at any size.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

MIN_QUESTION_WORDS = 3
"""A question with fewer words than this (and fewer than `MIN_QUESTION_CHARACTERS` letters
or digits) is too short to mean anything."""
MIN_QUESTION_CHARACTERS = 10
"""A question with fewer letters or digits than this (and fewer than `MIN_QUESTION_WORDS`
words) is too short to mean anything."""
FUNCTION_WORDS = frozenset(
    {"am", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did"}
    | {"of", "in", "on", "at", "for"}
)
"""Words a near duplicate may differ in (after SQuAD's normalisation has removed the
articles): auxiliaries and the prepositions of place and belonging. Question words,
negations, modals, conjunctions and prepositions of direction (to, from) are kept: they
change what is asked."""

Field = Literal["question", "answer"]

_QUESTION_FILLERS = re.compile(
    r"((what is )?(the |a |your |an |sample |example |test )?(question|answer|query)"
    r"( to (the |this |a )?question)?( here)?( \d+)?|q ?\d*|todo|tbd|tba|placeholder|"
    r"n/?a|null|none|string|text|example|sample|test|lorem ipsum.*|\.+)"
)
_ANSWER_FILLERS = re.compile(
    r"(a|an|the|(the |your )?answer( here)?|n/?a|null|todo|tbd|placeholder|lorem ipsum.*|\.+)"
)
_SLOT = re.compile(r"[\[{<(]{1,2}[^\[\]{}<>()]{0,60}[\]}>)]{1,2}")
_NO_SPACES = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FIELD_NAME = re.compile(r"\{\w+\}")


def normalize_question(text: str) -> str:
    """SQuAD's normalisation of `text`: what an exact duplicate has in common."""
    from lasagna_metrics import normalize_answer

    return normalize_answer(text)


def near_duplicate_key(text: str) -> str:
    """What near duplicates have in common: the normalised words, in order, without
    `FUNCTION_WORDS` (the exact normalisation when that leaves nothing)."""
    words = normalize_question(text).split()
    kept = [w for w in words if w not in FUNCTION_WORDS]
    return " ".join(kept or words)


def is_too_short(text: str) -> bool:
    """Fewer than `MIN_QUESTION_WORDS` words and fewer than `MIN_QUESTION_CHARACTERS` letters
    or digits: too short to mean anything."""
    words = normalize_question(text).split()
    count = sum(len(_NO_SPACES.findall(w)) or 1 for w in words)
    characters = sum(1 for c in text if c.isalnum())
    return count < MIN_QUESTION_WORDS and characters < MIN_QUESTION_CHARACTERS


def is_placeholder(text: str, field: Field = "question") -> bool:
    """Whether `text` is a placeholder rather than a question (or answer) of its own: see
    the module's rules."""
    stripped = text.strip()
    normalised = normalize_question(stripped)
    if not normalised:
        return True
    plain = " ".join(re.sub(r"[^\w./]+", " ", stripped.lower()).split()).strip(" ./") or "."
    fillers = _QUESTION_FILLERS if field == "question" else _ANSWER_FILLERS
    if fillers.fullmatch(plain) or _SLOT.fullmatch(stripped):
        return True
    sentences, blob = _instructions()
    if normalised in sentences:
        return True
    return field == "question" and " " in normalised and f" {normalised} " in blob


@functools.cache
def _instructions() -> tuple[frozenset[str], str]:
    """The normalised sentences of every prompt and schema description synthesize sends,
    as a set and as one text to search for runs of words."""
    from lasagna_synth._prompts import (
        _VARIATION,
        CHECKER_SYSTEM,
        PROMPTS,
        SCHEMA_JSON,
        WRITER_SYSTEM,
    )

    texts = [WRITER_SYSTEM, CHECKER_SYSTEM, _VARIATION]
    for spec in PROMPTS.values():
        texts += [spec.write_template, spec.check_template]
    for schema in SCHEMA_JSON.values():
        texts += _descriptions(json.loads(schema))
    sentences = set()
    for text in texts:
        for sentence in re.split(r"[.!?]+(?:\s|$)|\n", _FIELD_NAME.sub(" ", text)):
            # the sentence, and each of its clauses
            for part in (sentence, *re.split(r"[:;](?:\s|$)", sentence)):
                normalised = normalize_question(part)
                if " " in normalised:  # one word ("why") is a question too short, no echo
                    sentences.add(normalised)
    return frozenset(sentences), "\n".join(f" {s} " for s in sorted(sentences))


def _descriptions(schema: Any) -> list[str]:
    if isinstance(schema, Mapping):
        found = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return found + [d for value in schema.values() for d in _descriptions(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in _descriptions(value)]
    return []


def first_copies(texts: Sequence[str], *, near: bool = False) -> dict[int, int]:
    """For each text that repeats an earlier one, its position -> the first copy's position
    (exact duplicates; with `near`, near duplicates too). The first copy is kept: the same
    texts in the same order always give the same answer."""
    key = near_duplicate_key if near else normalize_question
    first: dict[str, int] = {}
    copies: dict[int, int] = {}
    for i, text in enumerate(texts):
        found = first.setdefault(key(text), i)
        if found != i:
            copies[i] = found
    return copies


@dataclass(frozen=True)
class QuestionIssues:
    """What a set of questions holds that it should not, by row id: pairs are (the copy,
    the first one). `near_duplicates` leaves out the exact ones."""

    duplicates: list[tuple[str, str]] = field(default_factory=list)
    near_duplicates: list[tuple[str, str]] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    too_short: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.duplicates or self.near_duplicates or self.placeholders or self.too_short)


def question_issues(
    rows: Iterable[tuple[str, str, Sequence[str]]], *, check_length: bool = True
) -> QuestionIssues:
    """The issues of `rows`, each (id, question, answers): a row is a placeholder when its
    question or one of its answers is. `check_length`: also flag questions too short (off
    for a BEIR folder's queries, which are search terms rather than questions)."""
    listed = list(rows)
    texts = [question for _, question, _ in listed]
    exact = first_copies(texts)
    near = {i: j for i, j in first_copies(texts, near=True).items() if i not in exact}
    issues = QuestionIssues(
        duplicates=[(listed[i][0], listed[j][0]) for i, j in exact.items()],
        near_duplicates=[(listed[i][0], listed[j][0]) for i, j in near.items()],
    )
    for row_id, question, answers in listed:
        if is_placeholder(question) or any(is_placeholder(a, "answer") for a in answers):
            issues.placeholders.append(row_id)
        elif check_length and is_too_short(question):
            issues.too_short.append(row_id)
    return issues
