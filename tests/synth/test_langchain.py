"""A benchmark's corpus as LangChain Documents, for a retriever to be built over it."""

from __future__ import annotations

import json
from pathlib import Path

from lasagna_synth import corpus_to_documents, document_to_passage, load_data

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def test_a_beir_corpus_becomes_documents_named_by_corpus_id() -> None:
    from langchain_core.documents import Document

    data = load_data(EXAMPLES / "pasta-beir")
    documents = corpus_to_documents(data)
    assert all(isinstance(d, Document) for d in documents)
    assert [d.id for d in documents] == list(data.corpus)  # corpus order
    assert [d.page_content for d in documents] == list(data.corpus.values())
    first = json.loads((EXAMPLES / "pasta-beir" / "corpus.jsonl").read_text().splitlines()[0])
    assert documents[0].id == first["_id"] == "lasagna"
    assert documents[0].page_content == f"{first['title']}\n\n{first['text']}"
    assert documents[0].metadata == {"corpus_id": "lasagna"}


def test_a_pooled_corpus_and_a_plain_mapping() -> None:
    data = load_data(EXAMPLES / "pasta.jsonl")
    documents = corpus_to_documents(data)
    assert {d.id for d in documents} == set(data.corpus)
    assert "pasta-dough" in {d.id for d in documents}  # the name expected_docs gave it
    mapping = corpus_to_documents({"a": "one", "b": "two"})
    assert [(d.id, d.page_content, d.metadata) for d in mapping] == [
        ("a", "one", {"corpus_id": "a"}),
        ("b", "two", {"corpus_id": "b"}),
    ]
    assert corpus_to_documents({}) == []


def test_documents_of_a_corpus_read_back_as_passages() -> None:
    (document,) = corpus_to_documents({"guides/walks.md#3": "The loop is 6 km."})
    passage = document_to_passage(document)
    assert (passage.id, passage.doc_id, passage.index, passage.text) == (
        "guides/walks.md#3",
        "guides/walks.md",
        3,
        "The loop is 6 km.",
    )
