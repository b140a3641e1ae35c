"""`benchmark run`'s judge flags: --judge (once, or more for a jury) and --rubric."""

from __future__ import annotations

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
