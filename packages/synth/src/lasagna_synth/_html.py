"""HTML bytes to text by the charset the file declares, as a browser finds it.

A byte order mark first, then a `<meta charset>` (or `http-equiv="Content-Type"`) or an XML
declaration in the first 1,024 bytes (the prescan of the HTML standard); without one, UTF-8.
Bytes that are not text in that charset refuse the file, as a .txt file of them is refused:
a guess would put mojibake into passages and questions without a word.
"""

from __future__ import annotations

import codecs
import re

from lasagna_synth._limits import Unreadable

_PRESCAN = 1024
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_DECLARED = re.compile(
    rb"""<meta\s[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)"""
    rb"""|<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)""",
    re.IGNORECASE,
)


def declared_charset(data: bytes) -> str | None:
    """The charset a byte order mark or the first 1,024 bytes declare, as written."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    match = _DECLARED.search(data[:_PRESCAN])
    if match is None:
        return None
    return (match.group(1) or match.group(2)).decode("ascii")


def decode_html(data: bytes) -> str:
    """The text of an HTML file; `Unreadable` when its bytes are not text in its charset."""
    declared = declared_charset(data)
    charset = declared or "utf-8"
    try:
        codec = codecs.lookup(charset).name
    except LookupError:
        raise Unreadable(
            f"declares the charset {charset[:40]!r}, which is not one Python knows; "
            "re-save it as UTF-8"
        ) from None
    if codec == "utf-8" and data.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        said = f"declared {charset[:40]}" if declared else "UTF-8 (no charset declared)"
        raise Unreadable(
            f"not {said} text (invalid byte at offset {exc.start}); re-save it as UTF-8 or "
            "declare its charset (<meta charset=...>)"
        ) from None
