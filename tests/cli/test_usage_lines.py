"""What click refuses before lasagna's code runs (a value out of range, an unknown option, a
missing argument, an option without its value) is one line on stderr, as lasagna's own
refusals are, and exit 2: never click's usage box. `--help`, `--version` and a group named
without a command still print what they printed."""

from __future__ import annotations

import os
import subprocess
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.commands._usage_errors import OneLineUsageGroup

ROOT = Path(__file__).resolve().parents[2]
PASTA = str(ROOT / "examples" / "data" / "pasta.jsonl")
ANSWERS = str(ROOT / "examples" / "judge" / "answers.jsonl")
LASAGNA = Path(sys.executable).with_name("lasagna")


def invoke(args: list[str], cli: typer.Typer = app) -> Any:
    return CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "test"})


def the_line(result: Any) -> str:
    """The one line a usage error printed, checked to be one, on stderr alone, exit 2."""
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Usage:" not in lines[0] and "Try '" not in lines[0]
    return str(lines[0])


# (command line, the line it prints: click's check in lasagna's words, the flag named first)
CASES = [
    (
        ["benchmark", "stats", "--max-chars", "0", "x"],
        "error: --max-chars: expected a whole number >= 1, got 0; "
        "see 'lasagna benchmark stats --help'",
    ),
    (
        ["judge", "grade", ANSWERS, "--concurrency", "0"],
        "error: --concurrency: expected a whole number >= 1, got 0; "
        "see 'lasagna judge grade --help'",
    ),
    (
        ["judge", "grade", ANSWERS, "--concurrency", "many"],
        "error: --concurrency: expected a whole number >= 1, got 'many'; "
        "see 'lasagna judge grade --help'",
    ),
    (
        ["benchmark", "run", PASTA, "--seed", "q"],
        "error: --seed: expected a whole number, got 'q'; see 'lasagna benchmark run --help'",
    ),
    (
        ["benchmark", "run", "--nope"],
        "error: no such option --nope (did you mean --top-k?); see 'lasagna benchmark run --help'",
    ),
    (
        ["judge", "grade"],
        "error: missing argument 'INPUT.jsonl'; see 'lasagna judge grade --help'",
    ),
    # click's parser says these without a context: the line still names the command's help
    (
        ["benchmark", "stats", "--format"],
        "error: option '--format' requires an argument; see 'lasagna benchmark stats --help'",
    ),
    (
        ["benchmark", "run", PASTA, "--dry-run=yes"],
        "error: option '--dry-run' does not take a value; see 'lasagna benchmark run --help'",
    ),
    (
        ["benchmark", "run", PASTA, "more.jsonl"],
        "error: got unexpected extra argument(s) (more.jsonl); see 'lasagna benchmark run --help'",
    ),
    (
        ["benchmark", "rn"],
        "error: no such command 'rn' (did you mean 'run'?); see 'lasagna benchmark --help'",
    ),
    (["--nope"], "error: no such option --nope; see 'lasagna --help'"),
]


@pytest.mark.parametrize(("args", "line"), CASES, ids=[" ".join(c[0][:3]) for c in CASES])
def test_a_usage_error_click_finds_is_one_line_and_exit_2(args: list[str], line: str) -> None:
    assert the_line(invoke(args)) == line


class Shape(StrEnum):
    round = "round"
    long = "long"


# A command of each kind click checks that lasagna's commands do not all have (a choice, a
# float range, a callback's own BadParameter), under the same group class.
toy = typer.Typer(cls=OneLineUsageGroup, name="toy")


def _even(value: int) -> int:
    if value % 2:
        raise typer.BadParameter(f"expected an even number, got {value}")
    return value


@toy.command()
def cook(
    shape: Annotated[Shape, typer.Option("--shape")] = Shape.round,
    share: Annotated[float, typer.Option("-s", "--share", min=0, max=1)] = 0.5,
    count: Annotated[int, typer.Option("--count", callback=_even)] = 2,
) -> None:
    typer.echo(f"{shape.value} {share} {count}")


@toy.command()
def serve() -> None:
    """A second command, so that `toy` is a group."""


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["cook", "--shape", "square"],
            "error: --shape: 'square' is not one of 'round', 'long'; see 'toy cook --help'",
        ),
        (
            ["cook", "--share", "1.5"],
            "error: -s/--share: expected a number >= 0 and <= 1, got 1.5; see 'toy cook --help'",
        ),
        (
            ["cook", "--count", "3"],
            "error: --count: expected an even number, got 3; see 'toy cook --help'",
        ),
    ],
)
def test_choices_ranges_and_a_callback_s_refusal_are_one_line(args: list[str], line: str) -> None:
    assert the_line(invoke(args, toy)) == line
    assert invoke(["cook", "--shape", "long", "-s", "0"], toy).stdout == "long 0.0 2\n"


def test_lasagna_s_own_refusals_are_unchanged() -> None:
    result = invoke(["benchmark", "run"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: lasagna benchmark run needs PATH")


def test_help_version_and_a_bare_group_print_what_they_printed() -> None:
    helped = invoke(["benchmark", "stats", "--help"])
    assert helped.exit_code == 0 and helped.stdout.startswith("Usage: lasagna benchmark stats")
    assert helped.stderr == ""
    assert invoke(["--version"]).stdout.startswith("lasagna ")
    bare = invoke(["benchmark"])  # a group without its command: the group's help, as before
    assert bare.exit_code == 2
    assert "Usage: lasagna benchmark [OPTIONS] COMMAND" in bare.output
    assert "Commands:" in bare.output


def test_the_console_script_prints_the_same_line() -> None:
    result = subprocess.run(
        [str(LASAGNA), "judge", "grade", ANSWERS, "--concurrency", "0"],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: --concurrency: expected a whole number >= 1, got 0; "
        "see 'lasagna judge grade --help'\n"
    )
