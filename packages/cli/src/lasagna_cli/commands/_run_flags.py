"""`benchmark run`'s flags that take more than a line: --judge (once, or more for a jury),
--rubric, --prices, --dry-run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: `benchmark run --judge`, once or more (a jury: `engine.run._jury`).
JudgesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        help="provider/model that grades the answers; repeat it for a jury (each judge "
        "grades every answer; the grade is the mean of their parsed grades, with "
        "Krippendorff's alpha between them).",
    ),
]
RubricOption = Annotated[
    str, typer.Option("--rubric", help="Judge rubric: binary, scale, or a rubric file.")
]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="JSON or TOML {model: [USD per 1M input, per 1M output tokens]}: the cost "
        "of the answers and grades, in results.json, the report and the export; with "
        "--dry-run, what the run will cost at most.",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the plan (setups x questions), the calls per role (generator, each judge, "
        "the claim calls of --diagnostics), tokens estimated and, with --prices, the cost; "
        "call nothing, write nothing.",
    ),
]
