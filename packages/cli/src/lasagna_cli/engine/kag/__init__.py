"""kag's `benchmark` and `stats` as a door of the engine: its files, its result layout and
its report.

- `_files`: what the files go through: the TOML files read as UTF-8, rendered with
  MiniJinja (kag's `file()` and `env()`) and parsed as TOML 1.1; component names checked;
- `_config`: config.toml (providers, databases, retrievers), lasagna's entries and kag's;
- `_datasets`: DATASETS.json (dataset -> question -> {input, output?}), as engine datasets;
- `_setups`: SETUPS.toml as engine setups: a setup's retrieval (kag's
  `augmented_generation` or the top-level `retriever` and `database`, checked in kag's
  order), and the setups recorded per task as kag's error (a missing component, Neo4j);
- `_sweep`: the door: the files read and checked, the plan, the tasks in kag's order, the
  databases' passages loaded once, and `run_sweep`, the sweep run into the result folder
  (locked) and counted;
- `_results`: `<output>/<dataset>/<question>/<prefix><setup>.json`, kag's two shapes,
  written (kag's own `stats` fields, serde's layout) and read back, and a run folder's task
  records read as the same results;
- `_stats`: the stats report (kag's figures, JSON and table: OK/WRONG/ERR/TOT,
  ACC/PREC/COVER; lasagna's option extraction, EM/F1 and judge grades beside them) over
  a sweep's result files or any run folder's task records, and `stats find`;
- `_stats_run`: `run_stats`, the stats report in one call (read, judged, summarized).
"""

from lasagna_cli.engine.kag._config import Config, load_config
from lasagna_cli.engine.kag._datasets import Datasets, as_datasets, dataset_of, load_datasets
from lasagna_cli.engine.kag._results import (
    Damaged,
    KagStore,
    Result,
    damaged_records,
    dataset_folders,
    decode_result,
    describe_setup,
    is_run_folder,
    iter_results,
    result_path,
    run_folder_results,
)
from lasagna_cli.engine.kag._setups import BrokenSetup, load_setups, select_setups
from lasagna_cli.engine.kag._stats import (
    Found,
    StatsReport,
    find,
    needs_grading,
    render_text,
    summarize,
)
from lasagna_cli.engine.kag._stats_run import StatsJudge, StatsRun, check_stats_source, run_stats
from lasagna_cli.engine.kag._sweep import (
    Sweep,
    SweepOutcome,
    check_sweep_options,
    load_databases,
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
    "check_stats_source",
    "check_sweep_options",
    "damaged_records",
    "dataset_folders",
    "dataset_of",
    "decode_result",
    "describe_setup",
    "find",
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
