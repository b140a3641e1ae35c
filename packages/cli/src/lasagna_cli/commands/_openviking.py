"""`lasagna benchmark openviking CONFIG.yaml` (also `benchmark run --config CONFIG.yaml`):
OpenViking's RAG benchmark config, read as written, run by the staged pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits

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


def run_openviking(
    config_path: Path, step: str, base_url: str | None, rpm: str | None, tpm: str | None
) -> None:
    """Read the config (warning of every key it does not use) and run its stages with its
    one LLM (it answers and judges, as in OpenViking), built before any stage runs, at
    most --rpm and --tpm; errors as one line."""
    import os

    from lasagna_cli.commands._llm import cache_setting, key_from_variable, proxies_of
    from lasagna_cli.commands._staged import run_stages
    from lasagna_cli.engine.staged import load_openviking_config

    with user_errors():
        limits = rate_limits(rpm, tpm)
        config = load_openviking_config(config_path)
        for warning in config.warnings:
            typer.echo(f"warning: {warning}", err=True)
        options = config.pipeline_options(step, base_url, limits)
        cache = cache_setting(True, os.environ)
        make = config.models(
            base_url, limits, read=key_from_variable, cache=cache, proxies=proxies_of
        )
        if base_url and config.llm is not None and config.llm.base_url:
            typer.echo(f"llm.base_url {config.llm.base_url} replaced by --base-url", err=True)
        run_stages(options, make_llm=make)


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
    run_openviking(config, step, base_url, rpm, tpm)
