"""What a `lasagna benchmark run` measures: benchmarks x setups, from flags or a sweep file.

`lasagna benchmark run PATH` makes one benchmark and one setup from the flags. A sweep file
(YAML or TOML) lists several:

    benchmarks:                      # each by `path:` (relative to this file's folder)
      - path: data/pasta.jsonl       #   and/or `name:` (the name it is registered under)
        n_samples: 10
        split: test
        filters: {question_type: multihop}
        setups: [bm25-k3]            # optional: only these setups on this benchmark
      - path: data/pasta-beir
      - name: locomo                 # a registered public benchmark (`lasagna benchmark
        data_dir: data/locomo        #   list`): its raw files, relative to this file's
        filters: {category: "2"}     #   folder; split: the benchmark's default unless given
    setups:                          # the setups to compare (default: one from the flags)
      - name: bm25-k3
        retriever: {top_k: 3}
      - name: bm25-k10-no-stem
        retriever: {top_k: 10, stemmer: none}
      - name: rag-smollm2
        generator: local/smollm2
        tracks: [retrieval, generation]
      - name: my-rag                 # your own system (see `_systems`): a callable,
        system: my_rag.pipeline:answer   #   an http(s):// URL, or
      - name: my-rag-offline         #   {predictions: preds.jsonl, allow_missing: true}
        system: {predictions: preds.jsonl}
    tracks: [retrieval]              # optional defaults for every setup
    judge: {model: openai/gpt-4o-mini, rubric: binary}
    seed: 42

Values in the file win over the command's flags; the flags fill in what the file leaves out.
Every unknown key is an error with a did-you-mean, so a typo never silently changes a run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import USAGE_ERROR, CliError, did_you_mean

if TYPE_CHECKING:
    from lasagna_cli._systems._spec import SystemSpec

TRACK_NAMES = ("retrieval", "generation", "closed-book")
PROFILES = ("speed",)
SWEEP_SUFFIXES = (".yaml", ".yml", ".toml")
_SETUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")

_TOP_KEYS = (
    "benchmarks",
    "setups",
    "tracks",
    "judge",
    "rubric",
    "seed",
    "n_samples",
    "split",
    "filters",
    "top_k",
    "generator",
    "concurrency",
    "profile",
)
_BENCHMARK_KEYS = (
    "path",
    "name",
    "data_dir",
    "n_samples",
    "split",
    "filters",
    "setups",
    "drop_unknown_judgments",
)
_SETUP_KEYS = ("name", "retriever", "generator", "tracks", "system")
_RETRIEVER_KEYS = ("top_k", "k1", "b", "variant", "stemmer", "stopwords")
_JUDGE_KEYS = ("model", "rubric")


def usage(message: str) -> CliError:
    return CliError(message, USAGE_ERROR)


@dataclass(frozen=True)
class RetrieverSpec:
    """BM25 settings. `top_k` passages go to the generator; recall and hit rate are @top_k."""

    top_k: int = 10
    k1: float = 1.5
    b: float = 0.75
    variant: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "lucene-english"

    @property
    def depth(self) -> int:
        """How many documents each ranking keeps: enough for nDCG@10 and recall@top_k."""
        return max(self.top_k, 10)

    def index_key(self) -> tuple[str, float, float, str, str]:
        """The settings that decide the index (top_k does not)."""
        return (self.variant, self.k1, self.b, self.stemmer, self.stopwords)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Setup:
    """One system under test: a retriever, and optionally a generator; or the user's own
    system (`system`), of whose retriever settings only `top_k` applies."""

    name: str
    retriever: RetrieverSpec = field(default_factory=RetrieverSpec)
    generator: str | None = None
    tracks: tuple[str, ...] | None = None
    """None: the tracks the data supports that this setup can run."""
    system: SystemSpec | None = None


@dataclass(frozen=True)
class BenchmarkEntry:
    path: Path | None
    name: str | None
    n_samples: int | None
    split: str
    filters: Mapping[str, tuple[str, ...]]
    setups: tuple[str, ...] | None
    drop_unknown_judgments: bool
    where: str
    """How messages name this entry: the path as given, or `locomo (data_dir: DIR)`."""
    benchmark: str | None = None
    """A registered public benchmark (`name:` without `path:`), read from `data_dir`."""
    data_dir: Path | None = None


@dataclass(frozen=True)
class RunConfig:
    benchmarks: tuple[BenchmarkEntry, ...]
    setups: tuple[Setup, ...]
    judge: str | None
    rubric: str
    seed: int
    profile: str
    concurrency: int
    source: str
    """The PATH or sweep file the run was started with, as given."""


@dataclass(frozen=True)
class Flags:
    """The command's flags, the defaults of a sweep file's values."""

    profile: str = "speed"
    tracks: tuple[str, ...] | None = None
    generator: str | None = None
    judge: str | None = None
    rubric: str = "binary"
    n_samples: int | None = None
    seed: int = 42
    split: str = "test"
    split_given: bool = True
    """False when --split was left at its default: a registered benchmark in a sweep file
    then runs its own default split (SQuAD and Qasper have no "test")."""
    top_k: int = 10
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    concurrency: int = 8
    drop_unknown_judgments: bool = False
    system: SystemSpec | None = None
    """The system --system or --predictions names, if any."""


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


def _check_positive(value: object, where: str, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise usage(f"{where}: expected a whole number >= 1, got {value!r}")
    return value


def _check_keys(mapping: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            raise usage(
                f'{where}: unknown key "{key}"{did_you_mean(str(key), known)}; the keys are '
                f"{', '.join(known)}"
            )


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise usage(f"{where}: expected a mapping of keys to values, got {type(value).__name__}")
    return value


def retriever_spec(values: Mapping[str, Any], where: str, base: RetrieverSpec) -> RetrieverSpec:
    _check_keys(values, _RETRIEVER_KEYS, where)
    spec = replace(base, **values)
    _check_positive(spec.top_k, f"{where}.top_k")
    for key in ("k1", "b"):
        number = getattr(spec, key)
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not math.isfinite(number)
        ):
            raise usage(f"{where}.{key}: expected a number, got {number!r}")
    if not spec.k1 >= 0 or not 0 <= spec.b <= 1:
        raise usage(f"{where}: BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={spec.k1}, b={spec.b}")
    if spec.variant not in ("lucene", "okapi"):
        raise usage(f'{where}.variant: expected "lucene" or "okapi", got {spec.variant!r}')
    if spec.stopwords not in ("lucene-english", "none"):
        raise usage(
            f'{where}.stopwords: expected "lucene-english" or "none", got {spec.stopwords!r}'
        )
    if not isinstance(spec.stemmer, str):
        raise usage(f"{where}.stemmer: expected a language name or none, got {spec.stemmer!r}")
    _check_stemmer(spec.stemmer, f"{where}.stemmer")
    return replace(spec, k1=float(spec.k1), b=float(spec.b))


def _check_stemmer(stemmer: str, where: str) -> None:
    if stemmer == "none":
        return
    from lasagna_cli._retrieval import stemmer_languages

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
            f"(it names a folder), got {name!r}"
        )
    return name


def default_setup_name(flags: Flags) -> str:
    name = f"bm25-k{flags.top_k}"
    if flags.generator:
        name += "+" + re.sub(r"[^A-Za-z0-9._-]+", "-", flags.generator).strip("-")
    return name


def config_from_path(path: str, flags: Flags) -> RunConfig:
    """One benchmark (a data file or BEIR folder) and one setup, from the flags."""
    _check_profile(flags.profile, "--profile")
    _check_positive(flags.top_k, "--top-k")
    if flags.system is not None:
        setup = _system_setup(flags.system, None, flags.generator, flags.tracks, flags.top_k)
    else:
        setup = Setup(
            name=default_setup_name(flags),
            retriever=retriever_spec({}, "--top-k", RetrieverSpec(top_k=flags.top_k)),
            generator=flags.generator,
            tracks=flags.tracks,
        )
    entry = BenchmarkEntry(
        path=Path(path),
        name=None,
        n_samples=_check_positive(flags.n_samples, "-n", allow_none=True),
        split=flags.split,
        filters=dict(flags.filters),
        setups=None,
        drop_unknown_judgments=flags.drop_unknown_judgments,
        where=path,
    )
    return RunConfig(
        benchmarks=(entry,),
        setups=(setup,),
        judge=flags.judge,
        rubric=flags.rubric,
        seed=flags.seed,
        profile=flags.profile,
        concurrency=_check_positive(flags.concurrency, "--concurrency") or 1,
        source=path,
    )


def _system_setup(
    system: SystemSpec,
    name: str | None,
    generator: str | None,
    tracks: tuple[str, ...] | None,
    top_k: int,
    where: str = "--system",
) -> Setup:
    """A setup whose answers and rankings come from the user's system."""
    from lasagna_cli._systems._spec import default_setup_name as system_name

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


def _check_profile(profile: object, where: str) -> None:
    if profile not in PROFILES:
        raise usage(
            f'{where}: unknown profile "{profile}"{did_you_mean(str(profile), PROFILES)}; '
            f"the profiles are {', '.join(PROFILES)} (BM25 retrieval, no model or key needed)"
        )


def is_sweep_file(path: str) -> bool:
    """A .yaml/.yml/.toml path that is not a folder (a missing one is reported as a sweep file)."""
    return Path(path).suffix.lower() in SWEEP_SUFFIXES and not Path(path).is_dir()


def read_sweep_file(path: Path) -> Mapping[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise usage(f"{path}: no such sweep file; check the path") from None
    except OSError as exc:
        raise usage(f"{path}: cannot read the sweep file ({exc.strerror})") from None
    if path.suffix.lower() == ".toml":
        import tomllib

        try:
            data: object = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise usage(f"{path}: not valid TOML ({exc})") from None
    else:
        import yaml

        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise usage(f"{path}: not valid YAML{at}: {problem}") from None
    if not isinstance(data, Mapping):
        raise usage(
            f"{path}: expected a mapping with a `benchmarks:` list, got {type(data).__name__}"
        )
    return data


def config_from_sweep(path: str, flags: Flags) -> RunConfig:
    """A sweep file, with the flags as defaults."""
    sweep_path = Path(path)
    data = read_sweep_file(sweep_path)
    label = sweep_path.name
    _check_keys(data, _TOP_KEYS, label)
    base_dir = sweep_path.resolve().parent

    profile = data.get("profile", flags.profile)
    _check_profile(profile, f"{label}: profile")
    tracks = flags.tracks
    if "tracks" in data:
        tracks = parse_tracks(data["tracks"], f"{label}: tracks")
    top_k = _check_positive(data.get("top_k", flags.top_k), f"{label}: top_k")
    base_retriever = retriever_spec({"top_k": top_k}, f"{label}: top_k", RetrieverSpec())
    generator = data.get("generator", flags.generator)
    if generator is not None and not isinstance(generator, str):
        raise usage(f"{label}: generator: expected a model name such as local/smollm2")

    judge, rubric = flags.judge, flags.rubric
    if "judge" in data:
        raw_judge = data["judge"]
        if isinstance(raw_judge, str):
            judge = raw_judge
        else:
            judge_map = _mapping(raw_judge, f"{label}: judge")
            _check_keys(judge_map, _JUDGE_KEYS, f"{label}: judge")
            judge = judge_map.get("model", judge)
            rubric = judge_map.get("rubric", rubric)
    rubric = data.get("rubric", rubric)
    if judge is not None and not isinstance(judge, str):
        raise usage(f"{label}: judge: expected a model name, got {judge!r}")
    if not isinstance(rubric, str):
        raise usage(f"{label}: rubric: expected binary, scale or a rubric file, got {rubric!r}")

    setups = _sweep_setups(data, label, base_retriever, generator, tracks, flags.system, base_dir)
    benchmarks = _sweep_benchmarks(data, label, base_dir, flags, setups)
    seed = data.get("seed", flags.seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise usage(f"{label}: seed: expected a whole number, got {seed!r}")
    concurrency = _check_positive(
        data.get("concurrency", flags.concurrency), f"{label}: concurrency"
    )
    return RunConfig(
        benchmarks=tuple(benchmarks),
        setups=tuple(setups),
        judge=judge,
        rubric=rubric,
        seed=seed,
        profile=str(profile),
        concurrency=concurrency or 1,
        source=path,
    )


def _sweep_setups(
    data: Mapping[str, Any],
    label: str,
    base_retriever: RetrieverSpec,
    generator: str | None,
    tracks: tuple[str, ...] | None,
    system: SystemSpec | None = None,
    base_dir: Path | None = None,
) -> list[Setup]:
    raw = data.get("setups")
    if raw is None:
        if system is not None:
            return [_system_setup(system, None, generator, tracks, base_retriever.top_k)]
        name = f"bm25-k{base_retriever.top_k}"
        return [Setup(name=name, retriever=base_retriever, generator=generator, tracks=tracks)]
    if system is not None:
        raise usage(
            f"{label}: lists its setups, so {system.label} has no setup to go to; add it to "
            "the file as a setup with `system:`"
        )
    if not isinstance(raw, list) or not raw:
        raise usage(f"{label}: setups: expected a list of setups, each with a name")
    setups: list[Setup] = []
    for i, item in enumerate(raw):
        where = f"{label}: setups[{i}]"
        entry = _mapping(item, where)
        _check_keys(entry, _SETUP_KEYS, where)
        if "name" not in entry:
            raise usage(f"{where}: every setup needs a name")
        name = check_setup_name(entry["name"], f"{where}.name")
        where = f'{label}: setup "{name}"'
        if name in (s.name for s in setups):
            raise usage(f"{where}: the name is used twice; setups need distinct names")
        if "system" in entry:
            setups.append(_sweep_system_setup(entry, name, where, base_retriever, tracks, base_dir))
            continue
        retriever = base_retriever
        if "retriever" in entry:
            retriever = retriever_spec(
                _mapping(entry["retriever"], f"{where}.retriever"),
                f"{where}.retriever",
                base_retriever,
            )
        setup_generator = entry.get("generator", generator)
        if setup_generator is not None and not isinstance(setup_generator, str):
            raise usage(f"{where}.generator: expected a model name such as local/smollm2")
        setup_tracks = tracks
        if "tracks" in entry:
            setup_tracks = parse_tracks(entry["tracks"], f"{where}.tracks")
        setups.append(Setup(name, retriever, setup_generator, setup_tracks))
    return setups


def _sweep_system_setup(
    entry: Mapping[str, Any],
    name: str,
    where: str,
    base_retriever: RetrieverSpec,
    tracks: tuple[str, ...] | None,
    base_dir: Path | None,
) -> Setup:
    """A sweep setup with `system:`; its retriever settings may only give top_k."""
    from lasagna_cli._systems._spec import spec_from_sweep

    top_k = base_retriever.top_k
    if "retriever" in entry:
        values = _mapping(entry["retriever"], f"{where}.retriever")
        other = [k for k in values if k != "top_k"]
        if other:
            raise usage(
                f'{where}.retriever: "{other[0]}" is a BM25 setting; a system setup takes only '
                "top_k (the depth of recall@k and hit@k)"
            )
        top_k = values.get("top_k", top_k)
        _check_positive(top_k, f"{where}.retriever.top_k")
    if "generator" in entry:
        raise usage(
            f"{where}: has both `system:` and `generator:`; a system answers by itself, so "
            "make the generator a setup of its own"
        )
    setup_tracks = parse_tracks(entry["tracks"], f"{where}.tracks") if "tracks" in entry else tracks
    system = spec_from_sweep(entry["system"], f"{where}.system", base_dir or Path.cwd())
    return _system_setup(system, name, None, setup_tracks, top_k, f"{where}.system")


def _filters(value: object, where: str) -> dict[str, tuple[str, ...]]:
    filters: dict[str, tuple[str, ...]] = {}
    for key, wanted in _mapping(value, where).items():
        values = wanted if isinstance(wanted, list) else [wanted]
        for v in values:
            if not isinstance(v, str | int | float | bool):
                raise usage(f"{where}.{key}: expected a value or a list of values, got {v!r}")
        filters[str(key)] = tuple(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
    return filters


def _sweep_benchmarks(
    data: Mapping[str, Any], label: str, base_dir: Path, flags: Flags, setups: Sequence[Setup]
) -> list[BenchmarkEntry]:
    raw = data.get("benchmarks")
    if not isinstance(raw, list) or not raw:
        raise usage(
            f"{label}: benchmarks: expected a list of benchmarks, each with a `path:` (a data "
            "file or BEIR folder, relative to the sweep file) or a `name:` and `data_dir:` (a "
            "registered public benchmark)"
        )
    n_default = _check_positive(
        data.get("n_samples", flags.n_samples), f"{label}: n_samples", allow_none=True
    )
    split_default = data.get("split", flags.split)
    # A registered benchmark runs its own default split unless the file or --split names one.
    named_split = data.get("split", flags.split if flags.split_given else None)
    filters_default = (
        _filters(data["filters"], f"{label}: filters") if "filters" in data else dict(flags.filters)
    )
    setup_names = [s.name for s in setups]
    entries: list[BenchmarkEntry] = []
    for i, item in enumerate(raw):
        where = f"{label}: benchmarks[{i}]"
        entry = _mapping(item, where)
        _check_keys(entry, _BENCHMARK_KEYS, where)
        path_value, name = entry.get("path"), entry.get("name")
        if path_value is None and name is None:
            raise usage(
                f"{where}: give a `path:` (a data file or BEIR folder) or a `name:` and "
                "`data_dir:` (a registered public benchmark)"
            )
        if path_value is not None and not isinstance(path_value, str):
            raise usage(f"{where}.path: expected a path, got {path_value!r}")
        if name is not None and not isinstance(name, str):
            raise usage(f"{where}.name: expected a name, got {name!r}")
        only = _check_only(entry.get("setups"), where, setup_names)
        n_samples = _check_positive(
            entry.get("n_samples", n_default), f"{where}.n_samples", allow_none=True
        )
        filters = (
            _filters(entry["filters"], f"{where}.filters")
            if "filters" in entry
            else filters_default
        )
        if path_value is None:
            assert name is not None
            entries.append(
                _named_entry(
                    entry, where, name, base_dir, named_split, n_samples, filters, only, setups
                )
            )
            continue
        if "data_dir" in entry:
            raise usage(
                f"{where}.data_dir: is for a registered benchmark given by `name:` alone; with "
                "`path:` the file or folder is the data (and `name:` only names it)"
            )
        path = Path(path_value).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        split = entry.get("split", split_default)
        if not isinstance(split, str):
            raise usage(f"{where}.split: expected a split name such as test, got {split!r}")
        drop = entry.get("drop_unknown_judgments", flags.drop_unknown_judgments)
        if not isinstance(drop, bool):
            raise usage(f"{where}.drop_unknown_judgments: expected true or false")
        entries.append(
            BenchmarkEntry(
                path=path,
                name=name,
                n_samples=n_samples,
                split=split,
                filters=filters,
                setups=only,
                drop_unknown_judgments=drop,
                where=str(path_value),
            )
        )
    return entries


def _check_only(value: object, where: str, setup_names: Sequence[str]) -> tuple[str, ...] | None:
    """A benchmark's `setups:`: the names of setups the file lists."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise usage(f"{where}.setups: expected a list of setup names")
    for s in value:
        if s not in setup_names:
            raise usage(
                f'{where}.setups: no setup is named "{s}"{did_you_mean(s, setup_names)}; the '
                f"setups are {', '.join(setup_names)}"
            )
    return tuple(value)


def _named_entry(
    entry: Mapping[str, Any],
    where: str,
    name: str,
    base_dir: Path,
    split: object,
    n_samples: int | None,
    filters: Mapping[str, tuple[str, ...]],
    only: tuple[str, ...] | None,
    setups: Sequence[Setup],
) -> BenchmarkEntry:
    """A registered public benchmark, checked as far as it can be without reading it: the
    name, `data_dir:` and the split. Its raw files are checked before any data loads."""
    from lasagna_cli.engine.benchmarks import benchmark_names, get_benchmark_spec, is_benchmark

    if not is_benchmark(name):
        known = benchmark_names()
        raise usage(
            f'{where}: "{name}" is not a registered benchmark{did_you_mean(name, known)}; the '
            f"registered ones are {', '.join(known)} (`lasagna benchmark list`). For your own "
            "data file or BEIR folder, give its `path:`"
        )
    spec = get_benchmark_spec(name)
    raw_dir = entry.get("data_dir")
    if raw_dir is None:
        raise usage(
            f"{where} ({name}): give `data_dir:`, the folder (or file) holding the benchmark's "
            "raw files, relative to the sweep file; nothing is downloaded. "
            + spec.files_help.replace("--data-dir", "`data_dir:`")
        )
    if not isinstance(raw_dir, str):
        raise usage(f"{where}.data_dir: expected a path, got {raw_dir!r}")
    data_dir = Path(raw_dir).expanduser()
    if not data_dir.is_absolute():
        data_dir = base_dir / data_dir
    if not data_dir.exists():
        raise usage(
            f"{where}.data_dir: {raw_dir} does not exist (looked for {data_dir}); expected the "
            f"folder (or file) holding {name}'s raw files. "
            + spec.files_help.replace("--data-dir", "`data_dir:`")
        )
    split = entry.get("split", split) or spec.default_split
    if not isinstance(split, str) or split not in spec.splits:
        raise usage(
            f"{where} ({name}): has no split {split!r}; it has {', '.join(spec.splits)} (its "
            f"default: {spec.default_split}). Set `split:` on the entry"
        )
    if "drop_unknown_judgments" in entry:
        raise usage(
            f"{where}.drop_unknown_judgments: is for BEIR folders given by `path:`; a named "
            "benchmark is read by its adapter (beir drops unknown judgments and notes how many)"
        )
    applies = [s for s in setups if only is None or s.name in only]
    system = next((s for s in applies if s.system is not None), None)
    if system is not None:
        others = [s.name for s in applies if s.system is None]
        fix = (
            f"list the others with `setups: [{', '.join(others)}]`"
            if others
            else ("add a BM25 setup for it")
        )
        raise usage(
            f'{where} ({name}): setup "{system.name}" is your own system, which runs on data '
            f"files and BEIR folders given by `path:`; on this benchmark, {fix}"
        )
    return BenchmarkEntry(
        path=None,
        name=name,
        n_samples=n_samples,
        split=split,
        filters=filters,
        setups=only,
        drop_unknown_judgments=False,
        where=f"{name} (data_dir: {raw_dir})",
        benchmark=name,
        data_dir=data_dir,
    )
