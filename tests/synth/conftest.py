"""Fixtures for lasagna-synth's tests: small documents in every format, written here, and a
guard that fails a test when anything tries to reach a host other than this machine."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
MIXED_FORMATS = SHARED_DATA / "corpora" / "mixed-formats"

_LOOPBACK = ("127.", "::1", "localhost")
_attempts: list[tuple[str, Any]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # pytest-socket already refuses other hosts, but a library that swallows the error
    # (telemetry pings do) would hide the attempt; the audit hook sees it anyway.
    if _attempts is None:
        return
    if event == "socket.getaddrinfo":
        host = args[0]
    elif event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else None
    else:
        return
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, str) and not host.startswith(_LOOPBACK):
        _attempts.append((event, host))


sys.addaudithook(_audit)


@pytest.fixture
def no_network() -> Iterator[None]:
    """Fail the test if it tried to resolve or connect to any host but this machine."""
    global _attempts
    _attempts = []
    try:
        yield
        assert _attempts == [], f"network access attempted: {_attempts}"
    finally:
        _attempts = None


def make_pdf(lines: list[str], rotated: str | None = None) -> bytes:
    """A one-page PDF with `lines` of Helvetica text (and an optional rotated line)."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    content = "BT /F1 12 Tf 14 TL 72 720 Td " + " ".join(f"({escape(t)}) Tj T*" for t in lines)
    content += " ET"
    if rotated:
        content += f" BT /F1 12 Tf 0 1 -1 0 30 300 Tm ({escape(rotated)}) Tj ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


def make_docx(path: Path, heading: str, paragraphs: list[str]) -> None:
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    document.save(str(path))


def make_pptx(path: Path, title: str, body: str) -> None:
    import pptx

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = title
    slide.placeholders[1].text = body
    presentation.save(str(path))


class Make:
    """Writers of small test documents, handed to tests by the `make` fixture."""

    pdf = staticmethod(make_pdf)
    docx = staticmethod(make_docx)
    pptx = staticmethod(make_pptx)

    @staticmethod
    def words(n: int, start: int = 0, stem: str = "w") -> str:
        """n distinct words: w0 w1 ..."""
        return " ".join(f"{stem}{i}" for i in range(start, start + n))


@pytest.fixture
def make() -> type[Make]:
    return Make
