"""SETUPS.toml: the generation setups to compare, one top-level table each.

    [rag-bm25]
    provider = "local"               # a provider of config.toml (or a built-in one)
    model = "smollm2"
    temperature = 0.0
    tokens = 64                      # max output tokens
    system_prompt = '''{{ file("prompts/rag.txt") }}'''
    prompt = "{{INPUT}}"             # the user message (this is the default)
    datasets = ["facts"]             # optional: the datasets this setup answers
    retriever = "bm25-top3"          # optional, with database
    database = "handbook"

    [my-rag]                         # the user's own system (see lasagna_cli._systems._sweep)
    system = "my_rag.pipeline:answer"    # or an http(s):// URL; with datasets and prompt

The file is rendered with MiniJinja before it is parsed, with `file(path)` (a file's text,
relative to the TOML's folder) and `env(name, default)`. Prompt placeholders are written
in capitals - {{INPUT}}, {{RETRIEVAL}}, {{CHOICE}} - and MiniJinja leaves every
`{{ CAPITALS }}` expression untouched, so they reach the prompts as written and are filled
per task; MiniJinja's own variables and functions are lowercase. Text returned by file()
is not rendered again, so a prompt file uses the same placeholders.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import USAGE_ERROR, CliError, did_you_mean
from lasagna_cli._sweep._config import Config, Database, Provider, Retriever, read_text_file
from lasagna_cli._sweep._names import is_component_name, one_of, suggest_name

if TYPE_CHECKING:
    from lasagna_cli._systems._spec import SystemSpec

PLACEHOLDERS = ("INPUT", "RETRIEVAL", "CHOICE")
SETUP_KEYS = (
    "provider",
    "model",
    "temperature",
    "tokens",
    "system_prompt",
    "prompt",
    "datasets",
    "retriever",
    "database",
    "system",
)
DEFAULT_PROMPT = "{{INPUT}}"
PLACEHOLDER_LIST = ", ".join("{{" + p + "}}" for p in PLACEHOLDERS)
_CAPITALS = re.compile(r"\{\{-?\s*[A-Z][A-Z0-9_]*\s*-?\}\}")
_ANY_PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}", re.DOTALL)
_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Setup:
    name: str
    provider: Provider
    model: str
    temperature: float | None
    tokens: int | None
    system_prompt: str
    prompt: str
    datasets: tuple[str, ...] | None
    retriever: Retriever | None
    database: Database | None
    system: SystemSpec | None = None
    """The user's own system, which answers instead of a model (no provider is called)."""

    @property
    def model_id(self) -> str:
        """The provider/model name make_llm takes."""
        return f"{self.provider.api}/{self.model}"

    def uses(self, placeholder: str) -> bool:
        token = "{{" + placeholder + "}}"
        return token in self.system_prompt or token in self.prompt

    def covers(self, dataset: str) -> bool:
        return self.datasets is None or dataset in self.datasets

    def describe(self) -> dict[str, Any]:
        """The exact setup, as recorded with every result: names of key variables only."""
        if self.system is not None:
            return {
                "name": self.name,
                "system": self.system.describe(),
                "prompt": self.prompt,
                "datasets": list(self.datasets) if self.datasets is not None else None,
            }
        return {
            "name": self.name,
            "provider": self.provider.describe(),
            "model": self.model,
            "model_id": self.model_id,
            "temperature": self.temperature,
            "tokens": self.tokens,
            "system_prompt": self.system_prompt,
            "prompt": self.prompt,
            "datasets": list(self.datasets) if self.datasets is not None else None,
            "retriever": self.retriever.describe() if self.retriever else None,
            "database": self.database.describe() if self.database else None,
        }


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


def render_setups(source: str, path: Path) -> str:
    """The TOML text after MiniJinja: file() and env() filled, placeholders kept."""
    import minijinja

    folder = path.parent

    def file(name: str) -> str:
        target = folder / name
        try:
            return target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise _TemplateFunctionError(
                f"file({name!r}): not found: {target} (paths are relative to {path.name})"
            ) from None
        except (IsADirectoryError, UnicodeDecodeError) as exc:
            raise _TemplateFunctionError(f"file({name!r}): cannot read {target}: {exc}") from None

    def env(name: str, default: str | None = None) -> str:
        value = os.environ.get(name)
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
        raise CliError(f"{path}: {exc}") from None
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
        raise CliError(f"{path}{where}: template error: {message}{hint}") from None


def _check_placeholders(path: Path, setup: str, key: str, text: str) -> None:
    for match in _ANY_PLACEHOLDER.finditer(text):
        name = match.group(1)
        if name not in PLACEHOLDERS:
            raise CliError(
                f"{path}: setup {setup!r}: {key}: unknown placeholder {{{{{name}}}}}"
                f"{did_you_mean(name.upper(), PLACEHOLDERS)}; the placeholders are "
                f"{PLACEHOLDER_LIST}"
            )


def _normalise_placeholders(text: str) -> str:
    return _ANY_PLACEHOLDER.sub(lambda m: "{{" + m.group(1) + "}}", text)


def _component(
    path: Path, setup: str, key: str, body: dict[str, Any], known: Collection[str], kind: str
) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or value not in known:
        raise CliError(
            f"{path}: setup {setup!r}: {key} {value!r} is not a {kind} of the config"
            f"{did_you_mean(str(value), known)}; known: {one_of(known)}"
        )
    return value


def _datasets_list(
    path: Path, name: str, body: dict[str, Any], datasets: Collection[str]
) -> tuple[str, ...] | None:
    """A setup's `datasets`, each checked against the datasets file; None when absent."""
    chosen = body.get("datasets")
    if chosen is None:
        return None
    if not isinstance(chosen, list) or not all(isinstance(d, str) for d in chosen):
        raise CliError(f"{path}: setup {name!r}: expected `datasets` to be a list of names")
    for dataset in chosen:
        if dataset not in datasets:
            raise CliError(
                f"{path}: setup {name!r}: datasets: {dataset!r} is not in the datasets "
                f"file{did_you_mean(dataset, datasets)}; known: {one_of(datasets)}"
            )
    return tuple(chosen)


def _parse_setup(
    path: Path, name: str, body: Any, config: Config, datasets: Collection[str]
) -> Setup:
    if not is_component_name(name):
        raise CliError(
            f"{path}: setup {name!r}: expected a component name (lowercase letters, digits and "
            f"hyphens), e.g. {suggest_name(name)!r}; rename the table"
        )
    if not isinstance(body, dict):
        raise CliError(
            f"{path}: {name!r}: expected a [{name}] table of settings, found a value; every "
            "top-level entry of the setups file is a setup"
        )
    for key in body:
        if key not in SETUP_KEYS:
            hint = did_you_mean(key, SETUP_KEYS)
            if "key" in key.lower() and not hint:
                hint = " (API keys belong in the environment; config.toml names the variable)"
            raise CliError(
                f"{path}: setup {name!r}: unknown key {key!r}{hint}; expected "
                f"{', '.join(SETUP_KEYS)}"
            )
    if "system" in body:
        return _parse_system_setup(path, name, body, datasets)
    provider_name = _component(path, name, "provider", body, config.providers, "provider")
    if provider_name is None:
        raise CliError(
            f"{path}: setup {name!r}: missing `provider`; name one of {one_of(config.providers)}"
        )
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise CliError(
            f"{path}: setup {name!r}: expected `model` to be a model name, e.g. "
            '"gpt-4o-mini" or "smollm2"'
        )
    temperature = body.get("temperature")
    if temperature is not None and (
        not isinstance(temperature, int | float)
        or isinstance(temperature, bool)
        or not 0 <= temperature <= 2
    ):
        raise CliError(
            f"{path}: setup {name!r}: expected `temperature` between 0 and 2, found {temperature!r}"
        )
    tokens = body.get("tokens")
    if tokens is not None and (
        not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1
    ):
        raise CliError(
            f"{path}: setup {name!r}: expected `tokens` (max output tokens) to be a positive "
            f"integer, found {tokens!r}"
        )
    texts: dict[str, str] = {}
    for key, default in (("system_prompt", ""), ("prompt", DEFAULT_PROMPT)):
        value = body.get(key, default)
        if not isinstance(value, str):
            raise CliError(f"{path}: setup {name!r}: expected `{key}` to be a string")
        _check_placeholders(path, name, key, value)
        texts[key] = _normalise_placeholders(value)
    if not texts["prompt"].strip():
        raise CliError(f"{path}: setup {name!r}: `prompt` (the user message) is empty")
    chosen = _datasets_list(path, name, body, datasets)
    retriever = _component(path, name, "retriever", body, config.retrievers, "retriever")
    database = _component(path, name, "database", body, config.databases, "database")
    if (retriever is None) != (database is None):
        raise CliError(
            f"{path}: setup {name!r}: a retrieval setup names both `retriever` and `database` "
            f"(found only {'retriever' if retriever else 'database'})"
        )
    setup = Setup(
        name=name,
        provider=config.providers[provider_name],
        model=model.strip(),
        temperature=float(temperature) if temperature is not None else None,
        tokens=tokens,
        system_prompt=texts["system_prompt"],
        prompt=texts["prompt"],
        datasets=chosen,
        retriever=config.retrievers[retriever] if retriever else None,
        database=config.databases[database] if database else None,
    )
    if setup.retriever is not None and not setup.uses("RETRIEVAL"):
        raise CliError(
            f"{path}: setup {name!r}: it retrieves passages but no prompt shows them; put "
            "{{RETRIEVAL}} in system_prompt or prompt"
        )
    if setup.retriever is None and setup.uses("RETRIEVAL"):
        raise CliError(
            f"{path}: setup {name!r}: {{{{RETRIEVAL}}}} needs passages; name a `retriever` and "
            "a `database` of the config, or remove the placeholder"
        )
    return setup


def _parse_system_setup(
    path: Path, name: str, body: dict[str, Any], datasets: Collection[str]
) -> Setup:
    """A setup whose answers come from the user's system (`lasagna_cli._systems._sweep`)."""
    from lasagna_cli._systems._sweep import system_model, system_spec

    spec = system_spec(path, name, body)
    prompt = body.get("prompt", DEFAULT_PROMPT)
    if not isinstance(prompt, str) or not prompt.strip():
        raise CliError(f"{path}: setup {name!r}: expected `prompt` to be a non-empty string")
    _check_placeholders(path, name, "prompt", prompt)
    if "{{RETRIEVAL}}" in _normalise_placeholders(prompt):
        raise CliError(
            f"{path}: setup {name!r}: a system retrieves for itself: {{{{RETRIEVAL}}}} has "
            "nothing to show; remove it"
        )
    chosen = _datasets_list(path, name, body, datasets)
    return Setup(
        name=name,
        provider=Provider(name="system", api="system"),
        model=system_model(spec),
        temperature=None,
        tokens=None,
        system_prompt="",
        prompt=_normalise_placeholders(prompt),
        datasets=chosen,
        retriever=None,
        database=None,
        system=spec,
    )


def parse_setups(
    text: str, path: Path, config: Config, datasets: Collection[str]
) -> dict[str, Setup]:
    """Setups from the rendered TOML text, every reference checked."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"{path}: not valid TOML after rendering ({exc}); fix the file") from None
    if not data:
        raise CliError(f"{path}: holds no setup; add a [name] table per setup")
    return {name: _parse_setup(path, name, body, config, datasets) for name, body in data.items()}


def load_setups(path: Path, config: Config, datasets: Collection[str]) -> dict[str, Setup]:
    source = read_text_file(path, "setups file")
    return parse_setups(render_setups(source, path), path, config, datasets)


def select_setups(setups: dict[str, Setup], skip: Collection[str]) -> dict[str, Setup]:
    """The setups minus those named in --skip; an unknown name is a usage error."""
    for name in skip:
        if name not in setups:
            raise CliError(
                f"--skip: no setup named {name!r}{did_you_mean(name, setups)}; the setups are "
                f"{one_of(setups)}",
                USAGE_ERROR,
            )
    return {name: setup for name, setup in setups.items() if name not in skip}
