"""Chroma's chunking evaluation as a registered benchmark: a sweep of token chunkings
100, 200, 400+200 and 800+400 (BM25, top 5) over its 472 questions reports span recall,
precision and IoU whose means equal Chroma's own code run on the passages lasagna
retrieved: live when the mirror of brandonstarxel/chunking_evaluation is on this machine,
else against the means that code gave (tests/cli/fixtures/chroma_chunking.json).

Run it as a script to derive those means from the upstream code (needs the mirror):

    uv run python tests/cli/test_chroma_chunking.py
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "datasets" / "chunking-evaluation"
FIXTURE = Path(__file__).parent / "fixtures" / "chroma_chunking.json"
SETUPS = {
    "tokens-100": (100, 0),
    "tokens-200": (200, 0),
    "tokens-400-200": (400, 200),
    "tokens-800-400": (800, 400),
}
SPAN_METRICS = ("span_recall", "span_precision", "span_iou")
K = 5

_spec = importlib.util.spec_from_file_location(
    "lasagna_test_chroma_oracle", ROOT / "tests" / "metrics" / "chroma_oracle.py"
)
assert _spec is not None and _spec.loader is not None
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="no ../shared/data beside the clone")


def sweep_file(folder: Path, data_dir: Path = DATA) -> Path:
    lines = [
        "benchmarks:",
        "  - name: chroma-chunking",
        f"    data_dir: {json.dumps(str(data_dir))}",
        "setups:",
    ]
    for name, (size, overlap) in SETUPS.items():
        lines += [
            f"  - name: {name}",
            f"    chunking: {{chunker: tokens, size: {size}, overlap: {overlap}}}",
        ]
    lines += [f"top_k: {K}", "tracks: [retrieval]", "seed: 42"]
    path = folder / "chunkings.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def task_records(out: Path) -> Iterator[dict[str, Any]]:
    """Every task record of the run (retrieval alone: written in batches)."""
    for path in sorted((out / "tasks").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            yield json.loads(line)["record"]


def upstream_means(out: Path, results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Chroma's code on each question's top-5 passages as lasagna retrieved them."""
    namespace = oracle.upstream_namespace()
    evidence = {}
    for result in results["results"]:
        for entry in result["per_query"]:
            evidence[entry["id"]] = entry["evidence_spans"]
    cases: dict[str, list[dict[str, Any]]] = {name: [] for name in SETUPS}
    for record in task_records(out):
        spans = evidence[record["task"]["item"]]
        cases[record["task"]["setup"]].append(
            {
                "corpus_id": spans[0]["doc"],
                "references": [[s["start"], s["end"]] for s in spans],
                "retrieved": record["retrieval"]["spans"][:K],
            }
        )
    means = {}
    for setup, found in cases.items():
        scores = oracle.upstream_scores(namespace, found)
        iou, recall, precision = (sum(column) / len(scores) for column in zip(*scores, strict=True))
        means[setup] = {"span_recall": recall, "span_precision": precision, "span_iou": iou}
    return means


@pytest.fixture(scope="module")
def chunking_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("chroma")
    out = folder / "run"
    result = invoke("benchmark", "run", str(sweep_file(folder)), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "results.json").read_text())


def _means(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {
        r["setup"]["name"]: {m: r["metrics"]["retrieval"][m]["mean"] for m in SPAN_METRICS}
        for r in results["results"]
    }


@needs_data
def test_span_metrics_equal_chromas_code_on_the_passages_retrieved(
    chunking_run: tuple[Path, dict[str, Any]],
) -> None:
    out, results = chunking_run
    ours = _means(results)
    pinned = json.loads(FIXTURE.read_text())
    expected = upstream_means(out, results) if oracle.mirror_present() else pinned["means"]
    assert set(ours) == set(SETUPS)
    for setup in SETUPS:
        for metric in SPAN_METRICS:
            assert ours[setup][metric] == pytest.approx(expected[setup][metric], abs=1e-9)
    # Every figure that exists keeps its value: the ranking metrics of the sweep.
    for result in results["results"]:
        ndcg = result["metrics"]["retrieval"]["ndcg@10"]["mean"]
        assert ndcg == pytest.approx(pinned["ndcg@10"][result["setup"]["name"]], abs=1e-12)
        assert result["counts"]["scored"] == 472


@needs_data
def test_precision_falls_and_recall_rises_as_chunks_grow(
    chunking_run: tuple[Path, dict[str, Any]],
) -> None:
    _, results = chunking_run
    means = _means(results)
    order = list(SETUPS)  # smallest chunks first
    precision = [means[s]["span_precision"] for s in order]
    recall = [means[s]["span_recall"] for s in order]
    assert precision == sorted(precision, reverse=True)
    assert recall == sorted(recall)
    assert precision[0] > 4 * precision[-1]


@needs_data
def test_each_record_says_where_its_passages_sit(chunking_run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = chunking_run
    texts = {path.stem: path.read_text() for path in (DATA / "corpora").glob("*.md")}
    checked = 0
    for record in task_records(out):
        retrieval = record["retrieval"]
        assert len(retrieval["spans"]) == len(retrieval["ranking"])
        for (passage, _), (doc, start, end) in zip(
            retrieval["ranking"], retrieval["spans"], strict=True
        ):
            assert passage.startswith(f"{doc}#") and 0 <= start < end <= len(texts[doc])
            checked += 1
    assert checked == 4 * 472 * 10


@needs_data
def test_the_leaderboard_shows_the_span_metrics(chunking_run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = chunking_run
    shown = invoke(
        "benchmark", "run", str(out.parent / "chunkings.yaml"), "-o", str(out), "--resume"
    )
    assert shown.exit_code == 0, shown.output
    for heading in ("span recall", "span precision", "span IoU", "evidence"):
        assert heading in shown.output


@needs_data
def test_a_sample_keeps_the_question_ids_and_their_figures(
    tmp_path: Path, chunking_run: tuple[Path, dict[str, Any]]
) -> None:
    _, full = chunking_run
    sample = tmp_path / "sample"
    drawn = invoke(
        "benchmark", "sample", "chroma-chunking", "--data-dir", str(DATA),
        "--sample-size", "20", "--seed", "7", "-o", str(sample),
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    out = tmp_path / "run"
    ran = invoke("benchmark", "run", str(sweep_file(tmp_path, sample)), "-o", str(out))
    assert ran.exit_code == 0, ran.output
    results = json.loads((out / "results.json").read_text())
    whole = {
        (r["setup"]["name"], e["id"]): e["metrics"] for r in full["results"] for e in r["per_query"]
    }
    entries = [(r["setup"]["name"], e) for r in results["results"] for e in r["per_query"]]
    assert len(entries) == 4 * 20
    corpora = {path.name for path in (sample / "corpora").glob("*.md")}
    for setup, entry in entries:
        if len(corpora) == 5:  # the same documents searched: the same figures
            assert entry["metrics"] == whole[(setup, entry["id"])]


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(DATA, copy)
    return copy


@needs_data
def test_a_reference_not_at_its_offsets_is_refused_in_one_line(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    questions = copy / "questions_df.csv"
    text = questions.read_text()
    assert '""start_index"": 27346' in text  # the CSV doubles the JSON's quotes
    questions.write_text(text.replace('""start_index"": 27346', '""start_index"": 27347', 1))
    result = invoke("benchmark", "run", str(sweep_file(tmp_path, copy)), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert "row 2: a reference's content is not the text at 27347..27425" in result.output


@needs_data
def test_a_missing_corpus_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    (copy / "corpora" / "chatlogs.md").unlink()
    result = invoke("benchmark", "run", str(sweep_file(tmp_path, copy)), "-o", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "chatlogs.md is missing" in result.output


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        run = invoke("benchmark", "run", str(sweep_file(folder)), "-o", str(folder / "run"))
        if run.exit_code != 0:
            sys.exit(run.output)
        found = json.loads((folder / "run" / "results.json").read_text())
        FIXTURE.write_text(
            json.dumps(
                {
                    "source": f"brandonstarxel/chunking_evaluation@{oracle.COMMIT}",
                    "means": upstream_means(folder / "run", found),
                    "ndcg@10": {
                        r["setup"]["name"]: r["metrics"]["retrieval"]["ndcg@10"]["mean"]
                        for r in found["results"]
                    },
                },
                indent=2,
            )
            + "\n"
        )
    print(f"wrote {FIXTURE}")


@needs_data
def test_the_span_metrics_go_through_every_door(
    tmp_path: Path, chunking_run: tuple[Path, dict[str, Any]]
) -> None:
    out, results = chunking_run
    means = _means(results)
    exported = tmp_path / "flat.csv"
    done = invoke("benchmark", "export", str(out), "--format", "csv", "-o", str(exported))
    assert done.exit_code == 0, done.output
    with exported.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for metric in SPAN_METRICS:
        column = [float(r[f"retrieval/{metric}"]) for r in rows if r["setup"] == "tokens-200"]
        assert len(column) == 472
        assert sum(column) / len(column) == pytest.approx(means["tokens-200"][metric], abs=1e-12)
    compared = invoke(
        "benchmark", "compare", str(out), "--setup", "tokens-200", "--setup", "tokens-800-400"
    )
    assert compared.exit_code == 0, compared.output
    assert all(f"retrieval/{m}" in compared.output for m in SPAN_METRICS)
    page = tmp_path / "report.html"
    done = invoke("benchmark", "report", str(out), "-o", str(page))
    assert done.exit_code == 0, done.output
    assert all(f"retrieval/{m}" in page.read_text() for m in SPAN_METRICS)


@needs_data
def test_the_staged_pipeline_reports_the_span_metrics_too(tmp_path: Path) -> None:
    out = tmp_path / "staged"
    done = invoke(
        "benchmark", "run", "chroma-chunking", "--data-dir", str(DATA), "--step", "gen",
        "-o", str(out),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "  span recall 0." in done.output and "(Chroma's definitions" in done.output
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    spans = report["lasagna"]["span_metrics"]
    items = json.loads((out / "generated_answers.json").read_text())["results"]
    assert len(items) == 472
    for name, label in (
        ("span_recall", "Span Recall (lasagna)"),
        ("span_iou", "Span IoU (lasagna)"),
    ):
        values = [item["metrics"][label] for item in items]
        assert spans[name] == pytest.approx(sum(values) / len(values), abs=1e-12)
    assert spans["span_precision"] < spans["span_recall"]
