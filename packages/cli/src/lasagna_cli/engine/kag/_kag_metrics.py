"""kag's `stats` figures, JSON and table, as kag 0.2 computes them
(`src/subcommand/stats/metric.rs` and `mod.rs`, commit 12389ee).

- An MCQ result is correct when its trimmed response equals the `answer` ignoring ASCII
  case (`str::trim`, `eq_ignore_ascii_case`), incorrect otherwise; an `{"error"}` file is
  an error. TOT = correct + incorrect + errors (the files graded, nothing for a missing
  one); ACC = correct / TOT, PREC = correct / (correct + incorrect), COVER =
  (correct + incorrect) / TOT.
- Durations add as whole nanoseconds (Rust's `Duration`); a mean is
  `Duration::from_secs_f64(total_secs / n)`, which rounds to the nearest nanosecond.
- GEN(s) and CTX_LEN come from every ok file (`stats.time`, the prompt's UTF-8 length);
  RET(s) and the graph counts from the ok files with a Neo4j retrieval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from lasagna_cli.engine.kag._result_stats import NANOS

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
