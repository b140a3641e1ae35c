"""A documents folder someone sent: read as exactly the regular files inside it, each reader
within its bounds. Links out of the folder, FIFOs, sockets, devices, folders that cannot be
listed and decompression bombs are skipped with their reasons, never read, never waited on."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests import _bombs

from lasagna_synth import ReadLimits, SynthUsageError, load_corpus, using_read_limits

SECRET = "root:$6$hunter2-never-in-a-prompt"


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail, rather than hang, when the block takes longer than `seconds` (a FIFO opened for
    reading waits for a writer forever)."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still reading after {seconds} s: it hung")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n", encoding="utf-8")
    return secret


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("the harbour opens at dawn", encoding="utf-8")
    return folder


def reasons(folder: Path, **kwargs: object) -> tuple[list[str], dict[str, str]]:
    with deadline(60):
        corpus = load_corpus(folder, **kwargs)  # type: ignore[arg-type]
    for document in corpus.documents:
        assert SECRET not in document.text
    return [d.id for d in corpus.documents], {s.path: s.reason for s in corpus.skipped}


def test_a_link_to_a_file_outside_the_folder_is_skipped_never_read(
    docs: Path, outside: Path
) -> None:
    (docs / "notes.md").symlink_to(outside)
    (docs / "sub").mkdir()
    (docs / "sub" / "relative.txt").symlink_to(Path("..", "..", "outside", "shadow"))
    (docs / "zero.txt").symlink_to("/dev/zero")
    read, skipped = reasons(docs)
    assert read == ["good.md"]
    out = "a link to a file outside the folder: not followed"
    assert skipped == {"notes.md": out, "sub/relative.txt": out, "zero.txt": out}


def test_a_link_inside_the_folder_is_read_unless_it_leads_to_a_hidden_file(docs: Path) -> None:
    (docs / "chapters").mkdir()
    (docs / "chapters" / "one.md").write_text("chapter one text", encoding="utf-8")
    (docs / "alias.md").symlink_to(Path("chapters", "one.md"))
    (docs / ".env").write_text(f"KEY={SECRET}", encoding="utf-8")
    (docs / "env.txt").symlink_to(".env")
    read, skipped = reasons(docs)
    assert read == ["alias.md", "chapters/one.md", "good.md"]
    assert skipped == {"env.txt": "a link to a hidden file: not followed"}


def test_links_to_folders_are_listed_as_skipped(docs: Path, outside: Path) -> None:
    (docs / "inner").mkdir()
    (docs / "inner" / "a.md").write_text("inner text", encoding="utf-8")
    (docs / "again").symlink_to("inner", target_is_directory=True)
    (docs / "away").symlink_to(outside.parent, target_is_directory=True)
    read, skipped = reasons(docs)
    assert read == ["good.md", "inner/a.md"]
    linked = "a link to a folder: not followed (a folder is read as the files inside it)"
    assert skipped == {"again": linked, "away": linked}


def test_a_folder_that_cannot_be_listed_is_listed_as_skipped(
    docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = docs / "locked"
    locked.mkdir()
    (locked / "hidden-away.md").write_text("never listed", encoding="utf-8")
    if os.geteuid() == 0:  # root lists any folder: make the listing fail as it would
        real = os.scandir

        def scandir(path: str) -> object:
            if os.fspath(path) == os.fspath(locked):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real(path)

        monkeypatch.setattr(os, "scandir", scandir)
    else:
        locked.chmod(0)
    try:
        read, skipped = reasons(docs)
    finally:
        locked.chmod(0o755)
    assert read == ["good.md"]
    assert skipped == {"locked": "cannot read the folder: Permission denied"}


def test_fifos_and_sockets_are_skipped_without_being_opened(docs: Path) -> None:
    os.mkfifo(docs / "pipe.txt")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(os.fspath(docs / "sock.md"))
        (docs / "pipe-link.md").symlink_to("pipe.txt")
        read, skipped = reasons(docs)
    finally:
        server.close()
    assert read == ["good.md"]
    assert skipped == {
        "pipe-link.md": "not a regular file: a named pipe (FIFO)",
        "pipe.txt": "not a regular file: a named pipe (FIFO)",
        "sock.md": "not a regular file: a socket",
    }


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a device"), ("fifo", "a named pipe")])
def test_a_corpus_that_is_a_device_or_a_fifo_is_refused_in_a_line(
    path: str, kind: str, tmp_path: Path
) -> None:
    if path == "fifo":
        path = os.fspath(tmp_path / "fifo.md")
        os.mkfifo(path)
    with deadline(30), pytest.raises(SynthUsageError, match=f"is {kind}") as refused:
        load_corpus(path)
    assert "\n" not in str(refused.value)


def test_a_file_over_the_size_limit_is_skipped_with_how_to_raise_it(docs: Path) -> None:
    (docs / "big.txt").write_text("word " * 400, encoding="utf-8")  # 2,000 bytes
    limits = ReadLimits(max_mb=0.001, hint="SETTING=<MB> raises it")
    read, skipped = reasons(docs, limits=limits)
    assert read == ["good.md"]
    assert skipped["big.txt"] == (
        "too big to read safely: 2,000 bytes, over the limit of 1,048 bytes; SETTING=<MB> raises it"
    )
    with using_read_limits(limits):  # the same bounds, set once for everything inside
        assert reasons(docs)[1] == skipped
    assert reasons(docs)[0] == ["big.txt", "good.md"]


def test_a_pdf_whose_stream_inflates_to_1_5_gb_is_skipped(docs: Path) -> None:
    (docs / "bomb.pdf").write_bytes(_bombs.pdf_with_stream(_bombs.zlib_zeros(1536)))
    assert (docs / "bomb.pdf").stat().st_size < 2_000_000
    read, skipped = reasons(docs)
    assert read == ["good.md"]
    assert skipped["bomb.pdf"].startswith(
        "too big to read safely: streams inflating to over 256 MB"
    )


def test_a_pdf_page_of_too_many_characters_is_skipped(docs: Path, make: type) -> None:
    (docs / "dense.pdf").write_bytes(make.pdf(["x" * 400] * 10))
    (docs / "fine.pdf").write_bytes(make.pdf(["a short page"]))
    limits = ReadLimits(max_mb=1)  # 3,125 characters a page
    read, skipped = reasons(docs, limits=limits)
    assert read == ["fine.pdf", "good.md"]
    assert skipped["dense.pdf"].startswith(
        "too big to read safely: a page of over 3,125 characters"
    )


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: _bombs.docx_of_spaces(2048), "2,048 MB once unzipped"),
        (lambda: _bombs.docx_of_paragraphs(9_000_000), "a part that inflates 685 times"),
    ],
    ids=["2 GB of XML", "9M paragraphs"],
)
def test_a_docx_bomb_is_skipped_from_its_zip_directory(
    build: object, said: str, docs: Path
) -> None:
    pytest.importorskip("docx")
    (docs / "bomb.docx").write_bytes(build())  # type: ignore[operator]
    read, skipped = reasons(docs)
    assert read == ["good.md"]
    assert skipped["bomb.docx"].startswith(f"too big to read safely: {said}")


def test_a_docx_of_too_many_tags_is_skipped_as_it_inflates(docs: Path) -> None:
    pytest.importorskip("docx")
    xml = b"".join(b'<w:p w:rsidR="%08X"/>' % (i * 2654435761 % 2**32) for i in range(20_000))
    (docs / "many.docx").write_bytes(_bombs.docx_of_paragraphs(1, xml))
    read, skipped = reasons(docs, limits=ReadLimits(max_mb=1))  # 15,625 tags
    assert read == ["good.md"]
    assert skipped["many.docx"].startswith("too big to read safely: over 15,625 XML tags")


def test_html_and_xml_of_too_many_tags_are_skipped(docs: Path) -> None:
    pytest.importorskip("unstructured")
    (docs / "deep.html").write_text("<div>" * 2_000 + "x", encoding="utf-8")
    (docs / "wide.xml").write_text("<r>" + "<a/>" * 2_000 + "</r>", encoding="utf-8")
    read, skipped = reasons(docs, limits=ReadLimits(max_mb=0.1))  # 1,562 tags
    assert read == ["good.md"]
    assert skipped == {
        "deep.html": "too big to read safely: 2,000 tags, over the limit of 1,562; "
        "ReadLimits(max_mb=...) raises it",
        "wide.xml": "too big to read safely: 2,002 tags, over the limit of 1,562; "
        "ReadLimits(max_mb=...) raises it",
    }


def test_html_is_decoded_by_its_declared_charset(docs: Path) -> None:
    pytest.importorskip("unstructured")
    page = "<html><head><meta charset='{}'></head><body><p>Le café ouvre à l'aube.</p></body>"
    (docs / "latin.html").write_bytes(page.format("iso-8859-1").encode("latin-1"))
    (docs / "declared.html").write_bytes(
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
        + "<p>Smart “quotes” here.</p>".encode("cp1252")
    )
    (docs / "bad.html").write_bytes(b"<p>caf\xe9 without a charset</p>")
    (docs / "lie.html").write_bytes(page.format("utf-8").encode("latin-1"))
    (docs / "bad.txt").write_bytes(b"caf\xe9")
    with deadline(120):
        corpus = load_corpus(docs)
    texts = {d.id: d.text for d in corpus.documents}
    assert "Le café ouvre à l'aube." in texts["latin.html"]
    assert "Smart “quotes” here." in texts["declared.html"]
    skipped = {s.path: s.reason for s in corpus.skipped}
    assert skipped["bad.html"].startswith(
        "not UTF-8 (no charset declared) text (invalid byte at offset 6)"
    )
    assert skipped["lie.html"].startswith("not declared utf-8 text (invalid byte at offset")
    assert skipped["bad.txt"].startswith("not UTF-8 text (invalid byte at offset 3)")
