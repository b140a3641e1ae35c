"""Decompression bombs, built in a moment and small on disk, for the hostile-document tests.

A megabyte of one repeated byte deflates to 1,037 bytes, and after a full flush the deflater
starts afresh, so the same 1,037 bytes stand for every further megabyte: a 1.5 GB stream is
those bytes 1,536 times, written without compressing 1.5 GB. The zip is written by hand
(local headers, data, central directory) for the same reason; its CRC is the real one, so a
reader that got past the bounds would inflate and check it in full.
"""

from __future__ import annotations

import struct
import zlib

_MB = 1 << 20


def _flushed_block(byte: bytes) -> tuple[bytes, bytes]:
    """(zlib header, the deflate bytes of one megabyte of `byte` after a full flush)."""
    deflater = zlib.compressobj(9)
    chunk = byte * _MB
    first = deflater.compress(chunk) + deflater.flush(zlib.Z_FULL_FLUSH)
    block = deflater.compress(chunk) + deflater.flush(zlib.Z_FULL_FLUSH)
    assert first[2:] == block  # what lets the block stand for every megabyte
    return first[:2], block


def raw_deflate(megabytes: int, byte: bytes = b"\0", head: bytes = b"", tail: bytes = b"") -> bytes:
    """A raw deflate stream (a zip member's) of `head`, `megabytes` MB of `byte`, `tail`."""
    _, block = _flushed_block(byte)
    deflater = zlib.compressobj(9, wbits=-15)
    start = deflater.compress(head) + deflater.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, wbits=-15)
    return start + block * megabytes + end.compress(tail) + end.flush()


def zlib_zeros(megabytes: int) -> bytes:
    """A zlib stream (a PDF's /FlateDecode) of `megabytes` MB of zero bytes."""
    header, block = _flushed_block(b"\0")
    size = megabytes * _MB
    adler = ((size % 65521) << 16) | 1  # Adler-32 of zeros: A stays 1, B adds it each byte
    return header + block * megabytes + b"\x03\x00" + adler.to_bytes(4, "big")


def crc_of(megabytes: int, byte: bytes, head: bytes = b"", tail: bytes = b"") -> int:
    crc = zlib.crc32(head)
    chunk = byte * _MB
    for _ in range(megabytes):
        crc = zlib.crc32(chunk, crc)
    return zlib.crc32(tail, crc)


def zip_file(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of (name, raw deflate data, CRC-32, inflated size) members."""
    body = b""
    directory = b""
    for name, data, crc, size in members:
        encoded = name.encode()
        offset = len(body)
        sizes = (crc, len(data), size)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, *sizes, len(encoded), 0)
        body += encoded + data
        directory += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, *sizes, len(encoded),
            0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        directory += encoded
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(directory), len(body), 0
    )
    return body + directory + end


_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
    b'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    b'officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
    b'2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
    b'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
    b"</Relationships>"
)
DOC_HEAD = (
    b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
    b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
)
DOC_TAIL = b"</w:t></w:r></w:p></w:body></w:document>"


def _small(name: str, data: bytes) -> tuple[str, bytes, int, int]:
    deflater = zlib.compressobj(9, wbits=-15)
    return name, deflater.compress(data) + deflater.flush(), zlib.crc32(data), len(data)


def docx_of_spaces(megabytes: int) -> bytes:
    """A DOCX whose one paragraph holds `megabytes` MB of spaces: 2 MB on disk per 2 GB."""
    document = (
        "word/document.xml",
        raw_deflate(megabytes, b" ", DOC_HEAD, DOC_TAIL),
        crc_of(megabytes, b" ", DOC_HEAD, DOC_TAIL),
        len(DOC_HEAD) + megabytes * _MB + len(DOC_TAIL),
    )
    return zip_file([_small("[Content_Types].xml", _TYPES), _small("_rels/.rels", _RELS), document])


def docx_of_paragraphs(paragraphs: int, paragraph: bytes = b"<w:p/>") -> bytes:
    """A DOCX of `paragraphs` empty paragraphs (9 million: under 100 KB on disk)."""
    xml = DOC_HEAD.replace(b"<w:p><w:r><w:t>", b"") + paragraph * paragraphs
    xml += DOC_TAIL.replace(b"</w:t></w:r></w:p>", b"")
    return zip_file(
        [
            _small("[Content_Types].xml", _TYPES),
            _small("_rels/.rels", _RELS),
            _small("word/document.xml", xml),
        ]
    )


def pdf_with_stream(stream: bytes, filters: str = "/FlateDecode") -> bytes:
    """A one-page PDF whose content stream is `stream`, under `filters`."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter %s >>\nstream\n" % (len(stream), filters.encode())
        + stream
        + b"\nendstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return out
