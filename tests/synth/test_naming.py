"""Dataset names: the same as lasagna-rag 0.1.0 prints for the same bytes.

Every expected name below was computed by running lasagna-rag 0.1.0's own
`read_local_data(...).benchmark_name(...)` (benchmarks/adapters/local_files.py, unmodified)
on exactly these bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lasagna_synth import load_data, passage_id

NOTES_JSONL = (
    b'{"id": 1, "question": "Who wrote it?", "answer": "Ada", "contexts": ["Ada wrote it in '
    b'1843."]}\n{"question": "When?", "answers": ["1843"], "contexts": ["Ada wrote it in 1843."]}\n'
)
FAQ_CSV = (
    b"question,answer,contexts\r\nWho wrote it?,Ada,Ada wrote it in 1843. ||| A second passage.\r\n"
)


def _tiny_beir(root: Path) -> Path:
    folder = root / "tiny-beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes(
        b'{"_id": "d1", "title": "T", "text": "alpha beta"}\n{"_id": "d2", "text": "gamma"}\n'
    )
    (folder / "queries.jsonl").write_bytes(b'{"_id": "q1", "text": "alpha"}\n')
    (folder / "qrels" / "test.tsv").write_bytes(b"q1\td1\t2\n")
    (folder / "qrels" / "dev.tsv").write_bytes(b"query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    return folder


def test_jsonl_name_is_stem_and_12_hex_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "notes.v2.jsonl"  # the stem keeps its inner dot, as lasagna-rag's does
    path.write_bytes(NOTES_JSONL)
    data = load_data(path)
    assert data.name() == "local/notes.v2@e367bc8ed5d5"
    assert data.revision == (
        "sha256:e367bc8ed5d5b1ad77d30c953de6031363862404074ce60586a4c184a62c7fa1"
    )


def test_csv_name_and_a_given_name_replacing_an_old_suffix(tmp_path: Path) -> None:
    path = tmp_path / "faq.csv"
    path.write_bytes(FAQ_CSV)
    data = load_data(path)
    assert data.name() == "local/faq@30160a3623d2"
    assert data.name("sweep-name@0123456789ab") == "sweep-name@30160a3623d2"
    assert data.name("mine") == "mine@30160a3623d2"


@pytest.mark.parametrize("suffix", ["", "/", "/."])
def test_beir_folder_name_covers_every_qrels_file(tmp_path: Path, suffix: str) -> None:
    folder = _tiny_beir(tmp_path)
    data = load_data(str(folder) + suffix)
    assert data.name() == "local/tiny-beir@13963b63f21e"
    assert data.files == ("corpus.jsonl", "queries.jsonl", "qrels/dev.tsv", "qrels/test.tsv")


def test_an_edited_file_is_a_different_benchmark(tmp_path: Path) -> None:
    path = tmp_path / "faq.csv"
    path.write_bytes(FAQ_CSV)
    before = load_data(path)
    path.write_bytes(FAQ_CSV.replace(b"Ada,", b"Ada Lovelace,"))
    after = load_data(path)
    assert before.name() != after.name()
    assert before.revision != after.revision


def test_editing_any_qrels_split_renames_the_folder(tmp_path: Path) -> None:
    folder = _tiny_beir(tmp_path)
    before = load_data(folder).name()
    (folder / "qrels" / "dev.tsv").write_bytes(b"q1\td2\t2\n")
    assert load_data(folder).name() != before


def test_pooled_passage_ids_match_lasagna_rag(tmp_path: Path) -> None:
    path = tmp_path / "notes.v2.jsonl"
    path.write_bytes(NOTES_JSONL)
    data = load_data(path)
    # The one passage both rows share is one document, relevant to each.
    assert list(data.corpus) == ["ctx-5a901ed7a046"]
    assert [(r.id, dict(r.judgments)) for r in data.rows()] == [
        ("1", {"ctx-5a901ed7a046": 1}),
        ("row2", {"ctx-5a901ed7a046": 1}),
    ]
    assert passage_id("A second passage.") == "ctx-662f609c08d0"


def test_beir_rows_and_text_match_lasagna_rag(tmp_path: Path) -> None:
    data = load_data(_tiny_beir(tmp_path))
    assert {s: [(r.id, dict(r.judgments)) for r in rows] for s, rows in data.splits.items()} == {
        "dev": [("q1", {"d2": 1})],
        "test": [("q1", {"d1": 2})],
    }
    assert dict(data.corpus) == {"d1": "T\n\nalpha beta", "d2": "gamma"}


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def test_the_example_data_names_are_lasagna_rags() -> None:
    # Computed with lasagna-rag 0.1.0 on the committed example files; if you edit an example,
    # its name changes by design: recompute it with lasagna-rag and update this test.
    assert load_data(EXAMPLES / "pasta.jsonl").name() == "local/pasta@b16e975f7950"
    assert load_data(EXAMPLES / "pasta.csv").name() == "local/pasta@bfc162ef3687"
    assert load_data(EXAMPLES / "pasta-beir").name() == "local/pasta-beir@31063d792100"
