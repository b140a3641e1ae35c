"""`lasagna benchmark stats`: kag's report over a sweep's result files (or a run folder's
task records), and lasagna's own figures beside it, never instead.

kag's figures (below, "kag's figures"): an MCQ question with an `answer` is graded by the whole
trimmed response against the option id; its files are OK, WRONG or ERR, and TOT counts
them. An MCQ without an `answer` makes its files "skipped"; other questions are not kag's.

lasagna's, under their own names:
- option extraction (lasagna-metrics' `extract_choice`: "(b) ...", "The answer is b"):
  the same files, an answer naming no option "unanswered";
- free-form questions with references (lasagna's DATASETS.json extension): EM and F1
  (SQuAD), and judge grades with `--judge`; errors counted, never scored as 0;
- missing: the questions of a dataset a setup covers (it has results there, or its
  recorded `datasets` list names it) with no result file.
A file named as a result (`<prefix><setup>.json`) that cannot be read (truncated, not
JSON, neither kag shape) is left out of every figure and reported (`Damaged`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from lasagna_cli.engine._data import Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.kag._datasets import Datasets, dataset_of
from lasagna_cli.engine.kag._results import (
    NANOS,
    Damaged,
    Result,
    is_run_folder,
    kag_timing,
    read_result,
    run_folder_results,
)
from lasagna_cli.engine.run._scoring import gradable, score_answer
from lasagna_synth import TEMP_PREFIX

# -- what each result is --------------------------------------------------------------------

Kind = Literal["graded", "unkeyed", "other"]


def mcq_kind(result: Result) -> Kind:
    """kag's view of the result's question: an MCQ with an answer, one without, or none."""
    if result.recorded is not None:
        return "graded" if result.recorded.keyed else "unkeyed"
    question = result.question
    if question.options is None:
        return "other"
    return "graded" if question.correct_option is not None else "unkeyed"


def kag_correct(result: Result) -> bool:
    assert result.text is not None
    recorded = result.recorded
    if recorded is None:
        assert result.question.correct_option is not None
        return kag_grade(result.text, result.question.correct_option)
    # kag's match (the trimmed response is the answer id) is lasagna's rule 1 of
    # extract_choice, so it is a correct record whose answer is its choice, alone.
    return (
        bool(recorded.correct)
        and recorded.choice is not None
        and kag_grade(result.text.strip(RUST_WHITESPACE), recorded.choice)
    )


def extracted(result: Result) -> Literal["correct", "incorrect", "unanswered"]:
    """lasagna's option extraction of an ok MCQ result."""
    assert result.text is not None
    if result.recorded is not None:
        choice, correct = result.recorded.choice, result.recorded.correct
    else:
        scored = score_answer(result.text, result.question)
        choice, correct = scored.choice, scored.correct
    if choice is None:
        return "unanswered"
    return "correct" if correct else "incorrect"


# -- lasagna's own figures -----------------------------------------------------------------


@dataclass
class Extra:
    """lasagna's counts and sums for one setup, overall or on one dataset."""

    correct: int = 0
    incorrect: int = 0
    unanswered: int = 0
    mcq_errors: int = 0
    free_errors: int = 0
    em: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    grades: list[int] = field(default_factory=list)
    grade_unparsed: int = 0
    grade_errors: int = 0
    missing: int = 0
    retrieval_s: list[float] = field(default_factory=list)

    def add(self, result: Result, grade: Any | None) -> None:
        kind = mcq_kind(result)
        if kind == "unkeyed":
            return
        if result.text is None:
            if kind == "graded":
                self.mcq_errors += 1
            else:
                self.free_errors += 1
            return
        seconds = result.stats.get("retrieval_time_s")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool):
            self.retrieval_s.append(float(seconds))
        if kind == "graded":
            outcome = extracted(result)
            setattr(self, outcome, getattr(self, outcome) + 1)
            return
        scored = score_answer(result.text, result.question)
        if scored.exact_match is None or scored.f1 is None:
            return
        self.em.append(scored.exact_match)
        self.f1.append(scored.f1)
        if grade is not None:
            if grade.status == "ok" and grade.score is not None:
                self.grades.append(int(grade.score))
            elif grade.status == "unparsed":
                self.grade_unparsed += 1
            else:
                self.grade_errors += 1

    def as_json(self, judged: bool) -> dict[str, Any]:
        def mean(values: list[float] | list[int]) -> float | None:
            return sum(values) / len(values) if values else None

        def ratio(a: int, b: int) -> float | None:
            return a / b if b else None

        committed = self.correct + self.incorrect
        total = committed + self.unanswered + self.mcq_errors
        out: dict[str, Any] = {
            "option_extraction": {
                "total": total,
                "correct": self.correct,
                "incorrect": self.incorrect,
                "unanswered": self.unanswered,
                "errors": self.mcq_errors,
                "accuracy": ratio(self.correct, total),
                "precision": ratio(self.correct, committed),
                "coverage": ratio(committed, total),
            },
            "free_form": {
                "scored": len(self.em),
                "errors": self.free_errors,
                "em": mean(self.em),
                "f1": mean(self.f1),
            },
            "missing": self.missing,
            "mean_retrieval_time_s": mean(self.retrieval_s),
        }
        if judged:
            out["judge"] = {
                "scored": len(self.grades),
                "mean_grade": mean(self.grades),
                "unparsed": self.grade_unparsed,
                "errors": self.grade_errors,
            }
        return out


@dataclass
class StatsReport:
    """kag's report (`kag`) and lasagna's figures per setup (`extras`)."""

    datasets: int
    scorable: int
    skipped: int
    kag: dict[str, SetupMetrics]
    extras: dict[str, tuple[Extra, dict[str, Extra]]]
    judged: bool

    def setup_order(self) -> list[str]:
        """kag's ranking, then the setups kag's table leaves out (no graded MCQ), by name."""
        first = [name for name, _ in ranked(self.kag)]
        return first + sorted(set(self.extras) - set(first))

    def as_json(self) -> dict[str, Any]:
        """kag's JSON report, key for key, and lasagna's figures under "lasagna"."""
        out = report_json(self.datasets, self.scorable, self.skipped, self.kag)
        out["lasagna"] = {
            "setups": {
                name: {
                    "overall": self.extras[name][0].as_json(self.judged),
                    "per_dataset": {
                        d: e.as_json(self.judged) for d, e in sorted(self.extras[name][1].items())
                    },
                }
                for name in self.setup_order()
                if name in self.extras
            }
        }
        return out


def _covered(results: list[Result], datasets: Datasets) -> dict[str, set[str]]:
    """The datasets each setup covers: where it has results, or its recorded list."""
    covered: dict[str, set[str]] = {}
    for result in results:
        covered.setdefault(result.setup, set()).add(dataset_of(result.question))
        recorded = result.stats.get("setup")
        if isinstance(recorded, dict) and "datasets" in recorded:
            listed = recorded["datasets"]
            names = datasets.keys() if listed is None else listed
            covered[result.setup].update(n for n in names if n in datasets)
    return covered


def needs_grading(result: Result) -> bool:
    return result.text is not None and mcq_kind(result) == "other" and gradable(result.question)


def scorable_questions(datasets: Datasets, results: list[Result]) -> int:
    """kag's count: the MCQ questions with an answer (a run folder's, as its records say)."""
    keyed = {
        (dataset_of(r.question), r.question.id)
        for r in results
        if r.recorded is not None and r.recorded.keyed
    }
    return len(keyed) + sum(
        1
        for questions in datasets.values()
        for q in questions.values()
        if q.options is not None and q.correct_option is not None
    )


def summarize(
    datasets: Datasets,
    results: list[Result],
    grades: dict[Path, Any] | None = None,
    dataset_count: int | None = None,
) -> StatsReport:
    judged = grades is not None
    grades = grades or {}
    kag: dict[str, SetupMetrics] = {}
    skipped = 0
    extras: dict[str, tuple[Extra, dict[str, Extra]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for result in results:
        dataset = dataset_of(result.question)
        seen.add((result.setup, dataset, result.question.id))
        kind = mcq_kind(result)
        if kind == "unkeyed":
            skipped += 1
        elif kind == "graded":
            metrics = kag.setdefault(result.setup, SetupMetrics())
            if result.text is None:
                metrics.record(dataset, "error", None, None)
            else:
                timing = kag_timing(result.stats)
                outcome: Outcome = "correct" if kag_correct(result) else "incorrect"
                metrics.record(dataset, outcome, timing.timed, timing.retrieval)
        overall, per_dataset = extras.setdefault(result.setup, (Extra(), {}))
        for extra in (overall, per_dataset.setdefault(dataset, Extra())):
            extra.add(result, grades.get(result.path))
    for setup, covered in _covered(results, datasets).items():
        overall, per_dataset = extras[setup]
        for dataset in covered:
            for question in datasets[dataset].values():
                if (setup, dataset, question.id) not in seen:
                    overall.missing += 1
                    per_dataset.setdefault(dataset, Extra()).missing += 1
    return StatsReport(
        datasets=len(datasets) if dataset_count is None else dataset_count,
        scorable=scorable_questions(datasets, results),
        skipped=skipped,
        kag=kag,
        extras=extras,
        judged=judged,
    )


# -- the report as text -----------------------------------------------------------------------
#
# `lasagna benchmark stats` as text: kag's table as kag prints it, then lasagna's own
# figures under their own names.


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


# -- kag's figures ----------------------------------------------------------------------------
#
# kag's `stats` figures, JSON and table, as kag 0.2 computes them
# (`src/subcommand/stats/metric.rs` and `mod.rs`).
#
# - An MCQ result is correct when its trimmed response equals the `answer` ignoring ASCII
#   case (`str::trim`, `eq_ignore_ascii_case`), incorrect otherwise; an `{"error"}` file is
#   an error. TOT = correct + incorrect + errors (the files graded, nothing for a missing
#   one); ACC = correct / TOT, PREC = correct / (correct + incorrect), COVER =
#   (correct + incorrect) / TOT.
# - Durations add as whole nanoseconds (Rust's `Duration`); a mean is
#   `Duration::from_secs_f64(total_secs / n)`, which rounds to the nearest nanosecond.
# - GEN(s) and CTX_LEN come from every ok file (`stats.time`, the prompt's UTF-8 length);
#   RET(s) and the graph counts from the ok files with a Neo4j retrieval.


Outcome = Literal["correct", "incorrect", "error"]

# Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim` strips; Python's
# `str.strip()` also strips U+001C..U+001F, which kag keeps.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def kag_grade(response: str, answer: str) -> bool:
    """kag's grading: `response.trim().eq_ignore_ascii_case(answer)`."""
    trimmed = response.strip(RUST_WHITESPACE)
    # bytes.lower() folds ASCII letters only, as eq_ignore_ascii_case does.
    return (
        trimmed.encode("utf-8", "surrogatepass").lower()
        == answer.encode("utf-8", "surrogatepass").lower()
    )


def secs_f64(ns: int) -> float:
    """`Duration::as_secs_f64`: whole seconds plus nanoseconds / 1e9, in f64."""
    secs, nanos = divmod(ns, NANOS)
    return float(secs) + float(nanos) / float(NANOS)


def div_f64(ns: int, n: int) -> int:
    """`Duration::div_f64(n)`: from_secs_f64(as_secs_f64 / n), to the nearest ns."""
    return round(Fraction(secs_f64(ns) / float(n)) * NANOS)


@dataclass
class RetrievalMetrics:
    time_ns: int = 0
    vertices: int = 0
    relationships: int = 0
    properties: int = 0
    samples: int = 0

    def as_json(self) -> dict[str, Any]:
        n = self.samples
        return {
            "time_secs": secs_f64(self.time_ns),
            "vertices": self.vertices,
            "relationships": self.relationships,
            "properties": self.properties,
            "samples": n,
            "avg_time_secs": secs_f64(div_f64(self.time_ns, n)),
            "avg_vertices": self.vertices / n,
            "avg_relationships": self.relationships / n,
            "avg_properties": self.properties / n,
        }


@dataclass
class Metrics:
    """kag's counters for one setup, overall or on one dataset."""

    correct: int = 0
    incorrect: int = 0
    errors: int = 0
    generation_ns: int = 0
    generation_samples: int = 0
    context_length: int = 0
    retrieval: RetrievalMetrics | None = None

    def record(
        self,
        outcome: Outcome,
        timed: tuple[int, int] | None,
        retrieval: tuple[int, int, int, int] | None,
    ) -> None:
        if outcome == "correct":
            self.correct += 1
        elif outcome == "incorrect":
            self.incorrect += 1
        else:
            self.errors += 1
        if timed is not None:
            self.generation_ns += timed[0]
            self.context_length += timed[1]
            self.generation_samples += 1
        if retrieval is not None:
            found = self.retrieval = self.retrieval or RetrievalMetrics()
            found.time_ns += retrieval[0]
            found.vertices += retrieval[1]
            found.relationships += retrieval[2]
            found.properties += retrieval[3]
            found.samples += 1

    @property
    def total(self) -> int:
        return self.correct + self.incorrect + self.errors

    @property
    def parsed(self) -> int:
        return self.correct + self.incorrect

    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    def precision(self) -> float | None:
        return self.correct / self.parsed if self.parsed else None

    def coverage(self) -> float | None:
        return self.parsed / self.total if self.total else None

    def avg_generation_ns(self) -> int | None:
        n = self.generation_samples
        return div_f64(self.generation_ns, n) if n else None

    def avg_context_length(self) -> float | None:
        # kag tests the sum, not the count: a setup whose prompts are all empty shows "-".
        return self.context_length / self.generation_samples if self.context_length else None

    def as_json(self) -> dict[str, Any]:
        avg = self.avg_generation_ns()
        return {
            "total": self.total,
            "correct": self.correct,
            "incorrect": self.incorrect,
            "errors": self.errors,
            "parsed": self.parsed,
            "accuracy": self.accuracy(),
            "precision": self.precision(),
            "coverage": self.coverage(),
            "avg_generation_secs": None if avg is None else secs_f64(avg),
            "total_generation_secs": secs_f64(self.generation_ns),
            "avg_context_length": self.avg_context_length(),
            "retrieval": None if self.retrieval is None else self.retrieval.as_json(),
        }


@dataclass
class SetupMetrics:
    overall: Metrics = field(default_factory=Metrics)
    per_dataset: dict[str, Metrics] = field(default_factory=dict)

    def record(
        self,
        dataset: str,
        outcome: Outcome,
        timed: tuple[int, int] | None,
        retrieval: tuple[int, int, int, int] | None,
    ) -> None:
        self.overall.record(outcome, timed, retrieval)
        self.per_dataset.setdefault(dataset, Metrics()).record(outcome, timed, retrieval)


def ranked(setups: dict[str, SetupMetrics]) -> list[tuple[str, SetupMetrics]]:
    """By descending accuracy (a setup without one last), then by name."""

    def key(item: tuple[str, SetupMetrics]) -> tuple[float, str]:
        accuracy = item[1].overall.accuracy()
        return (-accuracy if accuracy is not None else float("inf"), item[0])

    return sorted(setups.items(), key=key)


def report_json(
    datasets: int, scorable: int, skipped: int, setups: dict[str, SetupMetrics]
) -> dict[str, Any]:
    """kag's `Report`, key for key."""
    return {
        "datasets": datasets,
        "scorable_questions": scorable,
        "skipped_files": skipped,
        "setups": [
            {
                "setup": name,
                "overall": found.overall.as_json(),
                "per_dataset": {d: m.as_json() for d, m in sorted(found.per_dataset.items())},
            }
            for name, found in ranked(setups)
        ],
    }


# -- kag's table ---------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100.0:.2f}"


def _secs(ns: int | None) -> str:
    return "-" if ns is None else f"{secs_f64(ns):.3f}"


def _float(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cells(name: str, width: int, m: Metrics) -> str:
    line = (
        f"{name:<{width}}  {_pct(m.accuracy()):>7}  {_pct(m.precision()):>7}  "
        f"{_pct(m.coverage()):>8}  {m.correct:>5}  {m.incorrect:>5}  {m.errors:>4}  "
        f"{m.total:>3}  {_secs(m.avg_generation_ns()):>8}  {_float(m.avg_context_length()):>10}"
    )
    r = m.retrieval
    if r is not None:
        n = r.samples
        line += (
            f"  {_secs(div_f64(r.time_ns, n)):>8}  {r.vertices / n:>7.2f}  "
            f"{r.relationships / n:>8.2f}  {r.properties / n:>8.2f}"
        )
    return line


FOOTER = (
    "ACC% = correct / scored, PREC% = correct / committed, COVER% = committed / scored\n"
    "GEN(s)/RET(s) = mean generation/retrieval time per question, in seconds\n"
    "CTX_LEN = average context length"
)


def render_table(
    datasets: int, scorable: int, skipped: int, setups: dict[str, SetupMetrics]
) -> str:
    """kag's text report: the header line, the table (a `└` row per dataset), the legend.

    One change from kag: a dataset's row shows that dataset's CTX_LEN; kag 0.2 repeats the
    setup's overall figure there (its JSON has the dataset's own).
    """
    lines = [
        f"Datasets: {datasets} | Scorable questions: {scorable} | Skipped files: {skipped}",
        "",
    ]
    if not setups:
        lines.append("No scorable results were found.")
        return "\n".join(lines)
    order = ranked(setups)
    width = max(5, *(len(name) for name, _ in order))
    header = (
        f"{'SETUP':<{width}}  {'ACC%':>7}  {'PREC%':>7}  {'COVER%':>8}  {'OK':>5}  "
        f"{'WRONG':>5}  {'ERR':>4}  {'TOT':>3}  {'GEN(s)':>8}  {'CTX_LEN':>10}"
    )
    if any(found.overall.retrieval is not None for _, found in order):
        header += f"  {'RET(s)':>8}  {'VERTICE':>7}  {'RELATION':>8}  {'PROPERTY':>8}"
    lines.append(header)
    for name, found in order:
        lines.append(_cells(name, width, found.overall))
        for dataset, metrics in sorted(found.per_dataset.items()):
            lines.append("  └ " + _cells(dataset, max(0, width - 4), metrics))
    lines += ["", FOOTER]
    return "\n".join(lines)


def damaged_failure(damaged: list[Damaged], run_folder: bool) -> str | None:
    """Why a damaged result file fails a report after it is shown (its figures are not the
    whole run's, and the file's task is to be redone); None when none is damaged."""
    if not damaged:
        return None
    named = "; ".join(f"{path} is {problem}" for path, problem in damaged[:3])
    more = f" (and {len(damaged) - 3} more damaged file(s))" if len(damaged) > 3 else ""
    redo = (
        "run the same `benchmark run` with --resume"
        if run_folder
        else "run the same sweep with --continue"
    )
    return f"{named}{more}: left out of every figure above; delete each and {redo} to redo its task"


# -- stats find -------------------------------------------------------------------------------
#
# `stats find REGEX`: the results whose response matches, as kag's `stats find` finds them.
#
# kag walks the whole tree under `--results`, every depth, and counts each file whose name
# starts with `--prefix` and ends in `.json` as a result file inspected; a file it cannot
# read, or an `{"error"}` file, holds no response; the others match when the regular
# expression finds a match anywhere in the trimmed response. JSON: `{matches, total, paths}`.
# A run folder of `benchmark run` is searched through its task records instead.


@dataclass
class Found:
    matches: list[Result] = field(default_factory=list)
    total: int = 0
    damaged: list[Damaged] = field(default_factory=list)
    run_folder: bool = False
    """The answers searched were a run folder's task records."""

    def as_json(self) -> dict[str, object]:
        return {
            "matches": len(self.matches),
            "total": self.total,
            "paths": [str(r.path) for r in self.matches],
        }

    def lines(self) -> list[str]:
        """Each match as dataset/question/setup and its answer on one line (kag opens fzf)."""
        return [
            f"{dataset_of(r.question)}/{r.question.id}/{r.setup}: "
            f"{' '.join((r.text or '').split())[:200]}"
            for r in self.matches
        ]

    @property
    def failure(self) -> str | None:
        """Why the search fails once shown: a damaged result file (`damaged_failure`)."""
        return damaged_failure(self.damaged, self.run_folder)

    def tally(self) -> str:
        if not self.matches:
            return "No result matched the pattern."
        return (
            f"{len(self.matches)} occurrence(s) out of {self.total} result file(s) matched the "
            "pattern."
        )


def _walk(folder: Path) -> Iterator[Path]:
    with os.scandir(folder) as scanned:
        entries = sorted(scanned, key=lambda e: e.name)
    for entry in entries:
        path = folder / entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(path)
        else:
            yield path


def _matches(result: Result, pattern: re.Pattern[str]) -> bool:
    return result.text is not None and bool(pattern.search(result.text.strip(RUST_WHITESPACE)))


def find(results: Path, prefix: str, regex: str, *, ignore_case: bool = False) -> Found:
    """The ok results under `results` whose trimmed answer `regex` matches, in path order,
    and the count inspected; in a run folder of `benchmark run`, among its task records'
    answers. A regex that does not compile is an EngineUsageError."""
    try:
        pattern = re.compile(regex, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise EngineUsageError(f"REGEX: not a valid regular expression: {exc}") from None
    if not results.is_dir():
        raise EngineUsageError(f"results folder not found: {results} (see --results)")
    if is_run_folder(results):
        answers = run_folder_results(results)[1]
        matched = [r for r in answers if _matches(r, pattern)]
        return Found(matched, total=len(answers), run_folder=True)
    found = Found()
    for path in _walk(results):
        name = path.name
        if not name.endswith(".json") or not name.startswith(prefix):
            continue
        if name.startswith(TEMP_PREFIX):  # lasagna's writer's, mid-rename
            continue
        found.total += 1
        parts = path.relative_to(results).parts
        question = Question(
            id=parts[-2] if len(parts) > 1 else "",
            text="",
            metadata={"dataset": parts[-3] if len(parts) > 2 else "", "question": ""},
        )
        result = read_result(path, question, name[len(prefix) : -len(".json")])
        if isinstance(result, str):
            found.damaged.append((path, result))
        elif _matches(result, pattern):
            found.matches.append(result)
    return found
