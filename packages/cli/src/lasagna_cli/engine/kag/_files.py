"""What the files of a sweep go through before they are read as data: SETUPS.toml and
config.toml read as UTF-8 text, rendered with MiniJinja and parsed as TOML 1.1, and the
component names every file gives (DATASETS.json's too) checked.

The MiniJinja step of kag's files: SETUPS.toml and config.toml are rendered before they
are parsed, as kag renders them (an empty context), but strictly: a variable that is not
defined is an error, where kag writes "" (a typo would vanish from a prompt or a URL).

Both files get kag's two functions:
- `file(path)`: a file's text, relative to the working directory as kag reads it (a path
  found only beside the TOML is read from there, with a note). Only files inside the
  working directory and the folders of the setups and config files are read: a template
  must not put /etc/passwd or ~/.ssh into prompts and result files.
- `env(name)`: a variable's value, "" when unset (kag's; so `env('X') or 'fallback'`
  works), or `env(name, default)`. The value of a key-like variable (`*_KEY`, `*_TOKEN`,
  `*_SECRET`, `*PASSWORD*`) is collected in `secrets`, so the caller can refuse a file that
  would write it where it does not belong (a prompt, hence every result file).

A render is bounded: MiniJinja's fuel (`FUEL` steps) and `RENDERED_MAX_CHARS` of output;
file() reads regular files only (never a FIFO or a device), of at most `FILE_MAX_BYTES`.

SETUPS.toml only: its prompt placeholders - any expression starting with a name in
capitals, `{{ RETRIEVAL | default('...') }}` included - are kept as written and rendered per
task (kag renders them at load, where they are undefined: inline in SETUPS.toml they would
vanish). Text returned by file() is not rendered at load, in lasagna as in kag.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.plan._prompts import PLACEHOLDERS

PLACEHOLDER_LIST = ", ".join("{{" + p + "}}" for p in PLACEHOLDERS)
# Any expression starting with a name in capitals (a misspelt placeholder too, so the setup
# check names it); MiniJinja's own names are lowercase.
_PLACEHOLDER_EXPR = re.compile(r"\{\{-?\s*[A-Z][A-Z0-9_]*\b.*?-?\}\}", re.DOTALL)
_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]", re.MULTILINE)
_KEY_LIKE = re.compile(r"(_KEY|_TOKEN|_SECRET)\Z|PASSWORD", re.IGNORECASE)
MIN_SECRET_LENGTH = 4  # shorter values would match by chance


#: MiniJinja's fuel: the steps of work one render may take. Loops spend it, and so does
#: every string made (in proportion to its length: 10 MB of file() text takes a tenth), so
#: nested range(10000) loops and a string doubled 36 times stop in milliseconds with a line,
#: where they would run until killed or abort the process when memory runs out.
FUEL = 1_000_000
#: The most text a rendered file may hold.
RENDERED_MAX_CHARS = 20_000_000


class _TemplateFunctionError(Exception):
    """Raised inside file()/env() and reported with the template's name."""


def is_key_like(name: str) -> bool:
    """A variable whose value is a secret by its name: *_KEY, *_TOKEN, *_SECRET, *PASSWORD*."""
    return _KEY_LIKE.search(name) is not None


def protect_placeholders(source: str) -> str:
    """Wrap every placeholder expression in a raw block so MiniJinja copies it unchanged."""
    return _PLACEHOLDER_EXPR.sub(lambda m: "{% raw %}" + m.group(0) + "{% endraw %}", source)


def _setup_at_line(source: str, line: int | None) -> str | None:
    """The table holding `line` (1-based) of the source, for error messages."""
    if line is None:
        return None
    name = None
    for match in _HEADER.finditer(source):
        if source.count("\n", 0, match.start()) + 1 > line:
            break
        name = match.group(1).strip().strip('"')
    return name


class _NotRegular(Exception):
    """file() named a FIFO, a device, a socket, or a file over `FILE_MAX_BYTES`."""


#: The most file() reads: a prompt or a key file, never a data set.
FILE_MAX_BYTES = 10 * 1024 * 1024


def _read_regular(target: Path) -> str:
    """A regular file's UTF-8 text. A FIFO would block the read forever and a device never
    ends, so the kind and size come from `stat` before the file is opened (O_NONBLOCK)."""
    status = os.stat(target)
    if not stat.S_ISREG(status.st_mode):
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        kind = "a named pipe (FIFO)" if stat.S_ISFIFO(status.st_mode) else "a device or socket"
        raise _NotRegular(f"{kind}, not a regular file; file() reads regular files only")
    limit = f"over {FILE_MAX_BYTES // (1024 * 1024)} MB, the most file() reads"
    if status.st_size > FILE_MAX_BYTES:
        raise _NotRegular(f"{status.st_size:,} bytes: {limit}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    with os.fdopen(os.open(target, flags), "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _NotRegular("not a regular file; file() reads regular files only")
        data = handle.read(FILE_MAX_BYTES + 1)
    if len(data) > FILE_MAX_BYTES:
        raise _NotRegular(limit)
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text


def _inside(target: Path, folders: Collection[Path]) -> bool:
    resolved = target.resolve()
    return any(resolved.is_relative_to(folder.resolve()) for folder in folders)


def render_template_file(
    source: str,
    path: Path,
    environ: Mapping[str, str],
    *,
    folders: Collection[Path] = (),
    notes: list[str] | None = None,
    secrets: dict[str, str] | None = None,
    keep_placeholders: bool = False,
) -> str:
    """The file's text after MiniJinja, file() and env() filled. `folders`: besides the
    working directory and the file's own folder, where file() may read. A file() path read
    from the file's folder rather than the working directory adds a line to `notes` (once
    per path); `secrets` receives {variable: value} of every key-like env() read."""
    import minijinja

    folder = path.parent
    allowed = [Path.cwd(), folder, *folders]

    def file(name: str) -> str:
        target = Path(name)
        beside = folder / name
        if not target.exists() and beside.exists() and beside != target:
            note = (
                f"note: {path}: file({name!r}) is not in the working directory; read {beside} "
                f"(beside {path.name}) instead (kag reads it from the working directory only)"
            )
            if notes is not None and note not in notes:
                notes.append(note)
            target = beside
        if not _inside(target, allowed):
            raise _TemplateFunctionError(
                f"file({name!r}): {target.resolve()} is outside the working directory and the "
                "folders of the setups and config files; copy the file there (file() reads "
                "nothing else, so a template cannot put other files into prompts and results)"
            )
        try:
            return _read_regular(target)
        except _NotRegular as exc:
            raise _TemplateFunctionError(f"file({name!r}): {target}: {exc}") from None
        except FileNotFoundError:
            raise _TemplateFunctionError(
                f"file({name!r}): not found: {target} (relative to the working directory, as "
                f"kag reads it) nor {beside} (beside {path.name})"
            ) from None
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise _TemplateFunctionError(f"file({name!r}): cannot read {target}: {exc}") from None

    def env(name: str, default: str | None = None) -> str:
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            return default if default is not None else ""
        if secrets is not None and is_key_like(name) and len(value) >= MIN_SECRET_LENGTH:
            secrets[name] = value
        return value

    # Strict where kag is lenient: an unknown variable is a typo that kag turns into "".
    environment: Any = minijinja.Environment(undefined_behavior="strict", fuel=FUEL)
    environment.pycompat = False  # Rust's MiniJinja, as kag has it, has no Python methods
    environment.add_function("file", file)
    environment.add_function("env", env)
    text = protect_placeholders(source) if keep_placeholders else source
    try:
        rendered = str(environment.render_str(text, path.name))
    except _TemplateFunctionError as exc:
        raise EngineError(f"{path}: {exc}") from None
    except minijinja.TemplateError as exc:
        line = getattr(exc, "line", None)
        table = _setup_at_line(source, line)
        where = f" line {line}" if line else ""
        if table:
            where += f" (setup {table!r})" if keep_placeholders else f" ([{table}])"
        message = getattr(exc, "message", None) or str(exc).splitlines()[0]
        message = re.sub(r"\s*\(in [^()]*:\d+\)\s*$", "", str(message))
        hint = ""
        if "undefined" in message and keep_placeholders:
            hint = f"; prompt placeholders are written {PLACEHOLDER_LIST}"
        elif "out of fuel" in message:
            hint = (
                f" (a template may do {FUEL:,} steps of work: loops and growing strings count); "
                "simplify it"
            )
        raise EngineError(f"{path}{where}: template error: {message}{hint}") from None
    if len(rendered) > RENDERED_MAX_CHARS:
        raise EngineError(
            f"{path}: the template renders to {len(rendered):,} characters, over the "
            f"{RENDERED_MAX_CHARS:,} a config file may take; simplify it"
        )
    return rendered


def render_setups(
    source: str,
    path: Path,
    environ: Mapping[str, str],
    notes: list[str] | None = None,
    folders: Collection[Path] = (),
) -> str:
    """SETUPS.toml after MiniJinja, placeholders kept. A key-like variable's value must not
    reach it: everything in a setups file ends up in prompts or in every result file."""
    secrets: dict[str, str] = {}
    text = render_template_file(
        source,
        path,
        environ,
        folders=folders,
        notes=notes,
        secrets=secrets,
        keep_placeholders=True,
    )
    for name, value in secrets.items():
        if value in text:
            raise EngineError(
                f"{path}: env({name!r}) would write a secret into the setups (prompts and "
                "every result file); a key belongs in config.toml, as a provider's "
                f"key = \"{{{{ env('{name}') }}}}\""
            )
    return text


# -- component names --------------------------------------------------------------------------
#
# Component names, shared by every file the sweep reads.


_COMPONENT = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
MAX_NAME_LENGTH = 100


def is_component_name(name: object) -> bool:
    """Lowercase letters, digits and hyphens, starting with a letter or digit.

    Names become folder and file names, so nothing else (no dots, slashes, spaces or
    capitals that differ only in case on some filesystems) is allowed.
    """
    return isinstance(name, str) and len(name) <= MAX_NAME_LENGTH and bool(_COMPONENT.match(name))


def suggest_name(name: object) -> str:
    """A component name close to `name`, for the error message."""
    text = re.sub(r"[^a-z0-9-]+", "-", str(name).lower()).strip("-")
    return text[:MAX_NAME_LENGTH] or "q1"


def one_of(choices: Iterable[str]) -> str:
    names = sorted(choices)
    return ", ".join(names) if names else "(none)"


# -- reading a file -----------------------------------------------------------------------------


def read_text_file(path: Path, what: str) -> str:
    """A file named on the command line, as UTF-8 text; one line when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EngineUsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise EngineUsageError(f"expected a {what}, found a folder: {path}") from None
    except UnicodeDecodeError as exc:
        raise EngineError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise EngineUsageError(f"cannot read the {what} {path}: {exc.strerror}") from None


def parse_toml(text: str, path: Path, what: str = "") -> dict[str, Any]:
    """TOML 1.1, as kag's parser reads it (multi-line inline tables, trailing commas)."""
    import tomli

    from lasagna_judge import TomlError, load_toml

    try:
        return load_toml(text, loads=tomli.loads)
    except TomlError as exc:
        raise EngineError(f"{path}: not valid TOML{what} ({exc}); fix the file") from None
