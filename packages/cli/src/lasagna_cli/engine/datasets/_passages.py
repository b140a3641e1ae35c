"""Documents cut into the passages retrieval searches: one rule for every door.

A registered benchmark's documents (conversations, syllabi, papers, filings) and a kag
database's documents go through the same function: lasagna-synth's chunker (`fixed`
200-word windows with no overlap by default, or `sentences`), passage ids `<doc>#<i>`, and a
document too short for a window kept whole as `<doc>#0`, so that no document silently drops
out of the search.
"""

from __future__ import annotations

from collections.abc import Iterable

from lasagna_synth import Chunker, Document, chunk_document, describe_chunker

CHUNKER: Chunker = "fixed"
CHUNK_WORDS = 200
CHUNK_RULE = f"{CHUNKER} {CHUNK_WORDS}-word windows, no overlap (lasagna-synth chunker)"


def chunk_rule(chunker: Chunker = CHUNKER, words: int = CHUNK_WORDS) -> str:
    """How passages were made, as results record it."""
    if (chunker, words) == (CHUNKER, CHUNK_WORDS):
        return CHUNK_RULE
    return describe_chunker(chunker, words)


def cut_documents(
    documents: Iterable[tuple[str, str]], chunker: Chunker = CHUNKER, words: int = CHUNK_WORDS
) -> tuple[list[str], list[str], list[str]]:
    """(passage ids, their documents' ids, their texts) of `(doc_id, text)` pairs, in corpus
    order."""
    ids: list[str] = []
    doc_ids: list[str] = []
    texts: list[str] = []
    for doc_id, text in documents:
        passages = chunk_document(Document(doc_id, text, "text"), chunker, words)
        if not passages and text.strip():
            # The chunker drops windows under 20 words; a short document stays searchable.
            ids.append(f"{doc_id}#0")
            doc_ids.append(doc_id)
            texts.append(text.strip())
        for passage in passages:
            ids.append(passage.id)
            doc_ids.append(doc_id)
            texts.append(passage.text)
    return ids, doc_ids, texts
