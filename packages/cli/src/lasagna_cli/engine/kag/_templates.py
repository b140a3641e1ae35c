"""SETUPS.toml's MiniJinja step: the file rendered before it is parsed.

The file is rendered with `file(path)` (a file's text, read as kag reads it: relative to the
working directory; a path found only beside the TOML is read from there, with a note) and
`env(name, default)` (from the environment the command passes in). Prompt placeholders are
written in capitals - {{INPUT}}, {{RETRIEVAL}}, {{CHOICE}} - and MiniJinja leaves every
`{{ CAPITALS }}` expression untouched, so they reach the prompts as written and are filled
per task; MiniJinja's own variables and functions are lowercase. Text returned by file()
is not rendered again, so a prompt file uses the same placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine._prompts import PLACEHOLDERS

PLACEHOLDER_LIST = ", ".join("{{" + p + "}}" for p in PLACEHOLDERS)
_CAPITALS = re.compile(r"\{\{-?\s*[A-Z][A-Z0-9_]*\s*-?\}\}")
_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]", re.MULTILINE)


class _TemplateFunctionError(Exception):
    """Raised inside file()/env() and reported with the template's name."""


def protect_placeholders(source: str) -> str:
    """Wrap every `{{ CAPITALS }}` in a raw block so MiniJinja copies it unchanged."""
    return _CAPITALS.sub(
        lambda m: "{% raw %}{{" + m.group(0).strip("{}-").strip() + "}}{% endraw %}", source
    )


def _setup_at_line(source: str, line: int | None) -> str | None:
    """The setup whose table holds `line` (1-based) of the source, for error messages."""
    if line is None:
        return None
    name = None
    for match in _HEADER.finditer(source):
        if source.count("\n", 0, match.start()) + 1 > line:
            break
        name = match.group(1).strip().strip('"')
    return name


def render_setups(
    source: str, path: Path, environ: Mapping[str, str], notes: list[str] | None = None
) -> str:
    """The TOML text after MiniJinja: file() and env() filled, placeholders kept. A file()
    path read from the TOML's folder rather than the working directory adds a line to
    `notes` (once per path)."""
    import minijinja

    folder = path.parent

    def file(name: str) -> str:
        target = Path(name)
        beside = folder / name
        if not target.is_file() and beside.is_file() and beside != target:
            note = (
                f"note: {path}: file({name!r}) is not in the working directory; read {beside} "
                f"(beside {path.name}) instead (kag reads it from the working directory only)"
            )
            if notes is not None and note not in notes:
                notes.append(note)
            target = beside
        try:
            return target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise _TemplateFunctionError(
                f"file({name!r}): not found: {target} (relative to the working directory, as "
                f"kag reads it) nor {beside} (beside {path.name})"
            ) from None
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise _TemplateFunctionError(f"file({name!r}): cannot read {target}: {exc}") from None

    def env(name: str, default: str | None = None) -> str:
        value = environ.get(name)
        if value is None:
            if default is None:
                raise _TemplateFunctionError(
                    f"env({name!r}): the variable is not set and no default is given; set it "
                    f'or write env("{name}", "default")'
                )
            return default
        return value

    environment: Any = minijinja.Environment(
        undefined_behavior="strict", keep_trailing_newline=True
    )
    environment.add_function("file", file)
    environment.add_function("env", env)
    try:
        return str(environment.render_str(protect_placeholders(source), path.name))
    except _TemplateFunctionError as exc:
        raise EngineError(f"{path}: {exc}") from None
    except minijinja.TemplateError as exc:
        line = getattr(exc, "line", None)
        setup = _setup_at_line(source, line)
        where = f" line {line}" if line else ""
        where += f" (setup {setup!r})" if setup else ""
        hint = ""
        if "undefined" in str(getattr(exc, "message", exc)):
            hint = f"; prompt placeholders are written {PLACEHOLDER_LIST}"
        message = getattr(exc, "message", None) or str(exc).splitlines()[0]
        message = re.sub(r"\s*\(in [^()]*:\d+\)\s*$", "", str(message))
        raise EngineError(f"{path}{where}: template error: {message}{hint}") from None
