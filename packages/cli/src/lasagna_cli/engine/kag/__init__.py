"""kag's `benchmark` and `stats` as a door of the engine: its files, its result layout and
its report.

- `_datasets`: DATASETS.json (dataset -> question -> {input, output?}), as engine datasets;
- `_config`: config.toml (providers, databases, retrievers);
- `_setups`: SETUPS.toml, rendered with MiniJinja, as engine setups;
- `_databases`: the databases' passages, loaded once per sweep;
- `_sweep`: the door: the files read and checked, the plan, the tasks in kag's order;
- `_store`: `<output>/<dataset>/<question>/<prefix><setup>.json`, kag's two shapes;
- `_stats`, `_run_folder`: the stats report (ACC/PREC/COVER, EM/F1, judge grades) over a
  sweep's result files or any run folder's task records.
"""

from lasagna_cli.engine.kag._config import Config, load_config
from lasagna_cli.engine.kag._databases import load_databases
from lasagna_cli.engine.kag._datasets import Datasets, as_datasets, dataset_of, load_datasets
from lasagna_cli.engine.kag._describe import describe_setup
from lasagna_cli.engine.kag._run_folder import is_run_folder, run_folder_results
from lasagna_cli.engine.kag._setups import BrokenSetup, load_setups, select_setups
from lasagna_cli.engine.kag._stats import (
    Result,
    find_results,
    iter_results,
    needs_grading,
    render_text,
    summarize,
)
from lasagna_cli.engine.kag._store import KagStore, decode_result, result_path
from lasagna_cli.engine.kag._sweep import (
    Sweep,
    broken_tasks,
    check_prefix,
    load_sweep,
    record_broken,
    refuse_overwrite,
    sweep_tasks,
    task_count,
)

__all__ = [
    "BrokenSetup",
    "Config",
    "Datasets",
    "KagStore",
    "Result",
    "Sweep",
    "as_datasets",
    "broken_tasks",
    "check_prefix",
    "dataset_of",
    "decode_result",
    "describe_setup",
    "find_results",
    "is_run_folder",
    "iter_results",
    "load_config",
    "load_databases",
    "load_datasets",
    "load_setups",
    "load_sweep",
    "needs_grading",
    "record_broken",
    "refuse_overwrite",
    "render_text",
    "result_path",
    "run_folder_results",
    "select_setups",
    "summarize",
    "sweep_tasks",
    "task_count",
]
