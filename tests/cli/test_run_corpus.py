"""`benchmark run QUESTIONS --corpus DOCS`: the questions searched in a folder of documents,
each setup chunking it its own way, judged by where the evidence sits in the documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app


def words(stem: str, n: int) -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


def corpus_and_questions(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    texts = {name: words(name, 300) for name in ("harbour", "lighthouse", "ferry")}
    for name, text in texts.items():
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
    (docs / "LICENSE").write_text(words("legal", 100), encoding="utf-8")
    rows = [
        {
            "id": "q1",
            "question": "harbour120 harbour121?",
            "answer": "a",
            "contexts": [" ".join(f"harbour{i}" for i in range(110, 140))],
        },
        {
            "id": "q2",
            "question": "ferry250 ferry251?",
            "answer": "b",
            "contexts": [" ".join(f"ferry{i}" for i in range(190, 260))],
        },
        {
            "id": "q3",
            "question": "something else?",
            "answer": "c",
            "contexts": ["a passage that is in no document"],
        },
    ]
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return docs, data


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", *args])


def results(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


def test_a_run_with_a_corpus_searches_its_documents_and_says_so(tmp_path: Path) -> None:
    docs, data = corpus_and_questions(tmp_path)
    out = tmp_path / "run"
    done = invoke("run", str(data), "--corpus", str(docs), "--chunk-size", "50", "-o", str(out))
    assert done.exit_code == 0, done.output
    assert "documents)" in done.output  # the leaderboard's title: the corpus provenance
    (result,) = results(out)
    dataset = result["dataset"]
    assert dataset["corpus_provenance"] == "documents"
    assert dataset["corpus"]["documents"] == 3  # LICENSE is not a document
    assert dataset["documents"] == 18  # 3 x 300 words in 50-word passages
    assert any("located 2 of 3 rows" in note for note in dataset["notes"])
    assert result["held_fixed"]["corpus"]["sha256"] == dataset["corpus"]["sha256"]
    assert result["setup"]["retriever"]["chunk_size"] == 50
    by_id = {q["id"]: q for q in result["per_query"]}
    # words 110-139 of harbour.md: passages 2 (100-149); ferry 190-259: passages 3, 4 and 5
    assert by_id["q1"]["judgments"] == {"harbour.md#2": 1}
    assert by_id["q2"]["judgments"] == {"ferry.md#3": 1, "ferry.md#4": 1, "ferry.md#5": 1}
    assert by_id["q1"]["metrics"]["recall@5"] == 1.0
    assert "ndcg@10" not in by_id["q3"]["metrics"]  # not found: evidence recall only

    pooled = invoke("run", str(data), "-o", str(tmp_path / "pooled"))
    assert pooled.exit_code == 0, pooled.output
    (gold,) = results(tmp_path / "pooled")
    assert gold["dataset"]["corpus_provenance"] == "pooled_gold"
    assert "corpus" not in gold["dataset"] and "chunk_size" not in gold["setup"]["retriever"]


def test_a_sweep_compares_chunkings_on_the_same_questions(tmp_path: Path) -> None:
    corpus_and_questions(tmp_path)
    sweep = tmp_path / "sweep.yaml"

    def write(second: int) -> None:
        sweep.write_text(
            "benchmarks:\n  - {path: qa.jsonl, corpus: docs}\nsetups:\n"
            "  - {name: words-50, chunking: {size: 50}}\n"
            f"  - {{name: words-{second}, chunking: {{chunker: words, size: {second}, "
            "overlap: 10}}\n"
            "  - {name: md-100, chunking: {chunker: markdown, size: 100}}\n",
            encoding="utf-8",
        )

    write(120)
    out = tmp_path / "run"
    done = invoke("run", str(sweep), "-o", str(out))
    assert done.exit_code == 0, done.output
    found = results(out)
    assert len({r["comparability_key"] for r in found}) == 1  # one leaderboard
    assert "chunk_size" in found[0]["varied"]
    sizes = {r["setup"]["name"]: r["dataset"]["documents"] for r in found}
    assert sizes["words-50"] == 18 and sizes["words-120"] < sizes["words-50"]
    # Changing one setup's chunking runs only its tasks again.
    write(150)
    again = invoke("run", str(sweep), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "done 3  failed 0  skipped 6" in again.output


def test_validate_data_says_how_many_rows_it_found_in_the_corpus(tmp_path: Path) -> None:
    docs, data = corpus_and_questions(tmp_path)
    checked = invoke("validate-data", str(data), "--corpus", str(docs))
    assert checked.exit_code == 0, checked.output
    assert "located 2 of 3 rows with passages" in checked.output
    assert f"--corpus {docs}" in checked.output


def test_rows_naming_a_missing_corpus_are_refused_in_one_line(tmp_path: Path) -> None:
    _, data = corpus_and_questions(tmp_path)
    rows = [dict(json.loads(line), corpus="gone") for line in data.read_text().splitlines()]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    refused = invoke("run", str(data), "-o", str(tmp_path / "run"))
    assert refused.exit_code == 2
    assert "name their corpus" in refused.output and "--corpus" in refused.output
    assert "Traceback" not in refused.output


def test_an_empty_corpus_folder_is_one_line_in_run_and_a_failed_check_in_validate_data(
    tmp_path: Path,
) -> None:
    _, data = corpus_and_questions(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    ran = invoke("run", str(data), "--corpus", str(empty), "-o", str(tmp_path / "run"))
    assert (ran.exit_code, ran.output.count("\n")) == (1, 1), ran.output
    assert f"corpus {empty} is empty; give the folder the questions were written from" in (
        ran.output
    )
    checked = invoke("validate-data", str(data), "--corpus", str(empty))
    assert checked.exit_code == 1, checked.output
    assert "Traceback" not in checked.output
    assert f"{empty} (--corpus) cannot be read" in checked.output
    assert "retrieval:    no, the folder of documents cannot be read" in checked.output
    assert "Run it:" not in checked.output
    # A folder of files none of which can be read names the first one skipped.
    (empty / "data.bin").write_bytes(b"\x00\x01")
    ran = invoke("run", str(data), "--corpus", str(empty), "-o", str(tmp_path / "run2"))
    assert (ran.exit_code, ran.output.count("\n")) == (1, 1), ran.output
    assert "has no readable document (first skipped: data.bin:" in ran.output


def test_evidence_longer_than_a_chunk_is_found_over_adjacent_chunks(tmp_path: Path) -> None:
    # The evidence is 70 words (ferry190..ferry259); 50-word chunks hold it only together
    # (passages 3, 4 and 5): a substring test would never find it, the spans do.
    docs, data = corpus_and_questions(tmp_path)
    evidence = " ".join(f"ferry{i}" for i in range(190, 260))
    row = {"id": "long", "question": "ferry195 ferry230 ferry255?", "answer": "b"}
    data.write_text(json.dumps(row | {"contexts": [evidence]}) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    done = invoke("run", str(data), "--corpus", str(docs), "--chunk-size", "50", "-o", str(out))
    assert done.exit_code == 0, done.output
    (result,) = results(out)
    (entry,) = result["per_query"]
    metrics = entry["metrics"]
    assert {doc for doc, _ in entry["ranking"][:5]} == {"ferry.md#3", "ferry.md#4", "ferry.md#5"}
    assert metrics["evidence_recall"] == metrics["evidence_recall_strict"] == 1.0
    # Chroma's span recall counts every character: the two spaces between the passages
    # are in none of them.
    assert metrics["span_recall"] == (len(evidence) - 2) / len(evidence)
    # The three passages hold 150 words, the evidence 70 of them: 70 / 150 of the
    # characters, give or take the digits of each word.
    assert 0.4 < metrics["span_precision"] < 0.55
    assert metrics["span_iou"] < metrics["span_precision"]
    for name in ("span_recall", "span_precision", "span_iou"):
        summary = result["metrics"]["retrieval"][name]
        assert summary["count"] == 1 and summary["mean"] == metrics[name]
