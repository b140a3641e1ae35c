"""Hugging Face datasets as `datasets` itself writes them: save_to_disk folders (a Dataset,
a DatasetDict), Parquet, JSONL; and the one-line error when pyarrow is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lasagna_synth import RecordedOutput, SynthUsageError, load_data, load_data_and_outputs

ROWS = [
    {
        "user_input": "When does the ferry leave?",
        "response": "At noon.",
        "retrieved_contexts": ["The ferry leaves at noon.", "The harbour opens at dawn."],
        "reference": "at noon",
        "reference_contexts": ["The ferry leaves at noon."],
    },
    {
        "user_input": "Who keeps the lighthouse?",
        "response": None,  # a table has every column: null is "this row has none"
        "retrieved_contexts": None,
        "reference": "Mira Holt",
        "reference_contexts": ["Mira Holt keeps the lighthouse."],
    },
]


@pytest.fixture
def hf() -> Any:
    import datasets

    datasets.disable_progress_bars()
    return datasets


def test_a_dataset_saved_to_disk(tmp_path: Path, hf: Any) -> None:
    folder = tmp_path / "ferry-qa"
    hf.Dataset.from_list(ROWS).save_to_disk(str(folder))
    data, outputs = load_data_and_outputs(folder)
    assert data.kind == "hf" and list(data.splits) == ["test"]
    assert [(r.question, r.answers, r.contexts) for r in data.rows()] == [
        ("When does the ferry leave?", ("at noon",), ("The ferry leaves at noon.",)),
        ("Who keeps the lighthouse?", ("Mira Holt",), ("Mira Holt keeps the lighthouse.",)),
    ]
    assert outputs == {"row1": RecordedOutput("At noon.", tuple(ROWS[0]["retrieved_contexts"]))}
    assert data.name().startswith("local/ferry-qa@")
    assert (
        data.notes[0] == "read as a Hugging Face Dataset saved to disk: its rows are the split test"
    )
    assert data.notes[1].startswith("read as RAGAS v0.2+ rows (detected from its fields)")
    # the same rows from Parquet, from HF's JSONL export, and from one Arrow file
    hf.Dataset.from_list(ROWS).to_parquet(str(tmp_path / "ferry.parquet"))
    assert load_data(tmp_path / "ferry.parquet").rows() == data.rows()
    hf.Dataset.from_list(ROWS).to_json(str(tmp_path / "ferry.jsonl"))
    assert load_data(tmp_path / "ferry.jsonl").rows() == data.rows()
    arrow = next(folder.glob("*.arrow"))
    assert load_data(arrow).rows() == data.rows()
    # the name follows the bytes read: an edited Arrow file is another benchmark
    before = data.sha256
    hf.Dataset.from_list(ROWS[:1]).save_to_disk(str(tmp_path / "other"))
    assert load_data(tmp_path / "other").sha256 != before


def test_a_dataset_dict_keeps_its_splits_and_pools_one_corpus(tmp_path: Path, hf: Any) -> None:
    lasagna_rows = [
        {"id": "q1", "question": "Q1?", "answer": "A1", "contexts": ["shared passage"]},
        {"id": "q2", "question": "Q2?", "answer": "A2", "contexts": ["other passage"]},
    ]
    folder = tmp_path / "splits"
    hf.DatasetDict(
        {
            "train": hf.Dataset.from_list(lasagna_rows),
            "validation": hf.Dataset.from_list(lasagna_rows[:1]),
        }
    ).save_to_disk(str(folder))
    data = load_data(folder)
    assert {s: [r.id for r in rows] for s, rows in data.splits.items()} == {
        "train": ["q1", "q2"],
        "validation": ["q1"],
    }
    assert sorted(data.corpus.values()) == ["other passage", "shared passage"]
    assert "DatasetDict saved to disk: splits train, validation" in data.notes[0]
    assert data.track_support()["retrieval"].supported


def test_squad_columns_of_hugging_face(tmp_path: Path, hf: Any) -> None:
    rows = [
        {
            "id": "5733be284776f41900661182",
            "title": "University_of_Notre_Dame",
            "context": "Architecturally, the school has a Catholic character.",
            "question": "What character does the school have?",
            "answers": {"text": ["Catholic", "Catholic"], "answer_start": [34, 34]},
        },
        {
            "id": "impossible-1",
            "title": "University_of_Notre_Dame",
            "context": "Architecturally, the school has a Catholic character.",
            "question": "What is the school's motto?",
            "answers": {"text": [], "answer_start": []},
        },
    ]
    hf.Dataset.from_list(rows).to_parquet(str(tmp_path / "squad_v2.parquet"))
    first, second = load_data(tmp_path / "squad_v2.parquet").rows()
    assert first.answers == ("Catholic",) and first.contexts == (rows[0]["context"],)
    assert first.metadata == {"title": "University_of_Notre_Dame"}
    assert second.unanswerable and second.answers == ()


def test_without_pyarrow_the_error_names_the_extra(
    tmp_path: Path, hf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hf.Dataset.from_list(ROWS).to_parquet(str(tmp_path / "ferry.parquet"))
    import lasagna_synth._extras as extras

    real = extras.find_spec
    monkeypatch.setattr(extras, "find_spec", lambda n: None if n == "pyarrow" else real(n))
    with pytest.raises(SynthUsageError) as caught:
        load_data(tmp_path / "ferry.parquet")
    assert str(caught.value) == (
        "reading Parquet and Arrow files (Hugging Face datasets) needs the hf extra (pyarrow), "
        'which is not installed: pip install "lasagna-synth[hf]" (or "lasagna-cli[hf]"; in '
        "lasagna's own repository: uv run --group hf ...)"
    )
    # JSONL needs nothing
    hf.Dataset.from_list(ROWS).to_json(str(tmp_path / "ferry.jsonl"))
    assert len(load_data(tmp_path / "ferry.jsonl").rows()) == 2
