"""Scoring SQuAD v1.1 / v2.0 prediction files, as the official evaluation scripts do.

The numbers equal the official scripts' (v1.1 `evaluate-v1.1.py`, v2.0 `evaluate-v2.0.py`),
including the order of every sum, so they match to the last bit. Where the official scripts
crash or stay silent, this module says what is wrong instead:
- a prediction for a question id the dataset does not have is an error (the wrong
  predictions file, or the wrong dataset);
- a question without a prediction scores 0 and is counted in the totals, as v1.1 does (v2.0
  crashes), and is listed in `SquadEvaluation.missing`;
- a malformed file is an error naming the file and the place in it (the files are read and
  checked in `_squad_input`).
A question id that is a whole number (Haystack's SQuAD files number their questions) is read
as its decimal string, the key a JSON predictions file gives it; the official scripts would
count every such question as unanswered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_metrics._answers import SquadVersion, _best_f1, _gold_tokens, _tokens
from lasagna_metrics._errors import MetricsError
from lasagna_metrics._squad_input import (
    _load_json,
    _na_probs,
    _predictions,
    _Question,
    _questions,
)


@dataclass(frozen=True, slots=True)
class SquadScores:
    """EM and F1 in percent over `total` questions."""

    exact: float
    f1: float
    total: int


@dataclass(frozen=True, slots=True)
class SquadEvaluation:
    """The result of scoring one predictions file against one SQuAD dataset."""

    version: SquadVersion
    """The rules used: "1.1" or "2.0"."""
    version_source: str
    """Why those rules: "dataset", "detected", "default" or "caller"."""
    overall: SquadScores
    has_ans: SquadScores | None
    no_ans: SquadScores | None
    missing: tuple[str, ...]
    """Question ids without a prediction (scored 0)."""
    best: dict[str, float] | None
    """best_exact, best_exact_thresh, best_f1, best_f1_thresh, when no-answer
    probabilities were given (v2.0 only)."""

    def official(self) -> dict[str, float | int]:
        """The dict the official script prints for the same files."""
        if self.version == "1.1":
            return {"exact_match": self.overall.exact, "f1": self.overall.f1}
        out: dict[str, float | int] = {
            "exact": self.overall.exact,
            "f1": self.overall.f1,
            "total": self.overall.total,
        }
        for prefix, scores in (("HasAns", self.has_ans), ("NoAns", self.no_ans)):
            if scores is not None:
                out[f"{prefix}_exact"] = scores.exact
                out[f"{prefix}_f1"] = scores.f1
                out[f"{prefix}_total"] = scores.total
        if self.best is not None:
            out.update(self.best)
        return out

    def official_json(self) -> str:
        """The official script's output, byte for byte (v2.0 indents, v1.1 does not)."""
        if self.version == "1.1":
            return json.dumps(self.official())
        return json.dumps(self.official(), indent=2)

    def table(self) -> str:
        """The scores as a plain-text table: the rules and why, EM, F1 and questions
        overall, HasAns and NoAns, and the best no-answer thresholds when known."""
        lines = [
            f"SQuAD v{self.version} rules ({_VERSION_SOURCES[self.version_source]})",
            f"{'':<9}{'EM':>8}{'F1':>8}{'questions':>11}",
        ]
        rows = [("overall", self.overall), ("HasAns", self.has_ans), ("NoAns", self.no_ans)]
        for name, scores in rows:
            if scores is not None:
                lines.append(f"{name:<9}{scores.exact:>8.2f}{scores.f1:>8.2f}{scores.total:>11}")
        if self.best is not None:
            best = self.best
            lines.append(
                f"best EM {best['best_exact']:.2f} at no-answer threshold "
                f"{best['best_exact_thresh']:g}; best F1 {best['best_f1']:.2f} at "
                f"{best['best_f1_thresh']:g}"
            )
        return "\n".join(lines)


#: Why a SquadEvaluation's rules were chosen, as its table says it.
_VERSION_SOURCES = {
    "dataset": "from the dataset's version field",
    "detected": "the dataset has unanswerable questions",
    "default": "the dataset names no version; --v1 for the v1.1 rules",
    "caller": "as asked",
}


def _resolve_version(
    dataset: Mapping[str, Any], questions: list[_Question], version: SquadVersion | None
) -> tuple[SquadVersion, str]:
    unanswerable = next((q.qid for q in questions if not q.answers), None)
    if version is not None:
        if version not in ("1.1", "2.0"):
            raise MetricsError(f'version: expected "1.1" or "2.0", found {version!r}')
        source = "caller"
        chosen: SquadVersion = version
    else:
        declared = str(dataset.get("version", "")).lstrip("v")
        if declared in ("1.1", "2.0"):
            chosen, source = ("1.1" if declared == "1.1" else "2.0"), "dataset"
        elif unanswerable is not None:
            chosen, source = "2.0", "detected"
        else:
            chosen, source = "2.0", "default"
    if chosen == "1.1" and unanswerable is not None:
        raise MetricsError(
            f"question {unanswerable} has no answers, which SQuAD v1.1 scoring cannot handle "
            "(a v2.0 dataset?); score it with the v2.0 rules"
        )
    return chosen, source


def _percent(
    exact_scores: dict[str, float], f1_scores: dict[str, float], qids: list[str]
) -> SquadScores:
    # make_eval_dict with a qid_list, sums in the same order.
    total = len(qids)
    return SquadScores(
        exact=100.0 * sum(exact_scores[k] for k in qids) / total,
        f1=100.0 * sum(f1_scores[k] for k in qids) / total,
        total=total,
    )


def _evaluate_v1(questions: list[_Question], preds: Mapping[str, str]) -> SquadScores:
    # evaluate-v1.1.py: every question counts (duplicates too); a missing prediction adds 0.
    exact_match: float = 0
    f1: float = 0
    total = 0
    for q in questions:
        total += 1
        if q.qid not in preds:
            continue
        pred = _tokens(preds[q.qid])
        gold = _gold_tokens(q.answers, "1.1")
        exact_match += pred in gold
        f1 += _best_f1(gold, pred, "1.1")
    return SquadScores(exact=100.0 * exact_match / total, f1=100.0 * f1 / total, total=total)


def _best_thresh(
    preds: Mapping[str, str],
    scores: dict[str, float],
    na_probs: Mapping[str, float],
    has_ans: dict[str, bool],
) -> tuple[float, float]:
    # find_best_thresh from evaluate-v2.0.py.
    num_no_ans = sum(1 for k in has_ans if not has_ans[k])
    cur_score: float = num_no_ans
    best_score = cur_score
    best_thresh = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        cur_score += scores[qid] if has_ans[qid] else (-1 if preds[qid] else 0)
        if cur_score > best_score:
            best_score = cur_score
            best_thresh = na_probs[qid]
    return 100.0 * best_score / len(scores), best_thresh


def evaluate_squad(
    dataset: Mapping[str, Any],
    predictions: Mapping[str, str],
    *,
    version: SquadVersion | None = None,
    na_probs: Mapping[str, float] | None = None,
    na_prob_thresh: float = 1.0,
    dataset_name: str = "dataset",
    predictions_name: str = "predictions",
) -> SquadEvaluation:
    """Score parsed SQuAD predictions (`{question id: answer}`) against a parsed dataset.

    `version` None picks the rules from the dataset's "version" field, else v2.0 (which a
    dataset with unanswerable questions needs). `na_probs` (question id -> probability of
    no answer) and `na_prob_thresh` work as the official v2.0 script's options: a question
    whose probability exceeds the threshold is scored as answered "", and the best
    thresholds are reported.
    """
    preds = _predictions(predictions, predictions_name)  # first: catches swapped files
    questions = _questions(dataset, dataset_name)
    chosen, source = _resolve_version(dataset, questions, version)
    known = {q.qid for q in questions}
    unknown = [qid for qid in preds if qid not in known]
    if unknown:
        raise MetricsError(
            f"{predictions_name}: {len(unknown)} prediction(s) for question ids not in "
            f"{dataset_name} (first: {', '.join(unknown[:3])}); check that the predictions "
            "belong to this dataset"
        )
    missing = tuple(dict.fromkeys(q.qid for q in questions if q.qid not in preds))
    if na_probs is not None:
        if chosen == "1.1":
            raise MetricsError(
                "no-answer probabilities apply to SQuAD v2.0 scoring only; drop them or "
                "score with the v2.0 rules"
            )
        na_probs = _na_probs(na_probs, "no-answer probabilities")
        if missing:
            raise MetricsError(
                f"{predictions_name}: no prediction for {len(missing)} question(s) (first: "
                f"{', '.join(missing[:3])}); with no-answer probabilities every question "
                "needs a prediction"
            )
        absent = [qid for qid in preds if qid not in na_probs]
        if absent:
            raise MetricsError(
                f"no-answer probabilities: none for {len(absent)} predicted question(s) "
                f"(first: {', '.join(absent[:3])}); give one per question"
            )

    if chosen == "1.1":
        overall = _evaluate_v1(questions, preds)
        return SquadEvaluation(
            version="1.1",
            version_source=source,
            overall=overall,
            has_ans=overall,
            no_ans=None,
            missing=missing,
            best=None,
        )

    # evaluate-v2.0.py, step by step.
    has_ans = {q.qid: bool(q.answers) for q in questions}
    exact_raw: dict[str, float] = {}
    f1_raw: dict[str, float] = {}
    for q in questions:
        if q.qid not in preds:
            exact_raw[q.qid] = f1_raw[q.qid] = 0.0
            continue
        pred = _tokens(preds[q.qid])
        gold = _gold_tokens(q.answers, "2.0")
        exact_raw[q.qid] = 1.0 if pred in gold else 0.0
        f1_raw[q.qid] = _best_f1(gold, pred, "2.0")
    probs: Mapping[str, float] = na_probs if na_probs is not None else {}
    exact_thresh: dict[str, float] = {}
    f1_thresh: dict[str, float] = {}
    for raw, thresh in ((exact_raw, exact_thresh), (f1_raw, f1_thresh)):
        for qid, score in raw.items():
            if probs.get(qid, 0.0) > na_prob_thresh:
                thresh[qid] = float(not has_ans[qid])
            else:
                thresh[qid] = score
    total = len(exact_thresh)
    overall = SquadScores(
        exact=100.0 * sum(exact_thresh.values()) / total,
        f1=100.0 * sum(f1_thresh.values()) / total,
        total=total,
    )
    has_ans_qids = [k for k, v in has_ans.items() if v]
    no_ans_qids = [k for k, v in has_ans.items() if not v]
    best = None
    if na_probs is not None:
        best_exact, exact_best_thresh = _best_thresh(preds, exact_raw, na_probs, has_ans)
        best_f1, f1_best_thresh = _best_thresh(preds, f1_raw, na_probs, has_ans)
        best = {
            "best_exact": best_exact,
            "best_exact_thresh": exact_best_thresh,
            "best_f1": best_f1,
            "best_f1_thresh": f1_best_thresh,
        }
    return SquadEvaluation(
        version="2.0",
        version_source=source,
        overall=overall,
        has_ans=_percent(exact_thresh, f1_thresh, has_ans_qids) if has_ans_qids else None,
        no_ans=_percent(exact_thresh, f1_thresh, no_ans_qids) if no_ans_qids else None,
        missing=missing,
        best=best,
    )


def evaluate_squad_files(
    predictions: str | Path,
    dataset: str | Path,
    *,
    version: SquadVersion | None = None,
    na_probs: str | Path | None = None,
    na_prob_thresh: float = 1.0,
) -> SquadEvaluation:
    """`evaluate_squad` on files: a predictions JSON, a SQuAD dataset JSON and optionally
    a no-answer probabilities JSON. Every problem is a `MetricsError` naming the file."""
    preds = _load_json(predictions, "predictions", unique_keys=True)
    data = _load_json(dataset, "dataset")
    probs = (
        None
        if na_probs is None
        else _load_json(na_probs, "no-answer probabilities", unique_keys=True)
    )
    return evaluate_squad(
        data,
        preds,
        version=version,
        na_probs=probs,
        na_prob_thresh=na_prob_thresh,
        dataset_name=f"dataset {dataset}",
        predictions_name=f"predictions {predictions}",
    )
