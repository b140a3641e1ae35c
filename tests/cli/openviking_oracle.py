"""OpenViking's RAG benchmark as the oracle of lasagna's drop-in: the real data laid out as
OpenViking's scripts read it, the cases checked, and the upstream code itself when the
mirror of volcengine/OpenViking is on this machine.

Run it as a script to derive the fixtures from the upstream code (needs the mirror):

    uv run python tests/cli/openviking_oracle.py

which writes tests/cli/fixtures/openviking/oracle/sampling.json: per case, the sha256 of
every file scripts/sample_dataset.py writes and its sampling_metadata.json. Only digests,
ids and counts are committed, never the data (its licences forbid copying it here).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "datasets"
MIRROR = Path(os.environ.get("OPENVIKING_MIRROR", "/work/.mirror/volcengine+OpenViking/repo"))
COMMIT = "6e944cc"
FIXTURE = Path(__file__).parent / "fixtures" / "openviking" / "oracle" / "sampling.json"

#: (dataset, sample_size, num_docs, mode, seed): run_sampling.py's four, then
#: sample_dataset.py's other paths. Left out: sizes smaller than the number of categories
#: with whole documents (the script fails), and Qasper samples that split its one
#: question with two answer types (the script's draw depends on the hash seed).
CASES: list[tuple[str, int | None, int | None, str, int]] = [
    ("Locomo", 80, 3, "stratified", 42),
    ("SyllabusQA", 90, 7, "stratified", 42),
    ("Qasper", 60, 8, "stratified", 42),
    ("FinanceBench", 12, 3, "stratified", 42),
    *[
        (name, size, docs, mode, seed)
        for name in ("Locomo", "SyllabusQA", "FinanceBench", "Qasper")
        for size, docs in ((None, None), (None, 2), (30, None), (30, 4), (7, 2), (500, 3))
        for mode in ("stratified", "random")
        for seed in (42, 7)
        if not (name == "Qasper" and (size, docs, mode, seed) == (7, 2, "stratified", 42))
        if (size, docs) != (None, None) or (mode, seed) == ("stratified", 42)
    ],
]


def case_id(case: tuple[Any, ...]) -> str:
    return "-".join(str(part) for part in case)


def build_raw(folder: Path) -> Path:
    """../shared/data as OpenViking's raw_data/: links to the files, and SyllabusQA's test
    split written as the CSV upstream distributes (the shared copy is its JSON form)."""
    raw = folder / "raw_data"
    links = {
        "Locomo/locomo10.json": SHARED / "locomo" / "locomo10.json",
        "SyllabusQA/data/dataset_split/val.csv": SHARED / "syllabusqa" / "val.csv",
        "SyllabusQA/syllabi/syllabi_redacted/text": SHARED / "syllabusqa" / "syllabi_text_test",
        "Qasper/qasper-train-v0.3.json": SHARED / "qasper" / "hf_dummy_qasper-train-v0.1.json",
        "Qasper/qasper-dev-v0.3.json": SHARED / "qasper" / "hf_dummy_qasper-dev-v0.1.json",
        "FinanceBench/data/financebench_open_source.jsonl": SHARED
        / "financebench"
        / "financebench_open_source.jsonl",
        "FinanceBench/pdfs": SHARED / "financebench" / "pdfs",
    }
    for name, target in links.items():
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        (raw / name).symlink_to(target)
    rows = json.loads((SHARED / "syllabusqa" / "test.json").read_text(encoding="utf-8"))
    test_csv = raw / "SyllabusQA" / "data" / "dataset_split" / "test.csv"
    with test_csv.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return raw


def digests(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def upstream(folder: Path) -> Path | None:
    """benchmark/RAG/ of the pinned commit, extracted from the mirror; None without it."""
    if not (MIRROR / "HEAD").exists():
        return None
    found = subprocess.run(
        ["git", "-C", str(MIRROR), "archive", COMMIT, "benchmark/RAG/src", "benchmark/RAG/scripts"],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        return None
    with tarfile.open(fileobj=BytesIO(found.stdout)) as archive:
        archive.extractall(folder, filter="data")
    return folder / "benchmark" / "RAG"


def run_upstream_sampler(rag: Path, raw: Path, out: Path, case: tuple[Any, ...]) -> None:
    name, size, docs, mode, seed = case
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from sample_dataset import sample_dataset;"
        f"ok = sample_dataset({name!r}, Path(sys.argv[2]), Path(sys.argv[3]), sample_size={size},"
        f" num_docs={docs}, seed={seed}, sample_mode={mode!r}); sys.exit(0 if ok else 3)"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(rag / "scripts"), str(raw / name), str(out)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rag = upstream(folder / "upstream")
        if rag is None:
            sys.exit(f"no mirror of OpenViking at {MIRROR}")
        raw = build_raw(folder)
        derived = {}
        for case in CASES:
            out = folder / "out" / case_id(case)
            run_upstream_sampler(rag, raw, out, case)
            metadata = json.loads((out / "sampling_metadata.json").read_text(encoding="utf-8"))
            derived[case_id(case)] = {"files": digests(out), "metadata": metadata}
    FIXTURE.write_text(json.dumps(derived, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(derived)} cases -> {FIXTURE}")


if __name__ == "__main__":
    main()
