"""What `judge grade` checks before any call (`check_grading`, `read_grading`), and the
summaries of a grading, as `judge grade`, `judge calibrate` and a run's batches report
them: one judge's (mean, counts by status and path, tokens, cost), the bias check's, a
jury's, a calibration against human labels, what went through a batch API, and `judge
grade --dry-run`'s calls before any is made.

The dry run's calls are the grading's own (`lasagna_judge.grade_requests`: none where the
refusal rule grades); their input tokens are cl100k_base counts of the very prompts sent
(`lasagna_synth.count_tokens`, every dry run's yardstick), each reply assumed at the
`benchmark run` dry run's GRADE_REPLY_TOKENS. `--bias-check N` adds at most 2N calls: N
answers padded with the check's filler and N with their references reversed, priced at the
mean prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._errors import EngineUsageError

if TYPE_CHECKING:
    from lasagna_judge import (
        LLM,
        AnswerRow,
        BatchReport,
        BiasCheck,
        Calibration,
        FileCalibration,
        FileGrading,
        Grade,
        GradeSummary,
        JuryAgreement,
        Rubric,
        Usage,
        Verdict,
    )


def check_grading(models: Sequence[str], executor: str, *, batch: bool, bias_check: int) -> None:
    """An EngineUsageError when the options do not go together: --batch grades with one
    judge here; a jury (two or more `models`, each named once) has no bias check and runs
    here."""
    if batch and (len(models) > 1 or executor != "local"):
        what = f"--executor {executor}" if len(models) < 2 else "a jury"
        raise EngineUsageError(f"--batch grades with one judge here, not {what}")
    if len(models) < 2:
        return
    if len(set(models)) < len(models):
        raise EngineUsageError(
            f"--model: each judge of a jury once, found {', '.join(models)}; remove the "
            "repeated one"
        )
    if bias_check:
        raise EngineUsageError(
            "--bias-check checks one judge; give one --model (a jury's judges can be checked "
            "one by one)"
        )
    if executor != "local":
        raise EngineUsageError(
            f"--executor {executor} grades with one judge; a jury ({len(models)} --model) "
            "runs here: leave out --executor"
        )


def read_grading(
    input_path: Path, rubric_name: str, out: Path | None, max_chars: int
) -> tuple[Rubric, list[AnswerRow]]:
    """The rubric and the rows to grade, checked before any call, and `out` (--out) checked
    writable: the grades must have somewhere to go."""
    from lasagna_cli.engine.config._config import JUDGE_MAX_CHARS
    from lasagna_cli.engine.records._store import check_output_file
    from lasagna_cli.engine.run._scoring import load_judge_rubric
    from lasagna_judge import read_answers

    rubric = load_judge_rubric(rubric_name)
    if out is not None and out.is_dir():
        raise EngineUsageError(f"--out {out} is a folder: give the path of a .jsonl file")
    rows = read_answers(input_path, max_chars or JUDGE_MAX_CHARS)
    if out is not None:
        check_output_file(out, f"--out {out}", "its folder")
    return rubric, rows


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def file_grading_lines(
    found: FileGrading,
    llm: LLM,
    prices: Path | None,
    table: Mapping[str, tuple[float, float]] | None,
    batches: Sequence[BatchReport] = (),
) -> list[str]:
    """`judge grade`'s summary of one judge: the grading's lines and cost (`table`, read
    from `prices`), each batch's, the constant-judge warning and the bias check's."""
    spent = found.spent
    cost = grading_cost_line(llm, found.grades, prices, llm.cost_of(spent, batch=llm.batch_usage))
    lines = grading_lines(
        found.summary, spent=(spent.input_tokens, spent.output_tokens), calls=found.calls, cost=cost
    )
    for report in batches:
        lines += batch_lines(report, llm.model, table, prices)
    if found.warning:
        lines.append(f"warning: {found.warning}")
    return lines + bias_lines(found.bias, found.bias_calls)


def jury_grading_lines(
    verdicts: Sequence[Verdict], llms: Sequence[LLM], prices: Path | None
) -> list[str]:
    """`judge grade`'s summary of a jury: each judge's figures (the `llms` in the verdicts'
    order), then the jury's grade and how far its judges agree."""
    from lasagna_judge import jury_agreement, summarize_grades

    lines: list[str] = []
    for j, llm in enumerate(llms):
        grades = [v.grades[j] for v in verdicts]
        spent = llm.usage
        lines.append(f"-- judge {j + 1} of {len(llms)}")
        lines += grading_lines(
            summarize_grades(grades),
            spent=(spent.input_tokens, spent.output_tokens),
            calls=llm.calls_made,
            cost=grading_cost_line(llm, grades, prices, llm.cost_of(spent)),
        )
    return lines + jury_lines(verdicts, jury_agreement(verdicts))


def grading_cost_line(
    llm: LLM, grades: Sequence[Grade], prices: Path | None, spent: float | None
) -> str:
    """This run's cost (`spent`), and what every graded answer's tokens cost (cached ones
    too; those a batch answered at the batch price, as it billed them)."""
    from lasagna_judge import Usage

    if spent is None and prices is None:
        return "cost: n/a (give --prices FILE to price the tokens)"
    if spent is None:
        return f"cost: n/a (no price for {llm.model} in {prices})"

    def tokens(some: Sequence[Grade]) -> Usage:
        return Usage(sum(g.input_tokens for g in some), sum(g.output_tokens for g in some))

    total = llm.cost_of(tokens(grades), batch=tokens([g for g in grades if g.batch])) or 0.0
    return f"cost: ${spent:.4f} this run; ${total:.4f} for all the tokens above"


def grading_lines(
    summary: GradeSummary, *, spent: tuple[int, int], calls: int, cost: str
) -> list[str]:
    """A grading's summary: the mean over the answers that got a score, counts by status and
    path, tokens (`spent`, `calls`: this run's) and the `cost` line."""
    scored = summary.scored
    if summary.mean_score is None:
        mean = "mean score: n/a (no answer got a score)"
    else:
        spread = ", ".join(f"{score}: {n}" for score, n in summary.score_counts.items())
        mean = f"mean score: {summary.mean_score:.3f} over {scored} scored ({spread})"
    unscored = summary.n - scored
    if unscored:
        mean += f"; {unscored} without a score are counted below, not averaged"
    came = f"{summary.cached} answers from the cache"
    if summary.batch:  # read back from the cache, but answered (and paid for) this run
        came = f"{summary.batch} answers from the batch, {summary.cached} from the cache"
    from lasagna_judge import scripted_note

    note = scripted_note(summary.models)
    lines = [
        f"graded {summary.n} answers with {', '.join(summary.models) or 'no model call'}, "
        f"rubric {summary.rubric}",
        *([note] if note else []),
        mean,
        f"status: {_counts(summary.by_status)}",
        f"path: {_counts(summary.by_path)}",
        f"tokens: {summary.input_tokens:,} in, {summary.output_tokens:,} out "
        f"({came}; this run: {calls} calls, "
        f"{spent[0]:,} in, {spent[1]:,} out)",
        cost,
    ]
    return lines


_CHANGES = {
    "verbosity": "the answer padded with filler",
    "reference order": "the references reversed, on answers with two or more",
}


def bias_lines(checks: Sequence[BiasCheck], calls: int) -> list[str]:
    """`--bias-check`: how often each change moved the grade (none: no line)."""
    lines = []
    for check in checks:
        what = f"bias check, {check.name} ({_CHANGES[check.name]}): "
        if not check.compared:
            lines.append(what + f"n/a ({check.sampled} sampled, none with two parsed grades)")
            continue
        lines.append(
            what + f"the grade moved on {check.changed} of {check.compared} "
            f"({check.changed / check.compared:.0%}; up {check.higher}, down {check.lower}); "
            f"{check.sampled - check.compared} without two parsed grades left out"
        )
    if checks:
        lines.append(f"bias check: {calls} calls beside the grading's")
    return lines


def jury_lines(verdicts: Sequence[Verdict], agreement: JuryAgreement) -> list[str]:
    """A jury's grade (the mean of each answer's parsed grades) and how far its judges
    agree."""
    scores = [v.score for v in verdicts if v.score is not None]
    partial = sum(1 for v in verdicts if 0 < v.graded < len(v.grades))
    none = sum(1 for v in verdicts if v.graded == 0)
    lines = ["-- the jury"]
    if scores:
        lines.append(
            f"jury grade (the mean of each answer's parsed grades): {sum(scores) / len(scores):.3f}"
            f" over {counted(len(scores), 'answer')}; {partial} graded by only some judges, {none} "
            "by none"
        )
    else:
        lines.append("jury grade: n/a (no judge gave any answer a grade)")
    if agreement.alpha is None:
        lines.append(
            f"agreement: {agreement.measure} undefined over {agreement.answers} answers "
            "graded by two or more judges (every grade the same, or no answer with two)"
        )
    else:
        lines.append(
            f"agreement: {agreement.measure} {agreement.alpha:.3f} over {agreement.answers} "
            "answers graded by two or more judges (1 = full agreement, 0 = chance)"
        )
    return lines


def calibration_output(found: FileCalibration, as_json: bool) -> tuple[str, str | None]:
    """What `judge calibrate` prints (`as_json` or as text), and the warning it also says on
    stderr. As JSON, the figures, with the warning in them too; as text, the warning above
    the table it speaks of, in the same stream (on stderr it could come out after the
    table, stdout and stderr read apart, or one of them redirected)."""
    import json

    result, warning = found.calibration, found.warning
    unlabelled, ungraded = found.unlabelled, found.labels_without_grade
    if as_json:
        data = result.to_dict() | {"unlabelled": unlabelled, "labels_without_grade": ungraded}
        if warning:
            data["warning"] = warning
        return json.dumps(data, indent=2), f"warning: {warning}" if warning else None
    warned = [f"warning: {warning}"] if warning else []
    return "\n".join(warned + _calibration_lines(result, unlabelled, ungraded)), None


def _calibration_lines(result: Calibration, unlabelled: int, ungraded: int) -> list[str]:
    # What was compared, the confusion table of human labels against the judge's,
    # agreement, and the prediction-powered share of correct answers.
    skipped = sum(result.skipped.values())
    total = result.compared + skipped + unlabelled
    notes = [f"{n} {why}" for why, n in result.skipped.items()]
    if unlabelled:
        notes.append(f"{unlabelled} without a label")
    lines = [
        f"compared {result.compared} of {total} graded answers"
        + (f" (left out: {', '.join(notes)})" if notes else "")
        + (f"; {ungraded} labels have no graded answer" if ungraded else ""),
        f"a score >= {result.correct_at} counts as correct; a lower one as refusal when "
        "the prediction declines to answer, else incorrect",
        "",
        "human \\ judge  " + "".join(f"{label:>11}" for label in result.three_class.labels),
    ]
    for label, counts in zip(result.three_class.labels, result.three_class.confusion, strict=True):
        lines.append(f"{label:<15}" + "".join(f"{c:>11}" for c in counts))
    lines.append("")
    for name, agreement in (
        ("three classes", result.three_class),
        ("correct vs not", result.binary),
    ):
        accuracy = "n/a" if agreement.accuracy is None else f"{agreement.accuracy:.3f}"
        kappa = "n/a" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        lines.append(f"{name:<15} accuracy {accuracy}  Cohen's kappa {kappa}")
    ppi = result.prediction_powered
    if ppi is not None:
        worth = (
            f"; as narrow as {ppi.equivalent_labels:.0f} labels alone would give"
            if ppi.equivalent_labels is not None
            else ""
        )
        lines += [
            "",
            f"share of correct answers: judge {ppi.judge_mean:.3f} over "
            f"{ppi.labelled + ppi.unlabelled} graded answers; prediction-powered (PPI++) "
            f"{ppi.mean:.3f} [{ppi.low:.3f}, {ppi.high:.3f}] at {ppi.confidence:.0%}, from "
            f"{ppi.labelled} labels (lam {ppi.lam:.2f}); labels alone {ppi.labels_mean:.3f} "
            f"[{ppi.labels_low:.3f}, {ppi.labels_high:.3f}]{worth}",
        ]
    return lines


def batch_lines(
    report: BatchReport,
    model: str,
    prices: Mapping[str, tuple[float, float]] | None,
    source: Path | None,
) -> list[str]:
    """The closing summary's batch lines: what went through it, and its price (`prices`,
    the table read from `source`)."""
    ids = ", ".join(report.batch_ids) or "none needed"
    line = (
        f"batch: {report.requests} requests, {report.cached} from the cache, {report.sent} "
        f"through {report.api} ({ids}{', resumed' if report.resumed else ''}): "
        f"{report.answered} answered"
    )
    left = report.failed + report.direct
    if left:
        first = f"; first: {report.failures[0]}" if report.failures else ""
        line += f", {left} called directly ({report.failed} failed in the batch{first})"
    return [line, batch_cost_line(model, report.usage, prices, source)]


def batch_cost_line(
    model: str, usage: Usage, prices: Mapping[str, tuple[float, float]] | None, source: Path | None
) -> str:
    """`batch price: $X for ... (50% of the per-token price, $Y)`."""
    from lasagna_judge import BATCH_PRICE, price_for

    what = f"{BATCH_PRICE:.0%} of the per-token price"
    price = price_for(prices, model)
    if price is None and source is None:
        return f"batch price: {what} (give --prices FILE to price the tokens)"
    if price is None:
        return f"batch price: {what} (no price for {model} in {source})"
    full = (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000
    return (
        f"batch price: ${full * BATCH_PRICE:.4f} for {usage.input_tokens:,} in, "
        f"{usage.output_tokens:,} out ({what}, ${full:.4f})"
    )


def grade_dry_run_lines(
    rubric: Rubric,
    rows: Sequence[Any],
    models: Sequence[str],
    bias_check: int,
    prices: Mapping[str, tuple[float, float]] | None,
) -> list[str]:
    """`judge grade --dry-run`: the judge calls grading `rows` (`lasagna_judge.AnswerRow`,
    checked as a grading checks them) with each of `models` would make, and `bias_check`'s
    (--bias-check N), with tokens and, with `prices`, the most they cost."""
    from lasagna_cli.engine._dry_run import (
        GRADE_REPLY_TOKENS,
        RoleCalls,
        batch_price_line,
        role_lines,
    )
    from lasagna_judge import BIAS_FILLER, grade_requests, price_for
    from lasagna_synth import count_tokens

    items = [
        {"question": r.question, "references": r.references, "prediction": r.prediction}
        for r in rows
    ]
    requests = grade_requests(rubric, items)
    prompts = [count_tokens(m["content"] for m in r.messages) for r in requests]
    calls = len(prompts)
    roles = [
        RoleCalls("judge", name, calls, sum(prompts), calls * GRADE_REPLY_TOKENS) for name in models
    ]
    if bias_check and calls:
        sampled = min(bias_check, calls)
        mean = sum(prompts) // calls
        padded = sampled * count_tokens([BIAS_FILLER])
        roles.append(
            RoleCalls(
                "bias check", models[0], 2 * sampled, 2 * sampled * mean + padded,
                2 * sampled * GRADE_REPLY_TOKENS,
            )
        )  # fmt: skip
    price_of = (lambda model: price_for(prices, model)) if prices is not None else None
    lines = [
        "dry run: no model called, nothing written",
        f"{counted(len(rows), 'row')}: {calls:,} for the judge, {len(rows) - calls:,} graded "
        "by the refusal rule (no call)",
        *role_lines(roles, price_of),
    ]
    batch = batch_price_line(roles, price_of) if price_of is not None else None
    return lines if batch is None else [*lines, batch]
