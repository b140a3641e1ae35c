"""A sweep file of `benchmark run`: several benchmarks and setups, in YAML or TOML.

    benchmarks:                      # each by `path:` (relative to this file's folder)
      - path: data/pasta.jsonl       #   and/or `name:` (the name it is registered under)
        n_samples: 10
        split: test
        filters: {question_type: multihop}
        setups: [bm25-k3]            # optional: only these setups on this benchmark
      - path: synthetic_qa.jsonl     # questions written from a folder of documents:
        corpus: docs                 #   searched there (default: the folder the rows name)
      - path: data/pasta-beir
      - name: locomo                 # a registered public benchmark (`lasagna benchmark
        data_dir: data/locomo        #   list`): its raw files, relative to this file's
        filters: {category: "2"}     #   folder; split: the benchmark's default unless given
    setups:                          # the setups to compare (default: one from the flags)
      - name: bm25-k3
        retriever: {top_k: 3}
      - name: bm25-k10-no-stem
        retriever: {top_k: 10, stemmer: none}
      - name: bm25-chunks-100        # how a `corpus:` folder is cut (words, sentences,
        chunking: {chunker: words, size: 100, overlap: 20}   # markdown, tokens)
      - name: rag-smollm2
        generator: local/smollm2
        tracks: [retrieval, generation]
      - name: my-rag                 # your own system (see `_systems`): a callable,
        system: my_rag.pipeline:answer   #   an http(s):// URL, or
      - name: my-rag-offline         #   {predictions: preds.jsonl, allow_missing: true}
        system: {predictions: preds.jsonl}
    tracks: [retrieval]              # optional defaults for every setup
    judge: {model: openai/gpt-4o-mini, rubric: binary}   # or judges: [A, B] (a jury)
    diagnostics: true                # the judge's claim-level diagnosis (needs a judge)
    seed: 42
    requests_per_minute: 500         # optional: each model's limits (--rpm, --tpm)
    tokens_per_minute: 200000

Values in the file win over the command's flags; the flags fill in what the file leaves out.
Every unknown key is an error with a did-you-mean, so a typo never silently changes a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import quoted
from lasagna_cli.engine.config._chunking_flags import chunking_spec
from lasagna_cli.engine.config._config import (
    ChunkingSpec,
    ModelSpec,
    RetrieverSpec,
    RunConfig,
    Setup,
)
from lasagna_cli.engine.config._flags import (
    Flags,
    check_diagnostics,
    check_keys,
    check_positive,
    check_profile,
    check_setup_name,
    mapping,
    parse_tracks,
    retriever_spec,
    system_setup,
    usage,
)
from lasagna_cli.engine.config._sweepfile_entries import sweep_benchmarks
from lasagna_cli.engine.run._rate_share import check_rate

if TYPE_CHECKING:
    from lasagna_cli.engine.systems import SystemSpec

SWEEP_SUFFIXES = (".yaml", ".yml", ".toml")

_TOP_KEYS = (
    "benchmarks",
    "setups",
    "tracks",
    "judge",
    "judges",
    "rubric",
    "seed",
    "n_samples",
    "split",
    "filters",
    "top_k",
    "generator",
    "concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "profile",
    "chunking",
    "diagnostics",
)
_SETUP_KEYS = ("name", "retriever", "generator", "tracks", "system", "chunking")
_JUDGE_KEYS = ("model", "rubric")


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
        from lasagna_judge import TomlError, load_toml

        try:
            data: object = load_toml(raw.decode("utf-8"))
        except (TomlError, UnicodeDecodeError) as exc:
            raise usage(f"{path}: not valid TOML ({exc})") from None
    else:
        import yaml

        from lasagna_judge import load_yaml

        try:
            data = load_yaml(raw)
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


def config_from_sweep(path: str, flags: Flags, env: Mapping[str, str]) -> RunConfig:
    """A sweep file, with the flags as defaults; `env` fills `${VAR}` in a system's headers."""
    sweep_path = Path(path)
    data = read_sweep_file(sweep_path)
    label = sweep_path.name
    check_keys(data, _TOP_KEYS, label)
    base_dir = sweep_path.resolve().parent

    profile = data.get("profile", flags.profile)
    check_profile(profile, f"{label}: profile")
    tracks = flags.tracks
    if "tracks" in data:
        tracks = parse_tracks(data["tracks"], f"{label}: tracks")
    top_k = check_positive(data.get("top_k", flags.top_k), f"{label}: top_k")
    base_retriever = retriever_spec({"top_k": top_k}, f"{label}: top_k", flags.base_retriever())
    generator = data.get("generator", flags.generator)
    if generator is not None and not isinstance(generator, str):
        raise usage(f"{label}: generator: expected a model name such as local/smollm2")

    judge, rubric = flags.judge, flags.rubric
    jury = tuple(ModelSpec(name) for name in flags.jury)
    if "judges" in data:
        judge, jury = _jury(data, label)
    if "judge" in data:
        jury = ()
        raw_judge = data["judge"]
        if isinstance(raw_judge, str):
            judge = raw_judge
        else:
            judge_map = mapping(raw_judge, f"{label}: judge")
            check_keys(judge_map, _JUDGE_KEYS, f"{label}: judge")
            judge = judge_map.get("model", judge)
            rubric = judge_map.get("rubric", rubric)
    rubric = data.get("rubric", rubric)
    if judge is not None and not isinstance(judge, str):
        raise usage(f"{label}: judge: expected a model name, got {quoted(judge)}")
    if not isinstance(rubric, str):
        raise usage(
            f"{label}: rubric: expected binary, scale or a rubric file, got {quoted(rubric)}"
        )

    chunking = flags.chunking
    if "chunking" in data:
        chunking = chunking_spec(
            mapping(data["chunking"], f"{label}: chunking"), f"{label}: chunking", chunking
        )
    setups = _sweep_setups(
        data, label, base_retriever, generator, tracks, flags.system, base_dir, env, chunking
    )
    benchmarks = sweep_benchmarks(data, label, base_dir, flags, setups)
    seed = data.get("seed", flags.seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise usage(f"{label}: seed: expected a whole number, got {quoted(seed)}")
    concurrency = check_positive(
        data.get("concurrency", flags.concurrency), f"{label}: concurrency", allow_none=True
    )
    return RunConfig(
        benchmarks=tuple(benchmarks),
        setups=tuple(setups),
        judge=judge,
        jury=jury,
        rubric=rubric,
        seed=seed,
        profile=str(profile),
        concurrency=concurrency,
        judge_max_chars=flags.judge_max_chars,
        diagnostics=check_diagnostics(
            data.get("diagnostics", flags.diagnostics), judge, f"{label}: diagnostics"
        ),
        requests_per_minute=check_rate(
            data.get("requests_per_minute", flags.requests_per_minute),
            f"{label}: requests_per_minute",
        ),
        tokens_per_minute=check_rate(
            data.get("tokens_per_minute", flags.tokens_per_minute), f"{label}: tokens_per_minute"
        ),
        source=path,
    )


def _sweep_setups(
    data: Mapping[str, Any],
    label: str,
    base_retriever: RetrieverSpec,
    generator: str | None,
    tracks: tuple[str, ...] | None,
    system: SystemSpec | None,
    base_dir: Path,
    env: Mapping[str, str],
    chunking: ChunkingSpec,
) -> list[Setup]:
    raw = data.get("setups")
    if raw is None:
        if system is not None:
            return [system_setup(system, None, generator, tracks, base_retriever.top_k)]
        name = f"{base_retriever.kind}-k{base_retriever.top_k}"
        model = ModelSpec(generator) if generator else None
        return [
            Setup(
                name=name,
                retriever=base_retriever,
                generator=model,
                tracks=tracks,
                chunking=chunking,
            )
        ]
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
        entry = mapping(item, where)
        check_keys(entry, _SETUP_KEYS, where)
        if "name" not in entry:
            raise usage(f"{where}: every setup needs a name")
        name = check_setup_name(entry["name"], f"{where}.name")
        where = f'{label}: setup "{name}"'
        if name in (s.name for s in setups):
            raise usage(f"{where}: the name is used twice; setups need distinct names")
        if "system" in entry:
            setups.append(
                _sweep_system_setup(entry, name, where, base_retriever, tracks, base_dir, env)
            )
            continue
        retriever = base_retriever
        if "retriever" in entry:
            retriever = retriever_spec(
                mapping(entry["retriever"], f"{where}.retriever"),
                f"{where}.retriever",
                base_retriever,
            )
        setup_generator = entry.get("generator", generator)
        if setup_generator is not None and not isinstance(setup_generator, str):
            raise usage(f"{where}.generator: expected a model name such as local/smollm2")
        setup_tracks = tracks
        if "tracks" in entry:
            setup_tracks = parse_tracks(entry["tracks"], f"{where}.tracks")
        model = ModelSpec(setup_generator) if setup_generator else None
        setup_chunking = chunking
        if "chunking" in entry:
            setup_chunking = chunking_spec(
                mapping(entry["chunking"], f"{where}.chunking"), f"{where}.chunking", chunking
            )
        setups.append(
            Setup(
                name=name,
                retriever=retriever,
                generator=model,
                tracks=setup_tracks,
                chunking=setup_chunking,
            )
        )
    return setups


def _sweep_system_setup(
    entry: Mapping[str, Any],
    name: str,
    where: str,
    base_retriever: RetrieverSpec,
    tracks: tuple[str, ...] | None,
    base_dir: Path,
    env: Mapping[str, str],
) -> Setup:
    """A sweep setup with `system:`; its retriever settings may only give top_k."""
    from lasagna_cli.engine.systems import spec_from_sweep

    top_k = base_retriever.top_k
    if "retriever" in entry:
        values = mapping(entry["retriever"], f"{where}.retriever")
        other = [k for k in values if k != "top_k"]
        if other:
            raise usage(
                f'{where}.retriever: "{other[0]}" is a BM25 setting; a system setup takes only '
                "top_k (the depth of recall@k and hit@k)"
            )
        top_k = values.get("top_k", top_k)
        check_positive(top_k, f"{where}.retriever.top_k")
    if "generator" in entry:
        raise usage(
            f"{where}: has both `system:` and `generator:`; a system answers by itself, so "
            "make the generator a setup of its own"
        )
    setup_tracks = parse_tracks(entry["tracks"], f"{where}.tracks") if "tracks" in entry else tracks
    system = spec_from_sweep(entry["system"], f"{where}.system", base_dir, env)
    return system_setup(system, name, None, setup_tracks, top_k, f"{where}.system")


def _jury(data: Mapping[str, Any], label: str) -> tuple[str, tuple[ModelSpec, ...]]:
    """`judges: [A, B, ...]`: the first judge and the jury's others (`--judge` repeated)."""
    found = data["judges"]
    if "judge" in data:
        raise usage(f"{label}: judge and judges: give one of them (judges: [A, B] is a jury)")
    names = found if isinstance(found, list) else None
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) < len(names):
        raise usage(
            f"{label}: judges: expected a list of distinct model names, got {quoted(found)}"
        )
    return names[0], tuple(ModelSpec(n) for n in names[1:])
