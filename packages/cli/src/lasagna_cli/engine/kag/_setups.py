"""SETUPS.toml: the generation setups to compare, one top-level table each.

    [rag-bm25]
    provider = "local"               # a provider of config.toml (or a built-in one)
    model = "smollm2"
    temperature = 0.0
    tokens = 64                      # max output tokens
    system_prompt = '''{{ file("prompts/rag.txt") }}'''
    prompt = "{{INPUT}}"             # the user message (this is the default)
    datasets = ["facts"]             # optional: the datasets this setup answers
    # optional, kag's Knowledge-Augmented Generation (a retriever and a database of the
    # config); top-level `retriever` and `database` work too (below, "a setup's retrieval")
    augmented_generation = { retriever = "bm25-top3", database = "handbook" }

    [my-rag]                         # the user's own system (see `_parse_system_setup`)
    system = "my_rag.pipeline:answer"    # or an http(s):// URL; with datasets and prompt

The file is rendered with MiniJinja before it is parsed, with `file(path)` (a file's text,
relative to the working directory as kag reads it, else to the TOML's folder, with a note)
and `env(name, default)`. Prompt placeholders are written
in capitals - {{INPUT}}, {{RETRIEVAL}}, {{CHOICE}} - and MiniJinja leaves every
`{{ CAPITALS }}` expression untouched, so they reach the prompts as written and are filled
per task; MiniJinja's own variables and functions are lowercase. Text returned by file()
is not rendered again, so a prompt file uses the same placeholders.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.config._config import (
    DatabaseSpec,
    ModelSpec,
    PromptSpec,
    RetrieverSpec,
    Setup,
)
from lasagna_cli.engine.kag._config import Config, Retriever
from lasagna_cli.engine.kag._files import (
    PLACEHOLDER_LIST,
    is_component_name,
    one_of,
    parse_toml,
    read_text_file,
    render_setups,
    suggest_name,
)
from lasagna_cli.engine.plan._prompts import DEFAULT_TEMPLATE, PLACEHOLDERS, needs, uses

TRACKS = ("generation",)
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
    "augmented_generation",
    "system",
)
DEFAULT_PROMPT = DEFAULT_TEMPLATE


# MiniJinja's own global functions, which a template may call.
_BUILTINS = frozenset(("range", "dict", "debug", "namespace"))


def _check_placeholders(path: Path, setup: str, key: str, text: str) -> None:
    """The template compiles and names no variable but the placeholders: found at load,
    not when the first task fails."""
    import minijinja

    try:
        names = minijinja.Environment().undeclared_variables_in_str(text)
    except minijinja.TemplateError as exc:
        message = str(getattr(exc, "message", None) or str(exc).splitlines()[0])
        raise EngineError(f"{path}: setup {setup!r}: {key}: template error: {message}") from None
    for name in sorted(set(names) - set(PLACEHOLDERS) - _BUILTINS):
        raise EngineError(
            f"{path}: setup {setup!r}: {key}: unknown placeholder {{{{{name}}}}}"
            f"{did_you_mean(name.upper(), PLACEHOLDERS)}; the placeholders are "
            f"{PLACEHOLDER_LIST}"
        )


def _datasets_list(
    path: Path, name: str, body: dict[str, Any], datasets: Collection[str]
) -> tuple[str, ...] | None:
    """A setup's `datasets`, each checked against the datasets file; None when absent."""
    chosen = body.get("datasets")
    if chosen is None:
        return None
    if not isinstance(chosen, list) or not all(isinstance(d, str) for d in chosen):
        raise EngineError(f"{path}: setup {name!r}: expected `datasets` to be a list of names")
    for dataset in chosen:
        if dataset not in datasets:
            raise EngineError(
                f"{path}: setup {name!r}: datasets: {dataset!r} is not in the datasets "
                f"file{did_you_mean(dataset, datasets)}; known: {one_of(datasets)}"
            )
    return tuple(chosen)


def _parse_setup(
    path: Path,
    name: str,
    body: Any,
    config: Config,
    datasets: Collection[str],
    environ: Mapping[str, str],
) -> Setup:
    if not is_component_name(name):
        raise EngineError(
            f"{path}: setup {name!r}: expected a component name (lowercase letters, digits and "
            f"hyphens), e.g. {suggest_name(name)!r}; rename the table"
        )
    if not isinstance(body, dict):
        raise EngineError(
            f"{path}: {name!r}: expected a [{name}] table of settings, found a value; every "
            "top-level entry of the setups file is a setup"
        )
    for key in body:
        if key not in SETUP_KEYS:
            hint = did_you_mean(key, SETUP_KEYS)
            if "key" in key.lower() and not hint:
                hint = " (API keys belong in the environment; config.toml names the variable)"
            raise EngineError(
                f"{path}: setup {name!r}: unknown key {key!r}{hint}; expected "
                f"{', '.join(SETUP_KEYS)}"
            )
    if "system" in body:
        return _parse_system_setup(path, name, body, datasets, environ)
    refs = retrieval_refs(path, name, body, config)  # before the provider, as kag
    provider_name = component(
        path, name, "provider", body.get("provider"), config.providers, "provider"
    )
    if provider_name is None:
        raise EngineError(
            f"{path}: setup {name!r}: missing `provider`; name one of {one_of(config.providers)}"
        )
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise EngineError(
            f"{path}: setup {name!r}: expected `model` to be a model name, e.g. "
            '"gpt-4o-mini" or "smollm2"'
        )
    temperature = body.get("temperature")
    if temperature is not None and (
        not isinstance(temperature, int | float)
        or isinstance(temperature, bool)
        or not 0 <= temperature <= 2
    ):
        raise EngineError(
            f"{path}: setup {name!r}: expected `temperature` between 0 and 2, found {temperature!r}"
        )
    tokens = body.get("tokens")
    if tokens is not None and (
        not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1
    ):
        raise EngineError(
            f"{path}: setup {name!r}: expected `tokens` (max output tokens) to be a positive "
            f"integer, found {tokens!r}"
        )
    texts: dict[str, str] = {}
    for key in ("system_prompt", "prompt"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise EngineError(f"{path}: setup {name!r}: expected `{key}` to be a string")
        if value is not None:
            _check_placeholders(path, name, key, value)
            texts[key] = value
    system, user = _messages_of(path, name, texts)
    chosen = _datasets_list(path, name, body, datasets)
    retriever, database = refs or (None, None)
    if retriever is not None and database is not None:
        graph_error = neo4j_error(config, retriever, database)
        if graph_error is not None:
            raise graph_error
    provider = config.providers[provider_name]
    found = config.retrievers[retriever] if retriever else None
    setup = Setup(
        name=name,
        retriever=retriever_spec(path, name, found, config.databases.get(database or ""))
        if found is not None
        else None,
        retriever_name=found.name if found is not None else None,
        generator=ModelSpec(
            f"{provider.api}/{model.strip()}",
            provider=provider,
            temperature=float(temperature) if temperature is not None else None,
            max_tokens=tokens,
        ),
        prompt=PromptSpec("template", system, user),
        tracks=TRACKS,
        datasets=chosen,
        database=config.databases[database] if database else None,
    )
    if setup.retriever is not None and not uses(setup.prompt, "RETRIEVAL"):
        raise EngineError(
            f"{path}: setup {name!r}: it retrieves passages but no prompt shows them; put "
            "{{RETRIEVAL}} in system_prompt or prompt"
        )
    if not uses(setup.prompt, "INPUT"):
        raise EngineError(
            f"{path}: setup {name!r}: no prompt shows the question; put {{{{INPUT}}}} in "
            "system_prompt (kag's whole prompt) or give `prompt`"
        )
    if setup.retriever is None and needs(setup.prompt, "RETRIEVAL"):
        raise EngineError(
            f"{path}: setup {name!r}: {{{{RETRIEVAL}}}} needs passages; name a `retriever` and "
            "a `database` of the config, or remove the placeholder"
        )
    return setup


def _messages_of(path: Path, name: str, texts: dict[str, str]) -> tuple[str, str]:
    """(system message, user message) templates. kag sends one user prompt: its
    `system_prompt`, rendered whole. lasagna's `prompt` is a user message of its own; with
    it, `system_prompt` becomes the system message. Neither: the question alone."""
    system_prompt, prompt = texts.get("system_prompt"), texts.get("prompt")
    if prompt is None:
        user = system_prompt if system_prompt is not None and system_prompt.strip() else ""
        return "", user or DEFAULT_PROMPT
    if not prompt.strip():
        raise EngineError(f"{path}: setup {name!r}: `prompt` (the user message) is empty")
    return system_prompt or "", prompt


SYSTEM_SETUP_KEYS = ("system", "datasets", "prompt")


def _parse_system_setup(
    path: Path,
    name: str,
    body: dict[str, Any],
    datasets: Collection[str],
    environ: Mapping[str, str],
) -> Setup:
    """A setup whose answers come from the user's system:

        [my-rag]
        system = "my_rag.pipeline:answer"        # or "http://127.0.0.1:8765/answer", or
        # system = {url = "http://...", timeout = 30, retries = 3, headers = {...}}
        datasets = ["facts"]                     # optional, as for any setup
        prompt = "{{INPUT}}"                     # optional: the question the system is asked

    It answers by itself, so it names no provider, model, prompts for a model, retriever or
    database. It is asked the question's input (an MCQ's options follow it, unless `prompt`
    places {{CHOICE}} itself); the row it may take is `{"id": "<dataset>/<question>",
    "question", "metadata": {"dataset", "question", "options"}}`.
    """
    from lasagna_cli.engine.systems import spec_from_sweep

    where = f"{path}: setup {name!r}: system"
    for key in body:
        if key not in SYSTEM_SETUP_KEYS:
            raise EngineError(
                f"{path}: setup {name!r}: `{key}` does not apply to a system setup (the system "
                f"answers by itself); a system setup takes {', '.join(SYSTEM_SETUP_KEYS)}"
            )
    try:
        spec = spec_from_sweep(body["system"], where, path.parent, environ)
    except EngineError as exc:  # a setups-file problem, like every other in that file: exit 1
        raise EngineError(str(exc)) from None
    if spec.kind == "predictions":
        raise EngineError(
            f"{where}: a sweep asks its questions live, so it takes a callable or a URL; a "
            "predictions file is scored by `lasagna benchmark run DATA --predictions FILE`"
        )
    prompt = body.get("prompt", DEFAULT_PROMPT)
    if not isinstance(prompt, str) or not prompt.strip():
        raise EngineError(f"{path}: setup {name!r}: expected `prompt` to be a non-empty string")
    _check_placeholders(path, name, "prompt", prompt)
    if uses(PromptSpec("template", "", prompt), "RETRIEVAL"):
        raise EngineError(
            f"{path}: setup {name!r}: a system retrieves for itself: {{{{RETRIEVAL}}}} has "
            "nothing to show; remove it"
        )
    return Setup(
        name=name,
        retriever=None,
        prompt=PromptSpec("template", "", prompt),
        tracks=TRACKS,
        system=spec,
        datasets=_datasets_list(path, name, body, datasets),
    )


@dataclass(frozen=True)
class BrokenSetup:
    """A setup that names a component missing from the config, kept (with
    `missing_as_errors`) so that each of its tasks is recorded as `error`."""

    name: str
    error: str
    datasets: tuple[str, ...] | None


def parse_setups(
    text: str,
    path: Path,
    config: Config,
    datasets: Collection[str],
    environ: Mapping[str, str],
    broken: dict[str, BrokenSetup] | None = None,
    *,
    missing_as_errors: bool = True,
) -> dict[str, Setup]:
    """Setups from the rendered TOML text, every reference checked. With `broken` given, a
    setup needing Neo4j goes there, and so does one naming a missing component when
    `missing_as_errors`, instead of failing the file."""
    data = parse_toml(text, path, " after rendering")
    if not data:
        raise EngineError(f"{path}: holds no setup; add a [name] table per setup")
    setups = {}
    for name, body in data.items():
        try:
            setups[name] = _parse_setup(path, name, body, config, datasets, environ)
        except MissingComponent as exc:
            if broken is None or not (missing_as_errors or isinstance(exc, NeedsNeo4j)):
                raise
            chosen = _datasets_list(path, name, body, datasets)
            broken[name] = BrokenSetup(name, exc.task_error, chosen)
    return setups


def load_setups(
    path: Path,
    config: Config,
    datasets: Collection[str],
    environ: Mapping[str, str],
    notes: list[str] | None = None,
    broken: dict[str, BrokenSetup] | None = None,
    *,
    missing_as_errors: bool = True,
    folders: Collection[Path] = (),
) -> dict[str, Setup]:
    """SETUPS.toml rendered (`env()` reads `environ`, the command's environment; `file()`
    reads inside the working directory, the file's folder and `folders`), parsed and
    checked against the config and the datasets. `notes` collects what the user is told
    (a file() read beside the TOML); `broken` and `missing_as_errors`, see `parse_setups`."""
    source = read_text_file(path, "setups file")
    text = render_setups(source, path, environ, notes, folders)
    return parse_setups(
        text, path, config, datasets, environ, broken, missing_as_errors=missing_as_errors
    )


def select_setups(setups: dict[str, Setup], skip: Collection[str]) -> dict[str, Setup]:
    """The setups minus those named in --skip; an unknown name is a usage error."""
    for name in skip:
        if name not in setups:
            raise EngineUsageError(
                f"--skip: no setup named {name!r}{did_you_mean(name, setups)}; the setups are "
                f"{one_of(setups)}"
            )
    return {name: setup for name, setup in setups.items() if name not in skip}


# -- a setup's retrieval ----------------------------------------------------------------------
#
# A setup's retrieval, as SETUPS.toml names it, resolved against config.toml.
#
# kag's `Generation` holds `augmented_generation: Option<AugmentedGeneration>`, and a setup
# flattens it, so kag writes a Knowledge-Augmented setup
#
#     [kag-rag]
#     augmented_generation = { retriever = "bm25-top3", database = "handbook" }
#
# and records that very table as `config.augmented_generation` in each result file. kag's
# README says "add a `retriever` and a `database`" at the top level instead; kag's serde
# drops those keys and runs the setup without retrieval. lasagna takes both spellings, each
# with retrieval (the README's promise), and refuses a setup that gives both.
#
# The references are checked in kag's order (`generation/config.rs`): the retriever, then
# the database, then the provider, so that a setup recorded per task with
# `--missing-as-errors` carries the error kag would write.


AUGMENTED = "augmented_generation"
AUGMENTED_KEYS = ("retriever", "database")
EXAMPLE = 'augmented_generation = { retriever = "bm25-top3", database = "handbook" }'


def component(
    path: Path, setup: str, key: str, value: Any, known: Collection[str], kind: str
) -> str | None:
    """`value`, a name among `known`; None when absent. A string naming none of them is a
    `MissingComponent` (kag's task error with `--missing-as-errors`)."""
    if value is None:
        return None
    if isinstance(value, str) and value not in known:
        raise MissingComponent(
            f"{path}: setup {setup!r}: {key} {value!r} is not a {kind} of the config"
            f"{did_you_mean(value, known)}; known: {one_of(known)} (--missing-as-errors "
            "records its tasks as errors and runs the other setups, as kag does)",
            f"The requested {kind} {value!r} is missing from the configuration.",
        )
    if not isinstance(value, str):
        raise EngineError(
            f"{path}: setup {setup!r}: {key} {value!r} is not a {kind} of the config"
            f"{did_you_mean(str(value), known)}; known: {one_of(known)}"
        )
    return value


def _named(path: Path, setup: str, body: dict[str, Any]) -> tuple[str, Any, Any]:
    """(where the names are written, retriever, database), as the setup gives them."""
    top = [key for key in AUGMENTED_KEYS if key in body]
    if AUGMENTED not in body:
        return "", body.get("retriever"), body.get("database")
    if top:
        raise EngineError(
            f"{path}: setup {setup!r}: gives both `{AUGMENTED}` and a top-level `{top[0]}`; "
            f"name the retrieval once, as kag does: {EXAMPLE}"
        )
    table = body[AUGMENTED]
    if not isinstance(table, dict):
        raise EngineError(
            f"{path}: setup {setup!r}: expected `{AUGMENTED}` to be a table, found "
            f"{type(table).__name__}; write {EXAMPLE}"
        )
    for key in table:
        if key not in AUGMENTED_KEYS:
            raise EngineError(
                f"{path}: setup {setup!r}: {AUGMENTED}: unknown key {key!r}"
                f"{did_you_mean(key, AUGMENTED_KEYS)}; expected retriever and database"
            )
    for key in AUGMENTED_KEYS:
        if key not in table:
            raise EngineError(
                f"{path}: setup {setup!r}: {AUGMENTED}: missing `{key}` (kag requires both "
                f"retriever and database); write {EXAMPLE}"
            )
    return f"{AUGMENTED}.", table["retriever"], table["database"]


def retrieval_refs(
    path: Path, setup: str, body: dict[str, Any], config: Config
) -> tuple[str, str] | None:
    """The (retriever, database) names the setup retrieves with, each checked against the
    config (the retriever first, as kag); None for a setup without retrieval."""
    where, retriever_value, database_value = _named(path, setup, body)
    retriever = component(
        path, setup, f"{where}retriever", retriever_value, config.retrievers, "retriever"
    )
    database = component(
        path,
        setup,
        f"{where}database",
        database_value,
        [*config.databases, *config.graphs],
        "database",
    )
    if retriever is None and database is None:
        return None
    if retriever is None or database is None:
        raise EngineError(
            f"{path}: setup {setup!r}: a retrieval setup names both `retriever` and `database` "
            f"(found only {'retriever' if retriever else 'database'}); or write {EXAMPLE}"
        )
    return retriever, database


def retriever_spec(
    path: Path, name: str, found: Retriever, database: DatabaseSpec | None
) -> RetrieverSpec:
    """A config retriever over a database: a dense or hybrid one takes its embedder (and
    vector store) from the retriever, else from a `type = "vector"` database."""
    from lasagna_cli.engine.config._flags import retriever_spec as spec_of

    values: dict[str, Any] = {"top_k": found.top_k, "kind": found.type, **dict(found.settings)}
    if found.type != "bm25" and database is not None and database.vector:
        values.setdefault("embedder", database.embedder)
        values.update(store=database.store, collection=database.collection)
    values = {k: v for k, v in values.items() if v is not None}
    try:
        return spec_of(values, f"retrievers.{found.name}", RetrieverSpec())
    except EngineUsageError as exc:
        raise EngineError(f"{path}: setup {name!r}: {exc}") from None


# -- setups that cannot run here --------------------------------------------------------------
#
# Setups that cannot run here, recorded per task in kag's error shape instead of failing
# the file: a missing component (`--missing-as-errors`, kag's behaviour) or a retrieval that
# needs a Neo4j server, which lasagna cannot reach.


class MissingComponent(EngineError):
    """A setup names a provider, retriever or database the config does not have. With
    `missing_as_errors` (kag's behaviour) the setup's tasks are recorded as this error."""

    def __init__(self, message: str, task_error: str) -> None:
        super().__init__(message)
        self.task_error = task_error


class NeedsNeo4j(MissingComponent):
    """A setup whose retrieval needs a Neo4j server, which lasagna cannot reach: each of its
    tasks is recorded as this error (kag's shape) and the other setups run."""


def neo4j_error(config: Config, retriever: str, database: str) -> NeedsNeo4j | None:
    """The error of a setup retrieving with kag's Embedder or from a Neo4j database; None
    for lasagna's own retrievers over lasagna's databases."""
    found = config.retrievers[retriever]
    graph = config.graphs.get(database)
    if graph is None and found.type != "Embedder":
        return None
    if graph is None:
        raise EngineError(
            f"{config.path}: retriever {retriever!r} is kag's Embedder, which searches a Neo4j "
            f"database; database {database!r} holds documents: give the setup a retriever of "
            'type = "dense" (or "bm25", "hybrid")'
        )
    if found.type != "Embedder":
        raise EngineError(
            f"{config.path}: database {database!r} is a Neo4j database; retriever "
            f"{retriever!r} ({found.type}) searches documents (kag: mismatched database and "
            "retriever backend variants)"
        )
    # kag's anyhow chain, "context: cause" (`retrieval/mod.rs`): the embedder's provider is
    # looked up first, then the query embedded, then Neo4j searched with `extra`'s settings.
    context = f"Failed during the knowledge retrieval phase (KAG) on database '{database}'"
    embedder = dict(found.settings).get("provider")
    if embedder not in config.providers:
        cause = f"The requested provider '{embedder}' is missing from the configuration."
    elif database not in found.extra:
        cause = (
            f"Failed to execute vector retrieval for database '{database}': Missing "
            f"configuration parameters for Neo4j database '{graph.database}'. Ensure that "
            "'extra' contains a valid 'Neo4j' configuration block matching this retriever."
        )
    else:
        cause = (
            "lasagna cannot connect to a Neo4j database; benchmark this pipeline as your own "
            "system (a setup with `system =`, or --system; see docs/coming-from/kag.md)"
        )
    message = f"{context}: {cause}"
    return NeedsNeo4j(message, message)
