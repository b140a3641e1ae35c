"""`lasagna benchmark stats` as text: kag's table as kag prints it, then lasagna's own
figures under their own names."""

from __future__ import annotations

from typing import Any

from lasagna_cli.engine.kag._kag_metrics import render_table
from lasagna_cli.engine.kag._stats import StatsReport


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _extra_row(name: str, extra: dict[str, Any], judged: bool) -> list[str]:
    mcq, free = extra["option_extraction"], extra["free_form"]
    pct = ".2f"
    cells = [
        name,
        _fmt(None if mcq["accuracy"] is None else mcq["accuracy"] * 100, pct),
        _fmt(None if mcq["precision"] is None else mcq["precision"] * 100, pct),
        _fmt(None if mcq["coverage"] is None else mcq["coverage"] * 100, pct),
        str(mcq["unanswered"]),
        _fmt(free["em"], ".3f"),
        _fmt(free["f1"], ".3f"),
        str(free["scored"]),
        str(free["errors"]),
    ]
    if judged:
        judge = extra["judge"]
        cells += [_fmt(judge["mean_grade"], ".3f"), str(judge["unparsed"]), str(judge["errors"])]
    cells += [str(extra["missing"]), _fmt(extra["mean_retrieval_time_s"], ".3f")]
    return cells


def _counts_anything(extra: dict[str, Any]) -> bool:
    """Whether a dataset's row has a figure (a kag free-form dataset has none of these)."""
    free, judge = extra["free_form"], extra.get("judge") or {}
    return bool(
        extra["option_extraction"]["total"]
        or free["scored"]
        or free["errors"]
        or extra["missing"]
        or judge.get("unparsed")
        or judge.get("errors")
    )


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            [row[0].ljust(widths[0])]
            + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        ).rstrip()
        for row in rows
    ]


EXTRA_LEGEND = (
    "XACC% XPREC% XCOVER% = ACC% PREC% COVER% with lasagna's option extraction "
    '("(b) ...", "The answer is b"); NONE = answers naming no option\n'
    "EM F1 = free-form answers against the references (SQuAD), over SCORED; FERR = their "
    "errors\nMISSING = questions of a covered dataset without a result file; LRET(s) = "
    "lasagna's retrieval time (kag's RET(s) is its Neo4j retrieval)"
)


def render_text(report: StatsReport) -> str:
    """kag's table as kag prints it, then lasagna's figures under their own names."""
    text = render_table(report.datasets, report.scorable, report.skipped, report.kag)
    if not report.extras:
        return text
    payload = report.as_json()["lasagna"]["setups"]
    header = ["SETUP", "XACC%", "XPREC%", "XCOVER%", "NONE", "EM", "F1", "SCORED", "FERR"]
    if report.judged:
        header += ["GRADE", "UNPARSED", "GRADE-ERR"]
    header += ["MISSING", "LRET(s)"]
    rows = [header]
    for name in report.setup_order():
        rows.append(_extra_row(name, payload[name]["overall"], report.judged))
        for dataset, extra in payload[name]["per_dataset"].items():
            if _counts_anything(extra):
                rows.append(_extra_row(f"  └ {dataset}", extra, report.judged))
    lines = ["", "lasagna's own figures, beside kag's (not part of kag's report):"]
    return "\n".join([text, *lines, *_aligned(rows), "", EXTRA_LEGEND])
