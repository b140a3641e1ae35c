"""The errors of the benchmark engine.

EngineError                 a benchmark cannot run as configured: bad data in a raw file,
│                           a broken `lasagna.benchmarks` entry point (the CLI exits 1)
└── EngineUsageError        the user's configuration or flags are wrong, as opposed to bad
    │                       data: an adapter that is not one, a benchmark name registered
    │                       twice (the CLI exits 2)
    ├── BenchmarkFileError      a benchmark file is missing, or not where --data-dir points
    ├── UnknownBenchmarkError   a benchmark name or split that is not registered
    └── SamplingUsageError      bad sampling arguments (--num-docs, --sample-size, --full,
                                --mode, an output folder that is the benchmark's own)

The engine is a library: its errors carry a message, never an exit code. The CLI maps them
(`lasagna_cli._errors`): an `EngineUsageError` exits 2, any other `EngineError` exits 1.
Errors of the packages the engine calls (a `SynthError` from a data file lasagna-synth
reads) pass through unchanged.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class EngineError(Exception):
    """A benchmark cannot run as configured; the message says what was expected, what was
    found and what to do."""


class EngineUsageError(EngineError):
    """The user's configuration or flags are wrong, as opposed to bad data."""


__all__ = ["EngineError", "EngineUsageError", "did_you_mean"]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean "x"?)' when a choice is close to `word`, else ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""
