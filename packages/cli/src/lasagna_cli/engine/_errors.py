"""The errors of the benchmark engine.

EngineError                 a benchmark cannot run as configured: bad data in a raw file,
│                           a broken `lasagna.benchmarks` entry point (the CLI exits 1)
└── EngineUsageError        the user's configuration or flags are wrong, as opposed to bad
    │                       data: an adapter that is not one, a benchmark name registered
    │                       twice (the CLI exits 2)
    ├── BenchmarkFileError      a benchmark file is missing, or not where --data-dir points
    ├── UnknownBenchmarkError   a benchmark name or split that is not registered
    ├── SamplingUsageError      bad sampling arguments (--num-docs, --sample-size, --full,
    │                           --mode, an output folder that is the benchmark's own)
    └── MissingExtraError       an optional dependency (pyarrow, pandas) is not installed

The engine is a library: its errors carry a message, never an exit code. The CLI maps them
(`lasagna_cli._errors`): an `EngineUsageError` exits 2, any other `EngineError` exits 1.
Errors of the packages the engine calls (a `SynthError` from a data file lasagna-synth
reads) pass through unchanged.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable


class EngineError(Exception):
    """A benchmark cannot run as configured; the message says what was expected, what was
    found and what to do."""


class EngineUsageError(EngineError):
    """The user's configuration or flags are wrong, as opposed to bad data."""


class MissingExtraError(EngineUsageError):
    """An optional dependency of lasagna-cli is not installed; the message names the
    install command."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        super().__init__(
            f"{what} needs the optional dependency {module!r}, which is not installed: run "
            f'`pip install "lasagna-cli[{extra}]"` (or `uv add "lasagna-cli[{extra}]"`; in a '
            f"lasagna checkout: `uv run --group {extra} ...`)"
        )
        self.extra = extra


__all__ = ["EngineError", "EngineUsageError", "MissingExtraError", "did_you_mean"]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean "x"?)' when a choice is close to `word`, else ''."""
    if len(word) > 200:  # no name is that long, and difflib is quadratic in it
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


_QUOTED = reprlib.Repr()
_QUOTED.maxstring = _QUOTED.maxother = 80
_QUOTED.maxlist = _QUOTED.maxdict = _QUOTED.maxtuple = _QUOTED.maxset = 6
_QUOTED.maxlevel = 3


def quoted(value: object) -> str:
    """`repr(value)` cut to a line's worth: an error quotes what a file or flag held, and
    a hostile file can hold megabytes (or, through YAML aliases, a value shared 10**9 times)."""
    return _QUOTED.repr(value)


class RemoteTaskError(Exception):
    """A worker's exception that could not travel back as itself: its type and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
