"""--rpm and --tpm, for every command that calls a model: each model's requests and
tokens a minute, the run's Ray workers together (each takes its share:
`engine.run._rate_share`)."""

from __future__ import annotations

from typing import Annotated

import typer

# Text, read by check_rate: the one check of a limit, whether a flag or a file gives it.
RpmOption = Annotated[
    str | None,
    typer.Option(
        "--rpm",
        metavar="N",
        help="Requests a minute at most to each model (all Ray workers together) "
        "[default: none; the pace still adapts to the provider's 429s].",
        show_default=False,
    ),
]
TpmOption = Annotated[
    str | None,
    typer.Option(
        "--tpm",
        metavar="N",
        help="Tokens a minute at most to each model, prompt and answer (all Ray workers "
        "together) [default: none].",
        show_default=False,
    ),
]


def rate_limits(rpm: object, tpm: object) -> tuple[float | None, float | None]:
    """--rpm and --tpm checked: numbers > 0, or None."""
    from lasagna_cli.engine.run import check_rate

    return check_rate(rpm, "--rpm"), check_rate(tpm, "--tpm")
