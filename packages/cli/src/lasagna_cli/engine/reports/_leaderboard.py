"""The leaderboard's data: per comparability group and track, the columns a group has, each
setup's cells (best first), its title and key, the jury lines, and `--format json`'s payload.

The command draws these as tables; the figures and words are all decided here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine.reports._settings import varied_settings

# (track, metric, column heading); a column appears when any result in the group has it.
_COLUMNS = (
    ("retrieval", "ndcg@10", "nDCG@10"),
    ("retrieval", "recall@", "recall@{k}"),
    ("retrieval", "mrr", "MRR"),
    ("retrieval", "hit_rate@", "hit@{k}"),
    ("retrieval", "evidence_recall", "evidence"),
    ("retrieval", "span_recall", "span recall"),
    ("retrieval", "span_precision", "span precision"),
    ("retrieval", "span_iou", "span IoU"),
    ("generation", "exact_match", "EM"),
    ("generation", "f1", "F1"),
    ("generation", "no_answer_accuracy", "no-answer"),
    ("generation", "judge_score", "judge 0-4"),
    ("closed-book", "exact_match", "closed EM"),
    ("closed-book", "f1", "closed F1"),
    ("closed-book", "judge_score", "closed judge"),
)


@dataclass(frozen=True)
class LeaderboardTable:
    """One table: its title, the headings after `setup` (the metrics, `failed`, and
    `missing` when a setup has missing predictions), a row per setup that runs the track
    (the setup's name first, best first) and the caption under it."""

    title: str
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str


def _find(metrics: Mapping[str, Any], track: str, prefix: str) -> tuple[str, Any] | None:
    section = metrics.get(track) or {}
    for name, value in section.items():
        if name == prefix or (prefix.endswith("@") and name.startswith(prefix)):
            return name, value
    return None


def _cell(summary: Mapping[str, Any]) -> str:
    """The mean, then the 95% interval's wider side as +-; exact bounds are in results.json."""
    mean = summary.get("mean")
    if mean is None:
        return "-"
    low, high = summary.get("ci95_low"), summary.get("ci95_high")
    text = f"{mean:.3f}"
    if low is not None and high is not None and high > low:
        text += f" ±{max(mean - low, high - mean):.3f}"
    if summary.get("missing"):
        text += f" ({summary['missing']} missing)"
    return text


def _sort_value(result: Mapping[str, Any], track: str) -> float:
    metric = "ndcg@10" if track == "retrieval" else "f1"
    found = _find(result["metrics"], track, metric)
    if found and found[1].get("mean") is not None:
        return float(found[1]["mean"])
    return -1.0


def _table(key: str, members: list[Mapping[str, Any]], track: str) -> LeaderboardTable | None:
    columns = []
    for column_track, metric, heading in _COLUMNS:
        if column_track != track:
            continue
        present = [_find(r["metrics"], track, metric) for r in members]
        if any(present):
            # recall@3 beside recall@10 when the setups compare top_k: "recall@k".
            ks = {f[0].split("@", 1)[1] for f in present if f and "@" in f[0]}
            columns.append((metric, heading.format(k=ks.pop() if len(ks) == 1 else "k")))
    if not columns:
        return None
    first = members[0]["dataset"]
    apart = ""
    unjudged = max((r["counts"].get("without_evidence", 0) for r in members), default=0)
    if track == "retrieval" and unjudged:
        apart = f", {unjudged} without evidence counted apart"
    title = (
        f"{track}: {first['name']} ({first['split']}, "
        f"{members[0]['counts']['questions']} questions{apart}, "
        f"{first['corpus_provenance']})"
    )
    with_missing = any(r["counts"].get("missing") for r in members)
    headings = (*(h for _, h in columns), "failed", *(("missing",) if with_missing else ()))
    rows = []
    # A setup that does not run this track (BM25 alone beside a system) is not a row.
    ran = [r for r in members if track in r["setup"]["tracks"]]
    for result in sorted(ran, key=lambda r: _sort_value(r, track), reverse=True):
        row = [result["setup"]["name"]]
        for metric, heading in columns:
            cell = _find(result["metrics"], track, metric)
            text = _cell(cell[1]) if cell else "-"
            if cell and heading.endswith("@k"):  # the setups differ in k: say whose
                text += f" (k={cell[0].split('@', 1)[1]})"
            row.append(text)
        counts = result["counts"]
        row.append(str(counts["failed"] + counts["not_run"]))
        if with_missing:
            row.append(str(counts.get("missing", 0)))
        rows.append(tuple(row))
    caption = f"comparability key {key[:12]}; ± the 95% bootstrap interval (wider side)"
    varied = varied_settings([r["setup"] for r in members])  # all, not only the key's
    if varied:
        caption += f"; compared: {', '.join(varied)}"
    return LeaderboardTable(title, headings, tuple(rows), caption)


def leaderboard_tables(results: Sequence[Mapping[str, Any]]) -> list[LeaderboardTable]:
    """Per comparability group, one table per track the group has a metric of."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        groups.setdefault(result["comparability_key"], []).append(result)
    tables = []
    for key, members in groups.items():
        for track in ("retrieval", "generation", "closed-book"):
            table = _table(key, members, track)
            if table is not None:
                tables.append(table)
    return tables


def leaderboard_jury_lines(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """A jury's line per result and track: each judge's mean and their agreement (the
    table's judge column is the jury's grade)."""
    lines = []
    for result in results:
        for track, metrics in result.get("metrics", {}).items():
            jury = metrics.get("jury") if isinstance(metrics, Mapping) else None
            if not isinstance(jury, Mapping):
                continue
            means = []
            for i, judge in enumerate(jury.get("judges") or (), 1):
                mean = (metrics.get(f"judge_score_{i}") or {}).get("mean")
                means.append(f"{judge.get('model')} {'n/a' if mean is None else f'{mean:.3f}'}")
            agreement = jury.get("agreement") or {}
            alpha = agreement.get("alpha")
            shown = "undefined" if alpha is None else f"{alpha:.3f}"
            lines.append(
                f"jury ({result['setup']['name']}, {track}; grade = the {jury.get('aggregate')} "
                f"of the parsed grades): {'; '.join(means)}; Krippendorff's alpha {shown} over "
                f"{agreement.get('answers', 0)} answers"
            )
    return lines


def leaderboard_json(results: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """What `--format json` prints: each result without its per-question records (those
    are in results.json)."""
    return {
        "results_file": str(out / "results.json"),
        "results": [{k: v for k, v in r.items() if k != "per_query"} for r in results],
    }
