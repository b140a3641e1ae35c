"""How much one document may take: every bound the document readers work within, in one place.

A folder someone sent may hold files made to exhaust a reader: a PDF whose 1.5 MB stream
inflates to 1.5 GB, a DOCX holding 2 GB of XML zipped into 2 MB, or 880 KB of 9 million
empty paragraphs (each a parsed element of some 400 bytes). So each reader checks its file
against these bounds before it reads the file whole, from what the format says of itself
(a zip's central directory, a PDF's streams decoded by pypdf under its limits, a count of
the markup's tags), and a file over one is skipped with its reason; a PDF's text layer is
also counted as pdfminer lays it out, page by page.

Every bound follows one number, `max_mb` (64 by default: about a hundred times what a
2,000-page book takes), so a user with big legitimate files raises one setting:

| bound                                              | default     | per `max_mb` |
|----------------------------------------------------|-------------|--------------|
| a file on disk                                     | 64 MB       | 1 MB         |
| inflated: a zip's members, a PDF's decoded streams | 256 MB      | 4 MB         |
| markup tags (HTML, XML, a DOCX's or PPTX's XML)    | 1,000,000   | 15,625       |
| PDF pages                                          | 6,400       | 100          |
| PDF characters, in all                             | 6,400,000   | 100,000      |
| PDF characters on one page                         | 200,000     | 3,125        |

and two that do not grow with it: a zip of at most 10,000 members, none of more than 1 MB
inflating more than 200 times (text XML zips 10 to 20 times; a bomb, 1,000).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import BinaryIO

_MB = 1024 * 1024
ZIP_MEMBERS = 10_000
ZIP_RATIO = 200
_RATIO_FROM = _MB  # a member this small is never a bomb, whatever its ratio


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """The bounds of one document (see the table in this module's docstring).

    `max_mb` scales them all; `hint` ends every skip reason a bound gives, saying how to
    raise it (the CLI names its LASAGNA_MAX_DOCUMENT_MB)."""

    max_mb: float = 64
    hint: str = "ReadLimits(max_mb=...) raises it"

    def __post_init__(self) -> None:
        if isinstance(self.max_mb, bool) or not self.max_mb > 0:
            raise ValueError(f"max_mb must be a positive number of megabytes, got {self.max_mb!r}")

    @property
    def file_bytes(self) -> int:
        """The most a file may hold on disk."""
        return int(self.max_mb * _MB)

    @property
    def inflated_bytes(self) -> int:
        """The most a file's compressed parts may inflate to, together."""
        return int(4 * self.max_mb * _MB)

    @property
    def tags(self) -> int:
        """The most markup tags (`<`) a file's text or XML parts may hold."""
        return int(15_625 * self.max_mb)

    @property
    def pdf_pages(self) -> int:
        return int(100 * self.max_mb)

    @property
    def pdf_chars(self) -> int:
        return int(100_000 * self.max_mb)

    @property
    def pdf_page_chars(self) -> int:
        return int(3_125 * self.max_mb)

    def refuse(self, found: str, limit: str | None = None) -> OverLimit:
        """The skip reason of a file over a bound: what was found, the bound, the hint."""
        over = f", over the limit of {limit}" if limit is not None else ""
        return OverLimit(f"too big to read safely: {found}{over}; {self.hint}")


DEFAULT_LIMITS = ReadLimits()
_CURRENT: ContextVar[ReadLimits] = ContextVar("lasagna_read_limits", default=DEFAULT_LIMITS)


def current_read_limits() -> ReadLimits:
    """The bounds a reader uses when it is given none: `DEFAULT_LIMITS`, or those of the
    innermost `using_read_limits` block."""
    return _CURRENT.get()


@contextmanager
def using_read_limits(limits: ReadLimits) -> Iterator[ReadLimits]:
    """Read documents within `limits` inside the block (in this thread and the tasks it
    starts), wherever they are read: a command sets them once, as pypdf's configuration is
    set, rather than through every layer between it and the loader."""
    token = _CURRENT.set(limits)
    try:
        yield limits
    finally:
        _CURRENT.reset(token)


class Unreadable(Exception):
    """A file that cannot be read, with the reason to show the user."""


class OverLimit(Unreadable):
    """A file over one of its `ReadLimits`, with the reason to show the user."""


def megabytes(size: int) -> str:
    """`2,048 MB`, `0.5 MB`, `2,000 bytes`: a size in messages."""
    mb = size / _MB
    if mb < 0.1:
        return f"{size:,} bytes"
    return f"{mb:,.0f} MB" if mb >= 10 else f"{mb:,.1f} MB"


def check_zip(file: BinaryIO, limits: ReadLimits) -> None:
    """A DOCX or PPTX (a zip) within its bounds, read from the zip's central directory before
    anything is inflated, then its XML members' tags counted as they inflate (zipfile never
    inflates a member past the size the directory declares). A file that is no zip is left
    to its reader to refuse."""
    import zipfile

    try:
        archive = zipfile.ZipFile(file)
    except zipfile.BadZipFile:
        return
    with archive:
        members = archive.infolist()
        if len(members) > ZIP_MEMBERS:
            raise limits.refuse(f"{len(members):,} files in the zip", f"{ZIP_MEMBERS:,}")
        total = sum(member.file_size for member in members)
        if total > limits.inflated_bytes:
            raise limits.refuse(
                f"{megabytes(total)} once unzipped", megabytes(limits.inflated_bytes)
            )
        for member in members:
            if member.file_size > _RATIO_FROM and member.file_size > ZIP_RATIO * max(
                member.compress_size, 1
            ):
                ratio = member.file_size / max(member.compress_size, 1)
                raise limits.refuse(
                    f"a part that inflates {ratio:,.0f} times", f"{ZIP_RATIO} times"
                )
        tags = 0
        for member in members:
            if not member.filename.lower().endswith((".xml", ".rels")):
                continue
            with archive.open(member) as part:
                while chunk := part.read(_MB):
                    tags += chunk.count(b"<")
                    if tags > limits.tags:
                        raise limits.refuse(f"over {limits.tags:,} XML tags", f"{limits.tags:,}")


def check_markup(data: bytes, limits: ReadLimits) -> None:
    """HTML or XML within its bound of tags (a count of `<`, an upper bound of elements)."""
    tags = data.count(b"<")
    if tags > limits.tags:
        raise limits.refuse(f"{tags:,} tags", f"{limits.tags:,}")
