"""results.json as typed objects, for notebooks and scripts (`load_results`).

    results = load_results("runs/pasta")                  # a run folder or its results.json
    for r in results:                                     # one per (benchmark, setup)
        print(r.dataset, r.setup, r.metric("retrieval", "ndcg@10").mean, r.counts["failed"])
    r = results.get(setup="bm25-k5")
    [q.id for q in r.per_query if q.status == "failed"]
    df = results.to_pandas()                              # one row per question (pandas extra)

Every object keeps the JSON it was read from (`raw`), so nothing results.json holds is
out of reach.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine._gc import collector_paused
from lasagna_cli.engine.records._fast_json import loads


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a benchmark's questions: the mean, the seeded 95% bootstrap interval,
    how many questions it counts and how many had no value (never averaged as 0)."""

    mean: float | None
    ci95_low: float | None
    ci95_high: float | None
    count: int
    missing: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricSummary:
        return cls(
            data.get("mean"),
            data.get("ci95_low"),
            data.get("ci95_high"),
            int(data.get("count", 0)),
            int(data.get("missing", 0)),
        )


@dataclass(frozen=True)
class QueryResult:
    """One question of one setup: "scored", "failed", "missing" or "not run"."""

    id: str
    status: str
    metrics: Mapping[str, float | None] | None = None
    """Retrieval metrics (None: not judged, or no retrieval track)."""
    ranking: tuple[tuple[str, float], ...] = ()
    generation: Mapping[str, Any] | None = None
    closed_book: Mapping[str, Any] | None = None
    diagnostics: Mapping[str, float | None] | None = None
    """The claim-level metrics of its answer (`--diagnostics`); None without them."""
    error: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class BenchmarkResult:
    """One (benchmark, setup) of a run."""

    dataset: str
    split: str
    setup: str
    comparability_key: str
    counts: Mapping[str, int]
    metrics: Mapping[str, Mapping[str, MetricSummary]]
    """Track ("retrieval", "generation", "closed-book", "diagnostics") -> metric name ->
    summary."""
    per_query: tuple[QueryResult, ...]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def metric(self, track: str, name: str) -> MetricSummary:
        """A metric of a track; KeyError naming what there is when it has none."""
        found = self.metrics.get(track, {})
        if name not in found:
            raise KeyError(f"{track}/{name}: not in this result; it has {_names(self.metrics)}")
        return found[name]


def _names(metrics: Mapping[str, Mapping[str, Any]]) -> str:
    return ", ".join(f"{t}/{m}" for t, ms in metrics.items() for m in ms) or "no metric"


def _query(data: Mapping[str, Any]) -> QueryResult:
    return QueryResult(
        id=str(data["id"]),
        status=str(data["status"]),
        metrics=data.get("metrics"),
        ranking=tuple((str(d), float(s)) for d, s in data.get("ranking", ())),
        generation=data.get("generation"),
        closed_book=data.get("closed-book"),
        diagnostics=data.get("diagnostics"),
        error=data.get("error"),
        raw=data,
    )


def _result(data: Mapping[str, Any]) -> BenchmarkResult:
    metrics = {
        track: {
            name: MetricSummary.from_dict(value)
            for name, value in values.items()
            if isinstance(value, Mapping) and "mean" in value
        }
        for track, values in data.get("metrics", {}).items()
    }
    return BenchmarkResult(
        dataset=str(data["dataset"]["name"]),
        split=str(data["dataset"]["split"]),
        setup=str(data["setup"]["name"]),
        comparability_key=str(data["comparability_key"]),
        counts=dict(data["counts"]),
        metrics=metrics,
        per_query=tuple(_query(q) for q in data.get("per_query", ())),
        raw=data,
    )


@dataclass(frozen=True)
class Results:
    """A run's results.json: one `BenchmarkResult` per (benchmark, setup)."""

    results: tuple[BenchmarkResult, ...]
    seed: int
    metrics_version: str
    config_hash: str
    path: Path | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __iter__(self) -> Iterator[BenchmarkResult]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def get(self, *, setup: str | None = None, dataset: str | None = None) -> BenchmarkResult:
        """The one result of that setup (and dataset); an error naming the choices when
        none or several match."""
        found = [
            r
            for r in self.results
            if (setup is None or r.setup == setup)
            and (dataset is None or r.dataset == dataset or r.dataset.startswith(f"{dataset}@"))
        ]
        if len(found) != 1:
            pairs = ", ".join(f"{r.dataset} / {r.setup}" for r in self.results)
            raise EngineUsageError(
                f"{len(found)} results match setup={setup!r} dataset={dataset!r}; the results "
                f"are {pairs}"
            )
        return found[0]

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per (benchmark, setup, question): every metric's value (the values
        the means average), the answers with their scores and grades, the status and error:
        the rows of `benchmark export --format csv`."""
        from lasagna_cli.engine.reports._export import flat_rows

        run = str(self.path.parent) if self.path is not None else ""
        return list(flat_rows(self.raw.get("results", ()), run))

    def to_pandas(self) -> Any:
        """`rows()` as a pandas DataFrame (pandas is an optional dependency:
        `pip install "lasagna-cli[pandas]"`). `df.groupby("setup")["retrieval/ndcg@10"]
        .mean()` is results.json's mean."""
        try:
            import pandas as pd  # type: ignore[import-untyped]
        except ImportError:
            from lasagna_cli.engine._errors import MissingExtraError

            raise MissingExtraError("Results.to_pandas()", "pandas", "pandas") from None
        from lasagna_cli.engine.reports._export import columns

        with collector_paused():
            rows = self.rows()
            return pd.DataFrame(rows, columns=columns(rows))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: Path | None = None) -> Results:
        if not str(data.get("format", "")).startswith("lasagna-results/"):
            raise EngineError(
                f"{path or 'results'}: expected lasagna's results.json (format "
                f"lasagna-results/1), found {data.get('format')!r}"
            )
        return cls(
            results=tuple(_result(r) for r in data.get("results", ())),
            seed=int(data.get("seed", 0)),
            metrics_version=str(data.get("metrics_version", "")),
            config_hash=str(data.get("config_hash", "")),
            path=path,
            raw=data,
        )


def load_results(path: str | Path) -> Results:
    """A run's results: its folder (`benchmark run -o DIR`) or the results.json in it."""
    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    try:
        with collector_paused():
            data = loads(file.read_bytes(), text=True)
    except FileNotFoundError:
        raise EngineUsageError(
            f"{file}: no such file; give a run folder of `lasagna benchmark run` or its "
            "results.json"
        ) from None
    except (OSError, ValueError) as exc:
        raise EngineError(f"{file}: cannot read it as results.json ({exc})") from None
    if not isinstance(data, Mapping):
        raise EngineError(f"{file}: expected a JSON object, found {type(data).__name__}")
    with collector_paused():
        return Results.from_dict(data, file)
