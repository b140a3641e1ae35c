"""What the commands say about data. `validate-data`'s report: is this data runnable, and
how? Its counts, the name it runs under, the tracks it supports and why, the questions it
should not hold, the folder of documents its rows are searched in, and the command that
runs it. `benchmark list`'s table, `benchmark info`'s description of a registered benchmark
and of its files, and `benchmark sample`'s draw, written and described.

Warnings never stop data from running: a legitimate set may hold some on purpose.
"""

from __future__ import annotations

import shlex
import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._shown import shown

if TYPE_CHECKING:
    from lasagna_cli.engine.benchmarks import BenchmarkSpec, LoadedBenchmark, Sample
    from lasagna_synth import BenchmarkData, Skipped


#: What `validate-data` reads as PATH.
DATA_ACCEPTS = "a .jsonl, .csv or SQuAD .json file, or a BEIR folder"


def validate_data(
    path: str, *, drop_unknown_judgments: bool, data_format: str | None, corpus: str | None
) -> tuple[list[str], bool]:
    """`validate-data PATH`: its lines and whether the data can be run (a `DataError`'s
    message is the one line, not runnable). A sweep file, or a PATH that does not exist,
    is a usage error."""
    from lasagna_cli.engine._errors import EngineUsageError
    from lasagna_cli.engine.config import SWEEP_SUFFIXES, check_data_format, check_data_path
    from lasagna_synth import DataError, load_data_and_outputs

    check_data_format(data_format)
    if Path(path).suffix.lower() in SWEEP_SUFFIXES and not Path(path).is_dir():
        raise EngineUsageError(
            f"{path}: validate-data checks one data file or BEIR folder, and this is a sweep "
            "file; validate each `path:` it lists, or run it: `lasagna benchmark run "
            f"{shlex.quote(path)}` checks every benchmark before anything loads"
        )
    check_data_path(path, DATA_ACCEPTS)
    try:
        data, outputs = load_data_and_outputs(
            path, drop_unknown_judgments=drop_unknown_judgments, format=data_format
        )
    except DataError as exc:
        return [str(exc)], False
    return validation_lines(
        data, path, data_format=data_format, has_outputs=bool(outputs), corpus=corpus
    )


def validation_lines(
    data: BenchmarkData,
    path: str,
    *,
    data_format: str | None = None,
    has_outputs: bool = False,
    corpus: str | None = None,
) -> tuple[list[str], bool]:
    """The lines validate-data prints for the data read from `path`, and whether it can be
    run; `corpus`: --corpus, the folder of documents its rows are searched in (else the one
    the rows name)."""
    lines, runnable = report(data, path, data_format=data_format, has_outputs=has_outputs)
    folder = Path(corpus).expanduser() if corpus is not None else data.documents
    if folder is not None and data.kind != "beir":
        lines, readable = with_corpus_lines(lines, data, folder, path, corpus)
        runnable = runnable and readable
    return lines, runnable


def report(
    data: BenchmarkData, path: str, *, data_format: str | None = None, has_outputs: bool = False
) -> tuple[list[str], bool]:
    """The lines validate-data prints, and whether the data can be run; `has_outputs`: the
    file records a system's outputs, which `run --predictions-from-data` scores."""
    rows = data.rows()
    kind = {
        "jsonl": "JSONL",
        "json": "JSON rows",
        "csv": "CSV",
        "beir": "BEIR folder",
        "squad": "SQuAD JSON",
        "hf": "Hugging Face dataset",
    }
    lines = [f"{data.label}: valid {kind.get(data.kind, data.kind)} data"]
    if data.kind == "beir":
        splits = ", ".join(f"{s} ({len(r):,} judged)" for s, r in sorted(data.splits.items()))
        lines.append(f"  Questions:      {len(rows):,} with a relevant document; splits: {splits}")
    else:
        lines += [
            f"  Questions:      {len(rows):,}",
            f"  With answers:   {sum(1 for r in rows if r.answers):,}",
            f"  With contexts:  {sum(1 for r in rows if r.contexts):,}",
            f"  Unanswerable:   {sum(1 for r in rows if r.unanswerable):,}",
        ]
    provenance = {
        "native": "the folder's corpus",
        "documents": "the folder of documents",
        "pooled_gold": "every row's passages pooled; results labelled pooled_gold",
        "none": "nothing to retrieve",
    }[data.corpus_provenance]
    lines.append(f"  Documents:      {len(data.corpus):,} ({provenance})")
    lines.append(f"  Name:           {data.name()}")
    lines.append(f"  Revision:       {data.revision}")
    for note in data.notes:
        lines.append(f"  Note:           {note}")
    lines += [f"  Warning:        {warning}" for warning in question_warnings(data)]
    lines.append("  Tracks:")
    support = data.track_support()
    for track, found in support.items():
        verdict = "yes" if found.supported else "no"
        fix = f" (fix: {found.fix})" if not found.supported and found.fix else ""
        lines.append(f"    {track + ':':<13} {verdict}, {found.reason}{fix}")
    supported = [t for t, s in support.items() if s.supported]
    if not supported:
        lines.append("Nothing can be measured on this data; fix it as above and run this again.")
        return lines, False
    quoted = shlex.quote(path)
    extra = " --drop-unknown-judgments" if any("dropped" in n for n in data.notes) else ""
    if data_format is not None:
        extra += f" --data-format {data_format}"
    split = "" if "test" in data.splits else f" --split {sorted(data.splits)[0]}"
    if "retrieval" in supported:
        lines.append(
            f"Run it:  lasagna benchmark run {quoted} --profile speed{split}{extra}   "
            "(BM25 retrieval, no key)"
        )
    answering = [t for t in supported if t != "retrieval"]
    if answering:
        tracks = ",".join(
            ["retrieval", "generation"] if "retrieval" in supported else ["generation"]
        )
        lines.append(
            f"{'With a model' if 'retrieval' in supported else 'Run it'}:  lasagna benchmark run "
            f"{quoted} --tracks {tracks} --generator local/smollm2{split}{extra}"
        )
    if has_outputs:
        lines.append(
            f"Its outputs:  lasagna benchmark run {quoted} --predictions-from-data{split}{extra}"
            "   (the system's answers and retrievals the file records, scored)"
        )
    return lines, True


def _ids(found: Sequence[str] | Sequence[tuple[str, str]], sign: str = "=", shown: int = 5) -> str:
    """The first `shown` row ids (or pairs: `"q7" = "q3"`), then ", ..." when there are more."""
    listed = [
        f'"{item[0]}" {sign} "{item[1]}"' if isinstance(item, tuple) else f'"{item}"'
        for item in found[:shown]
    ]
    return ", ".join(listed) + (", ..." if len(found) > shown else "")


def question_warnings(data: BenchmarkData) -> list[str]:
    """What the questions hold that they should not (`lasagna_synth.question_issues`, per
    split): warnings, with counts and the first row ids, that never stop the data from
    running, since a legitimate set may hold some on purpose."""
    from lasagna_synth import (
        MIN_QUESTION_CHARACTERS,
        MIN_QUESTION_WORDS,
        QuestionIssues,
        question_issues,
    )

    beir = data.kind == "beir"
    found = QuestionIssues()
    for rows in data.splits.values():
        issues = question_issues(
            ((row.id, row.question, row.answers) for row in rows), check_length=not beir
        )
        found.duplicates.extend(issues.duplicates)
        found.near_duplicates.extend(issues.near_duplicates)
        found.placeholders.extend(issues.placeholders)
        found.too_short.extend(issues.too_short)
    noun = "query" if beir else "question"
    plural = "queries" if beir else "questions"
    warnings = []
    if found.duplicates:
        n = len(found.duplicates)
        how = (
            "run scores each, as trec_eval scores each query id"
            if beir
            else "run scores the question once, as its first row"
        )
        warnings.append(
            f"{counted(n, 'duplicate ' + noun, 'duplicate ' + plural)} (the same text once case, "
            f"punctuation and articles are set aside; {how}): {_ids(found.duplicates)}"
        )
    if found.near_duplicates:
        n = len(found.near_duplicates)
        warnings.append(
            f"{counted(n, 'near-duplicate ' + noun, 'near-duplicate ' + plural)} (the same words "
            "in the same order once auxiliaries and of/in/on/at/for are set aside; run scores "
            f"each): {_ids(found.near_duplicates, '~')}"
        )
    if found.placeholders:
        warnings.append(
            f"{counted(len(found.placeholders), 'placeholder row')} (a {noun} or answer that is "
            "empty, a template's filler or a slot, or echoes a prompt): "
            f"{_ids(found.placeholders)}"
        )
    if found.too_short:
        n = len(found.too_short)
        warnings.append(
            f"{counted(n, noun, plural)} too short to mean anything (fewer than "
            f"{MIN_QUESTION_WORDS} words and {MIN_QUESTION_CHARACTERS} letters or digits): "
            f"{_ids(found.too_short)}"
        )
    return warnings


def with_corpus_lines(
    lines: list[str], data: BenchmarkData, folder: Path, path: str, given: str | None
) -> tuple[list[str], bool]:
    """`report`'s lines for rows searched in a folder of documents, not in their pool, and
    whether the folder can be searched (a run over an empty one fails: nothing to run)."""
    found, readable = corpus_lines(data, folder, given=given is not None)
    out: list[str] = []
    for line in lines:
        if line.startswith("  Documents:"):
            out += found
            continue
        if not readable and line.startswith(("Run it:", "With a model:")):
            continue  # the run it shows would stop at the folder
        if line.startswith("    retrieval:") and not readable:
            line = "    retrieval:    no, the folder of documents cannot be read (above)"
        elif line.startswith("    retrieval:") and "pooled_gold" in line:
            line = "    retrieval:    yes, in the folder's documents, as each setup chunks them"
        if given is not None:
            run = f"lasagna benchmark run {shlex.quote(path)}"
            line = line.replace(run, f"{run} --corpus {shlex.quote(given)}")
        out.append(line)
    return out, readable


def skipped_lines(skipped: Sequence[Skipped], listed: int = 20) -> list[str]:
    """The files a corpus left out, each with its reason (the first `listed` of them)."""
    lines = [f"    skipped {entry.path}: {entry.reason}" for entry in skipped[:listed]]
    if len(skipped) > listed:
        lines.append(f"    ... and {len(skipped) - listed:,} more skipped")
    return lines


def corpus_lines(data: BenchmarkData, folder: Path, *, given: bool) -> tuple[list[str], bool]:
    """What validate-data says of the folder of documents the rows are searched in: how
    many documents, and how many rows' passages were found in them; and whether it could
    be read."""
    from lasagna_cli.engine._errors import EngineError
    from lasagna_cli.engine.datasets._documents import load_documents, locate_rows

    how = "--corpus" if given else "named by the rows"
    try:
        documents = load_documents(folder, data.label)
    except EngineError as exc:
        return [f"  Documents:      {folder} ({how}) cannot be read: {exc}"], False
    located = locate_rows(data.rows(), documents)
    lines = [
        f"  Documents:      {len(documents.texts):,} in {folder} ({how}; "
        f"{counted(len(documents.skipped), 'file')} skipped); results labelled documents",
        *skipped_lines(documents.skipped),
        f"  Evidence:       {located.note(folder)}",
    ]
    return [shown(line) for line in lines], True


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=96, initial_indent=indent, subsequent_indent=indent)


def info_lines(spec: BenchmarkSpec) -> list[str]:
    """`benchmark info NAME`: what the benchmark is, its licence, splits, rubric, sampling,
    categories and files."""
    lines = [f"{spec.name}: {spec.title}", _wrap(spec.description), ""]
    lines.append(f"licence:   {spec.licence}")
    lines.append(f"citation:  {spec.citation}")
    lines.append(f"homepage:  {spec.homepage}")
    splits = ", ".join(f"{s} (default)" if s == spec.default_split else s for s in spec.splits)
    lines.append(f"splits:    {splits}")
    lines.append(f"judge:     the {spec.rubric} rubric")
    unit = (
        "documents (a document keeps its questions)"
        if spec.sampling_unit == "document"
        else "questions (the whole corpus is kept)"
    )
    lines.append(f"sampling:  by {unit}")
    lines.append("categories and answer instructions:")
    for category, meaning in spec.categories.items():
        lines.append(f"  {category}: {meaning}")
        if category in spec.instructions:
            lines.append(_wrap(spec.instructions[category], "      "))
    lines.append(_wrap(f"other categories: {spec.default_instruction}", "  "))
    lines.append("files:")
    lines.append(_wrap(spec.files_help))
    return lines


def benchmark_info(name: str, data_dir: Path | None, split: str | None) -> list[str]:
    """`benchmark info NAME [--data-dir DIR]`: `info_lines`, with what the files of DIR
    hold (`data_lines`, `split` counted) when given."""
    from lasagna_cli.engine.benchmarks import get_benchmark_spec, load_benchmark

    lines = info_lines(get_benchmark_spec(name))
    if data_dir is not None:
        lines += data_lines(load_benchmark(name, data_dir, split, with_text=False))
    return lines


def data_lines(bench: LoadedBenchmark) -> list[str]:
    """`benchmark info NAME --data-dir`: what its files hold, per category."""
    counts = Counter(q.category for q in bench.questions)
    without = sum(1 for q in bench.questions if not q.evidence)
    lines = [
        "",
        f"in --data-dir (split {bench.split}): {counted(len(bench.documents), 'document')}, "
        f"{counted(len(bench.questions), 'question')}",
    ]
    for category in sorted(counts):
        lines.append(f"  {category}: {counts[category]}")
    for reason, n in bench.skipped.items():
        lines.append(f"  skipped, {reason}: {n}")
    if without:
        lines.append(f"  without evidence (recall counted apart): {without}")
    lines += [f"  note: {note}" for note in bench.notes]
    return lines


def list_json(specs: Sequence[BenchmarkSpec]) -> list[dict[str, Any]]:
    """`benchmark list --format json`: each benchmark's name, title, splits, categories,
    licence and homepage."""
    return [
        {
            "name": spec.name,
            "title": spec.title,
            "splits": list(spec.splits),
            "default_split": spec.default_split,
            "categories": dict(spec.categories),
            "licence": spec.licence,
            "homepage": spec.homepage,
        }
        for spec in specs
    ]


def list_lines(specs: Sequence[BenchmarkSpec]) -> list[str]:
    """`benchmark list`: a table of the benchmarks, then where their details are."""
    rows = [
        (
            spec.name,
            spec.title,
            ", ".join(spec.splits),
            str(len(spec.categories)),
            spec.licence.split(" (")[0].split(";")[0],
        )
        for spec in specs
    ]
    header = ("name", "benchmark", "splits", "categories", "licence")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = (cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        lines.append("  ".join(cells).rstrip())
    lines.append(
        "\nDetails: lasagna benchmark info NAME [--data-dir DIR]. Nothing is downloaded: "
        "point --data-dir at the benchmark's files."
    )
    return lines


def sample_lines(
    name: str, spec: BenchmarkSpec, bench: LoadedBenchmark, sample: Sample, *, files: int,
    output: Path, seed: int,
) -> list[tuple[str, bool]]:  # fmt: skip
    """What `benchmark sample NAME` drew, the files it wrote and how to run them: each line
    with whether it goes to stderr (the shortfall)."""
    meta = sample.metadata
    lines = [
        (
            f"{name} ({bench.split}): {meta['sampled']['documents']} of "
            f"{meta['original']['documents']} documents, {meta['sampled']['questions']} of "
            f"{meta['original']['questions']} questions (seed {seed}"
            + (f", {meta['mode']}" if meta["mode"] else "")
            + ")",
            False,
        )
    ]
    for category, n in meta["sampled"]["categories"].items():
        target = meta.get("category_quotas", {}).get(category)
        quota = f" (quota {target})" if target is not None else ""
        lines.append((f"  {category}: {n}{quota}", False))
    if meta.get("shortfall"):
        shortfall = f"  {meta['shortfall']} fewer questions than asked: the benchmark has no more"
        lines.append((shortfall, True))
    lines.append(
        (f"wrote {counted(files, 'file')} to {output} (sampling_metadata.json included)", False)
    )
    split_flag = f" --split {bench.split}" if bench.split != spec.default_split else ""
    lines.append(
        (
            f"run it: lasagna benchmark run {name} --data-dir {output}{split_flag} --step gen "
            "(retrieval; add --generator MODEL and drop --step for answers and grades)",
            False,
        )
    )
    return lines


def write_benchmark_sample(
    name: str,
    data_dir: Path,
    output: Path,
    *,
    num_docs: int | None,
    sample_size: int | None,
    full: bool,
    seed: int,
    mode: str,
    split: str | None,
    overwrite: bool,
) -> list[tuple[str, bool]]:
    """`benchmark sample NAME`: the flags and the folder checked, the benchmark read, the
    sample drawn (`benchmarks.sample_benchmark`), the folder checked writable, the sample
    written (`benchmarks.write_sample`); returns `sample_lines`."""
    from lasagna_cli.engine.benchmarks import (
        check_sample_output,
        get_benchmark_spec,
        load_benchmark,
        sample_benchmark,
        write_sample,
    )
    from lasagna_cli.engine.records import check_writable

    spec = get_benchmark_spec(name)
    chosen = check_sample_output(mode, output, overwrite)
    bench = load_benchmark(name, data_dir, split, with_text=False)
    sample = sample_benchmark(
        bench,
        num_docs=num_docs,
        sample_size=sample_size,
        full=full,
        seed=seed,
        mode=chosen,
        unit=spec.sampling_unit,
    )
    check_writable(output, f"-o {output}", "the sample folder")
    written = write_sample(sample, bench, data_dir, output)
    return sample_lines(name, spec, bench, sample, files=len(written), output=output, seed=seed)
