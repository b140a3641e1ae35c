"""LangChain Documents as the corpus a question set is planned from: objects, and a JSONL
of {"page_content", "metadata"}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna_synth import DataError, SynthError, documents_to_corpus, load_corpus, plan

WORDS = " ".join(f"word{i}" for i in range(40))


def test_documents_become_the_corpus_plan_reads() -> None:
    from langchain_core.documents import Document

    documents = [
        Document(page_content=f"Page one of the guide. {WORDS}", metadata={"source": "guide.pdf"}),
        Document(page_content="Ferry notes " + WORDS, id="ferry", metadata={}),
        Document(page_content=f"Page two of the guide. {WORDS}", metadata={"source": "guide.pdf"}),
        Document(page_content="A note with no name. " + WORDS),
        Document(page_content="   ", metadata={"source": "blank.txt"}),
    ]
    corpus = documents_to_corpus(documents)
    assert [(d.id, d.kind) for d in corpus.documents] == [
        ("guide.pdf", "langchain"),
        ("ferry", "langchain"),
        ("document-4", "langchain"),
    ]
    # a loader's pages of one source are one document, in the order given
    assert corpus.documents[0].text.startswith("Page one of the guide.")
    assert "\n\nPage two of the guide." in corpus.documents[0].text
    assert [(s.path, s.reason) for s in corpus.skipped] == [("blank.txt", "empty: no text found")]
    planned = plan(corpus, n=3, mix="factoid=1", seed=1)
    assert planned.root == "LangChain documents"
    assert {p.doc_id for p in planned.passages} == {"guide.pdf", "ferry", "document-4"}
    assert all(p.id.startswith(f"{p.doc_id}#") for p in planned.passages)


def test_mappings_work_as_documents_and_bad_ones_are_named() -> None:
    corpus = documents_to_corpus([{"page_content": WORDS, "metadata": {"source": "a.md"}}])
    assert corpus.documents[0].id == "a.md"
    with pytest.raises(SynthError, match=r"LangChain documents document 1: expected a LangChain"):
        documents_to_corpus(["just a string"])


def test_a_jsonl_of_documents_is_a_corpus(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    lines = [
        {
            "page_content": "Port Elvar " + WORDS,
            "metadata": {"source": "port.md"},
            "type": "Document",
        },
        {"page_content": "Skerra " + WORDS, "metadata": {"source": "skerra.md", "page": 1}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    corpus = load_corpus(path)
    assert corpus.root == str(path)
    assert [d.id for d in corpus.documents] == ["port.md", "skerra.md"]
    assert len(plan(path, n=2, mix="factoid=1").items) == 2
    path.write_text(
        '{"page_content": "x", "metadata": []}\n{"content": "y"}\nnot json\n', encoding="utf-8"
    )
    with pytest.raises(DataError) as caught:
        load_corpus(path)
    assert caught.value.problems == [
        'docs.jsonl line 1: field "metadata" must be an object, got list',
        'docs.jsonl line 2: unknown field "content" (did you mean "page_content"?); a LangChain '
        'Document is {"page_content": "...", "metadata": {...}}',
        'docs.jsonl line 2: field "page_content" must be a string, got nothing',
        "docs.jsonl line 3: not valid JSON (Expecting value at column 1)",
    ]
