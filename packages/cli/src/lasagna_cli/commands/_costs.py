"""The cost lines of `run --prices` and `sweep --prices`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer


def _money(usage: Mapping[str, Any]) -> str:
    if usage.get("cost_usd") is not None:
        return f"${usage['cost_usd']:.4f}"
    unpriced = ", ".join(usage.get("unpriced") or ()) or "some model"
    return f"unknown (no price for {unpriced}; ${usage.get('priced_usd', 0.0):.4f} priced)"


def cost_line(results: Sequence[Mapping[str, Any]]) -> str:
    """One line: each result's cost (answers and grades, cached calls included)."""
    parts = [
        f"{r['setup']['name']} on {r['dataset']['name']} {_money(r.get('usage') or {})}"
        for r in results
    ]
    return "cost (answers and grades, cached calls included): " + "; ".join(parts)


def sweep_costs(output: Path, datasets: Path, prices: Mapping[str, tuple[float, float]]) -> None:
    """Print a sweep's cost per setup and keep the table beside its results, where the
    report and the export find it."""
    from lasagna_cli.engine.records import write_json_atomic
    from lasagna_cli.engine.reports import PRICES_FILE, read_run

    if not output.is_dir():
        return
    write_json_atomic(output / PRICES_FILE, {m: list(p) for m, p in sorted(prices.items())})
    data = read_run(output, datasets=datasets, prices=prices, texts=False)
    typer.echo(cost_line(data.results), err=True)
