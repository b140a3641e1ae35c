"""Reading JSONL, CSV, BEIR folders and SQuAD JSON into benchmark rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lasagna_synth import DataError, SynthUsageError, load_data, passage_id


def write_jsonl(path: Path, *records: dict[str, Any] | str) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- JSONL


def test_jsonl_reads_every_documented_field(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q1?", "answer": "A1", "contexts": ["P1", "P2"]},
        "",  # a blank line is skipped, and numbering follows the file's lines
        {"id": 7, "question": "Q2?", "answers": ["A2", "a two"], "context": "P2"},
        {"id": "x", "question": " Q3? ", "answer": 1912, "metadata": {"question_type": "fact"}},
        {"question": "Q4?", "answers": "only one"},
    )
    rows = load_data(path).rows()
    assert [r.id for r in rows] == ["row1", "7", "x", "row5"]
    assert rows[0].answers == ("A1",)
    assert rows[1].answers == ("A2", "a two")
    assert rows[2].question == "Q3?"
    assert rows[2].answers == ("1912",)
    assert rows[2].metadata == {"question_type": "fact"}
    assert rows[3].answers == ("only one",)
    assert rows[1].contexts == ("P2",)


def test_jsonl_pools_contexts_shared_passages_once(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q1?", "answer": "A", "contexts": ["shared", "only one"]},
        {"question": "Q2?", "answer": "B", "contexts": ["shared"]},
        {"question": "Q3?", "contexts": ["lonely"], "metadata": {"unanswerable": True}},
        {"question": "Q4?", "answer": "", "metadata": {"unanswerable": True}},
    )
    data = load_data(path)
    shared, only, lonely = passage_id("shared"), passage_id("only one"), passage_id("lonely")
    assert list(data.corpus) == [shared, only, lonely]
    rows = data.rows()
    assert dict(rows[0].judgments) == {shared: 1, only: 1}
    assert dict(rows[1].judgments) == {shared: 1}
    # An unanswerable row's passage joins the pool but is relevant to nothing.
    assert rows[2].unanswerable and dict(rows[2].judgments) == {}
    assert rows[3].unanswerable and rows[3].answers == ()
    assert data.corpus_provenance == "pooled_gold"


def test_expected_docs_name_the_passages(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q1?", "answer": "A", "contexts": ["t1", "t2"], "expected_docs": ["a", "b"]},
        {"question": "Q2?", "answer": "B", "contexts": ["t1"], "expected_docs": ["a"]},
    )
    data = load_data(path)
    assert dict(data.corpus) == {"a": "t1", "b": "t2"}
    assert dict(data.rows()[1].judgments) == {"a": 1}


def test_a_document_name_with_two_texts_is_an_error(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q1?", "answer": "A", "contexts": ["t1"], "expected_docs": ["a"]},
        {"question": "Q2?", "answer": "B", "contexts": ["t2"], "expected_docs": ["a"]},
    )
    with pytest.raises(
        DataError,
        match='row 2: field "expected_docs" names document "a", whose text in "contexts" differs '
        "from row 1's",
    ):
        load_data(path)


def test_jsonl_lines_split_on_newline_only(tmp_path: Path) -> None:
    # U+2028 and U+0085 may stand inside JSON strings; str.splitlines() would cut there.
    path = tmp_path / "qa.jsonl"
    record = {"question": "Q\u2028one?", "answer": "A\x85B", "contexts": ["x\u2029y"]}
    path.write_bytes(("\ufeff" + json.dumps(record, ensure_ascii=False) + "\r\n").encode("utf-8"))
    rows = load_data(path).rows()
    assert len(rows) == 1 and rows[0].answers == ("A\x85B",)


def test_rows_without_contexts_have_no_corpus(tmp_path: Path) -> None:
    data = load_data(write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?", "answer": "A"}))
    assert data.corpus == {} and data.corpus_provenance == "none"


def test_filter_values_are_plain_metadata_and_unanswerable(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {
            "question": "Q?",
            "answer": "A",
            "metadata": {"question_type": "multihop", "n": 2, "tags": ["x"]},
        },
    )
    data = load_data(path)
    assert data.filterable() == {
        "n": ["2"],
        "question_type": ["multihop"],
        "unanswerable": ["false"],
    }


# ------------------------------------------------------------------------------- CSV


def test_csv_splits_passages_on_triple_bars(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(
        'id,question,answer,contexts\nq1,Who?,Ada,"first ||| second"\n\n,What?,,\n'
        ',"Multi\nline?",X,third\n',
        encoding="utf-8",
    )
    data = load_data(path)
    rows = data.rows()
    assert [r.id for r in rows] == ["q1", "row4", "row5"]
    assert rows[0].contexts == ("first", "second")
    assert rows[1].answers == () and rows[1].contexts == ()
    assert rows[2].question == "Multi\nline?"
    assert list(data.corpus) == [passage_id(t) for t in ("first", "second", "third")]
    assert not any(r.unanswerable for r in rows)  # CSV cannot mark a question unanswerable


def test_csv_column_order_is_free_and_only_question_is_needed(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("question\nWho?\n", encoding="utf-8")
    assert load_data(path).rows()[0].question == "Who?"


# ------------------------------------------------------------------------------ BEIR


def make_beir(
    root: Path,
    *,
    corpus: list[dict[str, Any]] | None = None,
    queries: list[dict[str, Any]] | None = None,
    qrels: str = "q1\td1\t1\n",
    split: str = "test",
) -> Path:
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus = corpus or [{"_id": "d1", "text": "one"}, {"_id": "d2", "title": "Two", "text": "2"}]
    queries = queries or [{"_id": "q1", "text": "first"}, {"_id": "q2", "text": "second"}]
    write_jsonl(folder / "corpus.jsonl", *corpus)
    write_jsonl(folder / "queries.jsonl", *queries)
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return folder


def test_beir_graded_judgments_with_or_without_header(tmp_path: Path) -> None:
    for qrels in (
        "q1\td1\t2\nq1\td2\t1\nq2\td2\t0\n",
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td2\t0\n",
    ):
        folder = make_beir(tmp_path, qrels=qrels)
        data = load_data(folder)
        rows = data.rows("test")
        # q2 has no relevant document, so it is not asked; the reason is kept as a note.
        assert [(r.id, dict(r.judgments)) for r in rows] == [("q1", {"d1": 2, "d2": 1})]
        assert "queries with no relevant document are not asked: 1 of 2" in data.notes[0]
        assert data.corpus["d2"] == "Two\n\n2"
        assert data.corpus_provenance == "native"


def test_beir_missing_documents_and_queries_are_errors_with_count_and_ids(
    tmp_path: Path,
) -> None:
    qrels = "q1\td1\t1\nq1\tgone1\t1\nq9\td1\t1\nq8\tgone2\t0\n"
    folder = make_beir(tmp_path, qrels=qrels)
    with pytest.raises(DataError) as caught:
        load_data(folder)
    problems = caught.value.problems
    assert problems[0].startswith(
        "beir/qrels/test.tsv: 2 judged document ids are not in corpus.jsonl, for example "
        '"gone1", "gone2"'
    )
    assert problems[1].startswith(
        'beir/qrels/test.tsv: 2 judged query ids are not in queries.jsonl, for example "q9", "q8"'
    )
    assert "--drop-unknown-judgments" in problems[0]


def test_beir_unknown_judgments_can_be_dropped_and_counted(tmp_path: Path) -> None:
    folder = make_beir(tmp_path, qrels="q1\td1\t1\nq1\tgone\t1\nq9\td1\t1\n")
    data = load_data(folder, drop_unknown_judgments=True)
    assert [(r.id, dict(r.judgments)) for r in data.rows()] == [("q1", {"d1": 1})]
    assert data.notes[0].startswith("beir/qrels/test.tsv: dropped 2 judgments naming 1 document id")


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (
            "q1\td1\n",
            "row 1: needs three tab-separated columns (query-id, corpus-id, score), got 2",
        ),
        ("q1\td1\thigh\n", 'row 1: score must be a whole number, got "high"'),
        ("q1\td1\t1\nq1\td1\t2\n", "were judged 1 in row 1 and 2 here"),
        ("q1\td1\t0\n", "no judgment has a score above 0"),
    ],
)
def test_bad_qrels_rows_are_named(tmp_path: Path, qrels: str, message: str) -> None:
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_data(make_beir(tmp_path, qrels=qrels))


def test_beir_folder_missing_files(tmp_path: Path) -> None:
    # Not a BEIR folder: a wrong path (usage), as the named door says of it.
    (tmp_path / "empty").mkdir()
    match = r"missing corpus\.jsonl, queries\.jsonl, qrels/test\.tsv\. Download"
    with pytest.raises(SynthUsageError, match=match):
        load_data(tmp_path / "empty")


def test_beir_bad_corpus_rows(tmp_path: Path) -> None:
    folder = make_beir(
        tmp_path,
        corpus=[
            {"_id": "d1", "text": "one"},
            {"_id": "d1", "text": "again"},
            {"text": "no id"},
            {"_id": "d3", "text": ""},
        ],
    )
    with pytest.raises(DataError) as caught:
        load_data(folder)
    assert caught.value.problems[:3] == [
        'beir/corpus.jsonl row 2: document id "d1" is used twice',
        'beir/corpus.jsonl row 3: field "_id" is missing',
        'beir/corpus.jsonl row 4: document "d3" has no text and no title',
    ]


def test_beir_splits_come_from_the_qrels_file_names(tmp_path: Path) -> None:
    folder = make_beir(tmp_path)
    (folder / "qrels" / "dev.tsv").write_text("q2\td2\t1\n", encoding="utf-8")
    data = load_data(folder)
    assert sorted(data.splits) == ["dev", "test"]
    assert [r.id for r in data.rows("dev")] == ["q2"]


# ----------------------------------------------------------------------------- SQuAD


def squad(*paragraphs: dict[str, Any]) -> dict[str, Any]:
    return {"version": "v2.0", "data": [{"title": "Pasta", "paragraphs": list(paragraphs)}]}


def test_squad_v2_json_becomes_rows(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    doc = squad(
        {
            "context": "Lasagna is baked.",
            "qas": [
                {
                    "id": "a",
                    "question": "Is it baked?",
                    "is_impossible": False,
                    "answers": [
                        {"text": "yes", "answer_start": 0},
                        {"text": "yes", "answer_start": 0},
                        {"text": "baked", "answer_start": 11},
                    ],
                },
                {
                    "id": "b",
                    "question": "When?",
                    "is_impossible": True,
                    "answers": [],
                    "plausible_answers": [{"text": "now", "answer_start": 0}],
                },
            ],
        }
    )
    path.write_text(json.dumps(doc), encoding="utf-8")
    data = load_data(path)
    assert data.kind == "squad" and data.name().startswith("local/dev@")
    a, b = data.rows()
    assert a.answers == ("yes", "baked") and a.metadata == {"title": "Pasta"}
    assert b.unanswerable and b.answers == ()
    assert list(data.corpus) == [passage_id("Lasagna is baked.")]
    assert dict(a.judgments) == {passage_id("Lasagna is baked."): 1}
    assert dict(b.judgments) == {}


def test_squad_problems_are_located(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    doc = squad(
        {
            "context": "C",
            "qas": [
                {"id": "a", "question": "", "answers": []},
                {"id": "b", "question": "Q", "answers": []},
            ],
        }
    )
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_data(path)
    assert caught.value.problems == [
        'dev.json data[0].paragraphs[0].qas[0] (id "a"): field "question" must be a non-empty '
        "string",
        'dev.json data[0].paragraphs[0].qas[1] (id "b"): no answers, and "is_impossible" is not '
        "true",
    ]


def test_squad_question_ids_may_be_whole_numbers(tmp_path: Path) -> None:
    # Haystack numbers its SQuAD questions; the ids become their decimal strings.
    path = tmp_path / "numbered.json"
    qas = [
        {"id": 7211011040021040393, "question": "Who?", "answers": [{"text": "Carla"}]},
        {"id": -57, "question": "What?", "answers": [{"text": "This"}]},
    ]
    path.write_text(json.dumps(squad({"context": "Carla lives here.", "qas": qas})), "utf-8")
    assert [row.id for row in load_data(path).rows()] == ["7211011040021040393", "-57"]
    qas[1]["id"] = 1.5
    path.write_text(json.dumps(squad({"context": "Carla lives here.", "qas": qas})), "utf-8")
    with pytest.raises(DataError) as caught:
        load_data(path)
    assert caught.value.problems == [
        'numbered.json data[0].paragraphs[0].qas[1]: field "id" must be a non-empty string or '
        "a whole number, got 1.5"
    ]


def test_a_json_file_that_is_not_squad(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    # A JSON array of row objects (DeepEval's goldens file) is read as rows.
    path.write_text('[{"question": "Q"}, 3]', encoding="utf-8")
    with pytest.raises(DataError, match=r"rows\.json item 2: must be a JSON object, got number"):
        load_data(path)
    path.write_text('[{"question": "Q"}]', encoding="utf-8")
    assert [r.question for r in load_data(path).rows()] == ["Q"]
    assert load_data(path).kind == "json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(DataError, match=r"\[articles\]\}\), got \{\}; for your own rows"):
        load_data(path)
    path.write_text('{"rows": [], "version": 2}', encoding="utf-8")
    with pytest.raises(DataError, match="got an object with keys rows, version; for your own"):
        load_data(path)


# ------------------------------------------------------------------------- real data

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "datasets"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not present")


@needs_shared
def test_real_beir_sets() -> None:
    msmarco = load_data(SHARED / "beir" / "msmarco")
    assert (len(msmarco.corpus), len(msmarco.rows("test"))) == (5000, 43)
    dbpedia = load_data(SHARED / "beir" / "dbpedia")
    assert (len(dbpedia.corpus), len(dbpedia.rows("test"))) == (5000, 40)
    assert dbpedia.name() == "local/dbpedia@6031441ea236"  # lasagna-rag 0.1.0 prints this
    # arcd's qrels judge 702 queries of which queries.jsonl holds 50, and 6 absent documents.
    with pytest.raises(DataError) as caught:
        load_data(SHARED / "beir" / "arcd")
    assert [p.split(",")[0] for p in caught.value.problems] == [
        "arcd/qrels/test.tsv: 6 judged document ids are not in corpus.jsonl",
        "arcd/qrels/test.tsv: 652 judged query ids are not in queries.jsonl",
    ]
    arcd = load_data(SHARED / "beir" / "arcd", drop_unknown_judgments=True)
    assert (len(arcd.corpus), len(arcd.rows("test"))) == (255, 49)


@needs_shared
def test_real_squad_subset() -> None:
    data = load_data(SHARED / "squad" / "haystack_small.json")
    rows = data.rows()
    assert len(rows) == 626
    assert sum(r.unanswerable for r in rows) == 333
    assert sum(1 for r in rows if r.relevant) == 293
