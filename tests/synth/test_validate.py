"""Validation messages: every problem, each naming row and field, and what each track needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lasagna_synth import DataError, SynthError, SynthUsageError, load_data


def write_jsonl(path: Path, *records: dict[str, Any] | str) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(DataError) as caught:
        load_data(path)
    return caught.value.problems


def test_a_typo_is_an_error_with_a_did_you_mean(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?", "anwser": "A"})
    assert problems_of(path) == [
        'qa.jsonl row 1: unknown field "anwser" (did you mean "answer"?); put fields of your '
        'own under "metadata"'
    ]


def test_every_problem_of_every_row_is_listed(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q1?", "answer": "A"},
        {"qestion": "Q2?", "contxts": ["p"]},
        "not json",
        '["a list"]',
        {"question": "Q5?", "answer": "", "answers": ["x"]},
        {"question": 5, "id": True},
        {"question": "Q7?", "answer": "A", "metadata": {"unanswerable": True}},
        {"question": "Q8?", "metadata": {"unanswerable": "yes"}},
        {"question": "Q9?", "expected_docs": ["a"]},
        {"question": "Q10?", "contexts": ["p", ""], "expected_docs": ["a"]},
        {"id": "row1", "question": "Q11?"},
    )
    assert problems_of(path) == [
        'qa.jsonl row 2: unknown field "contxts" (did you mean "contexts"?); put fields of your '
        'own under "metadata"',
        'qa.jsonl row 2: unknown field "qestion" (did you mean "question"?); put fields of your '
        'own under "metadata"',
        'qa.jsonl row 2: field "question" is missing',
        "qa.jsonl row 3: not valid JSON (Expecting value at column 1)",
        "qa.jsonl row 4: must be a JSON object, got list",
        'qa.jsonl row 5: give "answer" or "answers", not both',
        'qa.jsonl row 5: field "answer" is empty; leave it out, or mark a question with no '
        'answer with "metadata": {"unanswerable": true}',
        'qa.jsonl row 6: field "question" must be a string, got number',
        'qa.jsonl row 6: field "id" must be a string or a whole number, got boolean',
        'qa.jsonl row 7: "metadata.unanswerable" is true, so the row cannot also have an answer',
        'qa.jsonl row 8: field "metadata.unanswerable" must be true or false, got string',
        'qa.jsonl row 9: "expected_docs" needs "contexts": contexts[i] is the text of '
        "expected_docs[i]; for judgments over a separate corpus, use a BEIR folder",
        'qa.jsonl row 10: field "contexts" item 2 is empty',
        'qa.jsonl row 11: id "row1" is also used by row 1',
    ]


def test_at_most_20_problems_are_shown_then_a_count(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "qa.jsonl", *({"question": "Q", "anser": "A"} for _ in range(23)))
    with pytest.raises(DataError) as caught:
        load_data(path)
    message = str(caught.value)
    lines = message.splitlines()
    assert lines[0] == "qa.jsonl: 23 problems; fix them and try again:"
    assert len(lines) == 1 + 20 + 1
    assert lines[-1] == "  ... and 3 more"
    assert lines[20].startswith("  qa.jsonl row 20:")
    assert len(caught.value.problems) == 23
    assert isinstance(caught.value, SynthError) and not isinstance(caught.value, SynthUsageError)


def test_expected_docs_must_pair_with_contexts(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q?", "contexts": ["p1", "p2"], "expected_docs": ["a"]},
        {"question": "Q?", "contexts": ["p1", "p2"], "expected_docs": ["a", "a"]},
    )
    assert problems_of(path) == [
        'qa.jsonl row 1: "expected_docs" names 1 documents but "contexts" has 2 passages; they '
        "pair up in order",
        'qa.jsonl row 2: "expected_docs" names the same document twice',
    ]


def test_csv_header_problems(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("question,anwser,context,unanswerable\nQ,A,P,yes\n", encoding="utf-8")
    assert problems_of(path) == [
        'qa.csv row 1: unknown column "anwser" (did you mean "answer"?); the columns are id, '
        "question, answer, contexts",
        'qa.csv row 1: unknown column "context" (did you mean "contexts"?); the columns are id, '
        "question, answer, contexts",
        'qa.csv row 1: unknown column "unanswerable"; CSV cannot mark a question unanswerable: '
        'use a JSONL file with "metadata": {"unanswerable": true}',
    ]
    path.write_text("q,a\nQ,A\n", encoding="utf-8")
    assert problems_of(path) == [
        "qa.csv row 1: the first row must be a header naming the columns (id, question, answer, "
        'contexts); it has "q", "a"'
    ]
    path.write_text("question,answer,question\nQ,A,B\n", encoding="utf-8")
    assert problems_of(path) == ['qa.csv row 1: column "question" is named twice']


def test_csv_row_problems(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(
        "id,question,contexts\n1,Q,a ||| ||| b\n2,,x\n3,Q\n1,Q,c\nQ\n", encoding="utf-8"
    )
    assert problems_of(path) == [
        'qa.csv row 2: column "contexts" has an empty passage between "|||" separators',
        'qa.csv row 3: column "question" is empty',
        "qa.csv row 4: has 2 cells, the header has 3",
        "qa.csv row 6: has 1 cell, the header has 3",
    ]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("qa.txt", b"", "qa.txt: cannot read .txt as benchmark data"),
        ("qa.jsonl", b"", "qa.jsonl: the file has no rows"),
        ("qa.jsonl", b"\xff\xfe{}", "qa.jsonl: not UTF-8 text (byte 0); save it as UTF-8"),
    ],
)
def test_unusable_files(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_data(path)


def test_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file or folder"):
        load_data(tmp_path / "nope.jsonl")


# ---------------------------------------------------------------------- track support


def support(path: Path) -> dict[str, tuple[bool, str]]:
    return {t: (s.supported, s.reason) for t, s in load_data(path).track_support().items()}


def test_rows_with_answers_and_contexts_support_every_track(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q?", "answer": "A", "contexts": ["p"]},
        {"question": "R?", "contexts": ["q"], "metadata": {"unanswerable": True}},
    )
    found = support(path)
    assert found["retrieval"][0] and "pooled_gold" in found["retrieval"][1]
    assert found["generation"] == (
        True,
        "1 question with answers and 1 unanswerable (a refusal is the right answer); the "
        "generator answers from the top-k retrieved passages",
    )
    assert found["closed-book"][0]


def test_no_contexts_means_no_retrieval_and_closed_book_generation(tmp_path: Path) -> None:
    found = support(write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?", "answer": "A"}))
    assert found["retrieval"] == (False, "no row has contexts, so there is nothing to retrieve")
    assert found["generation"][0] and "closed-book" in found["generation"][1]


def test_only_unanswerable_contexts_support_no_retrieval(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q?", "contexts": ["p"], "metadata": {"unanswerable": True}},
    )
    retrieval = load_data(path).track_support()["retrieval"]
    assert not retrieval.supported
    assert "unanswerable" in retrieval.reason and retrieval.fix


def test_questions_alone_support_nothing_but_say_why(tmp_path: Path) -> None:
    found = support(write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?"}))
    assert not any(ok for ok, _ in found.values())
    assert found["generation"][1] == 'no row has an "answer"'


def test_beir_supports_retrieval_only(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d", "text": "t"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q", "text": "t"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("q\td\t1\n", encoding="utf-8")
    found = support(folder)
    assert found["retrieval"] == (True, "1 query judged over a corpus of 1 document")
    assert found["generation"] == (False, "a BEIR folder has relevance judgments but no answers")
    assert not found["closed-book"][0]


def test_an_unanswerable_row_may_have_empty_answers(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q1?", "answers": [], "metadata": {"unanswerable": True}},
        {"question": "Q2?", "answer": "", "metadata": {"unanswerable": True}},
        {"question": "Q3?", "answers": ["A"]},
    )
    rows = load_data(path).rows()
    assert [(r.answers, r.unanswerable) for r in rows] == [((), True), ((), True), (("A",), False)]
    answerable = write_jsonl(tmp_path / "bad.jsonl", {"question": "Q?", "answers": []})
    assert problems_of(answerable) == ['bad.jsonl row 1: field "answers" is an empty list']


def test_a_fractional_id_is_named_as_such(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl", {"id": 1.5, "question": "Q?"}, {"id": 7, "question": "R?"}
    )
    assert problems_of(path) == [
        'qa.jsonl row 1: field "id" must be a string or a whole number, got 1.5'
    ]
