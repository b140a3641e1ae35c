"""Calibration against human labels: the label mapping, accuracy, kappa, confusion."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_judge import Grade, JudgeError, calibrate, judge_label, normalize_label

FINANCEBENCH_RESULTS = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "datasets"
    / "financebench"
    / "results"
)


def row(score: int | None, status: str = "ok") -> dict[str, Any]:
    return {"score": score, "status": status}


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ("Correct Answer", "correct"),
        ("Incorrect Answer", "incorrect"),
        ("Refusal", "refusal"),
        ("  CORRECT ", "correct"),
        ("wrong", "incorrect"),
        ("incorrect_answer", "incorrect"),
        ("refused", "refusal"),
        (True, "correct"),
        (False, "incorrect"),
        (1, "correct"),
        (0, "incorrect"),
        (4, "correct"),
        (1.0, "correct"),
    ],
)
def test_labels_are_normalised(raw: object, label: str) -> None:
    assert normalize_label(raw) == label


@pytest.mark.parametrize("raw", ["maybe", "", None, 2, ["Correct"]])
def test_a_meaningless_label_is_an_error(raw: object) -> None:
    with pytest.raises(JudgeError, match="expected a label meaning correct, incorrect or refusal"):
        normalize_label(raw)


def test_grades_map_to_labels() -> None:
    assert judge_label(4, "Paris") == "correct"
    assert judge_label(3, "Paris") == "correct"  # scale: minor issues are still right
    assert judge_label(2, "Lyon") == "incorrect"
    assert judge_label(0, "I don't know.") == "refusal"
    assert judge_label(0, "The context does not contain that information") == "refusal"
    assert judge_label(4, "I don't know.") == "correct"  # refusal heuristic: right to refuse
    assert judge_label(None, "Paris") is None
    assert judge_label(3, "Paris", correct_at=4) == "incorrect"


def test_agreement_figures_match_a_hand_computation() -> None:
    # 10 pairs; human vs judge, three classes
    human = ["correct"] * 5 + ["incorrect"] * 3 + ["refusal"] * 2
    grades = [row(4), row(4), row(4), row(4), row(0), row(0), row(0), row(4), row(0), row(0)]
    predictions = ["x"] * 5 + ["y"] * 3 + ["no idea", "y"]
    result = calibrate(grades, human, predictions)
    assert result.compared == 10 and result.skipped == {}
    # judge: C C C C I | I I C | R I
    assert result.three_class.confusion == ((4, 1, 0), (1, 2, 0), (0, 1, 1))
    assert result.three_class.accuracy == pytest.approx(0.7)
    # kappa = (po - pe) / (1 - pe); row sums 5,3,2; column sums 5,4,1
    pe = (5 * 5 + 3 * 4 + 2 * 1) / 100
    assert result.three_class.kappa == pytest.approx((0.7 - pe) / (1 - pe))
    # correct vs not correct: human 5/5, judge 5/5, agreement 8/10
    assert result.binary.confusion == ((4, 1), (1, 4))
    assert result.binary.accuracy == pytest.approx(0.8)
    assert result.binary.kappa == pytest.approx((0.8 - 0.5) / 0.5)
    assert result.human_counts == {"correct": 5, "incorrect": 3, "refusal": 2}
    assert result.judge_counts == {"correct": 5, "incorrect": 4, "refusal": 1}


def test_unparsed_and_error_grades_are_skipped_and_counted() -> None:
    grades = [row(4), row(None, "unparsed"), row(None, "error"), row(None, "error"), row(0)]
    result = calibrate(grades, ["correct"] * 5, ["a"] * 5)
    assert result.compared == 2
    assert result.skipped == {"error": 2, "unparsed": 1}
    assert result.three_class.accuracy == 0.5  # the skipped ones are not counted as wrong


def test_grade_objects_work_too() -> None:
    g = Grade(4, "ok", "schema", "", "binary", "1", None, "m", "")
    assert calibrate([g], ["Correct Answer"], ["Paris"]).three_class.accuracy == 1.0


def test_undefined_kappa_is_none_not_nan() -> None:
    result = calibrate([row(4), row(4)], ["correct", "correct"], ["a", "b"])
    assert result.three_class.accuracy == 1.0
    assert result.three_class.kappa is None
    empty = calibrate([], [], [])
    assert empty.compared == 0 and empty.three_class.accuracy is None
    assert empty.three_class.kappa is None
    json.dumps(result.to_dict())


def test_mismatched_lengths_and_bad_labels_are_errors() -> None:
    with pytest.raises(JudgeError, match="1 grades, 2 labels, 1 predictions"):
        calibrate([row(4)], ["correct", "correct"], ["a"])
    with pytest.raises(JudgeError, match="label 1: expected a label"):
        calibrate([row(4), row(4)], ["correct", "perhaps"], ["a", "b"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 1, 2, 3, 4, None]),
            st.sampled_from(["correct", "incorrect", "refusal"]),
            st.sampled_from(["Paris", "I don't know"]),
        ),
        max_size=40,
    )
)
def test_confusion_counts_every_compared_pair(cases: list[tuple[int | None, str, str]]) -> None:
    grades = [row(s, "ok" if s is not None else "unparsed") for s, _, _ in cases]
    result = calibrate(grades, [h for _, h, _ in cases], [p for _, _, p in cases])
    assert sum(map(sum, result.three_class.confusion)) == result.compared
    assert sum(map(sum, result.binary.confusion)) == result.compared
    assert result.compared + sum(result.skipped.values()) == len(cases)
    if result.compared:
        diagonal = sum(result.three_class.confusion[i][i] for i in range(3))
        assert result.three_class.accuracy == pytest.approx(diagonal / result.compared)
        assert result.binary.accuracy is not None
        assert result.binary.accuracy >= result.three_class.accuracy  # merging never hurts
    for kappa in (result.three_class.kappa, result.binary.kappa):
        assert kappa is None or -1.0 <= kappa <= 1.0


@pytest.mark.skipif(not FINANCEBENCH_RESULTS.is_dir(), reason="shared FinanceBench data absent")
def test_every_financebench_label_is_understood() -> None:
    labels: Counter[str] = Counter()
    for path in sorted(FINANCEBENCH_RESULTS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            labels[normalize_label(json.loads(line)["label"])] += 1
    assert set(labels) == {"correct", "incorrect", "refusal"}
    assert sum(labels.values()) == 450


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["correct", "incorrect", "refusal"]),
            st.sampled_from(["correct", "incorrect", "refusal"]),
        ),
        min_size=1,
        max_size=60,
    )
)
@settings(deadline=None)  # the first example imports scikit-learn
def test_kappa_and_confusion_equal_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    # scikit-learn is the reference only here: lasagna-judge does not depend on it.
    import warnings

    import numpy as np
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    human = [h for h, _ in pairs]
    judged = [j for _, j in pairs]
    scores = {"correct": 4, "incorrect": 0, "refusal": 0}
    predictions = {"correct": "Paris", "incorrect": "Lyon", "refusal": "I don't know"}
    # A judged class comes from a score and a prediction; build both from the class wanted.
    result = calibrate(
        [row(scores[j]) for j in judged], human, [predictions[j] for j in judged], correct_at=3
    )
    labels = ["correct", "incorrect", "refusal"]
    expected = confusion_matrix(human, judged, labels=labels)
    assert [list(r) for r in result.three_class.confusion] == expected.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the undefined case: NaN with a warning
        reference = float(cohen_kappa_score(human, judged, labels=labels))
    if np.isnan(reference):
        assert result.three_class.kappa is None
    else:
        assert result.three_class.kappa == pytest.approx(reference, abs=1e-12)
