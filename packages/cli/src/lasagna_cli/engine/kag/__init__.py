"""kag's `benchmark` and `stats` as a door of the engine: its files, its result layout and
its report.

- `_datasets`: DATASETS.json (dataset -> question -> {input, output?}), as engine datasets;
- `_config`: config.toml (providers, databases, retrievers);
- `_setups`: SETUPS.toml, rendered with MiniJinja, as engine setups;
- `_retrieval_refs`: a setup's retrieval, kag's `augmented_generation` or the top-level
  `retriever` and `database`, checked in kag's order;
- `_missing`: the setups recorded per task as kag's error (a missing component, Neo4j);
- `_databases`: the databases' passages, loaded once per sweep;
- `_sweep`: the door: the files read and checked, the plan, the tasks in kag's order,
  and `run_sweep`, the sweep run into the result folder (locked) and counted;
- `_store`: `<output>/<dataset>/<question>/<prefix><setup>.json`, kag's two shapes;
- `_result_stats`: kag's own `stats` fields of a result file (serde's layout);
- `_kag_metrics`: kag's stats figures, JSON and table (OK/WRONG/ERR/TOT, ACC/PREC/COVER);
- `_stats_run`: `run_stats`, the stats report in one call (read, judged, summarized);
- `_stats`, `_run_folder`, `_find`: the stats report (kag's, and lasagna's option
  extraction, EM/F1, judge grades beside it) over a sweep's result files or any run
  folder's task records, and `stats find`.
"""

from lasagna_cli.engine.kag._config import Config, load_config
from lasagna_cli.engine.kag._databases import load_databases
from lasagna_cli.engine.kag._datasets import Datasets, as_datasets, dataset_of, load_datasets
from lasagna_cli.engine.kag._describe import describe_setup
from lasagna_cli.engine.kag._find import Found, find, find_in
from lasagna_cli.engine.kag._result_files import Damaged, Result, dataset_folders, iter_results
from lasagna_cli.engine.kag._run_folder import damaged_records, is_run_folder, run_folder_results
from lasagna_cli.engine.kag._setups import BrokenSetup, load_setups, select_setups
from lasagna_cli.engine.kag._stats import StatsReport, needs_grading, summarize
from lasagna_cli.engine.kag._stats_run import StatsJudge, StatsRun, damaged_failure, run_stats
from lasagna_cli.engine.kag._stats_text import render_text
from lasagna_cli.engine.kag._store import KagStore, decode_result, result_path
from lasagna_cli.engine.kag._sweep import (
    Sweep,
    SweepOutcome,
    check_sweep_options,
    load_sweep,
    run_sweep,
    sweep_tasks,
)

__all__ = [
    "BrokenSetup",
    "Config",
    "Damaged",
    "Datasets",
    "Found",
    "KagStore",
    "Result",
    "StatsJudge",
    "StatsReport",
    "StatsRun",
    "Sweep",
    "SweepOutcome",
    "as_datasets",
    "check_sweep_options",
    "damaged_failure",
    "damaged_records",
    "dataset_folders",
    "dataset_of",
    "decode_result",
    "describe_setup",
    "find",
    "find_in",
    "is_run_folder",
    "iter_results",
    "load_config",
    "load_databases",
    "load_datasets",
    "load_setups",
    "load_sweep",
    "needs_grading",
    "render_text",
    "result_path",
    "run_folder_results",
    "run_stats",
    "run_sweep",
    "select_setups",
    "summarize",
    "sweep_tasks",
]
