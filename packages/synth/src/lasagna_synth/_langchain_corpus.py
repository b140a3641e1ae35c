"""LangChain `Document`s as the corpus a question set is planned from.

A user's LangChain loaders already turn their files into `Document`s; `documents_to_corpus`
takes those objects (anything with `page_content` and `metadata`, so langchain-core is not
imported), and `load_corpus("docs.jsonl")` a JSONL of them, one
`{"page_content": "...", "metadata": {...}}` object per line (`id`, and LangChain's own
`"type": "Document"`, may stand beside them).

- A document's id is `metadata["source"]` (what LangChain's loaders set: the file path or
  URL), else the Document's `id`, else `document-<n>` (its position, from 1).
- Documents with the same id are one document, their texts joined in the order given with a
  blank line between them: the pages a PDF loader returns are one file, as when the folder
  reader reads it. (Chunks made with an overlap keep their overlap: give whole documents,
  since lasagna cuts its own passages.)
- A document with no text is listed as skipped, as an empty file is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from lasagna_metrics import parse_json
from lasagna_synth._corpus import Corpus, Document, Skipped
from lasagna_synth._errors import SynthError
from lasagna_synth._format_reading import json_type
from lasagna_synth._validate import DataError, did_you_mean

KIND = "langchain"
JSONL_FIELDS = ("page_content", "metadata", "id", "type")


def _fields(document: Any, where: str) -> tuple[str, Mapping[str, Any], Any]:
    """(page_content, metadata, id) of a Document or of its JSON object."""
    if isinstance(document, Mapping):
        text, metadata, doc_id = (
            document.get("page_content"),
            document.get("metadata"),
            document.get("id"),
        )
    else:
        text = getattr(document, "page_content", None)
        metadata, doc_id = getattr(document, "metadata", None), getattr(document, "id", None)
    if not isinstance(text, str):
        raise SynthError(
            f"{where}: expected a LangChain Document (page_content: a string), got "
            f"{type(document).__name__} with page_content {json_type(text)}"
        )
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        raise SynthError(f"{where}: metadata must be a mapping, got {json_type(metadata)}")
    return text, metadata, doc_id


def _entries(documents: Iterable[Any], label: str) -> Iterator[Document | Skipped]:
    texts: dict[str, list[str]] = {}
    for number, document in enumerate(documents, start=1):
        text, metadata, given_id = _fields(document, f"{label} document {number}")
        source = metadata.get("source")
        doc_id = next(
            (
                str(v).strip()
                for v in (source, given_id)
                if isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip()
            ),
            f"document-{number}",
        )
        texts.setdefault(doc_id, []).append(text)
    for doc_id, parts in texts.items():
        joined = "\n\n".join(part.strip() for part in parts if part.strip())
        if joined:
            yield Document(doc_id, joined, KIND)
        else:
            yield Skipped(doc_id, "empty: no text found")


def documents_to_corpus(documents: Iterable[Any], *, root: str = "LangChain documents") -> Corpus:
    """LangChain `Document`s (or their `{"page_content", "metadata"}` mappings) as a
    `Corpus`, for `plan(corpus, ...)` and `synthesize(corpus, ...)`; `root` names it in
    messages and the dry run."""
    entries = list(_entries(documents, root))
    return Corpus(
        root,
        tuple(e for e in entries if isinstance(e, Document)),
        tuple(e for e in entries if isinstance(e, Skipped)),
    )


def _jsonl_documents(path: Path) -> list[dict[str, Any]]:
    label = path.name
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            label, [f"{label}: not UTF-8 text (byte {exc.start}); save it as UTF-8"]
        ) from None
    except OSError as exc:
        raise SynthError(f"{label}: cannot read it ({exc.strerror})") from None
    problems: list[str] = []
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{label} line {number}"
        try:
            record = parse_json(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{where}: must be a JSON object, got {json_type(record)}")
            continue
        for key in sorted(set(record) - set(JSONL_FIELDS)):
            problems.append(
                f'{where}: unknown field "{key}"{did_you_mean(key, JSONL_FIELDS)}; a LangChain '
                'Document is {"page_content": "...", "metadata": {...}}'
            )
        if record.get("type", "Document") != "Document":
            problems.append(f'{where}: "type" is {record["type"]!r}; expected "Document"')
        if not isinstance(record.get("page_content"), str):
            found = json_type(record["page_content"]) if "page_content" in record else "nothing"
            problems.append(f'{where}: field "page_content" must be a string, got {found}')
        elif not isinstance(record.get("metadata", {}), dict):
            problems.append(
                f'{where}: field "metadata" must be an object, got {json_type(record["metadata"])}'
            )
        records.append(record)
    if not problems and not records:
        problems.append(f"{label}: the file has no documents")
    if problems:
        raise DataError(label, problems)
    return records


def iter_langchain_jsonl(path: str | os.PathLike[str]) -> Iterator[Document | Skipped]:
    """The documents of a JSONL of LangChain Documents; a bad line is a DataError naming it
    (raised here, before anything is planned)."""
    file = Path(path)
    return _entries(_jsonl_documents(file), file.name)
