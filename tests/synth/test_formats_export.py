"""A question set written as RAGAS rows or DeepEval goldens, and read back; the examples of
other tools' formats read with the right meaning per field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lasagna_synth import (
    SynthUsageError,
    load_data,
    load_data_and_outputs,
    to_deepeval,
    to_ragas,
    write_jsonl,
    write_rows,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FROM_TOOLS = EXAMPLES / "data" / "from-tools"


def synthesized() -> list[dict[str, Any]]:
    """Rows as `synthesize` returns them (see make_row): one of each type."""

    def meta(kind: str, docs: list[str]) -> dict[str, Any]:
        return {
            "question_type": kind,
            "source_doc_ids": docs,
            "passage_ids": [f"{d}#0" for d in docs],
            "prompt_id": f"{kind}-v1",
            "prompt_sha256": "0" * 64,
            "model": "local/smollm2",
            "seed": 42,
            "synthetic": True,
            "unanswerable": kind == "unanswerable",
        }

    ferry = "The ferry to Skerra leaves the harbour at noon every day except Sunday."
    light = "Mira Holt has kept the Garrow Point lighthouse since the storm of 1998."
    return [
        {
            "id": "synth-0001",
            "question": "When does the ferry leave?",
            "answer": "at noon",
            "contexts": [ferry],
            "metadata": meta("factoid", ["ferry.md"]),
        },
        {
            "id": "synth-0002",
            "question": "Who keeps the lighthouse the ferry passes?",
            "answer": "Mira Holt",
            "contexts": [ferry, light],
            "metadata": meta("multihop", ["ferry.md", "light.md"]),
        },
        {
            "id": "synth-0003",
            "question": "How much does the ferry ticket cost?",
            "contexts": [ferry],
            "metadata": meta("unanswerable", ["ferry.md"]),
        },
    ]


@pytest.mark.parametrize("fmt", ["ragas", "deepeval"])
def test_a_synthesized_set_reads_back_identically(tmp_path: Path, fmt: str) -> None:
    rows = synthesized()
    ours = load_data(write_jsonl(rows, tmp_path / "set.jsonl"))
    data, outputs = load_data_and_outputs(write_rows(rows, tmp_path / f"{fmt}.jsonl", format=fmt))
    assert data.rows() == ours.rows()
    assert data.corpus == ours.corpus
    assert outputs == {}  # a question set holds no system output


def test_the_rows_written_for_each_tool() -> None:
    factoid, _, unanswerable = synthesized()
    assert list(to_ragas(factoid)) == [
        "id",
        "user_input",
        "reference",
        "reference_contexts",
        "metadata",
    ]
    assert "reference" not in to_ragas(unanswerable)
    assert to_ragas(unanswerable)["metadata"]["unanswerable"] is True
    golden = to_deepeval(factoid)
    assert list(golden) == ["id", "input", "expected_output", "context", "additional_metadata"]
    assert golden["context"] == factoid["contexts"]
    # RAGAS takes one reference: with several, the first, and all in metadata.references
    several = to_ragas({"question": "Q?", "answers": ["a", "b"], "context": "p"})
    assert several == {
        "user_input": "Q?",
        "reference": "a",
        "reference_contexts": ["p"],
        "metadata": {"references": ["a", "b"]},
    }


def test_lasagna_format_is_write_jsonl_and_unknown_formats_are_refused(tmp_path: Path) -> None:
    rows = synthesized()
    write_jsonl(rows, tmp_path / "a.jsonl")
    write_rows(rows, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    with pytest.raises(SynthUsageError, match="expected one of lasagna, ragas, deepeval"):
        write_rows(rows, tmp_path / "c.jsonl", format="trulens")


def test_the_examples_are_what_their_script_writes(tmp_path: Path) -> None:
    script = FROM_TOOLS / "make_examples.py"
    code = (
        "import runpy, sys; from pathlib import Path; "
        f"m = runpy.run_path({str(script)!r}); "
        f"built = m['build'](); out = Path({str(tmp_path)!r}); "
        "[m['_write'](out / f'{n}.jsonl', r) for n, r in built.items()]; "
        "m['write_hf'](built['ragas-v0.2'], out / 'hf-ragas')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    for name in ("ragas-v0.2.jsonl", "ragas-v0.1.jsonl", "deepeval-test-cases.jsonl"):
        assert (tmp_path / name).read_bytes() == (FROM_TOOLS / name).read_bytes(), name
    for name in ("state.json", "dataset_info.json", "data-00000-of-00001.arrow"):
        written = (tmp_path / "hf-ragas" / name).read_bytes()
        assert written == (FROM_TOOLS / "hf-ragas" / name).read_bytes(), name


def test_the_examples_read_with_the_right_meaning_per_field() -> None:
    pasta = load_data(EXAMPLES / "data" / "pasta.jsonl")
    predictions = [
        json.loads(line)
        for line in (EXAMPLES / "systems" / "predictions.jsonl").read_text("utf-8").splitlines()
    ]
    # the predictions file names pasta-dough by its id; the other tools record passage texts
    named = {d: pasta.corpus[d] for d in pasta.corpus if not d.startswith("ctx-")}
    system = {
        p["id"]: (p["answer"], tuple(named.get(item, item) for item in p["retrieved"]))
        for p in predictions
    }

    def references(data: Any) -> list[tuple[str, str, tuple[str, ...]]]:
        return [(r.id, r.question, r.answers[:1]) for r in data.rows()]

    def relevant(data: Any) -> list[list[str]]:
        return [[data.corpus[d] for d in r.relevant] for r in data.rows()]

    for name in ("ragas-v0.2.jsonl", "deepeval-test-cases.jsonl", "hf-ragas"):
        data, outputs = load_data_and_outputs(FROM_TOOLS / name)
        assert references(data) == references(pasta), name
        # gold passages are pasta's contexts: the same pooled passages, relevant to the same
        # questions (pasta names one by expected_docs, which these formats do not have)
        assert sorted(data.corpus.values()) == sorted(pasta.corpus.values()), name
        assert relevant(data) == relevant(pasta), name
        assert [r.unanswerable for r in data.rows()] == [r.unanswerable for r in pasta.rows()]
        assert {i: (o.answer, o.retrieved) for i, o in outputs.items()} == system, name
    v01, outputs = load_data_and_outputs(FROM_TOOLS / "ragas-v0.1.jsonl")
    assert [r.answers for r in v01.rows()] == [r.answers for r in pasta.rows()]
    assert v01.corpus == {}  # its contexts are the system's retrievals, not gold passages
    assert {i: (o.answer, o.retrieved) for i, o in outputs.items()} == system
    # Runnable as validate-data says: the HF folder is named by its folder
    assert load_data(FROM_TOOLS / "hf-ragas").name().startswith("local/hf-ragas@")
