"""Turning user mistakes into one line and an exit code, never a traceback.

Exit codes: 1 for bad data (a file that cannot be used), 2 for bad usage (a flag, a
missing file named on the command line), 130 for Ctrl-C. The libraries' errors carry no
exit code: their usage errors (`EngineUsageError`, `SynthUsageError`, `JudgeUsageError`,
`MissingExtraError`) exit 2, everything else of theirs is bad data; a command's own
`CliError` says its code.
"""

from __future__ import annotations

import errno
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import typer

DATA_ERROR = 1
USAGE_ERROR = 2
# Ctrl-C. typer turns a KeyboardInterrupt into exit code 130 without a word, so long
# commands catch it themselves to say what was kept and how to resume; for the others,
# `_app.main` prints "interrupted".
INTERRUPTED = 130


class CliError(Exception):
    """A user mistake the CLI reports in one line."""

    def __init__(self, message: str, exit_code: int = DATA_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _loaded_errors(names: Iterable[tuple[str, str]]) -> tuple[type[BaseException], ...]:
    # Read from sys.modules so that reporting an error never imports a heavy package (an
    # error class whose module was never imported cannot have been raised).
    types: list[type[BaseException]] = []
    for module, name in names:
        mod = sys.modules.get(module)
        error = getattr(mod, name, None) if mod is not None else None
        if isinstance(error, type) and issubclass(error, BaseException):
            types.append(error)
    return tuple(types)


#: The libraries' errors: reported in one line (their usage errors exit 2, the others 1).
_LIBRARY_ERRORS = (
    ("lasagna_metrics", "MetricsError"),
    ("lasagna_judge", "JudgeError"),
    ("lasagna_synth", "SynthError"),
    ("lasagna_cli.engine._errors", "EngineError"),
)
#: The libraries' usage errors: a flag, an argument or an install to fix, not the data.
_USAGE_ERRORS = (
    ("lasagna_cli.engine._errors", "EngineUsageError"),
    ("lasagna_synth", "SynthUsageError"),
    ("lasagna_judge", "MissingExtraError"),
    ("lasagna_judge", "JudgeUsageError"),
)


def exit_code_for(exc: BaseException) -> int:
    """The exit code of a lasagna error: the libraries' errors carry none, so a usage error
    of theirs is 2 and any other 1 (bad data); a `CliError` says its own."""
    if isinstance(exc, CliError):
        return exc.exit_code
    return USAGE_ERROR if isinstance(exc, _loaded_errors(_USAGE_ERRORS)) else DATA_ERROR


#: What a write meets on a full or read-only disk: a line, not a traceback, in any command.
_WRITE_FAILURES = frozenset(
    code
    for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None), errno.EFBIG, errno.EROFS)
    if code is not None
)

FORMATS = ("text", "json")


def check_format(value: str, flag: str = "--format") -> None:
    if value not in FORMATS:
        raise CliError(f"{flag}: expected text or json, found {value!r}", USAGE_ERROR)


#: The longest error line printed whole. Messages quote what files and replies held, and
#: those can be megabytes: the line keeps its start (expected / found) and its end (what
#: to do), and says how much it left out.
MAX_LINE = 1000


def capped(line: str, limit: int = MAX_LINE) -> str:
    if len(line) <= limit:
        return line
    head, tail = limit * 2 // 3, limit // 4
    left_out = len(line) - head - tail
    return f"{line[:head]} [... {left_out:,} characters left out ...] {line[-tail:]}"


#: A message about one flag's value starts with the flag: `--top-k: expected ...`.
_FLAG_FIRST = re.compile(r"-{1,2}[A-Za-z][\w-]*:")


def with_help(message: str) -> str:
    """A usage error about a flag's value ends as click's own do, with where the command's
    help is (`; see 'lasagna benchmark run --help'`); other messages are left as they are."""
    if not _FLAG_FIRST.match(message) or "--help'" in message:
        return message
    from importlib import import_module

    # typer's own copy of click (typer >= 0.23), or click itself, as commands/_usage_errors.py
    # reads them: `globals` holds the context of the command running.
    click = typer.BadParameter.__module__.rpartition(".")[0]
    ctx = import_module(f"{click}.globals").get_current_context(silent=True)
    if ctx is None:
        return message
    return f"{message}; see '{ctx.command_path} --help'"


def echo_error(message: str) -> None:
    from lasagna_cli.commands._terminal import shown

    lines = shown(f"error: {message}", keep_newlines=True).split("\n")
    typer.echo("\n".join(capped(line) for line in lines), err=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report lasagna errors raised inside the block as one line and exit 1 or 2."""
    from lasagna_cli.commands._cache_warnings import warn_cache_failures

    try:
        yield
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in _WRITE_FAILURES:
            where = f"{exc.filename}: " if exc.filename else ""
            echo_error(
                f"{where}cannot write ({exc.strerror}); free some space or write elsewhere, "
                "then run the same command again"
            )
            raise typer.Exit(DATA_ERROR) from None
        if not isinstance(exc, (CliError, *_loaded_errors(_LIBRARY_ERRORS))):
            raise
        code = exit_code_for(exc)
        echo_error(with_help(str(exc)) if code == USAGE_ERROR else str(exc))
        raise typer.Exit(code) from None
    finally:
        warn_cache_failures()  # after the summary or the error line
