"""click's usage errors as one line, like lasagna's own: `error: --max-chars: expected a whole
number >= 1, got 0; see 'lasagna benchmark stats --help'`, exit 2.

click checks what typer declares (a type, a range, a choice, a required argument, an unknown
option) before any lasagna code runs, and prints its usage box: the usage line, a hint, a
blank line, then the error. `OneLineUsageGroup` is the root group's class (`typer.Typer(cls=...)`,
typer's documented way to change the group): the parsing of the command line (`make_context`)
and everything under it (`invoke`, which parses and runs the subcommands) go through
`one_line_usage`, so the console script and `typer.testing.CliRunner` print the same line.
`--help`, `--version`, a group named without a command (its help, as before) and Ctrl-C are
not usage errors and pass through.

No private module is imported or patched. lasagna-cli allows typer 0.12 to 0.28 (the lock,
and the tests, have 0.28): the newer ones carry their own copy of click (`typer._click`), the
older ones use click itself, so click's classes are read from the module of
`typer.BadParameter`, whichever it is; the rest is public attributes of click's exceptions
and parameter types. One thing click does not give: its option parser raises a few errors
(an option without its value, a flag given one) with no context, and the context, for the
help's name, is then found in the error's traceback (`_context`); without one the line just
has no help at its end.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from typer.core import TyperGroup

from lasagna_cli.commands._errors import USAGE_ERROR, echo_error

_CLICK_EXCEPTIONS = sys.modules[typer.BadParameter.__module__]
_CLICK = sys.modules[typer.BadParameter.__module__.rpartition(".")[0]]
_USAGE_ERROR: type[Exception] = _CLICK_EXCEPTIONS.UsageError
_BAD_PARAMETER: type[Exception] = _CLICK_EXCEPTIONS.BadParameter
_MISSING_PARAMETER: type[Exception] = _CLICK_EXCEPTIONS.MissingParameter
_NO_SUCH_OPTION: type[Exception] = _CLICK_EXCEPTIONS.NoSuchOption
# click >= 8.2 raises it for a group named without a command: its "message" is the help.
_HELP_NOT_ERRORS: tuple[type[Exception], ...] = tuple(
    e for e in (getattr(_CLICK_EXCEPTIONS, "NoArgsIsHelpError", None),) if isinstance(e, type)
)
_CONTEXT: type = _CLICK.Context

#: click's number types (`ParamType.name`: typer's copy of click says "int"), as lasagna's
#: own checks name them.
_NUMBERS = {
    "int": "a whole number",
    "int range": "a whole number",
    "integer": "a whole number",
    "integer range": "a whole number",
    "float": "a number",
    "float range": "a number",
}
#: What click's number types say after the value they refuse.
_REFUSALS = (" is not in the range ", " is not a valid ")


class OneLineUsageGroup(TyperGroup):
    """The `lasagna` group: a usage error anywhere under it is one line (see the module)."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        with one_line_usage():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with one_line_usage():
            return super().invoke(ctx)


@contextmanager
def one_line_usage() -> Iterator[None]:
    """Report a click usage error raised inside the block as one line, and exit 2."""
    try:
        yield
    except _USAGE_ERROR as exc:
        if isinstance(exc, _HELP_NOT_ERRORS):
            raise
        echo_error(usage_line(exc))
        raise typer.Exit(USAGE_ERROR) from None


def usage_line(exc: Exception) -> str:
    """The message of a click usage error (after `error: `): the flag first where there is
    one, what was expected and found, then where the help is."""
    ctx = _context(exc)
    line = " ".join(_message(exc, ctx).split())  # click's choices come one per line
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        line += f"; see '{ctx.command_path} {ctx.help_option_names[0]}'"
    return line


def _context(exc: Exception) -> Any:
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        return ctx
    # click's option parser raises some errors (an option without its value, a flag given
    # one) with no context; the context is then the one of the deepest frame that has one
    # as `ctx`, the command whose arguments were being parsed (`parse_args(ctx, args)`).
    tb = exc.__traceback__
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("ctx")
        if isinstance(candidate, _CONTEXT):
            ctx = candidate
        tb = tb.tb_next
    return ctx


def _message(exc: Any, ctx: Any) -> str:
    if isinstance(exc, _NO_SUCH_OPTION):
        option: Any = exc  # the attributes of click's NoSuchOption
        close = sorted(option.possibilities or ())
        return f"no such option {option.option_name}" + (
            f" (did you mean {' or '.join(close)}?)" if close else ""
        )
    if isinstance(exc, _BAD_PARAMETER) and not isinstance(exc, _MISSING_PARAMETER):
        name = _name(exc, ctx)
        if name is not None:
            return f"{name}: {_value_message(exc)}"
    # typer adds its suggestion to click's "No such command 'rn'." as a second sentence
    message = re.sub(r"\. Did you mean (.+)\?$", r" (did you mean \1?)", exc.format_message())
    return _sentence_case(message)


def _name(exc: Any, ctx: Any) -> str | None:
    """The flag (`--top-k`, `-n/--n-samples`) or argument (`PATH`) the error is about."""
    hint = exc.param_hint
    if hint is not None:
        return (hint if isinstance(hint, str) else "/".join(hint)).replace("'", "")
    param = exc.param
    if param is None:
        return None
    if param.param_type_name == "option":
        return "/".join(param.opts)
    return str(param.get_error_hint(ctx)).replace("'", "")


def _value_message(exc: Any) -> str:
    """click's complaint about a value; a number's in lasagna's words (`expected a whole
    number >= 1, got 0`, as `--concurrency` says it where lasagna checks it)."""
    message = str(exc.message)
    kind = getattr(exc.param, "type", None)
    noun = _NUMBERS.get(getattr(kind, "name", ""))
    if noun is not None:
        for refusal in _REFUSALS:
            value, found, _ = message.partition(refusal)
            if found:
                return f"expected {_number(noun, kind)}, got {value}"
    return _sentence_case(message)


def _number(noun: str, kind: Any) -> str:
    bounds = []
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    if low is not None:
        bounds.append(f"{'>' if kind.min_open else '>='} {low}")
    if high is not None:
        bounds.append(f"{'<' if kind.max_open else '<='} {high}")
    return " ".join([noun, " and ".join(bounds)]) if bounds else noun


def _sentence_case(message: str) -> str:
    """click's sentence as the middle of lasagna's line: no capital (unless a name such as
    PATH starts it) and no full stop."""
    message = message.strip().removesuffix(".")
    if len(message) > 1 and message[0].isupper() and message[1].islower():
        message = message[0].lower() + message[1:]
    return message
