"""The staged pipeline's index: the benchmark's passages, kept in the run folder.

gen builds it once (that is the "insertion" of OpenViking's report) and reuses it while the
benchmark's files and the corpus rule stay the same; del drops it. The passages are the
engine's corpus of the benchmark (`datasets.named_corpus`), the same through every door;
BM25 over them is rebuilt in memory, which takes well under a second for these corpora, so
only the passages are stored.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine.records._store import read_json, write_bytes_atomic, write_json_atomic
from lasagna_metrics import parse_json

INDEX_DIR = "index"
PASSAGES_FILE = "passages.jsonl"
MANIFEST_FILE = "manifest.json"


def _wanted(name: str, split: str, revision: str, rule: str) -> dict[str, Any]:
    return {"benchmark": name, "split": split, "data_revision": revision, "corpus": rule}


def load_index(
    out: Path, name: str, split: str, revision: str, rule: str
) -> tuple[Corpus, dict[str, Any]] | None:
    """The saved passages, when they were made from these files by this rule."""
    folder = out / INDEX_DIR
    manifest = read_json(folder / MANIFEST_FILE)
    if not isinstance(manifest, dict):
        return None
    if any(manifest.get(k) != v for k, v in _wanted(name, split, revision, rule).items()):
        return None
    texts: dict[str, str] = {}
    document_of: dict[str, str] = {}
    try:
        with (folder / PASSAGES_FILE).open(encoding="utf-8") as handle:
            for line in handle:
                record = parse_json(line)
                texts[record["id"]] = record["text"]
                document_of[record["id"]] = record["doc_id"]
    except (OSError, ValueError, KeyError):
        return None
    if len(texts) != manifest.get("passages"):
        return None
    corpus = Corpus(
        texts=texts,
        provenance="native",
        document_of=document_of,
        rule=rule,
        titled=name == "beir",
        cut=bool(manifest.get("cut")),
    )
    return corpus, manifest


def save_index(
    out: Path, name: str, split: str, revision: str, corpus: Corpus, documents: int
) -> dict[str, Any]:
    """Save the passages; the manifest goes last, as it marks the index complete."""
    lines = "".join(
        json.dumps({"id": i, "doc_id": corpus.document_of.get(i, i), "text": t}, ensure_ascii=False)
        + "\n"
        for i, t in corpus.texts.items()
    )
    folder = out / INDEX_DIR
    write_bytes_atomic(folder / PASSAGES_FILE, lines.encode("utf-8"))
    manifest = {
        **_wanted(name, split, revision, corpus.rule),
        "cut": corpus.cut,
        "documents": documents,
        "passages": len(corpus),
    }
    write_json_atomic(folder / MANIFEST_FILE, manifest)
    return manifest


def drop_index(out: Path) -> tuple[bool, float]:
    """Delete the run's index; (whether there was one, seconds taken)."""
    folder = out / INDEX_DIR
    started = time.perf_counter()
    existed = folder.exists()
    if existed:
        shutil.rmtree(folder)
    return existed, time.perf_counter() - started
