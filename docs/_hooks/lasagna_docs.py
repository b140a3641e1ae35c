"""MkDocs hooks: the pages generated from the code at build time, and the docstring check.

- `<!-- lasagna:help -->` in a page becomes every command's `--help` text, run through
  typer's test runner on `lasagna_cli._app.app` (so the reference is the code's, never a
  copy);
- `<!-- lasagna:schema package.module:Model -->` becomes the JSON Schema pydantic makes of
  that model (a pydantic model, or a dataclass through `pydantic.TypeAdapter`);
- before the build, every public name (`__all__` of the four packages) must have a
  docstring: a missing one is an error, so `mkdocs build --strict` fails on it.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "lasagna_metrics": ROOT / "packages/metrics/src",
    "lasagna_judge": ROOT / "packages/judge/src",
    "lasagna_synth": ROOT / "packages/synth/src",
    "lasagna_cli": ROOT / "packages/cli/src",
}
_HELP = "<!-- lasagna:help -->"
_SCHEMA = re.compile(
    r"^(?P<indent> *)<!-- lasagna:schema (?P<module>[\w.]+):(?P<name>\w+) -->$", re.M
)


def missing_docstrings() -> list[str]:
    """Every public name of the four packages without a docstring, as `package.name`.

    Read by griffe, as mkdocstrings reads them: attributes count when a string literal
    follows their assignment. Dunder names (`__version__`) are left out.
    """
    import griffe

    missing = []
    for package, src in PACKAGES.items():
        module = griffe.load(package, search_paths=[str(src)], resolve_aliases=True)
        for name in importlib.import_module(package).__all__:
            if name.startswith("__"):
                continue
            docstring = module[name].docstring
            if docstring is None or not docstring.value.strip():
                missing.append(f"{package}.{name}")
    return missing


def command_paths() -> Iterator[list[str]]:
    """Every command and group of `lasagna`, as the words that name it, root first."""
    import typer

    from lasagna_cli._app import app

    def walk(command: Any, path: list[str]) -> Iterator[list[str]]:
        yield path
        if hasattr(command, "list_commands"):
            ctx = command.make_context("lasagna", [], resilient_parsing=True)
            for name in command.list_commands(ctx):
                if not command.get_command(ctx, name).hidden:
                    yield from walk(command.get_command(ctx, name), [*path, name])

    yield from walk(typer.main.get_command(app), [])


def help_text(path: list[str]) -> str:
    """`lasagna PATH --help`, as a user's 100-column terminal shows it."""
    from typer.testing import CliRunner

    from lasagna_cli._app import app

    result = CliRunner().invoke(
        app, [*path, "--help"], prog_name="lasagna", env={"COLUMNS": "100", "NO_COLOR": "1"}
    )
    if result.exit_code != 0:
        raise RuntimeError(f"lasagna {' '.join(path)} --help exited {result.exit_code}")
    return result.output.rstrip()


def help_markdown() -> str:
    """A section per command, each with its `--help` in a text block."""
    parts = []
    for path in command_paths():
        name = " ".join(["lasagna", *path])
        parts.append(f"## `{name}`\n\n```text\n{help_text(path)}\n```\n")
    return "\n".join(parts)


def schema_markdown(module: str, name: str) -> str:
    """The JSON Schema of `module.name`, in a json block."""
    from pydantic import BaseModel, TypeAdapter

    target = getattr(importlib.import_module(module), name)
    if isinstance(target, type) and issubclass(target, BaseModel):
        schema = target.model_json_schema()
    else:
        schema = TypeAdapter(target).json_schema()
    return f"```json\n{json.dumps(schema, indent=2, ensure_ascii=False)}\n```"


def on_pre_build(config: Any) -> None:
    missing = missing_docstrings()
    if missing:
        from mkdocs.exceptions import PluginError

        raise PluginError(
            "public names without a docstring (add one; the API reference shows it): "
            + ", ".join(missing)
        )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if _HELP in markdown:
        markdown = markdown.replace(_HELP, help_markdown())
    return _SCHEMA.sub(_schema_block, markdown)


def _schema_block(match: re.Match[str]) -> str:
    # Indented as the marker is, so a schema can sit inside an admonition.
    text = schema_markdown(match["module"], match["name"])
    return "\n".join(match["indent"] + line for line in text.splitlines())
