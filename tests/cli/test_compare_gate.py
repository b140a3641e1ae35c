"""`benchmark compare --fail-if-worse` as a CI job runs it: the `lasagna` executable in a
shell step, a baseline run (A) and a candidate run (B) made by real `benchmark run`s of the
example data (BM25, no model), and the job's outcome read from the exit code alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "examples" / "data"
LASAGNA = Path(sys.executable).with_name("lasagna")


def lasagna(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LASAGNA), *map(str, args)], capture_output=True, text=True, env=os.environ,
        timeout=120,
    )  # fmt: skip


def _degraded(run_file: Path, corpus: Path, out: Path) -> None:
    """Each question's ranking with two passages it did not retrieve put first: a change
    that makes retrieval clearly worse (the relevant passage falls to rank 3 or below)."""
    documents = [json.loads(line)["_id"] for line in corpus.read_text().splitlines() if line]
    rankings: dict[str, list[str]] = {}
    for line in run_file.read_text().splitlines():
        qid, _, doc, *_ = line.split()
        rankings.setdefault(qid, []).append(doc)
    lines = []
    for qid, ranking in rankings.items():
        worse = [d for d in documents if d not in ranking][:2] + ranking
        lines += [f"{qid} Q0 {doc} {i} {100 - i} candidate" for i, doc in enumerate(worse, 1)]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The baseline, a candidate that ranks alike (its own run file replayed), and one that
    ranks worse."""
    tmp = tmp_path_factory.mktemp("gate")
    data = DATA / "pasta-beir"
    baseline = tmp / "baseline"
    assert lasagna("benchmark", "run", data, "-o", baseline).returncode == 0
    run_file = tmp / "baseline.trec"
    exported = lasagna("benchmark", "export", baseline, "--format", "trec", "-o", run_file)
    assert exported.returncode == 0
    worse_file = tmp / "worse.trec"
    _degraded(run_file, data / "corpus.jsonl", worse_file)
    found = {"baseline": baseline}
    for name, predictions in (("same", run_file), ("worse", worse_file)):
        found[name] = tmp / name
        done = lasagna("benchmark", "run", data, "--predictions", predictions, "-o", found[name])
        assert done.returncode == 0, done.stderr
    return found


def test_the_gate_passes_when_b_is_not_worse(runs: dict[str, Path]) -> None:
    gates = ("--fail-if-worse", "ndcg@10:0.02", "--fail-if-worse", "retrieval/mrr:0")
    done = lasagna("benchmark", "compare", runs["baseline"], runs["same"], *gates)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gate ndcg@10:0.02 on local/pasta-beir" in done.stdout
    assert "passed: not shown worse by more than 0.02" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("gate retrieval/mrr:0 ")


def test_the_gate_fails_when_b_is_worse_beyond_the_margin(runs: dict[str, Path]) -> None:
    done = lasagna("benchmark", "compare", runs["baseline"], runs["worse"],
                   "--fail-if-worse", "ndcg@10:0.02")  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED: worse by more than 0.02" in done.stdout
    assert "is worse than bm25-k5 on retrieval/ndcg@10 by" in done.stdout  # the verdict
    assert done.stderr.strip() == "compare: 1 of 1 gates failed"


def test_a_margin_wider_than_the_loss_passes(runs: dict[str, Path]) -> None:
    """The candidate loses about 0.47 nDCG@10 ([0.44, 0.50] at 95%): a margin of 0.6 is
    not exceeded, one of 0.4 is."""
    wide = lasagna("benchmark", "compare", runs["baseline"], runs["worse"],
                   "--fail-if-worse", "ndcg@10:0.6", "--format", "json")  # fmt: skip
    assert wide.returncode == 0, wide.stderr
    (gate,) = json.loads(wide.stdout)["gates"]
    assert gate["metric"] == "retrieval/ndcg@10" and not gate["failed"]
    narrow = lasagna("benchmark", "compare", runs["baseline"], runs["worse"],
                     "--fail-if-worse", "ndcg@10:0.4", "--format", "json")  # fmt: skip
    assert narrow.returncode == 1
    assert json.loads(narrow.stdout)["gates"][0]["failed"]


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        (
            "ndcg@100:0.02",
            "--fail-if-worse ndcg@100: not a metric of this comparison; it has "
            "retrieval/hit_rate@5, retrieval/mrr, retrieval/ndcg@10",
        ),
        ("ndcg@10", "--fail-if-worse ndcg@10: expected METRIC:MARGIN"),
        ("ndcg@10:-0.1", "expected METRIC:MARGIN"),
        ("ndcg@10:lots", "expected METRIC:MARGIN"),
    ],
)
def test_a_bad_gate_is_a_usage_error(runs: dict[str, Path], flag: str, says: str) -> None:
    done = lasagna("benchmark", "compare", runs["baseline"], runs["worse"], "--fail-if-worse", flag)
    assert done.returncode == 2
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
