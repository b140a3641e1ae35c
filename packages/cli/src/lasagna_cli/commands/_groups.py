"""The command groups, shared by the modules that register commands on them.

Kept free of heavy imports: everything here loads on `lasagna --help`.
"""

import typer

from lasagna_cli.commands._usage_errors import OneLineUsageGroup

app = typer.Typer(
    name="lasagna",
    cls=OneLineUsageGroup,  # click's usage errors in one line, as lasagna's own
    help="Build and run evaluation benchmarks for RAG systems and LLM applications.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
metrics_app = typer.Typer(
    help="Score predictions with deterministic metrics (SQuAD EM/F1, ...).",
    no_args_is_help=True,
)
judge_app = typer.Typer(help="Grade answers with an LLM judge.", no_args_is_help=True)
benchmark_app = typer.Typer(
    help="Synthesize, validate, run, sweep and summarise benchmarks.", no_args_is_help=True
)

app.add_typer(benchmark_app, name="benchmark")
app.add_typer(judge_app, name="judge")
app.add_typer(metrics_app, name="metrics")


# The groups' own help (a group with one command would otherwise be that command): here,
# not beside their commands, so that a group exists whichever of its commands is loaded.
@judge_app.callback()
def _judge() -> None:
    """Grade answers with an LLM judge, and measure its agreement with human labels."""


@metrics_app.callback()
def _metrics() -> None:
    """Score predictions with deterministic metrics (SQuAD EM/F1, ...)."""
