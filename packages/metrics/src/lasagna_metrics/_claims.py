"""RAGChecker's claim-level metrics (Ru et al. 2024, "RAGChecker: A Fine-grained Framework
for Diagnosing Retrieval-Augmented Generation", arXiv 2408.08067), from entailment labels.

The four label sets are named as RAGChecker names them (`ragchecker/computation.py`):
- `answer2response[i]`: response claim i checked against the reference answer;
- `response2answer[i]`: reference claim i checked against the response;
- `retrieved2answer[i][j]`: reference claim i checked against retrieved passage j;
- `retrieved2response[i][j]`: response claim i checked against retrieved passage j.
A label is "entailment", "neutral" or "contradiction" (only entailment counts as true, as
in RAGChecker), or None when its check could not be parsed. A metric that needs a None
label is None for that question: an unparsed check is counted apart, never as false.
Otherwise every value equals RAGChecker's, empty inputs included (they give 0.0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from lasagna_metrics._errors import MetricsError

Label = str | None
LABELS = ("entailment", "neutral", "contradiction")

#: RAGChecker's metric names, in its groups' order (overall, retriever, generator).
CLAIM_METRICS = (
    "precision",
    "recall",
    "f1",
    "claim_recall",
    "context_precision",
    "context_utilization",
    "noise_sensitivity_in_relevant",
    "noise_sensitivity_in_irrelevant",
    "hallucination",
    "self_knowledge",
    "faithfulness",
)
"""RAGChecker's claim-level metrics, under its names, in the order `claim_metrics` gives them."""

#: The label sets each metric reads (RAGChecker's METRIC_REQUIREMENTS).
REQUIREMENTS: Mapping[str, tuple[str, ...]] = {
    "precision": ("answer2response",),
    "recall": ("response2answer",),
    "f1": ("answer2response", "response2answer"),
    "claim_recall": ("retrieved2answer",),
    "context_precision": ("retrieved2answer",),
    "context_utilization": ("retrieved2answer", "response2answer"),
    "noise_sensitivity_in_relevant": ("retrieved2response", "answer2response", "retrieved2answer"),
    "noise_sensitivity_in_irrelevant": (
        "retrieved2response",
        "answer2response",
        "retrieved2answer",
    ),
    "hallucination": ("retrieved2response", "answer2response"),
    "self_knowledge": ("retrieved2response", "answer2response"),
    "faithfulness": ("retrieved2response",),
}


def _true(label: Label) -> bool:
    return label == "entailment"


def _check(labels: Sequence[Label], where: str) -> None:
    for label in labels:
        if label is not None and label not in LABELS:
            raise MetricsError(
                f"{where}: expected a label in {', '.join(LABELS)} or None, found {label!r}"
            )


def _check_shapes(
    answer2response: Sequence[Label] | None,
    response2answer: Sequence[Label] | None,
    retrieved2answer: Sequence[Sequence[Label]] | None,
    retrieved2response: Sequence[Sequence[Label]] | None,
) -> None:
    """Claims and passages must line up across the label sets; a mismatch is a bug upstream."""
    pairs = (
        ("response2answer", response2answer, "retrieved2answer", retrieved2answer),
        ("answer2response", answer2response, "retrieved2response", retrieved2response),
    )
    for name, claims, matrix_name, matrix in pairs:
        if claims is not None and matrix is not None and len(claims) != len(matrix):
            raise MetricsError(
                f"{name} has {len(claims)} claims and {matrix_name} {len(matrix)} rows; "
                "expected one row per claim"
            )
    widths = {len(row) for m in (retrieved2answer, retrieved2response) if m for row in m}
    if len(widths) > 1:
        raise MetricsError(
            f"the retrieved label rows have {sorted(widths)} passages; expected one width"
        )


def _mean(values: Sequence[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


def claim_metrics(
    *,
    answer2response: Sequence[Label] | None = None,
    response2answer: Sequence[Label] | None = None,
    retrieved2answer: Sequence[Sequence[Label]] | None = None,
    retrieved2response: Sequence[Sequence[Label]] | None = None,
) -> dict[str, float | None]:
    """RAGChecker's eleven metrics of one question (see the module docstring); a metric
    whose label sets are absent (None: no reference, no passages) or hold an unparsed label
    is None. Without a reference only faithfulness can be computed."""
    sets: dict[str, Sequence[Label] | Sequence[Sequence[Label]] | None] = {
        "answer2response": answer2response,
        "response2answer": response2answer,
        "retrieved2answer": retrieved2answer,
        "retrieved2response": retrieved2response,
    }
    usable: set[str] = set()
    for name, value in sets.items():
        if value is None:
            continue
        if name.startswith("retrieved"):  # one row of labels per passage
            flat = [x for row in cast("Sequence[Sequence[Label]]", value) for x in row]
        else:
            flat = list(cast("Sequence[Label]", value))
        _check(flat, name)
        if None not in flat:
            usable.add(name)
    _check_shapes(answer2response, response2answer, retrieved2answer, retrieved2response)
    a2r = [_true(x) for x in answer2response or ()]
    r2a = [_true(x) for x in response2answer or ()]
    ret2a = [[_true(x) for x in row] for row in retrieved2answer or ()]
    ret2r = [[_true(x) for x in row] for row in retrieved2response or ()]
    width = len(ret2a[0]) if ret2a else 0  # passages, as RAGChecker reads its matrix's shape

    values: dict[str, float] = {}
    values["precision"] = _mean(a2r)
    values["recall"] = _mean(r2a)
    p, r = values["precision"], values["recall"]
    values["f1"] = 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0

    recalled = [any(row) for row in ret2a]
    if ret2a and width:
        values["claim_recall"] = _mean(recalled)
        values["context_precision"] = _mean([any(row[j] for row in ret2a) for j in range(width)])
        if any(recalled):
            used = sum(c and u for c, u in zip(recalled, r2a, strict=True))
            values["context_utilization"] = used / sum(recalled)
        else:
            values["context_utilization"] = 0.0
    else:
        values["claim_recall"] = values["context_precision"] = 0.0
        values["context_utilization"] = 0.0

    response_width = len(ret2r[0]) if ret2r else 0
    if a2r and response_width and ret2a:
        relevant = [any(row[j] for row in ret2a) for j in range(response_width)]
        rel_faithful = [
            any(x and rel for x, rel in zip(row, relevant, strict=True)) for row in ret2r
        ]
        irr_faithful = [
            any(x and not rel for x, rel in zip(row, relevant, strict=True)) and not f
            for row, f in zip(ret2r, rel_faithful, strict=True)
        ]
        wrong = [not x for x in a2r]
        values["noise_sensitivity_in_relevant"] = _mean(
            [f and w for f, w in zip(rel_faithful, wrong, strict=True)]
        )
        values["noise_sensitivity_in_irrelevant"] = _mean(
            [f and w for f, w in zip(irr_faithful, wrong, strict=True)]
        )
    else:
        values["noise_sensitivity_in_relevant"] = values["noise_sensitivity_in_irrelevant"] = 0.0

    if a2r and response_width:
        unfaithful = [not any(row) for row in ret2r]
        values["hallucination"] = _mean([u and not a for u, a in zip(unfaithful, a2r, strict=True)])
        values["self_knowledge"] = _mean([u and a for u, a in zip(unfaithful, a2r, strict=True)])
    else:
        values["hallucination"] = values["self_knowledge"] = 0.0

    values["faithfulness"] = _mean([any(row) for row in ret2r]) if ret2r and response_width else 0.0

    return {
        name: values[name] if all(need in usable for need in REQUIREMENTS[name]) else None
        for name in CLAIM_METRICS
    }
