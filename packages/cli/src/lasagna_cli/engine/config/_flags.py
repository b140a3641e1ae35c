"""`benchmark run PATH`: one benchmark and one setup from the command's flags, and the checks
every run configuration shares (tracks, filters, retriever settings, setup names).

A sweep file (`_sweepfile`) takes these flags as the defaults of what it leaves out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import EngineUsageError, did_you_mean, quoted
from lasagna_cli.engine.config._config import (
    DATA_FORMATS,
    DEFAULT_SEED,
    DEFAULT_TOP_K,
    JUDGE_MAX_CHARS,
    RETRIEVER_KINDS,
    TRACK_NAMES,
    BenchmarkEntry,
    ChunkingSpec,
    ModelSpec,
    RetrieverSpec,
    RunConfig,
    Setup,
)

if TYPE_CHECKING:
    from lasagna_cli.engine.systems import SystemSpec

PROFILES = ("speed",)
_SETUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
RETRIEVER_KEYS = (
    "kind",
    "top_k",
    "k1",
    "b",
    "variant",
    "stemmer",
    "stopwords",
    "embedder",
    "dimensions",
    "store",
    "collection",
    "rrf_k",
    "weights",
)


def usage(message: str) -> EngineUsageError:
    return EngineUsageError(message)


@dataclass(frozen=True)
class Flags:
    """The command's flags, the defaults of a sweep file's values."""

    profile: str = "speed"
    tracks: tuple[str, ...] | None = None
    generator: str | None = None
    judge: str | None = None
    jury: tuple[str, ...] = ()
    """The judges after the first (`--judge` given more than once)."""
    rubric: str = "binary"
    judge_max_chars: int = JUDGE_MAX_CHARS
    diagnostics: bool = False
    """--diagnostics: the judge's claim-level diagnosis of each generated answer."""
    n_samples: int | None = None
    seed: int = DEFAULT_SEED
    split: str = "test"
    split_given: bool = True
    """False when --split was left at its default: a registered benchmark in a sweep file
    then runs its own default split (SQuAD and Qasper have no "test")."""
    top_k: int = DEFAULT_TOP_K
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    concurrency: int | None = None
    """None: the caller's default (see `RunConfig.concurrency`)."""
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    drop_unknown_judgments: bool = False
    data_format: str | None = None
    """--data-format: how the data file is read (lasagna, ragas, deepeval, hf)."""
    system: SystemSpec | None = None
    """The system --system or --predictions names, if any."""
    retriever: str = "bm25"
    embedder: str | None = None
    vector_store: str | None = None
    collection: str | None = None
    corpus: Path | None = None
    """--corpus: the folder of documents the questions were written from."""
    chunking: ChunkingSpec = field(default_factory=ChunkingSpec)
    """--chunker, --chunk-size, --chunk-overlap: how that folder is cut."""

    def base_retriever(self) -> RetrieverSpec:
        """The retriever the flags ask for, checked."""
        return flag_retriever(
            self.top_k, self.retriever, self.embedder, self.vector_store, self.collection
        )


def check_data_format(value: str | None, *, output_format: str | None = None) -> None:
    """--data-format names one of DATA_FORMATS; a data format given to run's --format (the
    output's) is pointed to --data-format, and any other but text or json refused."""
    if output_format in DATA_FORMATS:
        raise usage(
            f"--format: is the output's (text or json); to read the data as {output_format}, "
            f"give --data-format {output_format}"
        )
    if value is not None and value not in DATA_FORMATS:
        raise usage(
            f"--data-format: expected one of {', '.join(DATA_FORMATS)}, found {value!r}"
            f"{did_you_mean(value, DATA_FORMATS)}"
        )
    if output_format is not None and output_format not in ("text", "json"):
        raise usage(f"--format: expected text or json, found {output_format!r}")


def parse_tracks(value: str | Sequence[object], where: str) -> tuple[str, ...]:
    items = [t.strip() for t in value.split(",")] if isinstance(value, str) else list(value)
    tracks: list[str] = []
    for item in items:
        if not isinstance(item, str) or item not in TRACK_NAMES:
            hint = did_you_mean(str(item), TRACK_NAMES)
            raise usage(
                f'{where}: unknown track "{item}"{hint}; the tracks are {", ".join(TRACK_NAMES)}'
            )
        if item not in tracks:
            tracks.append(item)
    if not tracks:
        raise usage(f"{where}: name at least one track ({', '.join(TRACK_NAMES)})")
    return tuple(tracks)


def parse_filter_flags(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """`--filter key=value`, repeatable; several values for one key match any of them."""
    filters: dict[str, tuple[str, ...]] = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key.strip():
            raise usage(
                f'--filter: expected key=value, e.g. --filter question_type=multihop; got "{value}"'
            )
        filters[key.strip()] = (*filters.get(key.strip(), ()), wanted.strip())
    return filters


def check_positive(value: object, where: str, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise usage(f"{where}: expected a whole number >= 1, got {quoted(value)}")
    return value


def check_keys(mapping: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            raise usage(
                f'{where}: unknown key "{key}"{did_you_mean(str(key), known)}; the keys are '
                f"{', '.join(known)}"
            )


def mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise usage(f"{where}: expected a mapping of keys to values, got {type(value).__name__}")
    return value


#: The command-line flags of a retriever's settings: errors about them name the flag.
RETRIEVER_FLAGS = {
    "kind": "--retriever",
    "embedder": "--embedder",
    "store": "--vector-store",
    "collection": "--collection",
}


def flag_retriever(
    top_k: int,
    kind: str,
    embedder: str | None = None,
    store: str | None = None,
    collection: str | None = None,
) -> RetrieverSpec:
    """The retriever `--top-k`, `--retriever`, `--embedder`, `--vector-store` and
    `--collection` ask for (the run's and the staged pipeline's), checked."""
    values: dict[str, Any] = {"top_k": top_k, "kind": kind}
    for key, value in (("embedder", embedder), ("store", store), ("collection", collection)):
        if value is not None:
            values[key] = value
    return retriever_spec(values, "--retriever", RetrieverSpec(), flags=RETRIEVER_FLAGS)


def retriever_spec(
    values: Mapping[str, Any],
    where: str,
    base: RetrieverSpec,
    *,
    flags: Mapping[str, str] | None = None,
) -> RetrieverSpec:
    """A retriever's settings checked; `flags` names the command-line flag of each setting
    that came from one (else errors name `where.key`)."""
    check_keys(values, RETRIEVER_KEYS, where)
    if "kind" in values and values["kind"] != base.kind:  # another kind keeps only top_k
        base = RetrieverSpec(top_k=base.top_k)
    spec = replace(base, **values)
    check_positive(spec.top_k, f"{where}.top_k")
    for key in ("k1", "b"):
        number = getattr(spec, key)
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not math.isfinite(number)
        ):
            raise usage(f"{where}.{key}: expected a number, got {quoted(number)}")
    if not spec.k1 >= 0 or not 0 <= spec.b <= 1:
        raise usage(f"{where}: BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={spec.k1}, b={spec.b}")
    if spec.variant not in ("lucene", "okapi"):
        raise usage(f'{where}.variant: expected "lucene" or "okapi", got {quoted(spec.variant)}')
    if spec.stopwords not in ("lucene-english", "none"):
        raise usage(
            f'{where}.stopwords: expected "lucene-english" or "none", got {quoted(spec.stopwords)}'
        )
    if not isinstance(spec.stemmer, str):
        raise usage(
            f"{where}.stemmer: expected a language name or none, got {quoted(spec.stemmer)}"
        )
    _check_stemmer(spec.stemmer, f"{where}.stemmer")
    spec = replace(spec, k1=float(spec.k1), b=float(spec.b))
    return _vector_settings(spec, where, flags or {})


def _vector_settings(spec: RetrieverSpec, where: str, flags: Mapping[str, str]) -> RetrieverSpec:
    """The dense and hybrid settings checked; a dense retriever without an embedder gets
    the one that needs no key, no server and no download."""

    def named(key: str) -> str:
        return flags.get(key) or f"{where}.{key}"

    if spec.kind not in RETRIEVER_KINDS:
        raise usage(
            f'{named("kind")}: unknown retriever "{spec.kind}"'
            f"{did_you_mean(str(spec.kind), RETRIEVER_KINDS)}; use {', '.join(RETRIEVER_KINDS)}"
        )
    if not spec.uses_vectors:
        given = [k for k in ("embedder", "dimensions", "store", "collection") if getattr(spec, k)]
        if given:
            kind = "--retriever dense" if "kind" in flags else "kind: dense"
            raise usage(
                f"{named(given[0])}: is a setting of a dense or hybrid retriever; add {kind} "
                "(or hybrid), or drop it"
            )
        return spec
    from lasagna_judge import DEFAULT_EMBEDDER, JudgeError, parse_embedder

    embedder = spec.embedder or DEFAULT_EMBEDDER
    try:
        parse_embedder(embedder)
    except JudgeError as exc:
        raise usage(f"{named('embedder')}: {exc}") from None
    check_positive(spec.dimensions, named("dimensions"), allow_none=True)
    check_positive(spec.rrf_k, named("rrf_k"))
    weights = spec.weights
    if (
        not isinstance(weights, list | tuple)
        or len(weights) != 2
        or not all(isinstance(w, int | float) and not isinstance(w, bool) for w in weights)
        or not all(math.isfinite(w) and w >= 0 for w in weights)
        or not any(weights)
    ):
        raise usage(
            f"{named('weights')}: expected [BM25 weight, dense weight], two numbers >= 0 "
            f"(not both 0), got {quoted(weights)}"
        )
    for key in ("store", "collection"):
        value = getattr(spec, key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise usage(f"{named(key)}: expected a text, got {quoted(value)}")
    if spec.store is not None and not spec.store.startswith(("http://", "https://")):
        raise usage(
            f"{named('store')}: expected the vector database's http:// or https:// URL "
            f"(Chroma's server, e.g. http://127.0.0.1:8000), got {quoted(spec.store)}"
        )
    if spec.collection is not None and spec.store is None:
        raise usage(
            f"{named('collection')}: names a collection of a vector database; give "
            f"{flags.get('store', 'store')} too"
        )
    return replace(spec, embedder=embedder, weights=(float(weights[0]), float(weights[1])))


def _check_stemmer(stemmer: str, where: str) -> None:
    if stemmer == "none":
        return
    from lasagna_cli.engine.retrieval._bm25 import stemmer_languages

    languages = stemmer_languages()
    if stemmer not in languages:
        raise usage(
            f'{where}: unknown stemmer "{stemmer}"{did_you_mean(stemmer, languages)}; '
            f"use none or one of {', '.join(languages)}"
        )


def check_setup_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not _SETUP_NAME.match(name):
        raise usage(
            f"{where}: a setup name is letters, digits, dots, hyphens and underscores "
            f"(it names a folder), got {quoted(name)}"
        )
    return name


def check_diagnostics(diagnostics: object, judge: str | None, where: str) -> bool:
    """Claim diagnostics are the judge's work: asked for without one, a usage error."""
    if not isinstance(diagnostics, bool):
        raise usage(f"{where}: expected true or false, got {quoted(diagnostics)}")
    if diagnostics and judge is None:
        raise usage(
            f"{where} needs a judge: it extracts and checks the claims; add --judge MODEL "
            "(or `judge:` in a sweep file)"
        )
    return diagnostics


def default_setup_name(flags: Flags) -> str:
    name = f"{flags.retriever}-k{flags.top_k}"
    if flags.generator:
        name += "+" + re.sub(r"[^A-Za-z0-9._-]+", "-", flags.generator).strip("-")
    return name


def config_from_path(path: str, flags: Flags) -> RunConfig:
    """One benchmark (a data file or BEIR folder) and one setup, from the flags."""
    check_profile(flags.profile, "--profile")
    check_positive(flags.top_k, "--top-k")
    if flags.system is not None:
        setup = system_setup(flags.system, None, flags.generator, flags.tracks, flags.top_k)
    else:
        setup = Setup(
            name=default_setup_name(flags),
            retriever=flags.base_retriever(),
            generator=ModelSpec(flags.generator) if flags.generator else None,
            tracks=flags.tracks,
            chunking=flags.chunking,
        )
    entry = BenchmarkEntry(
        where=path,
        path=Path(path),
        n_samples=check_positive(flags.n_samples, "-n", allow_none=True),
        split=flags.split,
        filters=dict(flags.filters),
        drop_unknown_judgments=flags.drop_unknown_judgments,
        data_format=flags.data_format,
        corpus=flags.corpus,
    )
    return RunConfig(
        benchmarks=(entry,),
        setups=(setup,),
        judge=flags.judge,
        jury=tuple(ModelSpec(name) for name in flags.jury),
        rubric=flags.rubric,
        seed=flags.seed,
        profile=flags.profile,
        concurrency=check_positive(flags.concurrency, "--concurrency", allow_none=True),
        judge_max_chars=flags.judge_max_chars,
        diagnostics=check_diagnostics(flags.diagnostics, flags.judge, "--diagnostics"),
        requests_per_minute=flags.requests_per_minute,
        tokens_per_minute=flags.tokens_per_minute,
        source=path,
    )


def system_setup(
    system: SystemSpec,
    name: str | None,
    generator: str | None,
    tracks: tuple[str, ...] | None,
    top_k: int,
    where: str = "--system",
) -> Setup:
    """A setup whose answers and rankings come from the user's system."""
    from lasagna_cli.engine.systems import default_setup_name as system_name

    if generator is not None:
        raise usage(
            f"{where}: a system answers by itself; --generator (or `generator:`) is for the "
            "built-in BM25 setup. To compare both, list two setups in a sweep file"
        )
    if tracks is not None and "closed-book" in tracks:
        raise usage(
            f"{where}: closed-book is the built-in generator without passages; a system is "
            "measured on the retrieval and generation tracks"
        )
    return Setup(
        name=name or system_name(system),
        retriever=retriever_spec({}, f"{where}: top_k", RetrieverSpec(top_k=top_k)),
        generator=None,
        tracks=tracks,
        system=system,
    )


def check_profile(profile: object, where: str) -> None:
    if profile not in PROFILES:
        raise usage(
            f'{where}: unknown profile "{profile}"{did_you_mean(str(profile), PROFILES)}; '
            f"the profiles are {', '.join(PROFILES)} (BM25 retrieval, no model or key needed)"
        )
