"""Deterministic metrics for RAG benchmarks. Standard library only.

- Answers: `normalize_answer`, `exact_match`, `f1` (identical to the official SQuAD scripts),
  `exact_match_and_f1`, `is_refusal`.
- Evidence: `evidence_recall` (strict and soft matching, as OpenViking's RAG benchmark);
  for evidence given as character spans of documents, `span_metrics` (recall, precision and
  IoU as Chroma's chunking evaluation defines them) and `span_evidence_recall`.
- OpenViking's own figures, bug for bug: `openviking_f1`, `openviking_recall`,
  `openviking_refusal`.
- Ranking (trec_eval conventions): `recall_at_k`, `precision_at_k`, `hit_rate_at_k`,
  `reciprocal_rank`, `average_precision`, `ndcg_at_k`, `r_precision`.
- Multiple choice: `grade_mcq`, `extract_choice`.
- Aggregation: `mean` (with a count of missing values), `bootstrap_ci`, `summarize`,
  `summarize_many`.
- Judge statistics: `ppi_mean` (prediction-powered inference, PPI++: a judge's mean
  corrected by a few human labels, with an honest interval), `krippendorff_alpha` (how far
  a jury of judges agrees, missing grades allowed).
- Claim-level RAG diagnostics: `claim_metrics` (RAGChecker's eleven metrics, named in
  `CLAIM_METRICS`, from entailment labels; an unparsed label leaves a metric None).
- SQuAD files: `evaluate_squad`, `evaluate_squad_files`.
- JSON input: `parse_json` (`json.loads` that refuses JSON nested too deep to read and lone
  surrogate escapes as `json.JSONDecodeError`; the other lasagna packages read with it).

Every function raises `MetricsError` on bad input, with a message that says what was
expected, what was found and what to do.

Every name loads on first use: `parse_json` is what the other packages' file readers
import, and it should not bring the SQuAD scorer, `random` and `statistics` with it.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_metrics._aggregate import (
        ConfidenceInterval,
        Mean,
        Summary,
        bootstrap_ci,
        mean,
        summarize,
        summarize_many,
    )
    from lasagna_metrics._agreement import krippendorff_alpha
    from lasagna_metrics._answers import (
        SquadVersion,
        exact_match,
        exact_match_and_f1,
        f1,
        normalize_answer,
    )
    from lasagna_metrics._claims import CLAIM_METRICS, claim_metrics
    from lasagna_metrics._errors import MetricsError
    from lasagna_metrics._evidence import evidence_recall
    from lasagna_metrics._json import parse_json
    from lasagna_metrics._mcq import extract_choice, grade_mcq
    from lasagna_metrics._openviking import openviking_f1, openviking_recall, openviking_refusal
    from lasagna_metrics._ppi import PPIEstimate, ppi_mean
    from lasagna_metrics._ranking import (
        average_precision,
        hit_rate_at_k,
        ndcg_at_k,
        precision_at_k,
        r_precision,
        recall_at_k,
        reciprocal_rank,
    )
    from lasagna_metrics._refusal import is_refusal
    from lasagna_metrics._spans import SpanScores, span_evidence_recall, span_metrics
    from lasagna_metrics._squad import (
        SquadEvaluation,
        SquadScores,
        evaluate_squad,
        evaluate_squad_files,
    )

_LAZY = {
    **dict.fromkeys(
        (
            "ConfidenceInterval",
            "Mean",
            "Summary",
            "bootstrap_ci",
            "mean",
            "summarize",
            "summarize_many",
        ),
        "lasagna_metrics._aggregate",
    ),
    **dict.fromkeys(
        ("SquadVersion", "exact_match", "exact_match_and_f1", "f1", "normalize_answer"),
        "lasagna_metrics._answers",
    ),
    **dict.fromkeys(("CLAIM_METRICS", "claim_metrics"), "lasagna_metrics._claims"),
    "MetricsError": "lasagna_metrics._errors",
    "krippendorff_alpha": "lasagna_metrics._agreement",
    "evidence_recall": "lasagna_metrics._evidence",
    "parse_json": "lasagna_metrics._json",
    **dict.fromkeys(("extract_choice", "grade_mcq"), "lasagna_metrics._mcq"),
    **dict.fromkeys(
        ("openviking_f1", "openviking_recall", "openviking_refusal"), "lasagna_metrics._openviking"
    ),
    **dict.fromkeys(("PPIEstimate", "ppi_mean"), "lasagna_metrics._ppi"),
    **dict.fromkeys(
        (
            "average_precision",
            "hit_rate_at_k",
            "ndcg_at_k",
            "precision_at_k",
            "r_precision",
            "recall_at_k",
            "reciprocal_rank",
        ),
        "lasagna_metrics._ranking",
    ),
    "is_refusal": "lasagna_metrics._refusal",
    **dict.fromkeys(
        ("SpanScores", "span_evidence_recall", "span_metrics"), "lasagna_metrics._spans"
    ),
    **dict.fromkeys(
        ("SquadEvaluation", "SquadScores", "evaluate_squad", "evaluate_squad_files"),
        "lasagna_metrics._squad",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lasagna_metrics' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # looked up once
    return value


__all__ = [
    "CLAIM_METRICS",
    "ConfidenceInterval",
    "Mean",
    "MetricsError",
    "PPIEstimate",
    "SpanScores",
    "SquadEvaluation",
    "SquadScores",
    "SquadVersion",
    "Summary",
    "average_precision",
    "bootstrap_ci",
    "claim_metrics",
    "evaluate_squad",
    "evaluate_squad_files",
    "evidence_recall",
    "exact_match",
    "exact_match_and_f1",
    "extract_choice",
    "f1",
    "grade_mcq",
    "hit_rate_at_k",
    "is_refusal",
    "krippendorff_alpha",
    "mean",
    "ndcg_at_k",
    "normalize_answer",
    "openviking_f1",
    "openviking_recall",
    "openviking_refusal",
    "parse_json",
    "ppi_mean",
    "precision_at_k",
    "r_precision",
    "recall_at_k",
    "reciprocal_rank",
    "span_evidence_recall",
    "span_metrics",
    "summarize",
    "summarize_many",
]
