"""`run_benchmark`: the engine from Python, what `lasagna benchmark run` does from a shell.

    from lasagna_cli import LocalExecutor, run_benchmark
    from lasagna_judge import make_llm

    results = run_benchmark("examples/data/sweep.yaml", "runs/notebook")       # BM25: no model
    results = run_benchmark(
        "examples/data/pasta.jsonl", "runs/gen", generator="local/smollm2",
        llms={"local/smollm2": make_llm("local/smollm2")},
    )
    results.get(setup="bm25-k5").metric("retrieval", "ndcg@10").mean

It takes the same configuration as the command (a `RunConfig`, or the path of a data file,
BEIR folder or sweep file), the LLM objects the setups name (by model name; the library
reads no environment variable, so it builds none itself) and an executor, and returns the
typed results. It writes the same run folder as the command, so a run started here resumes
from the shell and the reverse. Inside a running event loop (Jupyter) call `arun_benchmark`
with await, or `run_benchmark`, which then runs the engine on a thread of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._pipeline import run_benchmarks
from lasagna_cli.engine.config._config import DEFAULT_CONCURRENCY, RunConfig
from lasagna_cli.engine.datasets import DatasetLoader
from lasagna_cli.engine.reports._typed import Results
from lasagna_cli.engine.run._executor import Executor, LocalExecutor
from lasagna_cli.engine.run._runner import Models

if TYPE_CHECKING:
    from lasagna_judge import LLM, Embedder


def config_of(
    source: RunConfig | str | Path,
    *,
    tracks: Sequence[str] | None = None,
    top_k: int | None = None,
    generator: str | None = None,
    judge: str | None = None,
    env: Mapping[str, str] | None = None,
    diagnostics: bool = False,
) -> RunConfig:
    """A RunConfig as given, or read from a data file, BEIR folder or sweep file with the
    command's defaults (`env` fills `${VAR}` in a sweep file's system headers)."""
    if isinstance(source, RunConfig):
        return replace(source, diagnostics=True) if diagnostics else source
    from lasagna_cli.engine.config._config import DEFAULT_TOP_K
    from lasagna_cli.engine.config._flags import Flags, config_from_path, parse_tracks
    from lasagna_cli.engine.config._sweepfile import config_from_sweep, is_sweep_file

    flags = Flags(
        tracks=parse_tracks(list(tracks), "tracks") if tracks is not None else None,
        top_k=top_k if top_k is not None else DEFAULT_TOP_K,
        generator=generator,
        judge=judge,
        diagnostics=diagnostics,
        split_given=False,
    )
    path = str(source)
    if is_sweep_file(path):
        return config_from_sweep(path, flags, env or {})
    return config_from_path(path, flags)


async def arun_benchmark(
    config: RunConfig | str | Path,
    output: str | Path,
    *,
    llms: Mapping[str, LLM] | None = None,
    judge: LLM | None = None,
    executor: Executor | None = None,
    resume: bool = False,
    tracks: Sequence[str] | None = None,
    top_k: int | None = None,
    generator: str | None = None,
    text_cache: str | Path | None = None,
    embedders: Mapping[str, Embedder] | None = None,
    vector_folder: str | Path | None = None,
    diagnostics: bool = False,
) -> Results:
    """Run the benchmark(s) and return their results (see the module docstring).

    `llms` maps the model names the setups give (`generator:`, `--generator`) to LLM
    objects; `judge` grades the answers (its model is the config's `judge`, or the LLM's own
    name); `embedders` maps the embedder names dense and hybrid setups give
    (`local/wordllama` by default) to Embedder objects (`make_embedder`), and
    `vector_folder` keeps a corpus's vectors between runs. The caller owns these objects:
    they are used, never closed. `executor` runs the tasks: `LocalExecutor(concurrency)` by
    default, or `RayExecutor(concurrency, address=...)` on a Ray cluster, where each worker
    gets its own copy of the LLM objects (and its own usage counts). `diagnostics` adds the
    judge's claim-level diagnosis of each answer (`benchmark run --diagnostics`).
    """
    run_config = config_of(
        config,
        tracks=tracks,
        top_k=top_k,
        generator=generator,
        judge=judge.model if judge is not None else None,
        diagnostics=diagnostics,
    )
    if judge is not None and run_config.judge is None:
        run_config = replace(run_config, judge=judge.model)
    from lasagna_cli.engine.config._flags import check_diagnostics

    check_diagnostics(run_config.diagnostics, run_config.judge, "diagnostics")
    out = Path(output)
    run = await run_benchmarks(
        run_config,
        out,
        resume=resume,
        executor=executor or LocalExecutor(run_config.concurrency or DEFAULT_CONCURRENCY),
        models=Models.shared(llms or {}, judge, embedders),
        loader=DatasetLoader(Path(text_cache) if text_cache is not None else None),
        vector_folder=Path(vector_folder) if vector_folder is not None else None,
        say=lambda line: None,
    )
    return Results.from_dict(run.results, out / "results.json")


def run_benchmark(
    config: RunConfig | str | Path,
    output: str | Path,
    *,
    llms: Mapping[str, LLM] | None = None,
    judge: LLM | None = None,
    executor: Executor | None = None,
    resume: bool = False,
    tracks: Sequence[str] | None = None,
    top_k: int | None = None,
    generator: str | None = None,
    text_cache: str | Path | None = None,
    embedders: Mapping[str, Embedder] | None = None,
    vector_folder: str | Path | None = None,
    diagnostics: bool = False,
) -> Results:
    """`arun_benchmark`, from code that is not async; safe inside a running event loop."""
    kwargs: dict[str, Any] = {
        "llms": llms,
        "judge": judge,
        "executor": executor,
        "resume": resume,
        "tracks": tracks,
        "top_k": top_k,
        "generator": generator,
        "text_cache": text_cache,
        "embedders": embedders,
        "vector_folder": vector_folder,
        "diagnostics": diagnostics,
    }
    from lasagna_synth import run_blocking

    # Inside a running loop (Jupyter), the engine gets a loop of its own on another thread.
    return run_blocking(lambda: arun_benchmark(config, output, **kwargs), "lasagna-run")
