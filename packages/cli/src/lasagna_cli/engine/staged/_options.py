"""The staged pipeline's options (`run NAME --data-dir DIR [--step ...]`), its one setup,
and where its records live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lasagna_cli.engine._data import Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.config._config import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TOP_K,
    ModelSpec,
    PromptSpec,
    RetrieverSpec,
    Setup,
)
from lasagna_cli.engine.records._store import Record, TaskKey, dump_task_json

if TYPE_CHECKING:
    from lasagna_cli.engine.config import Servers
    from lasagna_cli.engine.run import ExecutorChoice

Step = Literal["all", "gen", "eval", "del"]
STEPS: tuple[Step, ...] = ("all", "gen", "eval", "del")
MAX_CONTEXT_CHARS = 8000
MAX_ANSWER_TOKENS = 256
GEN_TASKS_DIR = "gen"
EVAL_TASKS_DIR = "eval"


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
    concurrency: int = DEFAULT_CONCURRENCY
    requests_per_minute: float | None = None
    """Each model's requests a minute at most, all workers together (--rpm)."""
    tokens_per_minute: float | None = None
    endpoints: Mapping[str, str] = field(default_factory=dict)
    """Provider -> the server its calls go to, when not its own (OPENAI_BASE_URL, ...)."""
    retriever: str = "bm25"
    """bm25, dense or hybrid (OpenViking measures a vector store: dense)."""
    embedder: str | None = None
    embedder_endpoint: str | None = None
    vector_store: str | None = None
    collection: str | None = None
    ingest_mode: str = "directory"
    """directory: the corpus embedded as one job; per_file: one job per source document."""
    ingest_workers: int = 8
    """Embedding requests in flight at most (OpenViking's ingest_workers)."""
    temperature: float | None = None
    """The generator's (OpenViking's llm.temperature); None: lasagna's 0."""
    log_file: Path | None = None
    """Where every line the pipeline says is logged, timestamped [default: out/benchmark.log]."""
    docs_dirs: tuple[Path, ...] | None = None
    """Where the processed documents are written as Markdown when the index is built
    [default: out/docs]; () writes none (OpenViking's skip_ingestion)."""
    project_name: str | None = None
    """OpenViking's project_name, recorded in the report."""
    dataset_label: str | None = None
    """The report's "Dataset" (OpenViking's dataset_name) [default: OpenViking's spelling
    of the benchmark: Locomo, SyllabusQA, Qasper, FinanceBench; else its name]."""
    instructions: tuple[tuple[str, str], ...] = ()
    """Per-category answer instructions replacing the benchmark's ("*": the default one)."""
    prompts: Mapping[str, Any] | None = None
    """Where the overrides came from (file, sha256, ...), recorded in the report."""

    def endpoint(self, model: str) -> str | None:
        return self.endpoints.get(model.partition("/")[0])


#: Options of `benchmark run` that mean nothing to the staged pipeline.
_NOT_FOR_PIPELINE = (
    "tracks",
    "n_samples",
    "seed",
    "filters",
    "drop_unknown_judgments",
    "data_format",
    "prices",  # a staged folder is priced by `report` and `export --prices`
    "max_chars",  # its eval holds judge grade's default limit
    "dry_run",  # its steps are priced by what they record; a dry run is for data files
)
#: Options of `benchmark run` for the user's own system, which the pipeline does not take.
_SYSTEM_OPTIONS = (
    "predictions",
    "predictions_from_data",
    "allow_missing",
    "system",
    "system_timeout",
    "system_retries",
    "system_headers",
)
#: Options only the staged pipeline reads.
_PIPELINE_ONLY = (
    "data_dir",
    "step",
    "max_queries",
    "retrieval_instruction",
    "ingest_mode",
    "ingest_workers",
)


#: `benchmark run` options that `--config` takes from the command line; the rest it reads
#: from the config file.
_RUN_CONFIG_OPTIONS = ("path", "config_file", "step", "base_url", "rpm", "tpm")


def refuse_config_options(given: Mapping[str, str]) -> None:
    """`benchmark run --config`: an option the config file sets is refused (`given` as
    `refuse_pipeline_options`'s)."""
    for name, flag in given.items():
        if name not in _RUN_CONFIG_OPTIONS:
            raise EngineUsageError(
                f"{flag} does not apply with --config: the config file sets the "
                "run (see `lasagna benchmark openviking --help`)"
            )


def refuse_pipeline_options(given: Mapping[str, str], path: str) -> None:
    """`benchmark run DATA`: the options only a registered benchmark's pipeline takes are
    refused, naming the benchmarks. `given`: each option the command line gave (by its
    parameter's name) -> its flag."""
    from lasagna_cli.engine.benchmarks import benchmark_names

    found = [name for name in _PIPELINE_ONLY if name in given]
    if found:
        hint = "; -n N draws questions from your data" if "max_queries" in found else ""
        raise EngineUsageError(
            f"{given[found[0]]} is for registered benchmarks "
            f"({', '.join(benchmark_names())}); {path!r} is not one of them"
            + (" (it is a file or folder here)" if Path(path).exists() else "")
            + hint
        )


def refuse_run_options(given: Mapping[str, str], name: str, jury: Sequence[str]) -> None:
    """`benchmark run NAME`: the options the pipeline does not take are refused, and a jury
    (`given` as `refuse_pipeline_options`'s)."""
    for option in _NOT_FOR_PIPELINE:
        if option in given:
            raise EngineUsageError(
                f"{given[option]} does not apply to the staged pipeline of {name!r}; see "
                "`lasagna benchmark run --help` for the NAME options"
            )
    for option in _SYSTEM_OPTIONS:
        if option in given:
            raise EngineUsageError(
                f"{given[option]}: the staged pipeline of {name!r} measures lasagna's "
                "BM25 and --generator, not your own system; a system is benchmarked on "
                "data files and BEIR folders: lasagna benchmark run DATA --system ... (or "
                "--predictions ...)"
            )
    if jury:
        raise EngineUsageError(
            f"--judge is given {len(jury) + 1} times: a jury grades data files, "
            f"BEIR folders and sweep files; the staged pipeline of {name!r} takes one judge"
        )


def flag_options(
    name: str, values: Mapping[str, Any], given: Mapping[str, str], **resolved: Any
) -> PipelineOptions:
    """`benchmark run NAME`'s options from its flags' values (by parameter name, the folders
    as text or paths); without -o, runs/NAME; --split and --rubric, when not given, are the
    benchmark's own. `given` as `refuse_pipeline_options`'s; `resolved`: what the command
    read from the environment and the judge (concurrency, endpoints, ...)."""
    from lasagna_cli.engine.records._store import default_output

    data_dir, output = values["data_dir"], values["output"]
    return PipelineOptions(
        name=name,
        data_dir=Path(data_dir) if data_dir is not None else None,
        out=Path(output) if output is not None else default_output(name),
        step=values["step"] or "all",
        split=values["split"] if "split" in given else None,
        profile=values["profile"] or "speed",
        top_k=values["top_k"],
        max_queries=values["max_queries"],
        retrieval_instruction=values["retrieval_instruction"],
        generator=values["generator"],
        rubric=values["rubric"] if "rubric" in given else None,
        retriever=values["retriever"] or "bm25",
        embedder=values["embedder"],
        vector_store=values["vector_store"],
        collection=values["collection"],
        ingest_mode=values["ingest_mode"] or "directory",
        ingest_workers=values["ingest_workers"],
        **resolved,
    )


def named_run(
    name: str,
    values: Mapping[str, Any],
    given: Mapping[str, str],
    env: Mapping[str, str],
    servers: Servers,
    concurrency: int,
    *,
    judge: str | None,
    jury: Sequence[str],
) -> tuple[PipelineOptions, ExecutorChoice]:
    """`benchmark run NAME`: the options the pipeline does not take refused
    (`refuse_run_options`), --executor and --ray-address checked (`env`: the Ray variables
    the command read),
    --rpm and --tpm, then `flag_options` with the judge, the tasks in flight, and the
    servers the models' and the embedder's calls go to (`servers`, with --base-url).
    Returns the options and the executor chosen."""
    from lasagna_cli.engine.run import check_rate, executor_choice

    refuse_run_options(given, name, jury)
    chosen = executor_choice(values["executor"] or "local", values["ray_address"], env)
    embedder = values["embedder"]
    options = flag_options(
        name,
        values,
        given,
        judge=judge,
        concurrency=concurrency,
        requests_per_minute=check_rate(values["rpm"], "--rpm"),
        tokens_per_minute=check_rate(values["tpm"], "--tpm"),
        endpoints=servers.endpoints(servers.base_url),
        embedder_endpoint=servers.embedder_endpoint(embedder) if embedder else None,
    )
    return options, chosen


def check_options(options: PipelineOptions) -> Step:
    if options.step not in STEPS:
        raise EngineUsageError(
            f"--step: expected one of {', '.join(STEPS)}, found {options.step!r}"
        )
    if options.profile != "speed":
        raise EngineUsageError(
            f"--profile {options.profile!r}: the staged pipeline's profile is speed; choose "
            "its retriever with --retriever bm25|dense|hybrid"
        )
    if options.ingest_mode not in ("directory", "per_file"):
        raise EngineUsageError(
            f"--ingest-mode: expected directory or per_file, found {options.ingest_mode!r}"
        )
    for flag, value in (
        ("--top-k", options.top_k),
        ("--max-queries", options.max_queries),
        ("--concurrency", options.concurrency),
        ("--ingest-workers", options.ingest_workers),
    ):
        if value is not None and value < 1:
            raise EngineUsageError(f"{flag} must be at least 1, found {value}")
    retriever_of(options)  # a bad --retriever, --embedder or store: refused before any stage
    if options.step in ("all", "gen") and options.data_dir is None:
        raise EngineUsageError(
            f"lasagna benchmark run {options.name} needs --data-dir: the folder (or file) "
            f"holding the benchmark's raw files; nothing is downloaded (see `lasagna benchmark "
            f"info {options.name}` for the files and where to get them)"
        )
    if options.step == "all" and options.generator is None:
        raise EngineUsageError(
            "--step all generates and grades answers: give --generator MODEL (local/smollm2 "
            "runs offline, with no key), or run --step gen alone for retrieval and evidence "
            "recall"
        )
    return options.step


def pipeline_setup(options: PipelineOptions) -> Setup:
    """The one setup the pipeline measures: BM25 top-k over the benchmark's passages, the
    benchmark's own prompt (passages cut to 8,000 characters), the generator if given."""
    generator = None
    if options.generator is not None:
        generator = ModelSpec(
            options.generator,
            temperature=options.temperature,
            max_tokens=MAX_ANSWER_TOKENS,
            endpoint=options.endpoint(options.generator),
        )
    return Setup(
        name="staged",
        retriever=retriever_of(options),
        generator=generator,
        prompt=PromptSpec(
            "benchmark",
            benchmark=options.name,
            max_passage_chars=MAX_CONTEXT_CHARS,
            instructions=options.instructions,
        ),
        tracks=("retrieval", "generation") if generator is not None else ("retrieval",),
        query_prefix=options.retrieval_instruction or "",
    )


def retriever_of(options: PipelineOptions) -> RetrieverSpec:
    """The pipeline's retriever from its flags, checked as every door checks one."""
    from lasagna_cli.engine.config._flags import flag_retriever

    spec = flag_retriever(
        options.top_k, options.retriever, options.embedder, options.vector_store, options.collection
    )
    return replace(spec, embedder_endpoint=options.embedder_endpoint)


class PipelineStore:
    """OpenViking's order: question number i (in the benchmark's order) is `<dir>/<i>.json`,
    `gen/` for the answers, `eval/` for the graded answers; one line of JSON each."""

    batched = False

    def __init__(self, root: Path, folder: str, questions: Sequence[Question] = ()) -> None:
        self.root = root
        self.folder = folder
        self._index = {q.id: i for i, q in enumerate(questions)}

    def path(self, task: TaskKey) -> Path:
        return self.at(self._index[task.item])

    def at(self, index: int) -> Path:
        return self.root / self.folder / f"{index:06d}.json"

    def encode(self, record: Record) -> bytes:
        return dump_task_json(record)

    def decode(self, data: Any) -> Record | None:
        if isinstance(data, dict) and str(data.get("format", "")).startswith("lasagna-task/"):
            return data
        return None
