"""Reproducible benchmark samples: quotas, document and question level, written subsets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lasagna_cli.engine.benchmarks import (
    EngineUsageError,
    SamplingUsageError,
    get_benchmark_spec,
    load_benchmark,
    sample_benchmark,
    write_sample,
)
from lasagna_cli.engine.benchmarks._sampling import category_quotas, seeded_order

FIXTURES = Path(__file__).resolve().parents[1] / "synth" / "fixtures"
DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "datasets"


# ------------------------------------------------------------------------------ quotas


def test_even_split_gives_the_remainder_to_the_first_categories() -> None:
    quotas, targets = category_quotas(6, {"4": 50, "2": 50, "1": 50, "3": 50})
    assert targets == {"1": 2, "2": 2, "3": 1, "4": 1}
    assert quotas == targets
    assert list(quotas) == ["1", "2", "3", "4"]


def test_shortfalls_are_redistributed_one_per_category_per_round() -> None:
    quotas, targets = category_quotas(20, {"a": 1, "b": 10, "c": 10, "d": 2})
    assert targets == {"a": 5, "b": 5, "c": 5, "d": 5}
    # a and d give back 4 + 3; b and c take one each per round, b first.
    assert quotas == {"a": 1, "b": 9, "c": 8, "d": 2}


def test_a_sample_larger_than_the_pool_takes_everything() -> None:
    quotas, _ = category_quotas(100, {"a": 3, "b": 4})
    assert quotas == {"a": 3, "b": 4}


@given(
    st.integers(min_value=1, max_value=300),
    st.dictionaries(st.text(min_size=1, max_size=3), st.integers(0, 60), min_size=1, max_size=8),
)
def test_quota_bounds(sample_size: int, available: dict[str, int]) -> None:
    quotas, targets = category_quotas(sample_size, available)
    assert sum(quotas.values()) == min(sample_size, sum(available.values()))
    assert all(0 <= quotas[c] <= available[c] for c in available)
    assert sum(targets.values()) == sample_size
    assert max(targets.values()) - min(targets.values()) <= 1
    # Redistribution is even: what the categories still below capacity received on top of
    # their capped share differs by at most one.
    extra = [
        quotas[c] - min(targets[c], available[c]) for c in available if quotas[c] < available[c]
    ]
    assert not extra or max(extra) - min(extra) <= 1


# --------------------------------------------------------------------- seeded order


def test_seeded_order_is_pinned_across_machines_and_versions() -> None:
    # sha256-based: these lists must never change, or old samples would not reproduce.
    assert seeded_order(["a", "b", "c", "d", "e"], 42, "document") == ["a", "b", "c", "e", "d"]
    assert seeded_order(["a", "b", "c", "d", "e"], 7, "document") == ["a", "c", "b", "e", "d"]


def test_sampling_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    script = (
        "import sys, json\n"
        "from lasagna_cli.engine.benchmarks import load_benchmark, sample_benchmark\n"
        f"b = load_benchmark('qasper', {str(FIXTURES / 'qasper')!r}, 'dev')\n"
        "s = sample_benchmark(b, sample_size=2, seed=3)\n"
        "print(json.dumps([s.doc_ids, s.question_ids]))\n"
    )
    outputs = set()
    for hash_seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1


# ---------------------------------------------------------------- document / question


def locomo() -> object:
    return load_benchmark("locomo", FIXTURES / "locomo")


def test_document_level_keeps_every_question_of_each_chosen_document() -> None:
    bench = locomo()
    sample = sample_benchmark(bench, num_docs=1, seed=42)
    assert sample.doc_ids == ("conv-a",)
    assert sample.question_ids == tuple(
        q.id
        for q in bench.questions
        if q.doc_ids == ("conv-a",)  # type: ignore[attr-defined]
    )
    assert sample.metadata["mode"] is None  # no quota to stratify
    everything = sample_benchmark(bench, num_docs=99)
    assert len(everything.question_ids) == 8


def test_question_level_random_adds_documents_until_n_questions() -> None:
    bench = locomo()
    sample = sample_benchmark(bench, sample_size=6, mode="random", seed=42)
    assert len(sample.question_ids) == 6
    assert sample.doc_ids == ("conv-a", "conv-b")
    # conv-a comes first in seed 42's order, so all five of its questions are in.
    assert sum(1 for q in sample.question_ids if q.startswith("conv-a/")) == 5


def test_question_level_stratified_fills_the_category_quotas() -> None:
    bench = locomo()
    sample = sample_benchmark(bench, sample_size=6, seed=42)
    assert sample.metadata["category_targets"] == {"1": 2, "2": 2, "3": 1, "4": 1}
    assert sample.metadata["sampled"]["categories"] == {"1": 2, "2": 2, "3": 1, "4": 1}
    assert sample.question_ids == (
        "conv-a/q0",
        "conv-a/q1",
        "conv-a/q2",
        "conv-a/q4",
        "conv-a/q5",
        "conv-b/q2",
    )


def test_num_docs_and_sample_size_together_sample_within_the_documents() -> None:
    bench = locomo()
    sample = sample_benchmark(bench, num_docs=1, sample_size=3, seed=42, mode="random")
    assert sample.doc_ids == ("conv-a",) and len(sample.question_ids) == 3


def test_shortfall_is_recorded() -> None:
    sample = sample_benchmark(locomo(), sample_size=50)
    assert len(sample.question_ids) == 8
    assert sample.metadata["shortfall"] == 42


def test_same_seed_same_sample_other_seed_other_order() -> None:
    bench = load_benchmark("squad", FIXTURES / "squad")
    first = sample_benchmark(bench, sample_size=2, seed=1, mode="random")
    assert first == sample_benchmark(bench, sample_size=2, seed=1, mode="random")
    others = {
        sample_benchmark(bench, sample_size=2, seed=s, mode="random").question_ids
        for s in range(10)
    }
    assert len(others) > 1


def test_beir_samples_queries_and_keeps_the_corpus() -> None:
    bench = load_benchmark("beir", FIXTURES / "beir")
    sample = sample_benchmark(bench, sample_size=2, unit="question", seed=42)
    assert len(sample.question_ids) == 2
    assert sample.doc_ids == ("d1", "d2", "d3", "d4")
    with pytest.raises(SamplingUsageError, match="--sample-size") as info:
        sample_benchmark(bench, num_docs=1, unit="question")
    assert isinstance(info.value, EngineUsageError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "--num-docs N"),
        ({"full": True, "sample_size": 3}, "--full takes the whole benchmark"),
        ({"sample_size": 0}, "at least 1"),
        ({"sample_size": 3, "mode": "even"}, "stratified or random"),
    ],
)
def test_bad_arguments_are_usage_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SamplingUsageError, match=message) as info:
        sample_benchmark(locomo(), **kwargs)  # type: ignore[arg-type]
    assert isinstance(info.value, EngineUsageError)


# ------------------------------------------------------------------ written subsets


@pytest.mark.parametrize(
    ("name", "split", "kwargs"),
    [
        ("locomo", None, {"sample_size": 4}),
        ("syllabusqa", "test", {"sample_size": 3}),
        ("qasper", "dev", {"num_docs": 1}),
        ("financebench", None, {"sample_size": 1}),
        ("squad", None, {"sample_size": 3, "mode": "random"}),
        ("beir", None, {"sample_size": 2}),
    ],
)
def test_written_sample_loads_back_as_exactly_the_sample(
    tmp_path: Path, name: str, split: str | None, kwargs: dict[str, object]
) -> None:
    source = FIXTURES / name
    bench = load_benchmark(name, source, split)
    unit = get_benchmark_spec(name).sampling_unit
    sample = sample_benchmark(bench, seed=42, unit=unit, **kwargs)  # type: ignore[arg-type]
    written = write_sample(sample, bench, source, tmp_path / "out")
    again = load_benchmark(name, tmp_path / "out", split)
    assert tuple(q.id for q in again.questions) == sample.question_ids
    searched = {d.id for d in bench.documents}  # FinanceBench: the filings with a PDF
    assert tuple(d.id for d in again.documents) == tuple(d for d in sample.doc_ids if d in searched)
    originals = {q.id: q for q in bench.questions}
    for q in again.questions:
        assert q == originals[q.id]
    metadata = json.loads((tmp_path / "out" / "sampling_metadata.json").read_text())
    assert metadata["benchmark"] == name and metadata["seed"] == 42
    assert metadata["question_ids"] == list(sample.question_ids)
    assert all(
        len(f["sha256"]) == 64 and not f["file"].startswith("/") for f in metadata["source_files"]
    )
    assert (tmp_path / "out" / "sampling_metadata.json") in written


def test_written_sample_is_byte_identical_for_the_same_seed(tmp_path: Path) -> None:
    bench = locomo()
    for out in ("one", "two"):
        sample = sample_benchmark(bench, sample_size=5, seed=9)
        write_sample(sample, bench, FIXTURES / "locomo", tmp_path / out)
    for name in ("locomo10.json", "sampling_metadata.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_a_beir_sample_keeps_the_corpus_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "beir"
    shutil.copytree(FIXTURES / "beir", source)
    corpus = source / "corpus.jsonl"
    corpus.write_bytes(corpus.read_bytes().replace(b"\n", b"\r\n"))  # Windows line ends
    bench = load_benchmark("beir", source)
    sample = sample_benchmark(bench, sample_size=1, unit="question")
    write_sample(sample, bench, source, tmp_path / "out")
    assert (tmp_path / "out" / "corpus.jsonl").read_bytes() == corpus.read_bytes()


def test_writing_over_the_raw_files_is_refused() -> None:
    bench = locomo()
    sample = sample_benchmark(bench, sample_size=2)
    with pytest.raises(SamplingUsageError, match="overwrite the raw files"):
        write_sample(sample, bench, FIXTURES / "locomo", FIXTURES / "locomo")


def test_real_locomo_stratified_sample() -> None:
    source = DATASETS / "locomo"
    if not source.exists():
        pytest.skip("real data not present")
    bench = load_benchmark("locomo", source)
    sample = sample_benchmark(bench, sample_size=100, seed=42)
    assert Counter(q.split("/")[0] for q in sample.question_ids).total() == 100
    assert sample.metadata["sampled"]["categories"] == {"1": 25, "2": 25, "3": 25, "4": 25}
    # Pinned: the same seed must pick the same documents on every machine.
    assert sample.doc_ids == ("conv-47", "conv-49", "conv-50")
    assert sample.question_ids[:3] == ("conv-47/q0", "conv-47/q1", "conv-47/q2")
