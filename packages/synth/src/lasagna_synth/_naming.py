"""Dataset names that carry their content, computed exactly as lasagna-rag 0.1.0 does.

A data file registers as `local/<stem>@<12 hex>`, the first twelve hex digits of the sha256
of its bytes; a BEIR folder as `local/<folder name>@<12 hex>`, of the files read from it
(corpus.jsonl, queries.jsonl, then every qrels/*.tsv in sorted order, each as its relative
path, a NUL byte and the sha256 of its bytes). Given a name, `<name>@<12 hex>` instead (an
`@<12 hex>` suffix already on the name is replaced, not doubled). The same bytes give the
same name in both tools, so results line up; an edited file gets a new name, so it is a new
benchmark and never resumes or shares a leaderboard group with the old one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

HASH_LENGTH = 12
_HASH_SUFFIX = re.compile(r"@[0-9a-f]{12}$")
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in chunks (a corpus may be large)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def folder_sha256(folder: Path, files: Iterable[Path]) -> str:
    """The digest of a BEIR folder over the files read from it, in the order given."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(bytes.fromhex(file_sha256(file)))
    return digest.hexdigest()


def dataset_name(path: Path, sha256: str, *, is_folder: bool, name: str | None = None) -> str:
    """`local/<stem>@<12 hex>`, or `<name>@<12 hex>` when a name is given.

    `path` should be resolved, so that `.` or a trailing slash names the real folder.
    """
    stem = path.name if is_folder else path.stem
    base = _HASH_SUFFIX.sub("", name) if name else f"local/{stem}"
    return f"{base}@{sha256[:HASH_LENGTH]}"


def passage_id(text: str) -> str:
    """A pooled passage named by its text: a passage several rows share is one document."""
    return "ctx-" + hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]
