"""The `benchmarks:` of a sweep file: each a data file or BEIR folder (`path:`), or a
registered public benchmark read from its raw files (`name:` and `data_dir:`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import did_you_mean, quoted
from lasagna_cli.engine.config._config import DATA_FORMATS, BenchmarkEntry, Setup
from lasagna_cli.engine.config._flags import Flags, check_keys, check_positive, mapping, usage

_BENCHMARK_KEYS = (
    "path",
    "name",
    "data_dir",
    "n_samples",
    "split",
    "filters",
    "setups",
    "drop_unknown_judgments",
    "format",
    "corpus",
)


def _filters(value: object, where: str) -> dict[str, tuple[str, ...]]:
    filters: dict[str, tuple[str, ...]] = {}
    for key, wanted in mapping(value, where).items():
        values = wanted if isinstance(wanted, list) else [wanted]
        for v in values:
            if not isinstance(v, str | int | float | bool):
                raise usage(f"{where}.{key}: expected a value or a list of values, got {quoted(v)}")
        filters[str(key)] = tuple(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
    return filters


def sweep_benchmarks(
    data: Mapping[str, Any], label: str, base_dir: Path, flags: Flags, setups: Sequence[Setup]
) -> list[BenchmarkEntry]:
    raw = data.get("benchmarks")
    if not isinstance(raw, list) or not raw:
        raise usage(
            f"{label}: benchmarks: expected a list of benchmarks, each with a `path:` (a data "
            "file or BEIR folder, relative to the sweep file) or a `name:` and `data_dir:` (a "
            "registered public benchmark)"
        )
    n_default = check_positive(
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
        entry = mapping(item, where)
        check_keys(entry, _BENCHMARK_KEYS, where)
        path_value, name = entry.get("path"), entry.get("name")
        if path_value is None and name is None:
            raise usage(
                f"{where}: give a `path:` (a data file or BEIR folder) or a `name:` and "
                "`data_dir:` (a registered public benchmark)"
            )
        if path_value is not None and not isinstance(path_value, str):
            raise usage(f"{where}.path: expected a path, got {quoted(path_value)}")
        if name is not None and not isinstance(name, str):
            raise usage(f"{where}.name: expected a name, got {quoted(name)}")
        only = _check_only(entry.get("setups"), where, setup_names)
        n_samples = check_positive(
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
            raise usage(f"{where}.split: expected a split name such as test, got {quoted(split)}")
        drop = entry.get("drop_unknown_judgments", flags.drop_unknown_judgments)
        if not isinstance(drop, bool):
            raise usage(f"{where}.drop_unknown_judgments: expected true or false")
        data_format = entry.get("format", flags.data_format)
        if data_format is not None and data_format not in DATA_FORMATS:
            raise usage(
                f"{where}.format: expected one of {', '.join(DATA_FORMATS)} (how the file is "
                f"read), got {quoted(data_format)}{did_you_mean(str(data_format), DATA_FORMATS)}"
            )
        corpus = flags.corpus
        if "corpus" in entry:
            if not isinstance(entry["corpus"], str):
                raise usage(f"{where}.corpus: expected the path of a folder of documents")
            corpus = Path(entry["corpus"]).expanduser()
            if not corpus.is_absolute():
                corpus = base_dir / corpus
        entries.append(
            BenchmarkEntry(
                where=str(path_value),
                path=path,
                name=name,
                n_samples=n_samples,
                split=split,
                filters=filters,
                setups=only,
                drop_unknown_judgments=drop,
                data_format=data_format,
                corpus=corpus,
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
        raise usage(f"{where}.data_dir: expected a path, got {quoted(raw_dir)}")
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
            f"{where} ({name}): has no split {quoted(split)}; it has {', '.join(spec.splits)} (its "
            f"default: {spec.default_split}). Set `split:` on the entry"
        )
    if "corpus" in entry:
        raise usage(
            f"{where}.corpus: is for a question file given by `path:`; a named benchmark "
            "searches its own documents"
        )
    if "format" in entry:
        raise usage(
            f"{where}.format: is for a data file given by `path:`; a named benchmark is read "
            "from its own raw files by its adapter"
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
        where=f"{name} (data_dir: {raw_dir})",
        name=name,
        benchmark=name,
        data_dir=data_dir,
        n_samples=n_samples,
        split=split,
        filters=filters,
        setups=only,
    )
