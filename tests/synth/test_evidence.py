"""Evidence as spans of the documents: chunkers keep offsets, spans judge any chunking,
passage texts are located, license files stay out, rows carry `evidence` and `corpus`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna_synth import (
    DataError,
    Document,
    EvidenceSpan,
    chunk_document,
    iter_corpus,
    load_data,
    locate,
    relevant_passages,
    text_sha256,
)

WORDS = " ".join(f"w{i}" for i in range(400))
MARKDOWN = "\n\n".join(
    f"## Section {s}\n\n" + " ".join(f"s{s}w{i}" for i in range(60)) for s in range(5)
)


def spans_of(document: Document, chunker: str, size: int, overlap: int = 0) -> dict:
    return {
        p.id: (p.doc_id, p.start, p.end)
        for p in chunk_document(document, chunker, size, overlap)  # type: ignore[arg-type]
    }


@pytest.mark.parametrize("chunker", ["fixed", "sentences", "markdown", "tokens"])
def test_every_passage_is_its_offsets_in_the_text(chunker: str) -> None:
    document = Document("a.md", MARKDOWN, "text")
    passages = chunk_document(document, chunker, 50)  # type: ignore[arg-type]
    assert passages
    for p in passages:
        assert p.text == MARKDOWN[p.start : p.end]
        assert p.doc_sha256 == text_sha256(MARKDOWN)


@pytest.mark.parametrize(
    ("chunker", "size", "overlap"),
    [
        ("fixed", 70, 0),
        ("fixed", 30, 10),
        ("sentences", 40, 0),
        ("markdown", 80, 0),
        ("tokens", 60, 5),
    ],
)
def test_spans_written_under_one_chunking_judge_another(
    chunker: str, size: int, overlap: int
) -> None:
    document = Document("a.md", MARKDOWN, "text")
    source = chunk_document(document, "fixed", 50)[2]  # the passage a question was written from
    span = EvidenceSpan("a.md", source.start, source.end, source.doc_sha256)
    other = spans_of(document, chunker, size, overlap)
    relevant = relevant_passages([span], other)
    assert relevant
    # Together they cover the evidence, and nothing relevant lies outside it.
    assert min(other[p][1] for p in relevant) <= span.start
    assert max(other[p][2] for p in relevant) >= span.end
    for p in relevant:
        assert other[p][1] < span.end and span.start < other[p][2]


def test_a_passage_split_across_chunks_is_found_in_both() -> None:
    document = Document("a.md", WORDS, "text")
    written = chunk_document(document, "fixed", 100)[1]  # words 100..199
    halves = spans_of(document, "fixed", 150)  # words 0..149 and 150..299: split at 150
    span = EvidenceSpan("a.md", written.start, written.end)
    assert relevant_passages([span], halves) == ["a.md#0", "a.md#1"]
    assert relevant_passages([EvidenceSpan("b.md", written.start, written.end)], halves) == []


def test_overlapping_windows_share_words() -> None:
    passages = chunk_document(Document("a.md", WORDS, "text"), "fixed", 50, 10)
    first, second = passages[0].text.split(), passages[1].text.split()
    assert len(first) == 50 and first[-10:] == second[:10]
    assert passages[-1].text.split()[-1] == "w399"


def test_markdown_passages_start_at_headings() -> None:
    passages = chunk_document(Document("a.md", MARKDOWN, "text"), "markdown", 70)
    assert [p.text.split("\n", 1)[0] for p in passages] == [f"## Section {s}" for s in range(5)]


def test_locate_finds_a_passage_exactly_or_across_changed_whitespace() -> None:
    documents = {"a.md": "intro text\n\nThe quick  brown\nfox jumps.", "b.md": "other"}
    assert locate("brown\nfox", documents) == EvidenceSpan("a.md", 23, 32)
    found = locate("The quick brown fox jumps.", documents)
    assert found is not None and documents["a.md"][found.start : found.end].startswith("The")
    assert locate("a wolf", documents) is None


def test_a_license_file_is_not_a_document_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("How to use it. " * 10, encoding="utf-8")
    (tmp_path / "LICENSE.md").write_text("Permission is granted. " * 10, encoding="utf-8")
    found = {e.id if isinstance(e, Document) else e.path: e for e in iter_corpus(tmp_path)}
    assert isinstance(found["guide.md"], Document)
    assert "license file" in found["LICENSE.md"].reason  # type: ignore[union-attr]
    asked = list(iter_corpus(tmp_path, include_license=True))
    assert all(isinstance(e, Document) for e in asked)
    assert all(isinstance(e, Document) for e in iter_corpus(tmp_path / "LICENSE.md"))


def test_rows_carry_evidence_spans_and_their_corpus(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    row = {
        "question": "q?",
        "answer": "a1",
        "contexts": ["some text"],
        "evidence": [{"doc": "a.md", "start": 3, "end": 12, "sha256": "ab"}],
        "corpus": "docs",
    }
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    data = load_data(path)
    assert data.rows()[0].evidence == (EvidenceSpan("a.md", 3, 12, "ab"),)
    assert data.documents == (tmp_path / "docs").resolve()
    bad = dict(row, evidence=[{"doc": "a.md", "start": 9, "end": 3}])
    other = dict(row, corpus="elsewhere")
    path.write_text(json.dumps(bad) + "\n" + json.dumps(other) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_data(path)
    text = str(caught.value)
    assert '"end" (3) must be after "start" (9)' in text
