"""How well a judge agrees with human labels: accuracy, Cohen's kappa, a confusion matrix.

Human labels come in three classes, as in FinanceBench's reviewed answers: correct,
incorrect and refusal. A grade becomes one of them like this:

- score >= `correct_at` (default 3: binary's 4, and scale's 3 "minor issues" or 4)
  -> correct. That includes a refusal graded 4 by the refusal heuristic: declining to
  answer is right when the reference declines too.
- a lower score -> refusal when the prediction declines to answer
  (`lasagna_metrics.is_refusal`), otherwise incorrect. The judge only says right or
  wrong; telling a refusal from a wrong answer is the refusal detector's job.
- no score (unparsed or error) -> not compared, and counted as skipped.

Two views are reported: the three classes, and correct versus not correct (incorrect and
refusal merged), which measures the judge alone.

When only some graded answers have a human label, the share of correct answers is also
estimated by prediction-powered inference (`lasagna_metrics.ppi_mean`, PPI++): the judge's
verdicts on every answer, corrected by the labelled ones, with an interval that accounts
for the judge's bias, and how many labels that took.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, TypeGuard

from lasagna_judge._errors import JudgeError, JudgeUsageError
from lasagna_judge._grading import Grade
from lasagna_metrics import PPIEstimate, is_refusal, ppi_mean

Label = Literal["correct", "incorrect", "refusal"]
LABELS: tuple[Label, ...] = ("correct", "incorrect", "refusal")
BINARY_LABELS = ("correct", "not correct")

_SYNONYMS: dict[str, Label] = {
    **dict.fromkeys(
        ("correct", "correct answer", "right", "true", "yes", "pass", "1", "4"), "correct"
    ),
    **dict.fromkeys(
        ("incorrect", "incorrect answer", "wrong", "wrong answer", "false", "no", "fail", "0"),
        "incorrect",
    ),
    **dict.fromkeys(
        ("refusal", "refused", "refuse", "abstain", "abstained", "no answer"), "refusal"
    ),
}


def normalize_label(value: object) -> Label:
    """A human label as one of correct / incorrect / refusal.

    Accepts FinanceBench's "Correct Answer" / "Incorrect Answer" / "Refusal", plain words
    (correct, wrong, refused, ...), booleans, and 1/0 (or 4/0, the binary rubric's scores).
    """
    if isinstance(value, bool):
        return "correct" if value else "incorrect"
    if isinstance(value, int | float | str):
        key = " ".join(str(value).strip().lower().replace("_", " ").split())
        if key.endswith(".0"):
            key = key[:-2]
        label = _SYNONYMS.get(key)
        if label is not None:
            return label
    raise JudgeError(
        f"expected a label meaning correct, incorrect or refusal (e.g. 'Correct Answer', "
        f"'Incorrect Answer', 'Refusal', true/false), found {value!r}"
    )


def judge_label(score: int | None, prediction: str, *, correct_at: int = 3) -> Label | None:
    """The class a grade stands for (see the module docstring); None when it has no score."""
    return None if score is None else _class_of(score, prediction, correct_at)


def _class_of(score: float, prediction: str, correct_at: int) -> Label:
    if score >= correct_at:
        return "correct"
    return "refusal" if is_refusal(prediction) else "incorrect"


@dataclass(frozen=True)
class Agreement:
    """Agreement over one set of classes: rows of `confusion` are the human labels, columns
    the judge's, both in the order of `labels`."""

    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    accuracy: float | None
    kappa: float | None  # None when undefined (nothing compared, or one class throughout)

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels),
            "confusion": [list(row) for row in self.confusion],
            "accuracy": self.accuracy,
            "kappa": self.kappa,
        }


@dataclass(frozen=True)
class Calibration:
    """Agreement between a judge and human labels."""

    compared: int
    skipped: dict[str, int]  # by grade status: pairs left out because the grade has no score
    three_class: Agreement
    binary: Agreement
    correct_at: int
    human_counts: dict[str, int] = field(default_factory=dict)
    judge_counts: dict[str, int] = field(default_factory=dict)
    prediction_powered: PPIEstimate | None = None
    """The share of correct answers over labelled and unlabelled ones (PPI++); None without
    unlabelled graded answers or with fewer than 2 compared."""

    def to_dict(self) -> dict[str, Any]:
        ppi = self.prediction_powered
        return {
            "compared": self.compared,
            "skipped": dict(self.skipped),
            "correct_at": self.correct_at,
            "human_counts": dict(self.human_counts),
            "judge_counts": dict(self.judge_counts),
            "three_class": self.three_class.to_dict(),
            "binary": self.binary.to_dict(),
            "prediction_powered": None
            if ppi is None
            else {
                "quantity": "share of correct answers",
                "mean": ppi.mean,
                "low": ppi.low,
                "high": ppi.high,
                "confidence": ppi.confidence,
                "lam": ppi.lam,
                "labels": ppi.labelled,
                "unlabelled": ppi.unlabelled,
                "judge_mean": ppi.judge_mean,
                "labels_only": {
                    "mean": ppi.labels_mean,
                    "low": ppi.labels_low,
                    "high": ppi.labels_high,
                },
                "equivalent_labels": ppi.equivalent_labels,
            },
        }


def _agreement(human: Sequence[str], judged: Sequence[str], labels: tuple[str, ...]) -> Agreement:
    pairs = Counter(zip(human, judged, strict=True))
    confusion = tuple(tuple(pairs[(h, j)] for j in labels) for h in labels)
    if not human:
        return Agreement(labels, confusion, None, None)
    accuracy = sum(1 for h, j in zip(human, judged, strict=True) if h == j) / len(human)
    return Agreement(labels, confusion, accuracy, _kappa(human, judged, labels))


def _kappa(human: Sequence[str], judged: Sequence[str], labels: tuple[str, ...]) -> float | None:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), in exact fractions: p_o the share of pairs
    that agree, p_e the agreement expected by chance from each side's own label counts.
    Undefined (None) when chance agreement is certain, as when one class is used throughout
    (scikit-learn's `cohen_kappa_score` returns NaN there; tests/judge compare the two)."""
    n = len(human)
    if n == 0:
        return None
    human_counts = Counter(human)
    judged_counts = Counter(judged)
    observed = Fraction(sum(1 for h, j in zip(human, judged, strict=True) if h == j), n)
    chance = Fraction(sum(human_counts[x] * judged_counts[x] for x in labels), n * n)
    if chance == 1:
        return None
    return float((observed - chance) / (1 - chance))


def calibrate(
    grades: Sequence[Grade | Mapping[str, Any]],
    labels: Sequence[object],
    predictions: Sequence[str],
    *,
    correct_at: int = 3,
    unlabelled: Sequence[tuple[Grade | Mapping[str, Any], str]] = (),
    confidence: float = 0.95,
) -> Calibration:
    """Compare grades with human labels, pair by pair (the three sequences are aligned).

    `grades` are Grade objects or their rows (`score` and `status` are read). Labels are
    normalised by `normalize_label`; a label that means nothing raises JudgeError naming
    its position. `unlabelled` holds (grade, prediction) of the graded answers no human
    labelled: with them, the share of correct answers is estimated by PPI++ at
    `confidence`.
    """
    if not len(grades) == len(labels) == len(predictions):
        raise JudgeError(
            f"calibrate needs as many labels and predictions as grades, found "
            f"{len(grades)} grades, {len(labels)} labels, {len(predictions)} predictions"
        )
    human: list[str] = []
    judged: list[str] = []
    skipped: Counter[str] = Counter()
    for index, (g, raw_label, prediction) in enumerate(
        zip(grades, labels, predictions, strict=True)
    ):
        try:
            label = normalize_label(raw_label)
        except JudgeError as exc:
            raise JudgeError(f"label {index}: {exc}") from None
        row = g.to_dict() if isinstance(g, Grade) else g
        score = row.get("score")
        status = str(row.get("status", "ok"))
        if status != "ok" or not _is_number(score):
            skipped[status if status != "ok" else "no score"] += 1
            continue
        human.append(label)
        judged.append(_class_of(score, str(prediction or ""), correct_at))

    def merged(values: list[str]) -> list[str]:
        return ["correct" if v == "correct" else "not correct" for v in values]

    verdicts = []  # the judge's correct (1) or not (0) on the unlabelled answers it scored
    for g, prediction in unlabelled:
        row = g.to_dict() if isinstance(g, Grade) else g
        score = row.get("score")
        if str(row.get("status", "ok")) == "ok" and _is_number(score):
            verdicts.append(float(_class_of(score, str(prediction or ""), correct_at) == "correct"))
    ppi = None
    if verdicts and len(human) >= 2:
        ppi = ppi_mean(
            [float(h == "correct") for h in human],
            [float(j == "correct") for j in judged],
            verdicts,
            confidence=confidence,
        )

    return Calibration(
        compared=len(human),
        skipped=dict(sorted(skipped.items())),
        three_class=_agreement(human, judged, LABELS),
        binary=_agreement(merged(human), merged(judged), BINARY_LABELS),
        correct_at=correct_at,
        human_counts={label: human.count(label) for label in LABELS},
        judge_counts={label: judged.count(label) for label in LABELS},
        prediction_powered=ppi,
    )


def _is_number(value: object) -> TypeGuard[int | float]:
    return not isinstance(value, bool) and isinstance(value, int | float)


@dataclass(frozen=True)
class FileCalibration:
    """`calibrate_files`' result: the agreement, the graded answers no label matched, the
    labels no grade matched, and the warning about a judge that gave one grade to all."""

    calibration: Calibration
    unlabelled: int
    labels_without_grade: int
    warning: str | None


def _read_labels(path: Path, id_field: str, label_field: str) -> dict[str, tuple[int, object]]:
    from lasagna_judge._grade_file import did_you_mean_field, read_jsonl

    labels: dict[str, tuple[int, object]] = {}
    for number, data in read_jsonl(path, "labels file"):
        for name in (id_field, label_field):
            if name not in data:
                raise JudgeError(
                    f"{path}:{number}: missing field {name!r}{did_you_mean_field(name, data)}; "
                    f"each labels row needs {id_field!r} and {label_field!r} (see --id-field and "
                    "--label-field)"
                )
        key = str(data[id_field])
        if key in labels:
            raise JudgeError(
                f"{path}:{number}: duplicate id {data[id_field]!r} (first on line "
                f"{labels[key][0]}); each answer needs one label"
            )
        labels[key] = (number, data[label_field])
    return labels


def _read_graded(path: Path) -> list[dict[str, Any]]:
    from lasagna_judge._grade_file import read_jsonl

    rows = list(read_jsonl(path, "graded file"))
    for number, data in rows:
        for name in ("id", "prediction", "score", "status"):
            if name not in data:
                raise JudgeError(
                    f"{path}:{number}: missing field {name!r}; give the output of "
                    "`lasagna judge grade` (rows with id, prediction, score and status)"
                )
    if not rows:
        raise JudgeError(f"{path}: no rows; expected the output of `lasagna judge grade`")
    return [row for _, row in rows]


def calibrate_files(
    graded_path: Path,
    labels_path: Path,
    *,
    id_field: str = "id",
    label_field: str = "label",
    correct_at: int = 3,
) -> FileCalibration:
    """`calibrate` on the output of `lasagna judge grade` and a file of human labels (JSON
    Lines of `id_field` and `label_field`), matched by id; the graded answers without a
    label feed the PPI++ estimate. Both files are checked to exist before either is read
    (JudgeUsageError); a bad row is a JudgeError naming its line."""
    from lasagna_judge._grade_file import constant_judge

    for path, what in ((graded_path, "graded file"), (labels_path, "labels file")):
        if path.is_dir():
            raise JudgeUsageError(f"{what} {path} is a folder; give the path to a .jsonl file")
        if not path.is_file():
            raise JudgeUsageError(f"{what} not found: {path}; give the path to a .jsonl file")
    graded = _read_graded(graded_path)
    labels = _read_labels(labels_path, id_field, label_field)
    matched = [row for row in graded if str(row["id"]) in labels]
    if not matched:
        raise JudgeError(
            f"no id of {graded_path} appears in {labels_path} (field {id_field!r}); check "
            "that both files describe the same answers, or set --id-field"
        )
    human = []
    for row in matched:
        line, value = labels[str(row["id"])]
        try:
            human.append(normalize_label(value))
        except JudgeError as exc:
            raise JudgeError(f"{labels_path}:{line}: field {label_field!r}: {exc}") from None
    others = [(row, str(row["prediction"])) for row in graded if str(row["id"]) not in labels]
    result = calibrate(
        matched,
        human,
        [str(row["prediction"]) for row in matched],
        correct_at=correct_at,
        unlabelled=others,
    )
    scores = [r["score"] for r in matched if r.get("status") == "ok" and r.get("score") is not None]
    graded_ids = {str(row["id"]) for row in graded}
    return FileCalibration(
        result,
        unlabelled=len(graded) - len(matched),
        labels_without_grade=sum(1 for key in labels if key not in graded_ids),
        warning=constant_judge(scores, against_labels=True),
    )
