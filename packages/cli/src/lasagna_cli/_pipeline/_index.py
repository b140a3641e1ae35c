"""The run's index: the benchmark's documents cut into passages, kept in the run folder.

gen builds it once (that is the "insertion" of OpenViking's report) and reuses it while the
benchmark's files and the chunking stay the same; del drops it. BM25 over the passages is
rebuilt in memory from the saved passages, which takes well under a second for these
corpora, so only the passages are stored.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lasagna_cli._pipeline._report import INDEX_DIR, sha256_json
from lasagna_cli._store import read_json, write_bytes_atomic, write_json_atomic

if TYPE_CHECKING:
    from lasagna_cli._retrieval import BM25Index
    from lasagna_cli.engine.benchmarks import LoadedBenchmark

CHUNKER: Literal["fixed"] = "fixed"
CHUNK_WORDS = 200
CHUNK_RULE = f"{CHUNKER} {CHUNK_WORDS}-word windows, no overlap (lasagna-synth chunker)"
PASSAGES_FILE = "passages.jsonl"
MANIFEST_FILE = "manifest.json"


def _file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def file_digests(bench: LoadedBenchmark) -> list[tuple[str, str]]:
    """(name, sha256 of the bytes) of every raw file read, in reading order."""
    return [(path.name, _file_sha256(path)) for path in bench.files]


def data_revision(bench: LoadedBenchmark, digests: list[tuple[str, str]] | None = None) -> str:
    """sha256 over the raw files read (names and bytes): an edited file is a new revision.
    `digests`: `file_digests(bench)` when already computed."""
    found = digests if digests is not None else file_digests(bench)
    return sha256_json([[name, digest] for name, digest in found])


@dataclass(frozen=True)
class Passages:
    ids: list[str]
    doc_ids: list[str]
    texts: list[str]
    manifest: dict[str, Any]

    @cached_property
    def position(self) -> dict[str, int]:
        return {passage_id: i for i, passage_id in enumerate(self.ids)}

    def bm25(self) -> BM25Index:
        from lasagna_cli._retrieval import BM25Index

        return BM25Index.build(self.ids, self.texts)


def _wanted(name: str, split: str, revision: str) -> dict[str, Any]:
    return {
        "benchmark": name,
        "split": split,
        "data_revision": revision,
        "chunker": CHUNKER,
        "chunk_words": CHUNK_WORDS,
    }


def load_index(out: Path, name: str, split: str, revision: str) -> Passages | None:
    """The saved passages, when they were built from these files with this chunking."""
    folder = out / INDEX_DIR
    manifest = read_json(folder / MANIFEST_FILE)
    if not isinstance(manifest, dict):
        return None
    wanted = _wanted(name, split, revision)
    if any(manifest.get(key) != value for key, value in wanted.items()):
        return None
    ids: list[str] = []
    doc_ids: list[str] = []
    texts: list[str] = []
    try:
        with (folder / PASSAGES_FILE).open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                ids.append(record["id"])
                doc_ids.append(record["doc_id"])
                texts.append(record["text"])
    except (OSError, ValueError, KeyError):
        return None
    if len(ids) != manifest.get("passages"):
        return None
    return Passages(ids, doc_ids, texts, manifest)


def chunk_benchmark(bench: LoadedBenchmark) -> tuple[list[str], list[str], list[str]]:
    """Every document cut into passages (fixed 200-word windows; a document too short for a
    window is one passage): their ids, their documents' ids and their texts, in corpus
    order. `benchmark run`'s sweep files search named benchmarks in the same passages."""
    from lasagna_synth import Document, chunk_document

    ids: list[str] = []
    doc_ids: list[str] = []
    texts: list[str] = []
    for doc in bench.documents:
        passages = chunk_document(Document(doc.id, doc.text, "text"), CHUNKER, CHUNK_WORDS)
        if not passages and doc.text.strip():
            # The chunker drops windows under 20 words; a short document stays searchable.
            ids.append(f"{doc.id}#0")
            doc_ids.append(doc.id)
            texts.append(doc.text.strip())
        for passage in passages:
            ids.append(passage.id)
            doc_ids.append(doc.id)
            texts.append(passage.text)
    return ids, doc_ids, texts


def build_index(out: Path, bench: LoadedBenchmark, revision: str) -> tuple[Passages, float]:
    """Chunk every document (`chunk_benchmark`) and save the passages. Returns them and the
    seconds it took."""
    started = time.perf_counter()
    ids, doc_ids, texts = chunk_benchmark(bench)
    lines = "".join(
        json.dumps({"id": i, "doc_id": d, "text": t}, ensure_ascii=False) + "\n"
        for i, d, t in zip(ids, doc_ids, texts, strict=True)
    )
    folder = out / INDEX_DIR
    write_bytes_atomic(folder / PASSAGES_FILE, lines.encode("utf-8"))
    manifest = {
        **_wanted(bench.name, bench.split, revision),
        "documents": len(bench.documents),
        "passages": len(ids),
    }
    # The manifest last: it is what marks the index as complete.
    write_json_atomic(folder / MANIFEST_FILE, manifest)
    return Passages(ids, doc_ids, texts, manifest), time.perf_counter() - started


def drop_index(out: Path) -> tuple[bool, float]:
    """Delete the run's index; (whether there was one, seconds taken)."""
    folder = out / INDEX_DIR
    started = time.perf_counter()
    existed = folder.exists()
    if existed:
        shutil.rmtree(folder)
    return existed, time.perf_counter() - started
