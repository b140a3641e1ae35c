"""The lines `benchmark run` ends with when part of what it was asked did not come in:
questions a predictions file left out (--allow-missing), grades that failed or came back
unparsed, tasks that failed; and whether they fail the run (exit 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer


def say_gaps(results: Sequence[Mapping[str, Any]], out: Path) -> bool:
    """Each gap of the run's results in one line on stderr; True when the run fails: a task
    or a judge's call failed (`--resume -o OUT` does them again), or no answer got a grade."""
    reasons = [q["missing"] for r in results for q in r["per_query"] if q.get("missing")]
    if reasons:
        from lasagna_cli.engine.systems import count_reasons

        typer.echo(
            f"{len(reasons)} question(s) not scored (--allow-missing), counted as missing "
            f"in results.json: {count_reasons(reasons)}",
            err=True,
        )
    cut = sum(
        int(r["metrics"].get("diagnostics", {}).get("calls", {}).get("claims_cut") or 0)
        for r in results
    )
    if cut:
        from lasagna_judge import MAX_CLAIM_CHARS, MAX_CLAIMS

        typer.echo(
            f"{cut:,} claim(s) of the judge's diagnosis cut to its bounds (at most "
            f"{MAX_CLAIMS} an answer, {MAX_CLAIM_CHARS} characters each); the diagnosis "
            "reads the claims kept (claims_cut in results.json)",
            err=True,
        )
    grades, grades_failed = grades_line(results, out)
    if grades is not None:
        typer.echo(grades, err=True)
    not_scored = sum(r["counts"]["failed"] + r["counts"]["not_run"] for r in results)
    if not_scored:
        typer.echo(
            f"{not_scored} task(s) failed and are not scored; see their files, then run "
            f"again with --resume -o {out} to retry them",
            err=True,
        )
    return bool(not_scored) or grades_failed


def grades_line(results: Sequence[Mapping[str, Any]], out: Path) -> tuple[str | None, bool]:
    """What the judge's grades came to (None: every grade is in), and whether that fails
    the run. Unparsed grades beside graded ones are said, not failed: they are missing
    values in the judge's mean, never zeros."""
    found = {"ok": 0, "unparsed": 0, "error": 0}
    for result in results:
        for track in result["metrics"].values():
            statuses = track.get("judge_status") if isinstance(track, Mapping) else None
            for status in found:
                found[status] += int((statuses or {}).get(status, 0))
    total = sum(found.values())
    unparsed = (
        "the judge's replies held no score the rubric allows (each task file's judge \"raw\" "
        "says what it sent); check --judge and --rubric"
    )
    if found["error"]:
        line = (
            f'{found["error"]} of {total} grade(s) failed (each task file\'s judge "error" '
            f"says why); run again with --resume -o {out} to grade them again"
        )
        if found["unparsed"]:
            line += f"; {found['unparsed']} more unparsed: {unparsed}"
        return line, True
    if found["unparsed"] and not found["ok"]:
        return f"none of the {total} answers got a grade: {unparsed}", True
    if found["unparsed"]:
        return (
            f"{found['unparsed']} of {total} grade(s) unparsed, missing from the judge's mean "
            f"(not zeros): {unparsed}"
        ), False
    return None, False
