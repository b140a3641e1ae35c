"""config.toml: the providers, databases and retrievers that setups name.

    [providers.openrouter]          # a setup says provider = "openrouter"
    api = "openai"              # openai (any OpenAI-compatible server), anthropic, ollama, local
    base_url = "https://openrouter.ai/api/v1"
    api_key_env = "OPENROUTER_API_KEY"   # the NAME of the variable holding the key, never the key

    [databases.handbook]
    documents = "docs"              # a folder of documents, chunked (relative to this file)
    chunker = "fixed"               # or "sentences"; chunk_words = 200
    [databases.scifact]
    beir = "beir/scifact"           # a BEIR folder: its corpus.jsonl is the database

    [databases.handbook-vectors]
    documents = "docs"
    type = "vector"                 # searched by embeddings (dense and hybrid retrievers)
    embedder = "local/wordllama"    # the default; or openai/..., ollama/...
    # store = "http://127.0.0.1:8000"   # a Chroma server instead of the in-process index
    # collection = "handbook"           # an existing collection, used as it is

    [retrievers.bm25-top5]
    type = "bm25"                   # or "dense", or "hybrid" (rrf_k = 60, weights = [1, 1])
    top_k = 5

kag's own entries are read as kag reads them (below, "kag's entries"): providers `type = "Ollama"`
(`url`) and `type = "OpenAI"` (`url`, `key`), databases `type = "Neo4j"`, retrievers
`type = "Embedder"` with `extra`. The file is rendered with MiniJinja first (`file()`,
`env()`, as kag's) and parsed as TOML 1.1 (multi-line inline tables), as kag's parser does.

Providers named openai, anthropic, ollama and local exist without a config file
(OPENAI_API_KEY and ANTHROPIC_API_KEY are their key variables); a config entry of the same
name replaces the built-in one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lasagna_cli.engine._errors import EngineError, did_you_mean
from lasagna_cli.engine.config._config import (
    BUILTIN_PROVIDERS,
    DEFAULT_TOP_K,
    DatabaseSpec,
    ProviderSpec,
)
from lasagna_cli.engine.kag._files import (
    is_component_name,
    one_of,
    parse_toml,
    read_text_file,
    render_template_file,
    suggest_name,
)
from lasagna_cli.engine.run._rate_share import check_rate

# -- entries ----------------------------------------------------------------------------------
#
# What config.toml's entries become, and the checks every entry shares.


@dataclass(frozen=True, slots=True)
class Retriever:
    name: str
    type: str
    """bm25, dense, hybrid (lasagna's), or Embedder (kag's: it searches Neo4j)."""
    top_k: int
    settings: tuple[tuple[str, Any], ...] = ()
    """dense and hybrid: embedder, rrf_k, weights, as given; Embedder: provider, model,
    and `extra`, the names of the databases it has Neo4j settings for."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "top_k": self.top_k, **dict(self.settings)}

    @property
    def extra(self) -> tuple[str, ...]:
        return tuple(dict(self.settings).get("extra", ()))


@dataclass(frozen=True, slots=True)
class GraphDatabase:
    """kag's `type = "Neo4j"` database; its password is not kept."""

    name: str
    uri: str
    user: str
    database: str


def check_keys(path: Path, where: str, body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in body:
        if key not in allowed:
            raise EngineError(
                f"{path}: {where}: unknown key {key!r}{did_you_mean(key, allowed)}; "
                f"expected one of {', '.join(allowed)}"
            )


def string(path: Path, where: str, body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise EngineError(f"{path}: {where}.{key}: expected a non-empty string, found {value!r}")
    return value


def integer(path: Path, where: str, body: dict[str, Any], key: str, default: int, low: int) -> int:
    value = body.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise EngineError(f"{path}: {where}.{key}: expected an integer >= {low}, found {value!r}")
    return value


# -- kag's entries ----------------------------------------------------------------------------
#
# config.toml entries in kag's own shape, checked as kag's serde types check them.
#
#     [providers.ollama]              # type = "Ollama": url (default http://localhost:11434)
#     [providers.openai]              # type = "OpenAI": url (default OpenAI's), key (required)
#     [databases.neo4j]               # type = "Neo4j": uri, user, password (required), database
#     [retrievers.NAME]               # type = "Embedder": provider, model, top_k = 5, extra
#     extra.neo4j = { type = "Neo4j", index = "...", neighborhood = 1, translation = {...} }
#
# Tags are case-sensitive, as kag's. An Ollama provider is spoken to through Ollama's native
# /api/chat, an OpenAI one through the Responses API, as kag's (rig's) clients do. Neo4j
# cannot be reached from lasagna: its databases and Embedder retrievers are read and checked
# so the file loads, and the setups that use them are recorded as failed (`_setups`).


PROVIDER_TYPES = ("Ollama", "OpenAI")
KAG_DATABASE_TYPES = ("Neo4j",)
KAG_RETRIEVER_TYPES = ("Embedder",)
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
    _tag(path, where, body, KAG_DATABASE_TYPES)
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
        _tag(path, at, settings, KAG_DATABASE_TYPES)
        check_keys(path, at, settings, ("type", "index", "neighborhood", "translation"))
        if string(path, at, settings, "index") is None:
            raise EngineError(f"{path}: {at}: missing `index`, the Neo4j vector index to query")
        integer(path, at, settings, "neighborhood", 1, 0)
        if "translation" in settings:
            _translation(path, f"{at}.translation", settings["translation"])
    return tuple(value)


def kag_retriever(path: Path, name: str, body: dict[str, Any]) -> Retriever:
    where = f"retrievers.{name}"
    _tag(path, where, body, KAG_RETRIEVER_TYPES)
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


APIS = ("openai", "anthropic", "ollama", "local")
CHUNKERS = ("fixed", "sentences")
RETRIEVER_TYPES = ("bm25", "dense", "hybrid")
DATABASE_TYPES = ("text", "vector")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Config:
    path: Path | None
    providers: dict[str, ProviderSpec] = field(default_factory=dict)
    databases: dict[str, DatabaseSpec] = field(default_factory=dict)
    retrievers: dict[str, Retriever] = field(default_factory=dict)
    graphs: dict[str, GraphDatabase] = field(default_factory=dict)
    """kag's `type = "Neo4j"` databases (lasagna cannot reach one: see `_setups`)."""


def _table(path: Path, data: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    tables = data.get(section, {})
    if not isinstance(tables, dict):
        raise EngineError(
            f"{path}: expected [{section}.NAME] tables, found a {type(tables).__name__}"
        )
    for name, body in tables.items():
        if not is_component_name(name):
            raise EngineError(
                f"{path}: [{section}.{name}]: expected a component name (lowercase letters, "
                f"digits and hyphens), e.g. {suggest_name(name)!r}"
            )
        if not isinstance(body, dict):
            raise EngineError(f"{path}: {section}.{name}: expected a table of settings")
    return tables


def _provider(path: Path, name: str, body: dict[str, Any]) -> ProviderSpec:
    where = f"providers.{name}"
    check_keys(path, where, body, ("api", "base_url", "api_key_env", *RATE_KEYS))
    api = string(path, where, body, "api") or (name if name in APIS else "openai")
    if api not in APIS:
        raise EngineError(
            f"{path}: {where}.api: expected one of {', '.join(APIS)}, found {api!r}"
            f"{did_you_mean(api, APIS)}"
        )
    key_env = string(path, where, body, "api_key_env")
    if key_env is not None and not _ENV_NAME.match(key_env):
        # Most likely a key pasted where its variable's name belongs: never echo it.
        raise EngineError(
            f"{path}: {where}.api_key_env: expected the NAME of an environment variable "
            "(e.g. OPENAI_API_KEY), found something else; put the key itself in the "
            "environment, never in a file"
        )
    base_url = string(path, where, body, "base_url")
    if base_url is not None and urlsplit(base_url).scheme not in ("http", "https"):
        raise EngineError(f"{path}: {where}.base_url: expected an http(s) URL, found {base_url!r}")
    rpm, tpm = rate_keys(f"{path}: {where}", body)
    return ProviderSpec(
        name, api, base_url, key_env, requests_per_minute=rpm, tokens_per_minute=tpm
    )


def _database(path: Path, name: str, body: dict[str, Any]) -> DatabaseSpec:
    where = f"databases.{name}"
    check_keys(
        path,
        where,
        body,
        ("documents", "beir", "chunker", "chunk_words", "type", "embedder", "store", "collection"),
    )
    documents = string(path, where, body, "documents")
    beir = string(path, where, body, "beir")
    if (documents is None) == (beir is None):
        raise EngineError(
            f'{path}: {where}: expected exactly one of `documents = "FOLDER"` (documents to '
            'chunk) or `beir = "FOLDER"` (a BEIR corpus)'
        )
    folder = (path.parent / (documents or beir or "")).resolve()
    if not folder.is_dir():
        raise EngineError(
            f"{path}: {where}: folder not found: {folder} (paths are relative to the config file)"
        )
    chunker = string(path, where, body, "chunker") or "fixed"
    if chunker not in CHUNKERS:
        raise EngineError(
            f"{path}: {where}.chunker: expected one of {', '.join(CHUNKERS)}, found {chunker!r}"
            f"{did_you_mean(chunker, CHUNKERS)}"
        )
    words = body.get("chunk_words", 200)
    if not isinstance(words, int) or isinstance(words, bool) or words < 20:
        raise EngineError(
            f"{path}: {where}.chunk_words: expected an integer >= 20, found {words!r}"
        )
    if beir is not None and ("chunker" in body or "chunk_words" in body):
        raise EngineError(
            f"{path}: {where}: a BEIR corpus is already split into documents; remove chunker "
            "and chunk_words"
        )
    kind = string(path, where, body, "type") or "text"
    if kind not in DATABASE_TYPES:
        raise EngineError(
            f"{path}: {where}.type: expected one of {one_of(DATABASE_TYPES)}, found {kind!r}"
        )
    vector = {k: string(path, where, body, k) for k in ("embedder", "store", "collection")}
    given = [k for k, v in vector.items() if v is not None]
    if kind != "vector" and given:
        raise EngineError(
            f'{path}: {where}.{given[0]}: is a setting of a vector database; add type = "vector"'
        )
    return DatabaseSpec(
        name,
        "documents" if documents else "beir",
        folder,
        chunker,
        words,
        vector=kind == "vector",
        **vector,
    )


def _retriever(path: Path, name: str, body: dict[str, Any]) -> Retriever:
    where = f"retrievers.{name}"
    check_keys(path, where, body, ("type", "top_k", "embedder", "rrf_k", "weights"))
    kind = string(path, where, body, "type") or "bm25"
    if kind not in RETRIEVER_TYPES:
        raise EngineError(
            f"{path}: {where}.type: expected one of {one_of(RETRIEVER_TYPES)}, found {kind!r}"
        )
    top_k = body.get("top_k", DEFAULT_TOP_K)
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 1000:
        raise EngineError(
            f"{path}: {where}.top_k: expected an integer from 1 to 1000, found {top_k!r}"
        )
    settings = tuple((k, body[k]) for k in ("embedder", "rrf_k", "weights") if k in body)
    if settings and kind == "bm25":
        raise EngineError(
            f"{path}: {where}.{settings[0][0]}: is a setting of a dense or hybrid retriever; "
            'set type = "dense" or "hybrid"'
        )
    return Retriever(name, kind, top_k, settings)


def _is_kags(
    path: Path, where: str, body: dict[str, Any], ours: tuple[str, ...], kags: tuple[str, ...]
) -> bool:
    """Whether an entry is in kag's shape (its `type` one of kag's tags, in any case: a
    wrong case is then refused naming kag's spelling), else lasagna's."""
    kind = body.get("type")
    if kind is None or kind in ours:
        return False
    if isinstance(kind, str) and kind.lower() in {t.lower() for t in kags}:
        return True
    choices = (*ours, *kags)
    raise EngineError(
        f"{path}: {where}.type: expected one of {', '.join(choices)} (kag's), found "
        f"{kind!r}{did_you_mean(str(kind), choices)}"
    )


def load_config(
    path: Path | None,
    environ: Mapping[str, str] | None = None,
    folders: Collection[Path] = (),
) -> Config:
    """The config at `path`, or only the built-in providers when `path` is None. The file
    is rendered with MiniJinja first, as kag's: `file()` (inside the working directory and
    `folders`), `env()` from `environ` (none when None)."""
    if path is None:
        return Config(None, dict(BUILTIN_PROVIDERS))
    source = read_text_file(path, "config file")
    secrets: dict[str, str] = {}
    text = render_template_file(source, path, environ or {}, folders=folders, secrets=secrets)
    data = parse_toml(text, path, " after rendering" if text != source else "")
    check_keys(path, "top level", data, ("providers", "databases", "retrievers"))
    _check_secrets(path, data, secrets)
    providers = dict(BUILTIN_PROVIDERS)
    for name, body in _table(path, data, "providers").items():
        providers[name] = (
            kag_provider(path, name, body) if "type" in body else _provider(path, name, body)
        )
    databases: dict[str, DatabaseSpec] = {}
    graphs: dict[str, GraphDatabase] = {}
    for name, body in _table(path, data, "databases").items():
        if _is_kags(path, f"databases.{name}", body, DATABASE_TYPES, KAG_DATABASE_TYPES):
            graphs[name] = kag_database(path, name, body)
        else:
            databases[name] = _database(path, name, body)
    retrievers: dict[str, Retriever] = {}
    tables = _table(path, data, "retrievers")
    for name, body in tables.items():
        if "type" not in body and "extra" in body:
            typed = [n for n, b in tables.items() if "type" in b]
            raise untyped_retriever_error(path, source, name, typed)
        if _is_kags(path, f"retrievers.{name}", body, RETRIEVER_TYPES, KAG_RETRIEVER_TYPES):
            retrievers[name] = kag_retriever(path, name, body)
        else:
            retrievers[name] = _retriever(path, name, body)
    return Config(path, providers, databases, retrievers, graphs)


# Where a secret read by env() may sit in config.toml: a key or a password, never recorded.
_SECRET_PLACES = (("providers", "key"), ("databases", "password"))


def _check_secrets(path: Path, data: dict[str, Any], secrets: dict[str, str]) -> None:
    """A key-like variable's value only as a provider's key or a database's password:
    anywhere else (a URL, a model name) it would be recorded in result files."""
    if not secrets:
        return

    def walk(value: Any, where: tuple[str, ...]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*where, str(key)))
        elif isinstance(value, list):
            for item in value:
                walk(item, where)
        elif isinstance(value, str) and (where[0], where[-1]) not in _SECRET_PLACES:
            for name, secret in secrets.items():
                if secret in value:
                    raise EngineError(
                        f"{path}: {'.'.join(where)}: holds the value of env({name!r}), a secret "
                        "that would be recorded in result files; secrets go only in a "
                        "provider's `key` or a database's `password`"
                    )

    walk(data, ())
