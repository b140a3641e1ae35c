"""`read_run`: any run folder's results (`_run_data.RunData`), whichever door wrote it."""

from __future__ import annotations

from pathlib import Path

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.reports._run_data import (
    Prices,
    RunData,
    complete_from_records,
    read_json_file,
)


def read_run(
    path: Path,
    *,
    datasets: Path | None = None,
    prices: Prices | None = None,
    texts: bool = True,
    text_cache: Path | None = None,
) -> RunData:
    """The results of any run folder; `datasets` is the DATASETS.json a kag sweep folder
    ran with (its files keep the answers, not the questions)."""
    if not path.exists():
        raise EngineUsageError(
            f"{path}: no such folder; give a run folder of `benchmark run`, the staged "
            "pipeline or `benchmark sweep`"
        )
    if path.is_file():
        if path.name == "results.json":
            path = path.parent
        else:
            raise EngineUsageError(f"{path}: expected a run folder, found a file")
    if (path / "results.json").is_file():
        data = read_run_folder(path, texts=texts, text_cache=text_cache)
    elif (path / "benchmark_metrics_report.json").is_file() or (path / "gen").is_dir():
        from lasagna_cli.engine.reports._read_staged import read_staged

        data = read_staged(path)
    elif datasets is not None:
        from lasagna_cli.engine.reports._read_kag import read_kag

        data = read_kag(path, datasets)
    elif any(path.glob("*/*/*.json")):
        raise EngineUsageError(
            f"{path}: a sweep's result folder holds the answers, not the questions; give "
            "the DATASETS.json it ran with: --datasets FILE"
        )
    else:
        raise EngineError(
            f"{path}: expected a run folder (results.json, the staged pipeline's gen/ and "
            "benchmark_metrics_report.json, or a sweep's <dataset>/<question>/<setup>.json "
            "files), found none of them; run `lasagna benchmark run` first"
        )
    table = prices or data.prices
    if table:
        from lasagna_cli.engine.reports._costs import price_results

        price_results(data.results, table)
    return data


def read_run_folder(path: Path, *, texts: bool = True, text_cache: Path | None = None) -> RunData:
    results_file = read_json_file(path / "results.json", "results.json")
    if not isinstance(results_file, dict) or not str(results_file.get("format", "")).startswith(
        "lasagna-results/"
    ):
        raise EngineError(
            f"{path / 'results.json'}: expected lasagna's results.json (format "
            "lasagna-results/1); run `lasagna benchmark run` to write it"
        )
    manifest_path = path / "manifest.json"
    manifest = read_json_file(manifest_path, "manifest.json") if manifest_path.is_file() else {}
    data = RunData(
        path=path,
        kind="run",
        results=list(results_file.get("results", [])),
        manifest=manifest if isinstance(manifest, dict) else {},
        seed=int(results_file.get("seed", 42)),
    )
    saved_prices = results_file.get("prices")
    if isinstance(saved_prices, dict):
        data.prices = {str(k): (float(v[0]), float(v[1])) for k, v in saved_prices.items()}
    complete_from_records(data)
    if texts:
        from lasagna_cli.engine.reports._texts import add_texts

        add_texts(data, text_cache)
    return data
