"""config.toml entries in kag's own shape, checked as kag's serde types check them.

    [providers.ollama]              # type = "Ollama": url (default http://localhost:11434)
    [providers.openai]              # type = "OpenAI": url (default OpenAI's), key (required)
    [databases.neo4j]               # type = "Neo4j": uri, user, password (required), database
    [retrievers.NAME]               # type = "Embedder": provider, model, top_k = 5, extra
    extra.neo4j = { type = "Neo4j", index = "...", neighborhood = 1, translation = {...} }

Tags are case-sensitive, as kag's. An Ollama provider is spoken to through Ollama's native
/api/chat, an OpenAI one through the Responses API, as kag's (rig's) clients do. Neo4j
cannot be reached from lasagna: its databases and Embedder retrievers are read and checked
so the file loads, and the setups that use them are recorded as failed (`_setups`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lasagna_cli.engine._errors import EngineError, did_you_mean
from lasagna_cli.engine.config._config import ProviderSpec
from lasagna_cli.engine.kag._entries import (
    GraphDatabase,
    Retriever,
    check_keys,
    integer,
    string,
)
from lasagna_cli.engine.kag._names import is_component_name, one_of
from lasagna_cli.engine.run._rate_share import check_rate

PROVIDER_TYPES = ("Ollama", "OpenAI")
DATABASE_TYPES = ("Neo4j",)
RETRIEVER_TYPES = ("Embedder",)
TRANSLATIONS = ("FormalTriplet", "TextualTriplet")
OLLAMA_URL = "http://localhost:11434"
OPENAI_URL = "https://api.openai.com/v1"
NEO4J_DEFAULTS = {"uri": "127.0.0.1:7687", "user": "neo4j", "database": "neo4j"}


def _tag(path: Path, where: str, body: dict[str, Any], tags: tuple[str, ...]) -> str:
    value = body.get("type")
    if value not in tags:
        lowered = {t.lower(): t for t in tags}
        hint = (
            f"; kag's tags are case-sensitive: write {lowered[value.lower()]!r}"
            if isinstance(value, str) and value.lower() in lowered
            else did_you_mean(str(value), tags)
        )
        raise EngineError(
            f"{path}: {where}.type: expected one of {', '.join(map(repr, tags))}, found "
            f"{value!r}{hint}"
        )
    return str(value)


def _url(path: Path, where: str, body: dict[str, Any], default: str) -> str:
    url = string(path, where, body, "url") or default
    if urlsplit(url).scheme not in ("http", "https"):
        raise EngineError(f"{path}: {where}.url: expected an http(s) URL, found {url!r}")
    return url


RATE_KEYS = ("requests_per_minute", "tokens_per_minute")
"""lasagna's own keys of a provider table (kag has none): its models' limits a minute."""


def rate_keys(where: str, body: dict[str, Any]) -> tuple[float | None, float | None]:
    """A provider table's (requests_per_minute, tokens_per_minute), checked."""
    rpm, tpm = (check_rate(body.get(key), f"{where}.{key}") for key in RATE_KEYS)
    return rpm, tpm


def kag_provider(path: Path, name: str, body: dict[str, Any]) -> ProviderSpec:
    where = f"providers.{name}"
    kind = _tag(path, where, body, PROVIDER_TYPES)
    rpm, tpm = rate_keys(f"{path}: {where}", body)
    if kind == "Ollama":
        check_keys(path, where, body, ("type", "url", *RATE_KEYS))
        return ProviderSpec(
            name, "ollama", _url(path, where, body, OLLAMA_URL), wire="ollama-chat",
            requests_per_minute=rpm, tokens_per_minute=tpm,
        )  # fmt: skip
    check_keys(path, where, body, ("type", "url", "key", *RATE_KEYS))
    if "key" not in body:
        raise EngineError(
            f"{path}: {where}: an OpenAI provider needs `key`, e.g. "
            "key = \"{{ env('OPENAI_API_KEY') }}\" (kag requires it too)"
        )
    key = body["key"]
    if not isinstance(key, str):
        raise EngineError(f"{path}: {where}.key: expected a string (the key is not shown)")
    return ProviderSpec(
        name,
        "openai",
        _url(path, where, body, OPENAI_URL),
        wire="responses",
        api_key=key.strip() or None,
        requests_per_minute=rpm,
        tokens_per_minute=tpm,
    )


def kag_database(path: Path, name: str, body: dict[str, Any]) -> GraphDatabase:
    where = f"databases.{name}"
    _tag(path, where, body, DATABASE_TYPES)
    check_keys(path, where, body, ("type", "uri", "user", "password", "database"))
    if not isinstance(body.get("password"), str):
        raise EngineError(
            f"{path}: {where}: a Neo4j database needs `password` (a string), e.g. "
            "password = \"{{ env('NEO4J_PASSWORD') }}\" (kag requires it too)"
        )
    values = {}
    for key, default in NEO4J_DEFAULTS.items():
        values[key] = string(path, where, body, key) or default
    return GraphDatabase(name, **values)


def _string_map(path: Path, where: str, value: Any, *, lists: bool, required: bool) -> None:
    """A table of label set (or relationship type) -> a format (or a list of them)."""
    if value is None:
        if required:
            raise EngineError(f"{path}: {where}: missing (kag requires it)")
        return
    if not isinstance(value, dict):
        raise EngineError(f"{path}: {where}: expected a table, found {type(value).__name__}")
    for key, item in value.items():
        items = item if lists else [item]
        if not isinstance(items, list) or not all(isinstance(t, str) for t in items):
            shape = "a list of strings" if lists else "a string"
            raise EngineError(f"{path}: {where}.{key}: expected {shape}, found {item!r}")


def _check_formats(path: Path, where: str, value: Any) -> None:
    """kag's TextualTriplet formats are MiniJinja templates with `{` `}` around variables
    and `{:` `:}` around statements; one that does not compile is refused, as kag does."""
    import minijinja

    environment = minijinja.Environment(
        variable_start_string="{",
        variable_end_string="}",
        block_start_string="{:",
        block_end_string=":}",
    )
    for key, item in (value or {}).items():
        for index, text in enumerate(item if isinstance(item, list) else [item]):
            try:
                environment.add_template(f"{key}.{index}", text)
            except minijinja.TemplateError as exc:
                message = str(getattr(exc, "message", None) or str(exc).splitlines()[0])
                raise EngineError(
                    f"{path}: {where}.{key}: not a valid format ({message}); write "
                    "properties as {name}"
                ) from None


def _translation(path: Path, where: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise EngineError(f"{path}: {where}: expected a table, found {type(value).__name__}")
    kind = _tag(path, where, value, TRANSLATIONS)
    if kind == "FormalTriplet":
        check_keys(
            path, where, value, ("type", "property_filters", "relationship_property_filters")
        )
        for key in ("property_filters", "relationship_property_filters"):
            _string_map(path, f"{where}.{key}", value.get(key), lists=True, required=False)
        return
    check_keys(path, where, value, ("type", "node_formats", "property_formats", "relation_formats"))
    for key, lists in (
        ("node_formats", False),
        ("property_formats", True),
        ("relation_formats", False),
    ):
        _string_map(path, f"{where}.{key}", value.get(key), lists=lists, required=True)
        _check_formats(path, f"{where}.{key}", value.get(key))


def _extra(path: Path, where: str, value: Any) -> tuple[str, ...]:
    """`extra`: database name -> its Neo4j settings; the names, checked."""
    if not isinstance(value, dict):
        raise EngineError(f"{path}: {where}: expected a table, found {type(value).__name__}")
    for database, settings in value.items():
        at = f"{where}.{database}"
        if not is_component_name(database):
            raise EngineError(f"{path}: {at}: expected a database's name")
        if not isinstance(settings, dict):
            raise EngineError(f"{path}: {at}: expected a table of settings")
        _tag(path, at, settings, DATABASE_TYPES)
        check_keys(path, at, settings, ("type", "index", "neighborhood", "translation"))
        if string(path, at, settings, "index") is None:
            raise EngineError(f"{path}: {at}: missing `index`, the Neo4j vector index to query")
        integer(path, at, settings, "neighborhood", 1, 0)
        if "translation" in settings:
            _translation(path, f"{at}.translation", settings["translation"])
    return tuple(value)


def kag_retriever(path: Path, name: str, body: dict[str, Any]) -> Retriever:
    where = f"retrievers.{name}"
    _tag(path, where, body, RETRIEVER_TYPES)
    check_keys(path, where, body, ("type", "provider", "model", "top_k", "extra"))
    provider = body.get("provider")
    if not is_component_name(provider):
        raise EngineError(
            f"{path}: {where}.provider: expected a provider's name, found {provider!r}"
        )
    model = string(path, where, body, "model")
    if model is None:
        raise EngineError(f"{path}: {where}: missing `model`, the embedding model")
    top_k = integer(path, where, body, "top_k", 5, 0)
    extra = _extra(path, f"{where}.extra", body.get("extra", {}))
    settings = (("provider", provider), ("model", model), ("extra", extra))
    return Retriever(name, "Embedder", top_k, settings)


def untyped_retriever_error(path: Path, source: str, name: str, known: list[str]) -> EngineError:
    """A retriever table without `type` (kag refuses it: a missing tag), naming the table
    that made it: often a sub-table such as [retrievers.NAME.extra.neo4j] whose NAME is not
    the retriever meant."""
    import re

    header = re.compile(
        r"^\s*\[\s*retrievers\s*\.\s*" + re.escape(name) + r"((?:\s*\.\s*[A-Za-z0-9_-]+)*)\s*\]",
        re.MULTILINE,
    )
    match = header.search(source)
    table = "retrievers." + name + re.sub(r"\s+", "", match.group(1)) if match else None
    shown = f"[{table}]" if table else f"[retrievers.{name}]"
    hint = did_you_mean(name, known)
    return EngineError(
        f"{path}: {shown} makes a retriever {name!r} without `type` (kag refuses it too); "
        f"name an existing retriever in the table{hint}, or give {name!r} "
        f'type = "Embedder" (kag\'s) or "bm25", "dense", "hybrid"; known: {one_of(known)}'
    )
