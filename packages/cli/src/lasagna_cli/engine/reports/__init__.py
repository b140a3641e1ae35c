"""Reports: views over a run's task records.

- `_results`, `_manifest`: results.json and manifest.json, written by the runner;
- `_typed`: results.json as typed objects (`load_results`), with `to_pandas()`;
- `_run_data`: any run folder (run, staged pipeline, kag sweep) as results, read back
  (`_texts`, `_read_staged`, `_read_kag`), priced by `_costs`;
- `_paired`, `_compare`, `_settings`: paired comparisons (one sign-flip test: its
  p-value and the interval that inverts it) and what the setups vary;
- `_verdict`: a comparison's sentence per metric, and `compare --fail-if-worse`'s gate;
- `_leaderboard`: `benchmark run`'s leaderboard: its tables' cells, jury lines and JSON;
- `_export`: flat rows (CSV, JSONL, Parquet) and TREC run files;
- `_report_payload`, `_html`, `assets/`: the self-contained HTML report;
- `_scripted`: the note every view shows when a scripted `fake/` model made the figures.

Names load on first use, so importing results.json's writer costs nothing more.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine.reports._compare import compare_runs
    from lasagna_cli.engine.reports._costs import cost_line
    from lasagna_cli.engine.reports._export import (
        check_export,
        export_text,
        flat_rows,
        to_parquet,
        write_export,
    )
    from lasagna_cli.engine.reports._html import build_report, report_parts, write_report
    from lasagna_cli.engine.reports._leaderboard import (
        LeaderboardTable,
        leaderboard_json,
        leaderboard_jury_lines,
        leaderboard_tables,
    )
    from lasagna_cli.engine.reports._read import read_run
    from lasagna_cli.engine.reports._read_kag import PRICES_FILE, keep_prices
    from lasagna_cli.engine.reports._run_data import RunData
    from lasagna_cli.engine.reports._scripted import scripted_note_of
    from lasagna_cli.engine.reports._settings import varied_settings
    from lasagna_cli.engine.reports._typed import (
        BenchmarkResult,
        MetricSummary,
        QueryResult,
        Results,
        load_results,
    )
    from lasagna_cli.engine.reports._verdict import (
        COMPARE_HEADINGS,
        Gate,
        check_gates,
        compare_json,
        compared_fields,
        comparison_table,
        forced_lines,
        method_note,
        parse_gates,
    )

_NAMES = {
    "RunData": "_run_data",
    "read_run": "_read",
    "compare_runs": "_compare",
    "Gate": "_verdict",
    "check_gates": "_verdict",
    "COMPARE_HEADINGS": "_verdict",
    "compared_fields": "_verdict",
    "comparison_table": "_verdict",
    "compare_json": "_verdict",
    "forced_lines": "_verdict",
    "method_note": "_verdict",
    "parse_gates": "_verdict",
    "varied_settings": "_settings",
    "build_report": "_html",
    "flat_rows": "_export",
    "to_parquet": "_export",
    "export_text": "_export",
    "check_export": "_export",
    "write_export": "_export",
    "write_report": "_html",
    "report_parts": "_html",
    "PRICES_FILE": "_read_kag",
    "keep_prices": "_read_kag",
    "cost_line": "_costs",
    "load_results": "_typed",
    "Results": "_typed",
    "BenchmarkResult": "_typed",
    "MetricSummary": "_typed",
    "QueryResult": "_typed",
    "scripted_note_of": "_scripted",
    "LeaderboardTable": "_leaderboard",
    "leaderboard_json": "_leaderboard",
    "leaderboard_jury_lines": "_leaderboard",
    "leaderboard_tables": "_leaderboard",
}

__all__ = [
    "COMPARE_HEADINGS",
    "PRICES_FILE",
    "BenchmarkResult",
    "Gate",
    "LeaderboardTable",
    "MetricSummary",
    "QueryResult",
    "Results",
    "RunData",
    "build_report",
    "check_export",
    "check_gates",
    "compare_json",
    "compare_runs",
    "compared_fields",
    "comparison_table",
    "cost_line",
    "export_formats",
    "export_text",
    "flat_rows",
    "forced_lines",
    "keep_prices",
    "leaderboard_json",
    "leaderboard_jury_lines",
    "leaderboard_tables",
    "load_results",
    "method_note",
    "parse_gates",
    "read_run",
    "report_parts",
    "scripted_note_of",
    "to_parquet",
    "varied_settings",
    "write_export",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
