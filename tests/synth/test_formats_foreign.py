"""Rows of RAGAS and DeepEval: each field read by its meaning, outputs kept apart, and
messages that never suggest a field of another meaning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lasagna_synth import (
    DataError,
    RecordedOutput,
    SynthUsageError,
    load_data,
    load_data_and_outputs,
)


def write_jsonl(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def problems_of(path: Path, **options: Any) -> list[str]:
    with pytest.raises(DataError) as caught:
        load_data(path, **options)
    return caught.value.problems


RAGAS_V02 = {
    "user_input": "When does the ferry leave?",
    "response": "At noon.",
    "retrieved_contexts": ["The ferry to Skerra leaves at noon.", "The harbour opens at dawn."],
    "reference": "at noon",
    "reference_contexts": ["The ferry to Skerra leaves at noon."],
}


def test_ragas_v02_outputs_are_never_references_or_gold(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "ragas.jsonl", RAGAS_V02, {**RAGAS_V02, "response": ""})
    data, outputs = load_data_and_outputs(path)
    first = data.rows()[0]
    assert first.question == "When does the ferry leave?"
    assert first.answers == ("at noon",)
    assert first.contexts == ("The ferry to Skerra leaves at noon.",)
    # the retrieved passages are not in the corpus: only the gold passage is
    assert list(data.corpus.values()) == ["The ferry to Skerra leaves at noon."]
    assert outputs == {
        "row1": RecordedOutput("At noon.", tuple(RAGAS_V02["retrieved_contexts"])),
        "row2": RecordedOutput("", tuple(RAGAS_V02["retrieved_contexts"])),  # "" is a refusal
    }
    notes = " | ".join(data.notes)
    assert "read as RAGAS v0.2+ rows (detected from its fields)" in notes
    assert "the question <- user_input" in notes and "reference answers <- reference" in notes
    assert "gold passages (what retrieval must find) <- reference_contexts" in notes
    assert "response (the system's answer" in notes and "retrieved_contexts (the system's" in notes
    assert "never read as references or gold passages" in notes and "in 2 rows" in notes
    assert load_data(path).rows() == data.rows()  # load_data reads the same rows


def test_ragas_v01_contexts_are_the_systems_retrievals(tmp_path: Path) -> None:
    row = {
        "question": "Who keeps the lighthouse?",
        "answer": "Mira Holt",
        "contexts": ["Mira Holt keeps Garrow Point lighthouse."],
        "ground_truths": ["Mira Holt", "Mira"],
        "ground_truth": "Mira Holt",
    }
    data, outputs = load_data_and_outputs(write_jsonl(tmp_path / "v01.jsonl", row))
    (read,) = data.rows()
    assert read.answers == ("Mira Holt", "Mira")  # ground_truth, then ground_truths, once each
    assert read.contexts == () and data.corpus == {}  # v0.1 has no gold passages
    assert not data.track_support()["retrieval"].supported
    assert outputs["row1"] == RecordedOutput("Mira Holt", tuple(row["contexts"]))
    assert data.notes[0].startswith("read as RAGAS v0.1 rows (detected from its fields)")


def test_a_ragas_v01_file_without_ground_truths_needs_the_format(tmp_path: Path) -> None:
    row = {"question": "Q?", "answer": "the model's answer", "contexts": ["retrieved text"]}
    path = write_jsonl(tmp_path / "v01.jsonl", row)
    # Its fields are lasagna's own, where they mean the reference and the gold passage...
    assert load_data(path).rows()[0].answers == ("the model's answer",)
    # ... so a RAGAS file of them is read as one when told.
    data, outputs = load_data_and_outputs(path, format="ragas")
    assert data.rows()[0].answers == () and data.rows()[0].contexts == ()
    assert outputs["row1"] == RecordedOutput("the model's answer", ("retrieved text",))
    assert 'as asked with format="ragas"' in data.notes[0]


def test_deepeval_goldens_and_test_cases(tmp_path: Path) -> None:
    rows = [
        {
            "input": "Which dish has a ragu?",
            "actual_output": "Lasagna",
            "expected_output": "lasagna",
            "context": ["Lasagna is layered with ragu."],
            "retrieval_context": ["Lasagna is layered with ragu.", "Pesto has basil."],
            "additional_metadata": {"topic": "pasta"},
            "name": "case-1",
        },
        {"input": "What is pesto made of?", "expected_output": "basil", "context": ["Pesto."]},
    ]
    data, outputs = load_data_and_outputs(write_jsonl(tmp_path / "goldens.jsonl", *rows))
    first, second = data.rows()
    assert (first.question, first.answers, first.contexts) == (
        "Which dish has a ragu?",
        ("lasagna",),
        ("Lasagna is layered with ragu.",),
    )
    assert first.metadata == {"name": "case-1", "topic": "pasta"}
    assert second.answers == ("basil",)
    assert outputs == {
        "row1": RecordedOutput("Lasagna", ("Lasagna is layered with ragu.", "Pesto has basil."))
    }
    assert data.notes[0].startswith("read as DeepEval goldens/test cases")
    assert "kept in metadata: name" in data.notes
    # DeepEval's own JSON file (save_as json) is an array of the same objects
    array = tmp_path / "goldens.json"
    array.write_text(json.dumps(rows), encoding="utf-8")
    assert load_data(array).rows() == data.rows()


def test_a_ragas_field_is_never_matched_to_a_lasagna_field_of_another_meaning(
    tmp_path: Path,
) -> None:
    # Read as lasagna's format, RAGAS's retrieved_contexts used to get 'did you mean
    # "contexts"?': following it would have made the system's retrievals gold passages.
    path = write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?", "retrieved_contexts": ["p"]})
    (problem,) = problems_of(path, format="lasagna")
    assert 'did you mean "contexts"' not in problem
    assert problem.startswith('qa.jsonl row 1: unknown field "retrieved_contexts" (')
    assert (
        "the system's retrieved passages (an output, not gold passages) in RAGAS v0.2+" in problem
    )
    assert 'format="ragas" (--data-format ragas on the command line)' in problem
    # A misspelt RAGAS field is the RAGAS field, not a look-alike of lasagna's.
    path = write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?", "retreived_contexts": ["p"]})
    (problem,) = problems_of(path)
    assert 'did you mean "contexts"' not in problem
    assert '(perhaps "retrieved_contexts": "retrieved_contexts" means the system' in problem
    # Inside a RAGAS file, lasagna's contexts means two things; both are said.
    path = write_jsonl(tmp_path / "qa.jsonl", {**RAGAS_V02, "contexts": ["p"]})
    (problem,) = problems_of(path)
    assert (
        'in RAGAS v0.2+ rows, gold passages: "reference_contexts", the system\'s retrieved '
        'passages: "retrieved_contexts"' in problem
    )
    # A plain typo still gets its did-you-mean, within the file's own format.
    path = write_jsonl(tmp_path / "qa.jsonl", {**RAGAS_V02, "referense": "x"})
    assert problems_of(path) == [
        'qa.jsonl row 1: unknown field "referense" (did you mean "reference"?); put fields of '
        'your own under "metadata"'
    ]


def test_messages_name_the_files_own_fields(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "goldens.jsonl",
        {"expected_output": "x", "actual_output": 3.5},
        {"input": "Q?", "context": "", "retrieval_context": [1]},
        {"input": "Q?", "additional_metadata": {"unanswerable": True}, "expected_output": "x"},
    )
    assert problems_of(path) == [
        'goldens.jsonl row 1: field "input" is missing',
        'goldens.jsonl row 2: field "retrieval_context" must be a list of strings (passage '
        "texts, best first), got list",
        'goldens.jsonl row 2: field "context" is empty',
        'goldens.jsonl row 3: "additional_metadata.unanswerable" is true, so the row cannot '
        "also have an answer",
    ]


def test_a_file_mixing_formats_is_refused_naming_both(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", RAGAS_V02, {"input": "Q?", "actual_output": "A"})
    (problem,) = problems_of(path)
    assert problem.startswith(
        "mixed.jsonl: the rows mix the fields of RAGAS v0.2+ rows (reference, "
        "reference_contexts, response, retrieved_contexts, user_input); DeepEval goldens/test "
        "cases (actual_output, input)"
    )
    assert 'format="deepeval" (--data-format deepeval on the command line)' in problem


def test_a_ragas_csv_says_to_export_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "ragas.csv"
    path.write_text("user_input,response,retrieved_contexts\nQ?,A,p\n", encoding="utf-8")
    (problem,) = problems_of(path)
    assert "are those of RAGAS v0.2+ rows" in problem and "export the rows as JSONL" in problem
    path.write_text("question,retrieved_contexts\nQ?,p\n", encoding="utf-8")
    (problem,) = problems_of(path)
    assert 'did you mean "contexts"' not in problem


def test_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "qa.jsonl", {"question": "Q?"})
    with pytest.raises(SynthUsageError, match="expected one of lasagna, ragas, deepeval, hf"):
        load_data(path, format="trulens")
    csv = tmp_path / "qa.csv"
    csv.write_text("question\nQ?\n", encoding="utf-8")
    with pytest.raises(SynthUsageError, match="reads JSONL, a JSON array of rows, Parquet"):
        load_data(csv, format="ragas")
