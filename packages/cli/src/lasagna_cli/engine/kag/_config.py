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

kag's own entries are read as kag reads them (`_kag_entries`): providers `type = "Ollama"`
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

from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.config._config import (
    BUILTIN_PROVIDERS,
    DEFAULT_TOP_K,
    DatabaseSpec,
    ProviderSpec,
)
from lasagna_cli.engine.kag._entries import GraphDatabase, Retriever, check_keys, string
from lasagna_cli.engine.kag._kag_entries import (
    DATABASE_TYPES as KAG_DATABASE_TYPES,
)
from lasagna_cli.engine.kag._kag_entries import (
    RATE_KEYS,
    kag_database,
    kag_provider,
    kag_retriever,
    rate_keys,
    untyped_retriever_error,
)
from lasagna_cli.engine.kag._kag_entries import (
    RETRIEVER_TYPES as KAG_RETRIEVER_TYPES,
)
from lasagna_cli.engine.kag._names import is_component_name, one_of, suggest_name
from lasagna_cli.engine.kag._templates import render_template_file

__all__ = ["Config", "GraphDatabase", "Retriever", "load_config", "read_text_file"]

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


def parse_toml(text: str, path: Path, what: str = "") -> dict[str, Any]:
    """TOML 1.1, as kag's parser reads it (multi-line inline tables, trailing commas)."""
    import tomli

    from lasagna_judge import TomlError, load_toml

    try:
        return load_toml(text, loads=tomli.loads)
    except TomlError as exc:
        raise EngineError(f"{path}: not valid TOML{what} ({exc}); fix the file") from None


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
