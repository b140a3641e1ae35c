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

Given one `.jsonl` file, the corpus is the LangChain Documents it holds, one
`{"page_content": ..., "metadata": {...}}` object per line (see `_langchain_corpus`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from lasagna_synth._corpus import Corpus, Document, Skipped
from lasagna_synth._errors import SynthUsageError

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
PDF_SUFFIXES = (".pdf",)


def _unstructured_suffixes() -> tuple[str, ...]:
    from lasagna_synth._unstructured import PARTITIONERS

    return tuple(PARTITIONERS)


def supported_suffixes() -> tuple[str, ...]:
    """Every file suffix the loader reads, sorted."""
    return tuple(sorted((*TEXT_SUFFIXES, *PDF_SUFFIXES, *_unstructured_suffixes())))


_HAS_WORD = re.compile(r"\S")


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Unreadable(
            f"not UTF-8 text (invalid byte at offset {exc.start}); re-save it as UTF-8"
        ) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


class _Unreadable(Exception):
    """A file that cannot be read, with the reason to show the user."""


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


def _reader_for(suffix: str) -> tuple[str, Callable[[Path], str]] | None:
    if suffix in TEXT_SUFFIXES:
        return "text", _read_text
    if suffix in PDF_SUFFIXES:
        from lasagna_synth._pdf import read_pdf

        return "pdf", read_pdf
    from lasagna_synth._unstructured import PARTITIONERS, read_with_unstructured

    if suffix in PARTITIONERS:
        return PARTITIONERS[suffix][2], read_with_unstructured
    return None


def _walk(root: Path) -> list[tuple[str, Path]]:
    """(id, path) of every non-hidden file under `root`, sorted by the parts of the path
    relative to `root`; the id is that relative path with "/"."""
    found: list[tuple[tuple[str, ...], str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        relative = os.path.relpath(dirpath, root)
        parts: tuple[str, ...] = () if relative == "." else tuple(relative.split(os.sep))
        found.extend(
            ((*parts, name), os.path.join(dirpath, name))
            for name in filenames
            if not name.startswith(".")
        )
    found.sort(key=lambda item: item[0])
    return [("/".join(parts), Path(path)) for parts, path in found]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _check_root(path: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    root = Path(path)
    if root.is_file():
        return [(root.name, root)]
    if root.is_dir():
        return _walk(root)
    raise SynthUsageError(
        f"corpus not found: {os.fspath(path)!r}: expected a folder of documents or one "
        "file; check the path"
    )


_LICENSE_STEMS = frozenset({"license", "licence", "copying", "notice"})
_LICENSE_SKIP = "a license file, not a document (include_license=True, --include-license, reads it)"


def is_license_file(name: str) -> bool:
    """LICENSE, LICENCE, COPYING or NOTICE, in any case, with any suffix (LICENSE.md)."""
    return name.split(".", 1)[0].lower() in _LICENSE_STEMS


def _read_all(
    files: list[tuple[str, Path]], include_license: bool = True
) -> Iterator[Document | Skipped]:
    for doc_id, file in files:
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
            text = read(file)
        except _Unreadable as exc:
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
    path: str | os.PathLike[str], *, include_license: bool = False
) -> Iterator[Document | Skipped]:
    """Each file under `path` in sorted path order, read (a Document) or skipped, one at a
    time, so that a caller can chunk a document and let its text go. A missing path is
    refused at once, and so is a file whose reader is an extra that is not installed. A
    license file in a folder is skipped unless `include_license`."""
    root = Path(path)
    if root.is_file() and root.suffix.lower() == ".jsonl":
        from lasagna_synth._langchain_corpus import iter_langchain_jsonl

        return iter_langchain_jsonl(root)
    files = _check_root(path)
    if not include_license and root.is_dir():
        # Before the extras check: a LICENSE.html must not ask for the documents extra.
        kept = [(i, f) for i, f in files if not is_license_file(f.name)]
        _refuse_missing_extras(kept)
    else:
        _refuse_missing_extras(files)
    return _read_all(files, include_license or not root.is_dir())


def load_corpus(path: str | os.PathLike[str], *, include_license: bool = False) -> Corpus:
    """Read every supported file under `path` (a folder, or one file); a license file in a
    folder only with `include_license`."""
    documents: list[Document] = []
    skipped: list[Skipped] = []
    for entry in iter_corpus(path, include_license=include_license):
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

    from lasagna_synth import _pdf

    try:
        parts = [f"pdfminer.six {version('pdfminer.six')}".encode()]
    except PackageNotFoundError:
        parts = [b"pdfminer.six missing"]
    parts += [Path(str(module.__file__)).read_bytes() for module in (sys.modules[__name__], _pdf)]
    return b"\x00".join(parts)
