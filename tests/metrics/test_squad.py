"""Scoring SQuAD files: the same numbers as the official scripts, and clear errors."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import MetricsError, evaluate_squad, evaluate_squad_files

WORDS = ["the", "a", "Paris", "paris,", "cat", "cat.", "Denver Broncos", "1066", "", "An", "é"]


def squad(
    questions: list[tuple[str | int, list[str]]], version: str | None = "v2.0"
) -> dict[str, Any]:
    """A dataset of one article; questions are (id, answer texts)."""
    qas = [
        {"id": qid, "question": "?", "answers": [{"text": t, "answer_start": 0} for t in answers]}
        for qid, answers in questions
    ]
    data: dict[str, Any] = {"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]}
    if version is not None:
        data["version"] = version
    return data


answer_text = st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join)
questions = st.lists(
    st.tuples(st.sampled_from([f"q{i}" for i in range(8)]), st.lists(answer_text, max_size=3)),
    min_size=1,
    max_size=10,
)  # repeated ids happen, as the official scripts allow


@settings(max_examples=300, deadline=None)
@given(questions, st.data())
def test_v2_equals_the_official_script(
    official: ModuleType, qs: list[tuple[str, list[str]]], data: st.DataObject
) -> None:
    dataset = squad(qs)
    ids = list(dict.fromkeys(qid for qid, _ in qs))
    preds = {qid: data.draw(answer_text) for qid in ids}
    result = evaluate_squad(dataset, preds)
    assert result.version == "2.0"
    assert result.official() == dict(official.main_v2(dataset, preds))
    # With no-answer probabilities and a threshold, including the best thresholds.
    na_probs = {qid: data.draw(st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0])) for qid in ids}
    thresh = data.draw(st.sampled_from([0.0, 0.5, 1.0]))
    result = evaluate_squad(dataset, preds, na_probs=na_probs, na_prob_thresh=thresh)
    assert result.official() == dict(official.main_v2(dataset, preds, na_probs, thresh))
    assert result.official_json() == json.dumps(
        official.main_v2(dataset, preds, na_probs, thresh), indent=2
    )


@settings(max_examples=300, deadline=None)
@given(questions, st.data())
def test_v1_equals_the_official_script(
    official: ModuleType, qs: list[tuple[str, list[str]]], data: st.DataObject
) -> None:
    qs = [(qid, answers or ["x"]) for qid, answers in qs]  # v1.1: every question has answers
    dataset = squad(qs, version="1.1")
    ids = list(dict.fromkeys(qid for qid, _ in qs))
    preds = {qid: data.draw(answer_text) for qid in data.draw(st.lists(st.sampled_from(ids)))}
    if not preds:
        return
    result = evaluate_squad(dataset, preds)
    assert result.version == "1.1"
    assert result.official() == official.evaluate_v1(dataset["data"], preds)
    assert result.official_json() == json.dumps(official.evaluate_v1(dataset["data"], preds))


def test_shared_v1_subset_matches_the_official_script(
    official: ModuleType, squad_dir: Path
) -> None:
    preds_path = squad_dir / "bert_predictions_subset293.json"
    data_path = squad_dir / "squad_v1_dev_subset_from_haystack_small.json"
    dataset = json.loads(data_path.read_text(encoding="utf-8"))
    preds = json.loads(preds_path.read_text(encoding="utf-8"))
    want = official.evaluate_v1(dataset["data"], preds)
    result = evaluate_squad_files(preds_path, data_path)
    assert (result.version, result.version_source) == ("1.1", "dataset")
    assert result.official() == want
    assert result.overall.total == 293 and result.missing == ()
    # Scored with the v2.0 rules, it matches the v2.0 script too.
    assert evaluate_squad_files(preds_path, data_path, version="2.0").official() == dict(
        official.main_v2(dataset, preds)
    )


def test_shared_v2_dataset_with_unanswerable_questions(
    official: ModuleType, squad_dir: Path
) -> None:
    dataset = json.loads((squad_dir / "haystack_small.json").read_text(encoding="utf-8"))
    rng = random.Random(2)
    preds: dict[str, str] = {}
    na_probs: dict[str, float] = {}
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                gold = [a["text"] for a in qa["answers"]] or [""]
                words = rng.choice(gold).split()
                cut = rng.randint(0, len(words))
                preds[qa["id"]] = rng.choice(
                    [" ".join(words), " ".join(words[cut:]), "", "the " + " ".join(words[:cut])]
                )
                na_probs[qa["id"]] = round(rng.random(), 2)
    result = evaluate_squad(dataset, preds)
    assert result.has_ans is not None and result.no_ans is not None
    assert result.has_ans.total + result.no_ans.total == result.overall.total == 626
    assert result.official() == dict(official.main_v2(dataset, preds))
    with_probs = evaluate_squad(dataset, preds, na_probs=na_probs, na_prob_thresh=0.5)
    assert with_probs.official() == dict(official.main_v2(dataset, preds, na_probs, 0.5))
    assert with_probs.best is not None


def test_version_comes_from_the_dataset_or_its_questions() -> None:
    preds = {"q1": "Paris"}
    assert evaluate_squad(squad([("q1", ["Paris"])], "1.1"), preds).version_source == "dataset"
    detected = evaluate_squad(squad([("q1", ["Paris"]), ("q2", [])], None), preds)
    assert (detected.version, detected.version_source) == ("2.0", "detected")
    default = evaluate_squad(squad([("q1", ["Paris"])], None), preds)
    assert (default.version, default.version_source) == ("2.0", "default")
    forced = evaluate_squad(squad([("q1", ["Paris"])], "v2.0"), preds, version="1.1")
    assert (forced.version, forced.version_source) == ("1.1", "caller")


def test_integer_question_ids_are_read_as_strings() -> None:
    # Haystack's SQuAD files number their questions; JSON predictions are keyed by strings.
    dataset = squad([(7211011040021040393, ["Carla"]), (-5782547119306399562, ["This"]), (3, [])])
    result = evaluate_squad(dataset, {"7211011040021040393": "Carla", "-5782547119306399562": "x"})
    assert result.missing == ("3",)
    assert result.overall.exact == pytest.approx(100 / 3)
    assert result.has_ans is not None and result.has_ans.exact == 50.0
    with pytest.raises(MetricsError, match=r"not in dataset \(first: 4\)"):
        evaluate_squad(dataset, {"4": "x"})
    probs = {"7211011040021040393": 0.1, "-5782547119306399562": 0.9, "3": 0.8}
    preds = {"7211011040021040393": "Carla", "-5782547119306399562": "", "3": ""}
    assert evaluate_squad(dataset, preds, na_probs=probs).best is not None


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(), st.lists(answer_text, max_size=2)), min_size=1, max_size=8),
    st.data(),
)
def test_a_numbered_dataset_scores_as_its_string_numbered_twin(
    qs: list[tuple[int, list[str]]], data: st.DataObject
) -> None:
    preds = {str(qid): data.draw(answer_text) for qid, _ in qs if data.draw(st.booleans())}
    if not preds:
        return
    as_text = [(str(qid), answers) for qid, answers in qs]
    for version in ("v2.0", "v1.1"):
        if version == "v1.1" and not all(answers for _, answers in qs):
            continue
        assert evaluate_squad(squad(list(qs), version), preds) == evaluate_squad(
            squad(list(as_text), version), preds
        )


def test_missing_predictions_score_zero_and_are_listed() -> None:
    dataset = squad([("q1", ["Paris"]), ("q2", ["cat"]), ("q3", [])])
    result = evaluate_squad(dataset, {"q1": "Paris"})
    assert result.missing == ("q2", "q3")
    assert result.overall.total == 3
    assert result.overall.exact == pytest.approx(100 / 3)
    assert result.no_ans is not None and result.no_ans.exact == 0.0


@pytest.mark.parametrize(
    ("dataset", "preds", "message"),
    [
        (
            [],
            {"q1": "x"},
            r'expected a SQuAD dataset file .*\{"data": \[...\]\}\), found a JSON list',
        ),
        ({"data": [{"title": "t"}]}, {"q1": "x"}, r'data\[0\] should hold a "paragraphs" list'),
        (
            {"data": [{"paragraphs": [{"qas": [{"id": "q1"}]}]}]},
            {"q1": "x"},
            r'qas\[0\] \(id q1\) should have "answers"',
        ),
        ({"data": [{"paragraphs": [{"qas": [{"answers": []}]}]}]}, {"q1": "x"}, 'string "id"'),
        (squad([(1.5, [])]), {"q1": "x"}, r'string "id" \(or a whole number\), found 1\.5'),
        (squad([(True, [])]), {"q1": "x"}, r'string "id" \(or a whole number\), found true'),
        ({"data": []}, {"q1": "x"}, "holds no questions"),
        (squad([("q1", ["x"])]), ["x"], "expected predictions as a JSON object"),
        (squad([("q1", ["x"])]), {"q1": None}, 'prediction for "q1" should be a string'),
        (squad([("q1", ["x"])]), {}, "holds no predictions"),
        (squad([("q1", ["x"])]), squad([("q1", ["x"])]), "looks like a SQuAD dataset"),
        (
            squad([("q1", ["x"])]),
            {"q1": "x", "zz": "y", "zy": "z"},
            r"2 prediction\(s\) for question ids not in dataset \(first: zz, zy\)",
        ),
        (squad([("q1", ["x"]), ("q2", [])], "1.1"), {"q1": "x"}, "question q2 has no answers"),
    ],
)
def test_malformed_input_is_one_clear_error(dataset: Any, preds: Any, message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        evaluate_squad(dataset, preds)


def test_no_answer_probabilities_must_cover_the_predictions() -> None:
    dataset = squad([("q1", ["x"]), ("q2", [])])
    with pytest.raises(MetricsError, match=r"none for 1 predicted question\(s\) \(first: q2\)"):
        evaluate_squad(dataset, {"q1": "x", "q2": ""}, na_probs={"q1": 0.3})
    with pytest.raises(MetricsError, match="every question needs a prediction"):
        evaluate_squad(dataset, {"q1": "x"}, na_probs={"q1": 0.3, "q2": 0.1})
    with pytest.raises(MetricsError, match=r"v2\.0 scoring only"):
        evaluate_squad(squad([("q1", ["x"])]), {"q1": "x"}, version="1.1", na_probs={"q1": 0.3})
    with pytest.raises(MetricsError, match="probability of no answer"):
        evaluate_squad(dataset, {"q1": "x", "q2": ""}, na_probs={"q1": "high", "q2": 0.1})


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    good = tmp_path / "data.json"
    good.write_text(json.dumps(squad([("q1", ["x"])])), encoding="utf-8")
    preds = tmp_path / "preds.json"
    preds.write_text('{"q1": "x",}', encoding="utf-8")
    with pytest.raises(MetricsError, match=rf"predictions {preds}: not valid JSON .*line 1"):
        evaluate_squad_files(preds, good)
    with pytest.raises(MetricsError, match="no such file"):
        evaluate_squad_files(tmp_path / "nope.json", good)
    with pytest.raises(MetricsError, match="is a folder"):
        evaluate_squad_files(tmp_path, good)
    preds.write_bytes(b'{"q1": "\xff"}')
    with pytest.raises(MetricsError, match="not UTF-8"):
        evaluate_squad_files(preds, good)
    preds.write_text('{"q1": "x"}', encoding="utf-8")
    probs = tmp_path / "na.json"
    probs.write_text('{"q1": 0.2}', encoding="utf-8")
    result = evaluate_squad_files(preds, good, na_probs=probs)
    assert result.best is not None and result.overall.exact == 100.0


def test_swapped_files_are_named_as_such() -> None:
    dataset = squad([("q1", ["x"])])
    with pytest.raises(MetricsError, match="predictions: this looks like a SQuAD dataset"):
        evaluate_squad({"q1": "x"}, dataset)
    with pytest.raises(MetricsError, match="dataset: this looks like a predictions file"):
        evaluate_squad({"q1": "x"}, {"q1": "x"})
    with pytest.raises(MetricsError, match=r"found an object with keys a, b, c, \.\.\.$"):
        evaluate_squad({"a": 1, "b": 2, "c": 3, "d": 4}, {"q1": "x"})
