"""write_jsonl and the LangChain conversions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna_synth import (
    Passage,
    SynthError,
    document_to_passage,
    passage_to_document,
    write_jsonl,
)


def test_write_jsonl_is_utf8_one_row_a_line_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    rows = [{"id": "synth-0001", "question": "Où est le phare ?"}, {"id": "synth-0002"}]
    target = tmp_path / "out" / "qa.jsonl"
    assert write_jsonl(rows, target) == target
    data = target.read_bytes()
    assert (
        data
        == (
            '{"id": "synth-0001", "question": "Où est le phare ?"}\n{"id": "synth-0002"}\n'
        ).encode()
    )
    assert [json.loads(line) for line in data.decode().splitlines()] == rows
    assert sorted(p.name for p in target.parent.iterdir()) == ["qa.jsonl"]


def test_write_jsonl_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "qa.jsonl"
    target.write_text("old\n", encoding="utf-8")

    def rows():  # type: ignore[no-untyped-def]
        yield {"id": 1}
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_jsonl(rows(), target)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["qa.jsonl"]


def test_passages_round_trip_through_langchain_documents() -> None:
    from langchain_core.documents import Document

    passage = Passage("guides/walks.md#3", "guides/walks.md", 3, "The loop is 6 km.")
    document = passage_to_document(passage)
    assert isinstance(document, Document)
    assert document.page_content == "The loop is 6 km."
    assert document.id == "guides/walks.md#3"
    assert document.metadata == {
        "passage_id": "guides/walks.md#3",
        "doc_id": "guides/walks.md",
        "index": 3,
    }
    assert document_to_passage(document) == passage


def test_foreign_langchain_documents_become_passages() -> None:
    from langchain_core.documents import Document

    assert document_to_passage(Document(id="a.md#2", page_content="x")) == Passage(
        "a.md#2", "a.md", 2, "x"
    )
    assert document_to_passage(
        Document(id="chunk-7", page_content="y", metadata={"source": "b.pdf"})
    ) == Passage("chunk-7", "b.pdf", 0, "y")
    with pytest.raises(SynthError, match="without an id"):
        document_to_passage(Document(page_content="z"))
