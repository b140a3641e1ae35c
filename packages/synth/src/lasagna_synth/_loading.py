"""A folder (or one file) to documents: every supported file in sorted path order.

.md, .markdown and .txt are read as UTF-8 text; .pdf through pdfminer.six; DOCX, HTML,
PPTX, XML, EML and MSG through unstructured, the `documents` extra. Hidden files and
folders (a name starting with ".") are not visited. Unsupported, unreadable and empty files
are skipped, each with its reason, and so is a license file in a folder (LICENSE, LICENCE,
COPYING or NOTICE, with any suffix: legal text, not the documentation it ships with) unless
`include_license=True` or the file itself is the path given. A file whose reader is an
extra that is not installed is not skipped: loading refuses the corpus (`SynthUsageError`,
naming the file and the install command) before it reads anything, so a dry run says it
too and no call is made.
The heavy readers are imported only when a file needs them.

A folder is read as exactly the regular files inside it. A link to a file is followed only
when it resolves to a regular file inside the folder, not hidden (a cloned folder may carry
a link to ~/.ssh or /etc/shadow: its text would go into prompts and question sets); links
to folders are never followed. Each of these is skipped with its reason, and so are a
folder that cannot be read, FIFOs, sockets and devices (found by `stat`, never opened: a
FIFO would block the read forever and /dev/zero never ends), and a file over one of the
bounds of `ReadLimits` (`_limits`: its size on disk, and what it inflates to).

Given one `.jsonl` file, the corpus is the LangChain Documents it holds, one
`{"page_content": ..., "metadata": {...}}` object per line (see `_langchain_corpus`).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from lasagna_synth._corpus import Corpus, Document, Skipped
from lasagna_synth._errors import SynthUsageError
from lasagna_synth._limits import ReadLimits, Unreadable, current_read_limits, megabytes

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
PDF_SUFFIXES = (".pdf",)


def _unstructured_suffixes() -> tuple[str, ...]:
    from lasagna_synth._unstructured import PARTITIONERS

    return tuple(PARTITIONERS)


def supported_suffixes() -> tuple[str, ...]:
    """Every file suffix the loader reads, sorted."""
    return tuple(sorted((*TEXT_SUFFIXES, *PDF_SUFFIXES, *_unstructured_suffixes())))


_HAS_WORD = re.compile(r"\S")


def _read_text(file: BinaryIO, path: Path, limits: ReadLimits) -> str:
    data = file.read(limits.file_bytes + 1)
    if len(data) > limits.file_bytes:  # it grew since it was looked at
        raise limits.refuse(f"over {megabytes(limits.file_bytes)}", megabytes(limits.file_bytes))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Unreadable(
            f"not UTF-8 text (invalid byte at offset {exc.start}); re-save it as UTF-8"
        ) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


_Unreadable = Unreadable


def _refuse_missing_extras(files: list[tuple[str, Path]]) -> None:
    """A file that needs the documents extra, when it is missing: one line naming the first
    such file (and how many more), and the install command."""
    from lasagna_synth._extras import missing_extra, missing_modules
    from lasagna_synth._unstructured import REQUIRES

    needing = [
        doc_id
        for doc_id, file in files
        if file.suffix.lower() in REQUIRES and missing_modules(*REQUIRES[file.suffix.lower()])
    ]
    if not needing:
        return
    more = f" (and {len(needing) - 1:,} more such files)" if len(needing) > 1 else ""
    suffix = Path(needing[0]).suffix.lower()
    raise missing_extra(f"{needing[0]}{more}: reading {suffix} files", "documents")


Reader = Callable[[BinaryIO, Path, ReadLimits], str]


def _reader_for(suffix: str) -> tuple[str, Reader] | None:
    if suffix in TEXT_SUFFIXES:
        return "text", _read_text
    if suffix in PDF_SUFFIXES:
        from lasagna_synth._pdf import read_pdf

        return "pdf", read_pdf
    from lasagna_synth._unstructured import PARTITIONERS, read_with_unstructured

    if suffix in PARTITIONERS:
        return PARTITIONERS[suffix][2], read_with_unstructured
    return None


_LINKED_FOLDER = "a link to a folder: not followed (a folder is read as the files inside it)"
_LINK_OUT = "a link to a file outside the folder: not followed"
_LINK_HIDDEN = "a link to a hidden file: not followed"


def _inside(target: str, folder: str) -> bool:
    try:
        return os.path.commonpath([target, folder]) == folder
    except ValueError:  # another drive (Windows)
        return False


def _link_reason(path: str, real_root: str) -> str | None:
    """Why a link must not be followed: its target is outside the folder, or hidden."""
    if not os.path.islink(path):
        return None
    target = os.path.realpath(path)
    if not _inside(target, real_root):
        return _LINK_OUT
    if any(part.startswith(".") for part in Path(os.path.relpath(target, real_root)).parts):
        return _LINK_HIDDEN
    return None


Entry = tuple[str, Path, str | None]
"""A file's id, its path, and why it is skipped before it is opened (None: read it)."""


def _walk(root: Path) -> list[Entry]:
    """Every non-hidden file under `root`, sorted by the parts of the path relative to
    `root` (the id is that relative path with "/"), with links to folders and folders that
    cannot be read among them, already skipped."""
    found: list[tuple[tuple[str, ...], str, str | None]] = []
    real_root = os.path.realpath(root)

    def parts_of(path: str) -> tuple[str, ...]:
        relative = os.path.relpath(path, root)
        return () if relative == "." else tuple(relative.split(os.sep))

    def cannot_list(error: OSError) -> None:
        where = error.filename or os.fspath(root)
        reason = f"cannot read the folder: {error.strerror or _one_line(error)}"
        found.append((parts_of(where) or (".",), where, reason))

    for dirpath, dirnames, filenames in os.walk(root, onerror=cannot_list):
        parts = parts_of(dirpath)
        kept = []
        for name in dirnames:
            if name.startswith("."):
                continue
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                found.append(((*parts, name), path, _LINKED_FOLDER))
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            if not name.startswith("."):
                path = os.path.join(dirpath, name)
                found.append(((*parts, name), path, _link_reason(path, real_root)))
    found.sort(key=lambda item: item[0])
    return [("/".join(parts), Path(path), reason) for parts, path, reason in found]


_SPECIAL = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISDIR, "a folder"),
)


def _not_regular(mode: int) -> str | None:
    """What a file that is not a regular file is, for messages."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _SPECIAL if test(mode)), "not a regular file")


def _open_regular(path: Path, limits: ReadLimits) -> BinaryIO:
    """`path` opened for reading when it is a regular file within the size bound. Its kind
    and size come from `stat` first, so a FIFO or a device is never opened; the opened file
    is checked again (O_NONBLOCK: had a FIFO taken its place, opening it does not wait)."""

    def check(status: os.stat_result) -> None:
        kind = _not_regular(status.st_mode)
        if kind is not None:
            raise _Unreadable(f"not a regular file: {kind}")
        if status.st_size > limits.file_bytes:
            raise limits.refuse(megabytes(status.st_size), megabytes(limits.file_bytes))

    check(os.stat(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        check(os.fstat(descriptor))
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _check_root(path: str | os.PathLike[str]) -> list[Entry]:
    root = Path(path)
    try:
        mode = os.stat(root).st_mode
    except OSError:
        raise SynthUsageError(
            f"corpus not found: {os.fspath(path)!r}: expected a folder of documents or one "
            "file; check the path"
        ) from None
    if stat.S_ISDIR(mode):
        return _walk(root)
    kind = _not_regular(mode)
    if kind is not None:
        raise SynthUsageError(
            f"corpus {os.fspath(path)!r} is {kind}: expected a folder of documents or one "
            "file; give a folder or a regular file"
        )
    return [(root.name, root, None)]


_LICENSE_STEMS = frozenset({"license", "licence", "copying", "notice"})
_LICENSE_SKIP = (
    "a license file, not a document (to read it: --include-license; from Python, "
    "include_license=True)"
)


def is_license_file(name: str) -> bool:
    """LICENSE, LICENCE, COPYING or NOTICE, in any case, with any suffix (LICENSE.md)."""
    return name.split(".", 1)[0].lower() in _LICENSE_STEMS


def _read_all(
    files: list[Entry], limits: ReadLimits, include_license: bool = True
) -> Iterator[Document | Skipped]:
    for doc_id, file, reason in files:
        if reason is not None:
            yield Skipped(doc_id, reason)
            continue
        if not include_license and is_license_file(file.name):
            yield Skipped(doc_id, _LICENSE_SKIP)
            continue
        suffix = file.suffix.lower()
        reader = _reader_for(suffix)
        if reader is None:
            what = f"file type {suffix}" if suffix else "file without a suffix"
            yield Skipped(doc_id, f"unsupported {what}")
            continue
        kind, read = reader
        try:
            with _open_regular(file, limits) as handle:
                text = read(handle, file, limits)
        except Unreadable as exc:
            yield Skipped(doc_id, str(exc))
            continue
        except OSError as exc:
            yield Skipped(doc_id, f"cannot read: {exc.strerror or _one_line(exc)}")
            continue
        except Exception as exc:  # a third-party parser failing on one file skips only that file
            yield Skipped(doc_id, f"cannot read as {kind}: {type(exc).__name__}: {_one_line(exc)}")
            continue
        if not _HAS_WORD.search(text):
            hint = " (a scanned PDF needs OCR, which lasagna does not do)" if kind == "pdf" else ""
            yield Skipped(doc_id, f"empty: no text found{hint}")
            continue
        yield Document(doc_id, text, kind)


def iter_corpus(
    path: str | os.PathLike[str],
    *,
    include_license: bool = False,
    limits: ReadLimits | None = None,
) -> Iterator[Document | Skipped]:
    """Each file under `path` in sorted path order, read (a Document) or skipped, one at a
    time, so that a caller can chunk a document and let its text go. A missing path is
    refused at once, and so is a file whose reader is an extra that is not installed. A
    license file in a folder is skipped unless `include_license`; a file over `limits`
    (default: `current_read_limits()`) is skipped with its reason."""
    root = Path(path)
    if root.is_file() and root.suffix.lower() == ".jsonl":
        from lasagna_synth._langchain_corpus import iter_langchain_jsonl

        return iter_langchain_jsonl(root)
    files = _check_root(path)
    readable = [(i, f) for i, f, reason in files if reason is None]
    if not include_license and root.is_dir():
        # Before the extras check: a LICENSE.html must not ask for the documents extra.
        readable = [(i, f) for i, f in readable if not is_license_file(f.name)]
    _refuse_missing_extras(readable)
    chosen = limits if limits is not None else current_read_limits()
    return _read_all(files, chosen, include_license or not root.is_dir())


def load_corpus(
    path: str | os.PathLike[str],
    *,
    include_license: bool = False,
    limits: ReadLimits | None = None,
) -> Corpus:
    """Read every supported file under `path` (a folder, or one file); a license file in a
    folder only with `include_license`; files within `limits` (default:
    `current_read_limits()`)."""
    documents: list[Document] = []
    skipped: list[Skipped] = []
    for entry in iter_corpus(path, include_license=include_license, limits=limits):
        if isinstance(entry, Document):
            documents.append(entry)
        else:
            skipped.append(entry)
    return Corpus(os.fspath(path), tuple(documents), tuple(skipped))


def pdf_reader_identity() -> bytes:
    """Besides the file, what decides a PDF's extracted text: pdfminer's version and the
    source of lasagna-synth's loader and PDF reader. A cache of extracted texts keys on it
    (with the file's sha256), so an edited reader or a new pdfminer makes new keys."""
    from importlib.metadata import PackageNotFoundError, version

    from lasagna_synth import _limits, _pdf

    try:
        parts = [f"pdfminer.six {version('pdfminer.six')}".encode()]
    except PackageNotFoundError:
        parts = [b"pdfminer.six missing"]
    parts += [
        Path(str(module.__file__)).read_bytes() for module in (sys.modules[__name__], _pdf, _limits)
    ]
    return b"\x00".join(parts)
