"""Loading: sorted paths, hidden paths, every format offline, skipped files with reasons."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from lasagna_synth import SynthError, SynthUsageError, load_corpus, supported_suffixes

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
MIXED = SHARED / "corpora" / "mixed-formats"


def test_text_files_in_sorted_path_order_with_relative_ids(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.md").write_text("# Z\n\nzeta text", encoding="utf-8")
    (tmp_path / "a.txt").write_text("alpha text", encoding="utf-8")
    (tmp_path / "b-c.md").write_text("dash text", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["a.txt", "b/z.md", "b-c.md"]
    assert corpus.documents[1].text == "# Z\n\nzeta text"
    assert corpus.skipped == ()


def test_hidden_files_and_folders_are_not_visited(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "notes.md").write_text("hidden folder", encoding="utf-8")
    (tmp_path / ".draft.md").write_text("hidden file", encoding="utf-8")
    (tmp_path / "shown.md").write_text("visible", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["shown.md"]
    assert corpus.skipped == ()


def test_one_file_is_a_corpus_of_one_document(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("line one\r\nline two", encoding="utf-8")
    corpus = load_corpus(path)
    assert [(d.id, d.text, d.kind) for d in corpus.documents] == [
        ("notes.txt", "line one\nline two", "text")
    ]


def test_unsupported_unreadable_and_empty_files_are_skipped_with_reasons(
    tmp_path: Path, make: type
) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "Makefile").write_text("all:\n", encoding="utf-8")
    (tmp_path / "empty.md").write_text(" \n\t\n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "broken.docx").write_bytes(b"this is not a zip file")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (tmp_path / "blank.pdf").write_bytes(make.pdf([]))
    os.symlink(tmp_path / "missing.md", tmp_path / "dangling.md")
    (tmp_path / "good.md").write_text("some words here", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["good.md"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert list(reasons) == sorted(reasons)
    assert reasons["image.png"] == "unsupported file type .png"
    assert reasons["Makefile"] == "unsupported file without a suffix"
    assert reasons["empty.md"] == "empty: no text found"
    assert reasons["latin1.txt"].startswith("not UTF-8 text (invalid byte at offset 3)")
    assert reasons["broken.docx"].startswith("cannot read as docx: ")
    assert reasons["broken.pdf"].startswith("cannot read as pdf: ")
    assert reasons["blank.pdf"].startswith("empty: no text found (a scanned PDF needs OCR")
    assert reasons["dangling.md"] == "cannot read: No such file or directory"


def test_missing_corpus_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SynthUsageError, match=r"corpus not found: .*nowhere.*folder of documents"):
        load_corpus(tmp_path / "nowhere")


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "bom.md").write_bytes("\ufeffhello".encode())
    assert load_corpus(tmp_path).documents[0].text == "hello"


def test_every_format_of_our_own_reads_offline(
    tmp_path: Path, make: type, no_network: None
) -> None:
    make.docx(tmp_path / "report.docx", "Quarterly report", ["Revenue grew by nine percent."])
    make.pptx(tmp_path / "deck.pptx", "Roadmap", "Ship the dry run first")
    (tmp_path / "page.html").write_text(
        "<html><body><h1>Welcome</h1><p>The harbour opens at dawn.</p></body></html>",
        encoding="utf-8",
    )
    (tmp_path / "old.htm").write_text("<p>Legacy page text.</p>", encoding="utf-8")
    (tmp_path / "data.xml").write_text(
        "<root><item>First entry</item><item>Second entry</item></root>", encoding="utf-8"
    )
    (tmp_path / "mail.eml").write_text(
        "From: a@example.com\nTo: b@example.com\nSubject: Ferry\n"
        "Content-Type: text/plain\n\nThe ferry leaves at noon.\n",
        encoding="utf-8",
    )
    (tmp_path / "paper.pdf").write_bytes(
        make.pdf(["A unified toolkit for layout finding", "Second line"], rotated="arXiv:2103")
    )
    corpus = load_corpus(tmp_path)
    texts = {d.id: d.text for d in corpus.documents}
    kinds = {d.id: d.kind for d in corpus.documents}
    assert corpus.skipped == ()
    assert "Revenue grew by nine percent." in texts["report.docx"]
    assert "Quarterly report" in texts["report.docx"]
    assert "Ship the dry run first" in texts["deck.pptx"]
    assert "The harbour opens at dawn." in texts["page.html"]
    assert "Legacy page text." in texts["old.htm"]
    assert "First entry" in texts["data.xml"] and "Second entry" in texts["data.xml"]
    assert "The ferry leaves at noon." in texts["mail.eml"]
    # the rotated margin text is left out
    assert texts["paper.pdf"] == "A unified toolkit for layout finding\nSecond line"
    assert kinds == {
        "data.xml": "xml",
        "deck.pptx": "pptx",
        "mail.eml": "email",
        "old.htm": "html",
        "page.html": "html",
        "paper.pdf": "pdf",
        "report.docx": "docx",
    }


def test_supported_suffixes_cover_the_issue() -> None:
    assert {".md", ".txt", ".pdf", ".docx", ".html", ".htm"} <= set(supported_suffixes())


def test_text_corpus_does_not_import_unstructured(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "a.md").write_text("just text " * 30, encoding="utf-8")
    code = (
        "import sys; from lasagna_synth import load_corpus; load_corpus(sys.argv[1]); "
        "heavy = [m for m in ('unstructured', 'spacy', 'pdfminer', 'nltk', 'sklearn', "
        "'torch') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# -- the real mixed-format corpus (../shared/data), read with the network unreachable ------

needs_mixed = pytest.mark.skipif(not MIXED.is_dir(), reason="../shared/data is not present")

EXPECTED_SNIPPETS = {
    "LICENSE.md": "Apache License",
    "book-war-and-peace-1p.txt": "Well, Prince, so Genoa and Lucca",
    "example-10k-1p.html": "TRANSITION REPORT PURSUANT TO SECTION 13",
    "example-10k.html": "SECURITIES AND EXCHANGE COMMISSION",
    "handbook-1p.docx": "CHAPTER 1 – INTRODUCTION",
    "layout-parser-paper-fast.pdf": "LayoutParser: A Unified Toolkit for Deep",
    "multi-column-2p.pdf": "Dense Passage Retrieval for Open-Domain Question Answering",
    "norwich-city.txt": "Iwan Roberts",
}


@needs_mixed
@pytest.mark.parametrize("name", sorted(EXPECTED_SNIPPETS))
def test_mixed_formats_load_offline(
    name: str, tmp_path: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    corpus = load_corpus(MIXED / name)
    assert corpus.skipped == ()
    (document,) = corpus.documents
    assert document.id == name
    assert EXPECTED_SNIPPETS[name] in document.text
    assert len(document.text.split()) > 300


@needs_mixed
def test_pdf_margin_stamp_is_left_out() -> None:
    text = load_corpus(MIXED / "layout-parser-paper-fast.pdf").documents[0].text
    assert text.startswith("LayoutParser: A Unified Toolkit for Deep")
    assert "ﬁ" not in text and "Unified" in text


@needs_mixed
@pytest.mark.slow
def test_872_page_docx_reads_offline_in_reasonable_time(no_network: None) -> None:
    started = time.perf_counter()
    corpus = load_corpus(MIXED / "handbook-872p.docx")
    elapsed = time.perf_counter() - started
    (document,) = corpus.documents
    assert len(document.text.split()) > 120_000
    assert elapsed < 60, f"872 pages took {elapsed:.1f} s"


def test_a_skipped_only_folder_refuses_to_plan(tmp_path: Path) -> None:
    from lasagna_synth import plan

    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    with pytest.raises(SynthError, match=r"no readable document in .*photo.jpg: unsupported"):
        plan(tmp_path, n=5)


def test_every_reader_unstructured_is_asked_for_is_installed() -> None:
    """Each partitioner's own imports resolve with only lasagna-synth's dependencies (CI
    runs this member alone); a missing one would skip every file of that type."""
    from importlib import import_module

    from lasagna_synth._unstructured import PARTITIONERS, prepare_unstructured

    prepare_unstructured()
    for module, function, _ in PARTITIONERS.values():
        assert callable(getattr(import_module(module), function))
    import dateutil  # partition_email imports it only when it reads a message
    import oxmsg  # partition_msg

    assert dateutil and oxmsg


def test_a_document_needing_a_missing_extra_stops_loading_naming_it(
    tmp_path: Path, make: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the documents extra, a .docx is not skipped in silence: loading (and so the
    # dry run, which plans) stops before reading anything, naming the file and the extra.
    import lasagna_synth._extras as extras

    real = extras.find_spec
    monkeypatch.setattr(
        extras, "find_spec", lambda name: None if name == "unstructured" else real(name)
    )
    (tmp_path / "a.md").write_text("words " * 30, encoding="utf-8")
    (tmp_path / "b").mkdir()
    make.docx(tmp_path / "b" / "report.docx", "Report", ["Revenue grew."])
    (tmp_path / "c.html").write_text("<p>page</p>", encoding="utf-8")
    (tmp_path / "d.png").write_bytes(b"\x89PNG")
    expected = (
        r"^b/report.docx \(and 1 more such files\): reading .docx files needs the documents "
        r'extra \(unstructured\), which is not installed: pip install "lasagna-synth\[documents\]"'
    )
    with pytest.raises(SynthUsageError, match=expected) as caught:
        load_corpus(tmp_path)
    assert "\n" not in str(caught.value)
    assert "uv run --group documents" in str(caught.value)
    from lasagna_synth import plan

    with pytest.raises(SynthUsageError, match="needs the documents extra"):
        plan(tmp_path, n=2, mix="factoid=1")
    # Markdown, text and PDF need no extra.
    (tmp_path / "b" / "report.docx").unlink()
    (tmp_path / "c.html").unlink()
    assert [d.id for d in load_corpus(tmp_path).documents] == ["a.md"]
