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

Providers named openai, anthropic, ollama and local exist without a config file
(OPENAI_API_KEY and ANTHROPIC_API_KEY are their key variables); a config entry of the same
name replaces the built-in one.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lasagna_cli.engine._config import BUILTIN_PROVIDERS, DEFAULT_TOP_K, DatabaseSpec, ProviderSpec
from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.kag._names import is_component_name, one_of, suggest_name

APIS = ("openai", "anthropic", "ollama", "local")
CHUNKERS = ("fixed", "sentences")
RETRIEVER_TYPES = ("bm25", "dense", "hybrid")
DATABASE_TYPES = ("text", "vector")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Retriever:
    name: str
    type: str
    top_k: int
    settings: tuple[tuple[str, Any], ...] = ()
    """dense and hybrid: embedder, rrf_k, weights, as given."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "top_k": self.top_k, **dict(self.settings)}


@dataclass(frozen=True, slots=True)
class Config:
    path: Path | None
    providers: dict[str, ProviderSpec] = field(default_factory=dict)
    databases: dict[str, DatabaseSpec] = field(default_factory=dict)
    retrievers: dict[str, Retriever] = field(default_factory=dict)


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


def _check_keys(path: Path, where: str, body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in body:
        if key not in allowed:
            raise EngineError(
                f"{path}: {where}: unknown key {key!r}{did_you_mean(key, allowed)}; "
                f"expected one of {', '.join(allowed)}"
            )


def _string(path: Path, where: str, body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise EngineError(f"{path}: {where}.{key}: expected a non-empty string, found {value!r}")
    return value


def _provider(path: Path, name: str, body: dict[str, Any]) -> ProviderSpec:
    where = f"providers.{name}"
    _check_keys(path, where, body, ("api", "base_url", "api_key_env"))
    api = _string(path, where, body, "api") or (name if name in APIS else "openai")
    if api not in APIS:
        raise EngineError(
            f"{path}: {where}.api: expected one of {', '.join(APIS)}, found {api!r}"
            f"{did_you_mean(api, APIS)}"
        )
    key_env = _string(path, where, body, "api_key_env")
    if key_env is not None and not _ENV_NAME.match(key_env):
        # Most likely a key pasted where its variable's name belongs: never echo it.
        raise EngineError(
            f"{path}: {where}.api_key_env: expected the NAME of an environment variable "
            "(e.g. OPENAI_API_KEY), found something else; put the key itself in the "
            "environment, never in a file"
        )
    base_url = _string(path, where, body, "base_url")
    if base_url is not None and urlsplit(base_url).scheme not in ("http", "https"):
        raise EngineError(f"{path}: {where}.base_url: expected an http(s) URL, found {base_url!r}")
    return ProviderSpec(name, api, base_url, key_env)


def _database(path: Path, name: str, body: dict[str, Any]) -> DatabaseSpec:
    where = f"databases.{name}"
    _check_keys(
        path,
        where,
        body,
        ("documents", "beir", "chunker", "chunk_words", "type", "embedder", "store", "collection"),
    )
    documents = _string(path, where, body, "documents")
    beir = _string(path, where, body, "beir")
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
    chunker = _string(path, where, body, "chunker") or "fixed"
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
    kind = _string(path, where, body, "type") or "text"
    if kind not in DATABASE_TYPES:
        raise EngineError(
            f"{path}: {where}.type: expected one of {one_of(DATABASE_TYPES)}, found {kind!r}"
        )
    vector = {k: _string(path, where, body, k) for k in ("embedder", "store", "collection")}
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
    _check_keys(path, where, body, ("type", "top_k", "embedder", "rrf_k", "weights"))
    kind = _string(path, where, body, "type") or "bm25"
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


def load_config(path: Path | None) -> Config:
    """The config at `path`, or only the built-in providers when `path` is None."""
    if path is None:
        return Config(None, dict(BUILTIN_PROVIDERS))
    try:
        data = tomllib.loads(read_text_file(path, "config file"))
    except tomllib.TOMLDecodeError as exc:
        raise EngineError(f"{path}: not valid TOML ({exc}); fix the file") from None
    _check_keys(path, "top level", data, ("providers", "databases", "retrievers"))
    providers = dict(BUILTIN_PROVIDERS)
    for name, body in _table(path, data, "providers").items():
        providers[name] = _provider(path, name, body)
    databases = {n: _database(path, n, b) for n, b in _table(path, data, "databases").items()}
    retrievers = {n: _retriever(path, n, b) for n, b in _table(path, data, "retrievers").items()}
    return Config(path, providers, databases, retrievers)
