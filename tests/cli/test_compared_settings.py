"""Everything the setups vary is named: the leaderboard's caption, `compare`'s header and
the report's group. BM25 on 50-word chunks against dense retrieval (the default embedder,
no server) on 100-word chunks with an overlap: the caption once said "compared: retriever"
alone, hiding the chunking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.reports import read_run
from lasagna_cli.engine.reports._html import report_comparisons
from lasagna_cli.engine.reports._report_payload import headline_metrics, report_payload


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", *args])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("varied")
    docs = tmp / "docs"
    docs.mkdir()
    for name in ("harbour", "lighthouse", "ferry"):
        text = " ".join(f"{name}{i}" for i in range(300))
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
    rows = [
        {"id": f"{name}-{i}", "question": f"{name}{i * 20} {name}{i * 20 + 1}?", "answer": "a",
         "contexts": [" ".join(f"{name}{j}" for j in range(i * 20, i * 20 + 15))]}
        for i in range(1, 5)
        for name in ("harbour", "ferry")
    ]  # fmt: skip
    (tmp / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp / "sweep.yaml").write_text(
        "benchmarks:\n  - {path: qa.jsonl, corpus: docs}\nsetups:\n"
        "  - {name: bm25-50, retriever: {kind: bm25}, chunking: {size: 50}}\n"
        "  - {name: dense-100, retriever: {kind: dense}, chunking: {size: 100, overlap: 10}}\n",
        encoding="utf-8",
    )
    out = tmp / "run"
    done = invoke("run", str(tmp / "sweep.yaml"), "-o", str(out))
    assert done.exit_code == 0, done.output
    caption = next(line for line in done.output.splitlines() if "comparability key" in line)
    assert caption.endswith("; compared: chunk_size, chunk_overlap, retriever"), caption
    return out


def test_results_json_keeps_its_own_varied_and_records_each_chunking(run: Path) -> None:
    found = json.loads((run / "results.json").read_text())["results"]
    assert [r["varied"] for r in found] == [["retriever"], ["retriever"]]  # as before
    chunkings = [
        {k: r["setup"]["retriever"][k] for k in ("chunker", "chunk_size", "chunk_overlap")}
        for r in found
    ]
    assert chunkings == [
        {"chunker": "fixed", "chunk_size": 50, "chunk_overlap": 0},
        {"chunker": "fixed", "chunk_size": 100, "chunk_overlap": 10},
    ]


def test_compare_names_them_in_its_header(run: Path) -> None:
    done = invoke("compare", str(run))
    assert done.exit_code == 0, done.output
    assert "the setups differ in chunk_size, chunk_overlap, retriever" in done.output
    found = json.loads(invoke("compare", str(run), "--format", "json").output)["comparisons"]
    assert found[0]["varied"] == ["chunk_size", "chunk_overlap", "retriever"]


def test_the_report_names_them_and_shows_each_setups_chunking(run: Path) -> None:
    runs = [read_run(run)]
    payload = report_payload(runs, report_comparisons(runs, headline_metrics))
    (group,) = payload["groups"]
    assert group["varied"] == ["chunk_size", "chunk_overlap", "retriever"]
    shown = [
        {k: r["setup_info"]["retriever"][k] for k in ("chunker", "chunk_size", "chunk_overlap")}
        for r in group["results"]
    ]
    assert shown == [
        {"chunker": "fixed", "chunk_size": 50, "chunk_overlap": 0},
        {"chunker": "fixed", "chunk_size": 100, "chunk_overlap": 10},
    ]
    (comparison,) = group["comparisons"]
    assert all(m["verdict"] for m in comparison["metrics"])
