r"""A tiny RAG system to benchmark with `lasagna benchmark run --system` (standard library only).

It knows the passages of examples/data/pasta-beir/corpus.jsonl, ranks them by the words
they share with the question, and answers with the sentence of the best passage that shares
the most words. Crude on purpose: it is here to show the ways in, not to score well.

    uv run lasagna benchmark run examples/data/pasta.jsonl \
        --system examples.systems.keyword_system:answer
    uv run lasagna benchmark run examples/data/pasta.jsonl \
        --system examples.systems.keyword_system:make_system

`answer` is a plain function taking the question; `make_system` is a factory (no required
argument) that returns an async function taking the question and the row. Both also run on
the BEIR folder, where only retrieval is measured (it has no reference answers):

    uv run lasagna benchmark run examples/data/pasta-beir \
        --system examples.systems.keyword_system:make_system
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "data" / "pasta-beir" / "corpus.jsonl"
# fmt: off
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how",
    "in", "is", "it", "its", "made", "of", "on", "or", "the", "to", "what", "which", "who",
    "why", "with",
))
# fmt: on


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS}


def load_passages(path: Path = CORPUS) -> list[tuple[str, str]]:
    """(document id, passage text) pairs, in file order."""
    passages = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            passages.append((record["_id"], record["text"]))
    return passages


def rank(question: str, passages: list[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    asked = words(question)
    scored = [(len(asked & words(text)), i) for i, (_, text) in enumerate(passages)]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [passages[i] for _, i in best[:k]]


def best_sentence(question: str, text: str) -> str:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    asked = words(question)
    return max(sentences, key=lambda s: len(asked & words(s)))


PASSAGES = load_passages()


def answer(question: str) -> dict[str, Any]:
    """The question in; the answer and the ranked passage texts out."""
    found = rank(question, PASSAGES, k=5)
    reply = best_sentence(question, found[0][1]) if found else "Not mentioned"
    return {"answer": reply, "retrieved": [text for _, text in found]}


def make_system() -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """A factory: builds the system once (here: loads the passages) and returns it."""
    passages = load_passages()

    async def ask(question: str, row: dict[str, Any]) -> dict[str, Any]:
        # `row` is {"id", "question", "metadata"}: the references are never passed in.
        found = rank(question, passages, k=5)
        reply = best_sentence(question, found[0][1]) if found else "Not mentioned"
        # Items may be ids, texts, or both: lasagna uses the id when the benchmark's corpus
        # has it (pasta-beir) and the text otherwise (pasta.jsonl's pooled passages).
        return {"answer": reply, "retrieved": [{"id": i, "text": t} for i, t in found]}

    return ask
