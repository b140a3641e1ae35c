"""`lasagna benchmark sweep`: every setup on every question, resumably, in parallel; its
setups' models one LLM per (provider, model), with its provider's key, server and rate
limits."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands import _batch
from lasagna_cli.commands._batch import BatchOption
from lasagna_cli.commands._errors import INTERRUPTED, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._executors import ExecutorOption, RayAddressOption
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits

if TYPE_CHECKING:
    from lasagna_cli.engine.config import ModelSpec, ProviderSpec, Setup
    from lasagna_judge import LLM

DEFAULT_OUTPUT = Path(".")  # kag's default: the working directory
MAX_LOGGED_ERRORS = 5


def _split_names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def provider_api_key(provider: ProviderSpec, setup: str) -> str | None:
    """The key of a config.toml provider: its own `key` (kag's), else the value of the
    variable it names (CLI layer only)."""
    from lasagna_cli.commands._llm import key_from_variable

    if provider.api_key is not None:
        return provider.api_key
    if provider.api_key_env is None:
        return None
    value = key_from_variable(provider.api_key_env)
    if value is None:
        raise CliError(
            f"setup {setup!r}: provider {provider.name!r} reads its API key from "
            f"${provider.api_key_env}, which is not set; export it, or point the setup at "
            "another provider (e.g. local, which needs no key)",
            USAGE_ERROR,
        )
    return value


def setup_llm(
    setup: Setup,
    parallel: int,
    limits: tuple[float | None, float | None] = (None, None),
    cache: bool = False,
) -> LLM:
    """The LLM of a setup's generator, built (and its key checked) before any call.
    Built-in providers go through `build_llm`, so they read the same variables as every
    other command (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, OLLAMA_HOST);
    config.toml providers use their base_url and the key variable they name. `limits`
    (--rpm, --tpm) hold for each model; a config.toml provider's own keys beat them.
    `cache`: --batch's, whose answers the tasks read from the LLM cache."""
    import os

    from lasagna_cli.commands._llm import build_llm, cache_setting, proxies_of
    from lasagna_cli.engine.config import BUILTIN_PROVIDERS
    from lasagna_cli.engine.run import shared
    from lasagna_judge import make_llm

    model = setup.generator
    assert model is not None and model.provider is not None
    provider = model.provider
    # The result files are the sweep's record and --continue its resume: no LLM cache
    # (but for --batch, whose answers wait there).
    if provider == BUILTIN_PROVIDERS.get(provider.name):
        try:
            return build_llm(
                model.name, concurrency=parallel, cache=cache, flag=None, base_url_flag=None,
                requests_per_minute=limits[0], tokens_per_minute=limits[1],
            )  # fmt: skip
        except CliError as exc:
            raise CliError(f"setup {setup.name!r}: {exc}", exc.exit_code) from None
    return make_llm(
        model.name,
        base_url=provider.base_url,
        api_key=provider_api_key(provider, setup.name),
        cache=cache_setting(cache, os.environ) if cache else False,
        concurrency=parallel,
        requests_per_minute=shared(provider.requests_per_minute or limits[0]),
        tokens_per_minute=shared(provider.tokens_per_minute or limits[1]),
        proxies=proxies_of(),
        wire=provider.wire,
    )


@benchmark_app.command("sweep")
def sweep(
    datasets: Annotated[
        Path,
        typer.Option(
            "-d", "--datasets", help="DATASETS.json: dataset -> question -> {input, output?}."
        ),
    ],
    benchmark: Annotated[
        Path,
        typer.Option(
            "-b", "--benchmark", help="SETUPS.toml: the setups to compare (MiniJinja-rendered)."
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "-c",
            "--config",
            help="config.toml with providers, databases and retrievers [default: "
            "./config.toml as kag's; if absent, config.toml beside SETUPS.toml; if absent "
            "too, the built-in providers only].",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", "-p", "--parallel", min=1, help="Tasks in flight at most (kag's 1)."
        ),
    ] = 1,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            "--continue",
            help="Skip tasks whose result file holds their result (kag's --continue).",
        ),
    ] = False,
    retry_errors: Annotated[
        bool,
        typer.Option("--retry-errors", help='With --resume, run failed tasks ({"error"}) again.'),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Run every task again over the result files already there, as kag does "
            "without --continue (lasagna refuses by default).",
        ),
    ] = False,
    missing_as_errors: Annotated[
        bool,
        typer.Option(
            "--missing-as-errors",
            help="A setup naming a provider, retriever or database missing from the config: "
            'record each of its tasks as {"error": ...} and run the others, as kag does '
            "(default: refuse before any call).",
        ),
    ] = False,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The results folder (kag's: .).")
    ] = DEFAULT_OUTPUT,
    prefix: Annotated[
        str, typer.Option("--prefix", help="Prepended to every result file name.")
    ] = "",
    skip: Annotated[str | None, typer.Option("--skip", help="Setups to leave out: a,b.")] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="JSON or TOML {model: [USD per 1M input, per 1M output tokens]}: the cost "
            "of the answers and grades, kept in the folder for the report and the export.",
        ),
    ] = None,
    batch: BatchOption = False,
) -> None:
    """Run every setup on every question: one result file per task, resumable."""
    with user_errors():
        import os

        from lasagna_cli.commands._embedders import build_embedder, vector_folder
        from lasagna_cli.commands._executors import executor_choice, make_executor
        from lasagna_cli.commands._llm import load_prices, servers
        from lasagna_cli.commands._progress import TaskProgress
        from lasagna_cli.commands._terminal import echo_err
        from lasagna_cli.engine import fewer_collections
        from lasagna_cli.engine.kag import check_sweep_options, load_sweep, run_sweep
        from lasagna_cli.engine.run import Models

        chosen = executor_choice(executor, ray_address)
        limits = rate_limits(rpm, tpm)
        price_table = load_prices(prices) if prices is not None else None  # before any call
        with fewer_collections():  # from the reading of the files: thousands of objects
            check_sweep_options(
                output, prefix, resume=resume, retry_failed=retry_errors, overwrite=overwrite
            )
            # Everything is read and checked before any model is called.
            loaded = load_sweep(
                datasets, benchmark, config, _split_names(skip), os.environ,
                missing_as_errors=missing_as_errors,
            ).located(servers())  # fmt: skip
            for note in loaded.notes:
                typer.echo(note, err=True)
            by_model = {
                s.generator.key: s for s in loaded.setups.values() if s.generator is not None
            }

            def make(spec: ModelSpec, role: str) -> LLM:
                # Asked for by the runner only for pending tasks, each before any call.
                return setup_llm(by_model[spec.key], concurrency, limits, batch)

            logged = [0]

            def failure(path: Path, error: str) -> None:
                if logged[0] < MAX_LOGGED_ERRORS:
                    typer.echo(f"task {path}: {error}", err=True)
                elif logged[0] == MAX_LOGGED_ERRORS:
                    typer.echo(
                        "more tasks failed; their errors are in their result files", err=True
                    )
                logged[0] += 1

            runner = make_executor(concurrency, chosen, also=loaded.key_variables)
            batch_lines: list[str] = []
            if batch:  # the answers, then the grades, through the batch APIs first
                setups = list(loaded.setups.values())
                runner = _batch.batching(
                    setups, runner, chosen.kind, output, batch_lines, price_table, prices
                )
            with TaskProgress(0, "sweep") as progress:
                outcome = run_sweep(
                    loaded, output, prefix, executor=runner,
                    models=Models(make, make_embedder=build_embedder), resume=resume,
                    retry_failed=retry_errors, overwrite=overwrite, vector_folder=vector_folder(),
                    say=echo_err, on_start=progress.start, on_progress=progress.advance,
                    on_failure=failure,
                )  # fmt: skip
            for line in ([] if outcome.nothing_to_do else batch_lines) + outcome.lines(output):
                typer.echo(line, err=True)
        if price_table is not None and output.is_dir():  # for the report and the export
            from lasagna_cli.engine.reports import cost_line, keep_prices, read_run

            keep_prices(output, price_table)
            found = read_run(output, datasets=datasets, prices=price_table, texts=False)
            typer.echo(cost_line(found.results), err=True)
    if not outcome.nothing_to_do and (outcome.interrupted or outcome.failed):
        raise typer.Exit(INTERRUPTED if outcome.interrupted else 1)
