"""Data from other tools through the commands: RAGAS v0.1 / v0.2, DeepEval and a Hugging Face
dataset (examples/data/from-tools/, the pasta questions and the outputs of
examples/systems/predictions.jsonl) run through `validate-data` and `run` as data, and with
`--predictions-from-data` as predictions, each field with its meaning; `synthesize --format`
writes RAGAS and DeepEval rows that read back as the same rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_synth import load_data

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"
TOOLS = DATA / "from-tools"
PASTA = DATA / "pasta.jsonl"
PREDICTIONS = ROOT / "examples" / "systems" / "predictions.jsonl"
# (file, the format it is read as, which tracks its gold data supports)
WITH_GOLD = ["ragas-v0.2.jsonl", "deepeval-test-cases.jsonl", "hf-ragas"]
ALL = ["ragas-v0.1.jsonl", *WITH_GOLD]
NOTED = {
    "ragas-v0.1.jsonl": "read as RAGAS v0.1 rows (detected from its fields): the question <- "
    "question; reference answers <- ground_truths",
    "ragas-v0.2.jsonl": "read as RAGAS v0.2+ rows (detected from its fields): the question <- "
    "user_input; reference answers <- reference; gold passages (what retrieval must find) <- "
    "reference_contexts",
    "deepeval-test-cases.jsonl": "read as DeepEval goldens/test cases (detected from its "
    "fields): the question <- input; reference answers <- expected_output; gold passages (what "
    "retrieval must find) <- context; metadata <- additional_metadata",
    "hf-ragas": "read as RAGAS v0.2+ rows (detected from its fields)",
}
OUTPUTS = {
    "ragas-v0.1.jsonl": "answer (the system's answer), contexts (the system's retrieved passages)",
    "ragas-v0.2.jsonl": "response (the system's answer), retrieved_contexts (the system's "
    "retrieved passages)",
    "deepeval-test-cases.jsonl": "actual_output (the system's answer), retrieval_context (the "
    "system's retrieved passages)",
    "hf-ragas": "response (the system's answer), retrieved_contexts (the system's retrieved "
    "passages)",
}


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def per_query(out: Path) -> dict[str, dict[str, Any]]:
    """Per question: the retrieval metrics and the generation scores, without names that
    depend on the file (dataset, setup)."""
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert len(results) == 1
    found = {}
    for q in results[0]["per_query"]:
        generation = None
        if "generation" in q:
            keys = ("exact_match", "f1", "prediction", "refused")
            generation = {k: q["generation"][k] for k in keys}
        # (the judged passages' names differ: RAGAS and DeepEval rows cannot carry
        # `expected_docs`, so their passages are named ctx-<sha256>)
        found[q["id"]] = {"metrics": q.get("metrics"), "generation": generation}
    return found


@pytest.fixture(scope="module")
def pasta_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """pasta.jsonl with BM25, and with the example predictions file: what each file of
    another tool must reproduce per question."""
    base = tmp_path_factory.mktemp("pasta")
    bm25 = cli("benchmark", "run", str(PASTA), "-o", str(base / "bm25"))
    assert bm25.exit_code == 0, bm25.output
    predicted = cli(
        "benchmark", "run", str(PASTA), "--predictions", str(PREDICTIONS), "-o", str(base / "p")
    )
    assert predicted.exit_code == 0, predicted.output
    return {"bm25": per_query(base / "bm25"), "predictions": per_query(base / "p")}


@pytest.mark.parametrize("name", ALL)
def test_validate_data_says_what_was_read_as_what(name: str) -> None:
    path = str(TOOLS / name)
    result = cli("benchmark", "validate-data", path)
    assert result.exit_code == 0, result.output
    notes = [
        line.strip() for line in result.stdout.splitlines() if line.strip().startswith("Note:")
    ]
    assert any(NOTED[name] in n for n in notes), notes
    assert any(
        "the system's outputs, kept apart and never read as references or gold passages: "
        f"{OUTPUTS[name]}, in 14 rows" in n
        for n in notes
    ), notes
    assert (
        f"Its outputs:  lasagna benchmark run {path} --predictions-from-data   (the system's "
        "answers and retrievals the file records, scored)"
    ) in result.stdout.splitlines()
    retrieval = next(line for line in result.stdout.splitlines() if "retrieval:" in line)
    # RAGAS v0.1's `contexts` are the system's retrievals: no gold passage, no retrieval track
    assert retrieval.split()[1] == ("no," if name == "ragas-v0.1.jsonl" else "yes,")


@pytest.mark.parametrize("name", WITH_GOLD)
def test_run_as_data_searches_the_gold_passages_not_the_retrieved_ones(
    name: str, tmp_path: Path, pasta_runs: dict[str, Any]
) -> None:
    """BM25 over the file gives pasta.jsonl's figures per question: its gold passages are
    `reference_contexts` / `context`, and the system's `retrieved_contexts` are not pooled."""
    result = cli("benchmark", "run", str(TOOLS / name), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    found = per_query(tmp_path / "run")
    assert found == pasta_runs["bm25"]


@pytest.mark.parametrize("name", ALL)
def test_run_predictions_from_data_scores_the_recorded_outputs(
    name: str, tmp_path: Path, pasta_runs: dict[str, Any]
) -> None:
    """The answers and retrieved passages the file records are scored as the predictions
    file they were written from is: the same figures per question."""
    out = tmp_path / "run"
    result = cli("benchmark", "run", str(TOOLS / name), "--predictions-from-data", "-o", str(out))
    assert result.exit_code == 0, result.output
    found = per_query(out)
    expected = pasta_runs["predictions"]
    if name == "ragas-v0.1.jsonl":
        # no gold passages: the answers are scored, the retrievals cannot be
        assert all(q["metrics"] is None for q in found.values())
        assert {i: q["generation"] for i, q in found.items()} == {
            i: q["generation"] for i, q in expected.items()
        }
    else:
        assert found == expected
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"][0]
    stem = name.removesuffix(".jsonl")
    assert results["setup"]["name"] == f"{stem}-outputs"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert '"from_data": true' in json.dumps(manifest)


def test_rows_without_outputs_have_no_prediction(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (TOOLS / "ragas-v0.2.jsonl").read_text().splitlines()]
    for row in rows[:2]:
        del row["response"], row["retrieved_contexts"]
    path = tmp_path / "partial.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    refused = cli(
        "benchmark", "run", str(path), "--predictions-from-data", "-o", str(tmp_path / "a")
    )
    assert refused.exit_code == 1
    assert 'have no prediction: "q01", "q02"' in refused.output
    allowed = cli(
        "benchmark", "run", str(path), "--predictions-from-data", "--allow-missing",
        "-o", str(tmp_path / "b"),
    )  # fmt: skip
    assert allowed.exit_code == 0, allowed.output
    assert "2 question(s) not scored (--allow-missing)" in allowed.output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            [str(PASTA), "--predictions-from-data"],
            1,
            "pasta.jsonl records no system outputs",
        ),
        (
            [str(TOOLS / "ragas-v0.2.jsonl"), "--predictions-from-data", "--predictions",
             str(PREDICTIONS)],
            2,
            "--predictions and --predictions-from-data name two systems",
        ),
        (
            [str(DATA / "sweep.yaml"), "--predictions-from-data"],
            2,
            "is a sweep file",
        ),
        (
            [str(TOOLS / "ragas-v0.2.jsonl"), "--format", "ragas"],
            2,
            "--format: is the output's (text or json); to read the data as ragas, give "
            "--data-format ragas",
        ),
        ([str(PASTA), "--data-format", "ragass"], 2, 'did you mean "ragas"?'),
        (
            ["locomo", "--data-dir", str(DATA / "locomo-mini"), "--predictions-from-data"],
            2,
            "the staged pipeline",
        ),
    ],
)  # fmt: skip
def test_refusals(args: list[str], code: int, message: str, tmp_path: Path) -> None:
    result = cli("benchmark", "run", *args, "-o", str(tmp_path / "run"))
    assert result.exit_code == code, result.output
    assert message in result.output
    assert not (tmp_path / "run" / "results.json").exists()


def test_data_format_reads_a_ragas_v01_file_that_looks_like_lasagnas(tmp_path: Path) -> None:
    """RAGAS v0.1 rows without ground truths have lasagna's field names: by default `answer`
    and `contexts` are references and gold passages; --data-format ragas makes them the
    system's outputs (validate-data's --format is the same flag); with ground truths the
    fields tell."""
    rows = [
        {"id": "a", "question": "Q one?", "answer": "one", "contexts": ["Passage one is here."]},
        {"id": "b", "question": "Q two?", "answer": "two", "contexts": ["Passage two is here."]},
    ]
    path = tmp_path / "v01.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    as_lasagna = cli("benchmark", "validate-data", str(path))
    assert as_lasagna.exit_code == 0 and "With answers:   2" in as_lasagna.output
    for flag in ("--format", "--data-format"):
        as_ragas = cli("benchmark", "validate-data", str(path), flag, "ragas")
        assert as_ragas.exit_code == 1, as_ragas.output  # no question has anything to measure
        assert "With answers:   0" in as_ragas.output
        assert "read as RAGAS v0.1 rows (as asked" in as_ragas.output
    # ... so that their answers can be scored as predictions, against references added
    rows = [{**r, "ground_truths": [r["answer"]]} for r in rows]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    run = cli("benchmark", "run", str(path), "--predictions-from-data", "-o", str(out))
    assert run.exit_code == 0, run.output
    scored = json.loads((out / "results.json").read_text())["results"][0]["per_query"]
    assert [(q["generation"]["prediction"], q["generation"]["exact_match"]) for q in scored] == [
        ("one", 1.0),
        ("two", 1.0),
    ]
    assert all("metrics" not in q for q in scored)  # its contexts were retrievals, not gold


def test_validate_data_refuses_an_unknown_format() -> None:
    result = cli("benchmark", "validate-data", str(PASTA), "--format", "csv")
    assert result.exit_code == 2
    assert "--data-format: expected one of lasagna, ragas, deepeval, hf, found 'csv'" in (
        result.output
    )


def test_a_sweep_entry_takes_a_format(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - path: {TOOLS / 'ragas-v0.2.jsonl'}\n    format: ragas\n"
        "setups:\n  - name: bm25\n",
        encoding="utf-8",
    )
    result = cli("benchmark", "run", str(sweep), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest is not None
    sweep.write_text(
        f"benchmarks:\n  - path: {TOOLS / 'ragas-v0.2.jsonl'}\n    format: ragaz\n"
        "setups:\n  - name: bm25\n",
        encoding="utf-8",
    )
    bad = cli("benchmark", "run", str(sweep), "-o", str(tmp_path / "bad"))
    assert bad.exit_code == 2 and "format: expected one of lasagna, ragas" in bad.output


def test_the_commands_know_the_formats_lasagna_synth_reads_and_writes() -> None:
    from lasagna_cli.commands._synthesize import WRITE_FORMATS
    from lasagna_cli.engine.config import DATA_FORMATS
    from lasagna_cli.engine.config._sweepfile_entries import DATA_FORMATS as SWEEP_FORMATS
    from lasagna_synth import DATA_FORMATS as READ
    from lasagna_synth import EXPORT_FORMATS

    assert DATA_FORMATS == SWEEP_FORMATS == READ
    assert WRITE_FORMATS == EXPORT_FORMATS


def test_the_example_outputs_are_the_predictions_file() -> None:
    """The examples hold what their docstring says: pasta's questions, the example system's
    outputs (so the tests above compare like with like)."""
    pasta = {r.id: r for r in load_data(PASTA).rows()}
    for name in WITH_GOLD:
        rows = {r.id: r for r in load_data(TOOLS / name).rows()}
        # RAGAS and DeepEval take one reference: the first
        assert {i: (r.question, r.answers[:1], r.contexts) for i, r in rows.items()} == {
            i: (r.question, r.answers[:1], r.contexts) for i, r in pasta.items()
        }
