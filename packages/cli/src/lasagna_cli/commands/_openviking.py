"""`lasagna benchmark openviking CONFIG.yaml` (also `benchmark run --config CONFIG.yaml`):
OpenViking's RAG benchmark config, read as written, run by the staged pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits

if TYPE_CHECKING:
    from lasagna_cli.engine.config import ModelSpec
    from lasagna_cli.engine.staged import OpenVikingConfig, PipelineOptions
    from lasagna_judge import LLM

StepOption = Annotated[
    str,
    typer.Option("--step", help="all, gen (index, retrieve, generate), eval or del, as run.py's."),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Send the llm's calls to this OpenAI-compatible server instead of llm.base_url.",
    ),
]


def _api_key(config: OpenVikingConfig, server: str | None) -> str | None:
    """llm.api_key_env_var's variable when it names one, else llm.api_key; with neither,
    OPENAI_API_KEY only when the calls go to OpenAI itself (no base URL), so that key never
    reaches another server. Never recorded."""
    from lasagna_cli.commands._llm import key_from_variable

    llm = config.llm
    assert llm is not None
    if llm.api_key_env_var:
        value = key_from_variable(llm.api_key_env_var)
        if value is None:
            raise CliError(
                f"{config.path}: llm.api_key_env_var names ${llm.api_key_env_var}, which is not "
                "set; export it, or give llm.api_key",
                USAGE_ERROR,
            )
        return value
    if llm.api_key:
        return llm.api_key
    return key_from_variable("OPENAI_API_KEY") if server is None else None


def pipeline_options(
    config: OpenVikingConfig,
    step: str,
    base_url: str | None,
    limits: tuple[float | None, float | None] = (None, None),
) -> tuple[PipelineOptions, dict[str, LLM]]:
    """The pipeline's options from the config, and its one LLM (it answers and judges, as
    in OpenViking), built before any stage runs. `limits`: --rpm and --tpm, the run's."""
    import os

    from lasagna_cli.commands._llm import cache_setting, proxies_of
    from lasagna_cli.engine.benchmarks import get_benchmark_spec
    from lasagna_cli.engine.config import endpoint_url
    from lasagna_cli.engine.run import shared
    from lasagna_cli.engine.staged import PipelineOptions
    from lasagna_judge import JudgeError, make_llm

    out = config.output_dir
    prompts = config.prompts
    docs: tuple[Path, ...] = () if config.skip_ingestion else (out / "docs",)
    if config.doc_output_dir is not None and docs:
        docs += (config.doc_output_dir,)
    llms: dict[str, LLM] = {}
    generator = None
    endpoints: dict[str, str] = {}
    if config.llm is not None:
        generator = f"openai/{config.llm.model}"
        server = base_url or config.llm.base_url
        if server:
            endpoints["openai"] = endpoint_url(server)
        try:
            llms[generator] = make_llm(
                generator,
                base_url=server,
                api_key=_api_key(config, server),
                cache=cache_setting(True, os.environ),
                concurrency=config.max_workers,
                requests_per_minute=shared(limits[0]),
                tokens_per_minute=shared(limits[1]),
                proxies=proxies_of(),
            )
        except JudgeError as exc:
            raise CliError(f"{config.path}: llm: {exc}", USAGE_ERROR) from None
        if base_url and config.llm.base_url:
            typer.echo(f"llm.base_url {config.llm.base_url} replaced by --base-url", err=True)
    options = PipelineOptions(
        name=config.benchmark,
        data_dir=config.dataset_path,
        # every split file of the folder, as OpenViking's Qasper and SyllabusQA adapters
        # read one
        split="all" if "all" in get_benchmark_spec(config.benchmark).splits else None,
        out=out,
        step=step,
        top_k=config.top_k,
        max_queries=config.max_queries,
        retrieval_instruction=config.retrieval_instruction or None,
        generator=generator,
        judge=generator,  # llm.model grades whatever answers the file holds, as run.py does
        concurrency=config.max_workers,
        requests_per_minute=limits[0],
        tokens_per_minute=limits[1],
        endpoints=endpoints,
        ingest_mode=config.ingest_mode,
        ingest_workers=config.ingest_workers,
        temperature=config.llm.temperature if config.llm is not None else None,
        log_file=config.log_file,
        docs_dirs=docs,
        project_name=config.project_name,
        dataset_label=config.dataset_name,
        instructions=prompts.instructions if prompts is not None else (),
        rubric=str(prompts.judge_rubric) if prompts and prompts.judge_rubric else None,
        prompts=prompts.describe() if prompts is not None else None,
    )
    return options, llms


def run_openviking(
    config_path: Path,
    step: str,
    base_url: str | None,
    limits: tuple[float | None, float | None] = (None, None),
) -> None:
    """Read the config (warning of every key it does not use) and run its stages; `limits`
    are --rpm and --tpm."""
    from lasagna_cli.commands._staged import _run_pipeline
    from lasagna_cli.engine.staged import load_openviking_config

    config = load_openviking_config(config_path)
    for warning in config.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if config.llm is None and step in ("all", "eval"):
        raise CliError(
            f"{config_path}: no llm section: --step {step} grades answers with llm.model; "
            "add it, or run --step gen for retrieval alone",
            USAGE_ERROR,
        )
    options, llms = pipeline_options(config, step, base_url, limits)

    def make(spec: ModelSpec, role: str) -> LLM:
        if spec.name not in llms:  # eval of answers an earlier llm.model generated
            raise CliError(
                f"{config_path}: the answers in {options.out} were generated by {spec.name}, "
                "not llm.model; run --step gen (or all) with this config first",
                USAGE_ERROR,
            )
        return llms[spec.name]

    _run_pipeline(options, make_llm=make)


#: `benchmark run` options that `--config` takes from the command line; the rest it reads
#: from the config file.
_RUN_CONFIG_OPTIONS = ("path", "config_file", "step", "base_url", "rpm", "tpm")


def run_config(
    ctx: typer.Context,
    config: Path,
    step: str,
    base_url: str | None,
    rpm: str | None = None,
    tpm: str | None = None,
) -> None:
    """`lasagna benchmark run --config CONFIG.yaml`: run it as `benchmark openviking` does;
    an option the config sets is refused."""
    with user_errors():
        for param in ctx.command.params:
            source = ctx.get_parameter_source(param.name or "")
            given = source is not None and source.name != "DEFAULT"
            if given and param.name not in _RUN_CONFIG_OPTIONS:
                raise CliError(
                    f"{param.opts[0]} does not apply with --config: the config file sets the "
                    "run (see `lasagna benchmark openviking --help`)",
                    USAGE_ERROR,
                )
        run_openviking(config, step, base_url, rate_limits(rpm, tpm))


@benchmark_app.command("openviking")
def openviking(
    config: Annotated[
        Path,
        typer.Argument(
            help="OpenViking's config.yaml (or a per-dataset config such as "
            "config/locomo_config.yaml); relative paths in it are read as run.py reads them: "
            "from the folder holding run.py (or the one above config/), else from here.",
            show_default=False,
        ),
    ],
    step: StepOption = "all",
    base_url: BaseUrlOption = None,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
) -> None:
    """Run OpenViking's RAG benchmark from its config: OpenViking's run.py --config FILE."""
    with user_errors():
        run_openviking(config, step, base_url, rate_limits(rpm, tpm))
