"""The adapters on the real benchmark files in ../shared/data/datasets (skipped when absent)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from lasagna_cli.engine.benchmarks import MISSING_ANSWER, load_benchmark

DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "datasets"


def need(*parts: str) -> Path:
    path = DATASETS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    return path


def test_locomo10() -> None:
    bench = load_benchmark("locomo", need("locomo"))
    assert len(bench.documents) == 10
    assert len(bench.questions) == 1540
    assert bench.skipped == {"category 5 (adversarial)": 446}
    assert Counter(q.category for q in bench.questions) == {
        "1": 282,
        "2": 321,
        "3": 96,
        "4": 841,
    }
    assert sum(1 for q in bench.questions if not q.evidence) == 4
    assert len({q.id for q in bench.questions}) == 1540
    # Every repaired evidence id is a dialogue id; all but a few name a turn in the document.
    dia = re.compile(r"D\d+:\d+")
    found = missing = 0
    texts = {d.id: d.text for d in bench.documents}
    for q in bench.questions:
        for item in q.evidence:
            assert dia.fullmatch(item), item
            if f"[{item}]" in texts[q.doc_ids[0]]:
                found += 1
            else:
                missing += 1
    assert (found, missing) == (2359, 3)
    assert all(
        q.references and all(isinstance(r, str) for r in q.references) for q in bench.questions
    )
    assert sum(1 for q in bench.questions if q.references == (MISSING_ANSWER,)) == 0


def test_syllabusqa_test_split() -> None:
    bench = load_benchmark("syllabusqa", need("syllabusqa"), "test")
    assert len(bench.documents) == 13
    assert len(bench.questions) == 948
    assert bench.skipped == {"question type 'no answer'": 155}
    assert set(Counter(q.category for q in bench.questions).values()) == {158}
    assert all(q.evidence for q in bench.questions)
    for doc in bench.documents:
        assert len(doc.text) > 1000 and "\r" not in doc.text
    # Mac Roman decoding: the curly apostrophe, not a stray accented letter.
    assert (
        "City University’s database"
        in bench.document("BCH8016 Solid State Analysis (SYL) 012219 - revised").text
    )


def test_syllabusqa_val_split_has_no_syllabus_texts_here() -> None:
    from lasagna_cli.engine.benchmarks import BenchmarkFileError

    with pytest.raises(BenchmarkFileError, match="syllabi_text_val"):
        load_benchmark("syllabusqa", need("syllabusqa"), "val")


def test_qasper_files() -> None:
    dev = load_benchmark("qasper", need("qasper"), "dev")  # hf_dummy_qasper-dev-v0.1.json
    assert [d.id for d in dev.documents] == ["1912.01214"]
    assert len(dev.questions) == 4
    small = load_benchmark("qasper", need("qasper", "qasper_sample_small.json"), "train")
    assert len(small.questions) + sum(small.skipped.values()) == 4
    for bench in (dev, small):
        for q in bench.questions:
            assert q.question.startswith('Based on the paper "')
            assert q.references and q.category in ("extractive", "free_form", "yes_no")


def test_financebench_questions_and_pages() -> None:
    bench = load_benchmark("financebench", need("financebench"), with_text=False)
    assert len(bench.questions) == 150
    assert len({q.doc_ids[0] for q in bench.questions}) == 84
    assert Counter(q.category for q in bench.questions) == {
        "metrics-generated": 50,
        "domain-relevant": 50,
        "novel-generated": 50,
    }
    assert all(q.evidence for q in bench.questions)
    # As OpenViking's adapter: only the filings with their PDF (3M's here) are searched.
    assert [(d.id, d.metadata["source"]) for d in bench.documents] == [("3M_2018_10K", "pdf")]


@pytest.mark.slow
def test_financebench_reads_the_3m_10k_pdf() -> None:
    need("financebench", "pdfs", "3M_2018_10K.pdf")
    bench = load_benchmark("financebench", need("financebench"))
    text = bench.document("3M_2018_10K").text
    assert len(text) > 300_000
    assert "Purchases of property, plant and equipment" in text


def test_squad_haystack_subset() -> None:
    bench = load_benchmark("squad", need("squad", "haystack_small.json"))
    assert len(bench.questions) == 626
    assert Counter(q.category for q in bench.questions) == {"unanswerable": 333, "answerable": 293}
    texts = {d.id: d.text for d in bench.documents}
    for q in bench.questions:
        if q.category == "answerable":
            assert q.evidence[0] in texts[q.doc_ids[0]]
            assert any(r in q.evidence[0] for r in q.references)


@pytest.mark.parametrize(("name", "questions"), [("msmarco", 43), ("dbpedia", 40)])
def test_beir_folders(name: str, questions: int) -> None:
    bench = load_benchmark("beir", need("beir", name))
    assert len(bench.documents) == 5000
    assert len(bench.questions) == questions
    assert all(q.evidence and not q.references for q in bench.questions)


def test_beir_arcd_drops_unknown_judgments_and_says_so() -> None:
    bench = load_benchmark("beir", need("beir", "arcd"))
    assert any("dropped" in note for note in bench.notes)


def test_beir_folder_without_corpus_names_it() -> None:
    from lasagna_cli.engine.benchmarks import BenchmarkFileError

    with pytest.raises(BenchmarkFileError, match=r"corpus\.jsonl is missing"):
        load_benchmark("beir", need("beir", "scifact"))
