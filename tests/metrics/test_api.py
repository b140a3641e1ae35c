"""The public surface of lasagna-metrics is pinned: other tools call these names."""

import subprocess
import sys

import lasagna_metrics

PUBLIC = [
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


def test_all_is_pinned() -> None:
    assert sorted(lasagna_metrics.__all__) == PUBLIC


def test_every_public_name_exists_and_is_documented() -> None:
    for name in PUBLIC:
        obj = getattr(lasagna_metrics, name)
        if callable(obj) and name != "SquadVersion":
            assert obj.__doc__, f"{name} has no docstring"


def test_metrics_error_is_a_value_error() -> None:
    # Callers that catch ValueError keep working; the CLI maps it to exit code 1.
    assert issubclass(lasagna_metrics.MetricsError, ValueError)


def test_parse_json_alone_loads_no_scorer() -> None:
    """The other packages' file readers import `parse_json`; a dry run of synthesize should
    not pay for the SQuAD scorer, the bootstrap and `statistics` with it."""
    code = (
        "import sys; from lasagna_metrics import parse_json; "
        "print(sorted(m for m in sys.modules if m.startswith('lasagna_metrics.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['lasagna_metrics._json']"]
