"""The staged pipeline (`benchmark run NAME --data-dir DIR [--step all|gen|eval|del]`), a
door of the one runner with OpenViking's stages and files.

- `gen` (`_gen`): the benchmark's passages indexed once (kept in `index/`), BM25 top-k,
  the benchmark's own prompt, the generator; generated_answers.json.
- `eval` (`_eval`): the answers graded; qa_eval_detailed_results.json.
- `del`: the index dropped.
Each step merges its part into benchmark_metrics_report.json (`_report`), with
OpenViking's keys; every line said is logged, timestamped, to benchmark.log. `_openviking`
reads OpenViking's config.yaml as these options.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.records._store import open_folder
from lasagna_cli.engine.run._executor import Executor
from lasagna_cli.engine.run._runner import Models, Reporter
from lasagna_cli.engine.staged._eval import stage_eval
from lasagna_cli.engine.staged._gen import stage_gen
from lasagna_cli.engine.staged._index import INDEX_DIR, drop_index
from lasagna_cli.engine.staged._log import Log
from lasagna_cli.engine.staged._openviking import (
    LOG_FILE,
    OpenVikingConfig,
    is_openviking_config,
    load_openviking_config,
)
from lasagna_cli.engine.staged._options import (
    STEPS,
    PipelineOptions,
    check_options,
    named_run,
    refuse_config_options,
    refuse_pipeline_options,
)
from lasagna_cli.engine.staged._report import DELETION, REPORT_FILE, update_report

__all__ = [
    "INDEX_DIR",
    "REPORT_FILE",
    "STEPS",
    "OpenVikingConfig",
    "PipelineOptions",
    "check_options",
    "is_openviking_config",
    "load_openviking_config",
    "named_run",
    "refuse_config_options",
    "refuse_pipeline_options",
    "run_pipeline",
]


def stage_del(out: Path, say: Callable[[str], None]) -> None:
    existed, seconds = drop_index(out)
    update_report(
        out,
        {
            DELETION: {
                "Total Deletion Time (s)": seconds,
                "Total Input Tokens": 0,
                "Total Output Tokens": 0,
            }
        },
    )
    say(f"del: {'dropped the index' if existed else 'no index to drop'} in {seconds:.3f}s")


async def run_pipeline(
    options: PipelineOptions,
    *,
    executor: Executor,
    models: Models,
    load_rubric: Callable[[str], Any],
    text_cache: Path | None,
    say: Callable[[str], None],
    reporter: Callable[[], Reporter],
    on_step: Step = no_step,
) -> int:
    """Run the requested stage(s); returns how many questions failed (run again to retry).
    `on_step` is told the index step's parts (reading, PDFs, BM25) as they go."""
    step = check_options(options)
    if options.rubric is not None:
        load_rubric(options.rubric)  # a mistyped rubric fails now, not after gen
    out = options.out
    if out.exists() and not out.is_dir():
        raise EngineUsageError(f"-o {out}: expected a folder, found a file; choose a folder")
    with open_folder(out, f"-o {out}"):
        log = Log(options.log_file or out / LOG_FILE)
        say = log.said(say)
        failed = 0
        try:
            if step in ("all", "gen"):
                failed += await stage_gen(
                    options,
                    executor=executor,
                    models=models,
                    text_cache=text_cache,
                    say=say,
                    reporter=reporter(),
                    on_step=on_step,
                    log=log.write,
                )
            if step in ("all", "eval"):
                failed += await stage_eval(
                    options,
                    executor=executor,
                    models=models,
                    load_rubric=load_rubric,
                    say=say,
                    reporter=reporter(),
                    log=log.write,
                )
        finally:
            await models.aclose()
        if step in ("all", "del"):
            stage_del(out, say)
        return failed
