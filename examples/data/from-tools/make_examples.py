"""Write the example files of other tools' formats from the pasta example, no download:

    uv run --group documents python examples/data/from-tools/make_examples.py

From examples/data/pasta.jsonl (the questions, references and gold passages) and
examples/systems/predictions.jsonl (one system's answers and retrieved passages):

- ragas-v0.2.jsonl: RAGAS v0.2+ samples: user_input, response, retrieved_contexts,
  reference, reference_contexts (with lasagna's id and metadata beside them);
- ragas-v0.1.jsonl: RAGAS v0.1 rows: question, answer (the system's), contexts (the
  system's retrieved passages), ground_truths;
- deepeval-test-cases.jsonl: DeepEval test cases: input, actual_output, expected_output,
  context (gold), retrieval_context (retrieved), additional_metadata;
- hf-ragas/: the RAGAS v0.2 rows as a Hugging Face dataset saved with `save_to_disk`
  (written by `datasets` itself; its random fingerprint in state.json replaced by the
  sha256 of the rows, so the same rows give the same bytes).

An unanswerable question has no reference, and `metadata.unanswerable: true` (RAGAS v0.1:
`ground_truths: []`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def _references(row: dict[str, Any]) -> list[str]:
    value = row.get("answers", row.get("answer"))
    return [] if value in (None, "") else value if isinstance(value, list) else [value]


def _texts(retrieved: list[str], passages: dict[str, str]) -> list[str]:
    """The predictions file names some passages by id (`expected_docs`); the other tools
    record retrieved passages as their texts."""
    return [passages.get(item, item) for item in retrieved]


def build() -> dict[str, list[dict[str, Any]]]:
    data = _jsonl(EXAMPLES / "data" / "pasta.jsonl")
    outputs = {p["id"]: p for p in _jsonl(EXAMPLES / "systems" / "predictions.jsonl")}
    passages = {
        name: text
        for row in data
        if "expected_docs" in row
        for name, text in zip(row["expected_docs"], row["contexts"], strict=True)
    }
    v02, v01, deepeval = [], [], []
    for row in data:
        out = {**outputs[row["id"]]}
        out["retrieved"] = _texts(out["retrieved"], passages)
        refs = _references(row)
        meta = row.get("metadata", {})
        sample: dict[str, Any] = {
            "id": row["id"],
            "user_input": row["question"],
            "response": out["answer"],
            "retrieved_contexts": out["retrieved"],
        }
        if refs:
            sample["reference"] = refs[0]
        sample["reference_contexts"] = row["contexts"]
        sample["metadata"] = meta
        v02.append(sample)
        v01.append(
            {
                "id": row["id"],
                "question": row["question"],
                "answer": out["answer"],
                "contexts": out["retrieved"],
                "ground_truths": refs,
                "metadata": meta,
            }
        )
        case: dict[str, Any] = {
            "id": row["id"],
            "input": row["question"],
            "actual_output": out["answer"],
        }
        if refs:
            case["expected_output"] = refs[0]
        case["context"] = row["contexts"]
        case["retrieval_context"] = out["retrieved"]
        case["additional_metadata"] = meta
        deepeval.append(case)
    return {"ragas-v0.2": v02, "ragas-v0.1": v01, "deepeval-test-cases": deepeval}


def write_hf(rows: list[dict[str, Any]], folder: Path) -> None:
    import datasets

    datasets.disable_progress_bars()
    # A table has every column in every row (and every key of a struct): the unanswerable
    # rows get reference null, the others metadata.unanswerable null.
    table = [{**r, "reference": r.get("reference")} for r in rows]
    if folder.exists():
        shutil.rmtree(folder)
    datasets.Dataset.from_list(table).save_to_disk(str(folder))
    state_path = folder / "state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    digest = hashlib.sha256(json.dumps(table, sort_keys=True).encode()).hexdigest()
    state["_fingerprint"] = digest[:16]
    state_path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    built = build()
    for name, rows in built.items():
        _write(HERE / f"{name}.jsonl", rows)
    write_hf(built["ragas-v0.2"], HERE / "hf-ragas")
    print(f"wrote {', '.join(built)} (.jsonl) and hf-ragas/ in {HERE}")


if __name__ == "__main__":
    main()
