"""How fast, and in how much memory, `lasagna benchmark synthesize --dry-run` plans.

Run from the repository root:

    uv run python benchmarks/synth_plan.py

1. Builds a corpus of 2,000 Markdown files of 600 words each (6,000 passages of 200 words)
   in a temporary folder, and times the whole process
   `lasagna benchmark synthesize CORPUS --n 1000 --dry-run` (interpreter start, imports,
   reading, chunking, planning, the exact token count), with its peak resident memory
   (the child's ru_maxrss, from wait4). Best and median of --repeat runs.
2. The same dry run over 100,000 passages (5,000 files of 4,000 words): goal < 30 s.

The baseline is lasagna-rag 0.1.0 doing the same dry run. It needs torch and
sentence-transformers, so it is not installed here; its figures, measured on this 2-core
machine when issue 4 was filed, are 15.9 s and 429 MB. Pass --reference-lasagna PATH (the
`lasagna` executable of a lasagna-rag 0.1.0 environment) to measure it in the same run
instead. Goal: at least 10x faster, at most a quarter of the memory.

The files are random lines of real English (httpx's documentation and the plain-text files
in ../shared/data), so that word and token statistics are those of real prose: common
words in most passages, about 1.3 tokens a word. Without ../shared/data, made-up words
with a Zipf distribution stand in (they tokenize into about 3 tokens a word: slower).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECORDED_REFERENCE = (15.9, 429.0)  # lasagna-rag 0.1.0, seconds and MB, issue 4
LASAGNA = Path(sys.executable).with_name("lasagna")


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corpora"


def english_lines() -> list[str]:
    """Lines of real English prose and documentation (../shared/data), or None-like []."""
    lines: list[str] = []
    for path in sorted((SHARED / "httpx-docs").rglob("*.md")) + sorted(
        (SHARED / "mixed-formats").glob("*.txt")
    ):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if len(line.split()) >= 4:
                lines.append(line.strip())
    return lines


def zipf_lines(rng: random.Random, count: int = 20_000) -> list[str]:
    """Stand-in text when ../shared/data is absent: Zipf-distributed made-up words."""
    syllables = ["ka", "lo", "ri", "ten", "mar", "vo", "sel", "un", "pra", "di", "os", "ve"]
    short = ["a", "of", "the", "and", "to", "in", "is", "it", "on", "for", "was", "by"]
    vocab = list(short)
    seen = set(vocab)
    while len(vocab) < 20_000:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            vocab.append(word)
    weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(vocab))]
    return [" ".join(rng.choices(vocab, weights=weights, k=12)) for _ in range(count)]


def build_corpus(folder: Path, files: int, words_per_file: int, seed: int = 0) -> str:
    """`files` Markdown files of `words_per_file` words: random lines of real English text
    (httpx's documentation and the plain-text files of ../shared/data), so that token and
    word statistics are those of real prose. Returns where the text came from."""
    rng = random.Random(seed)
    pool = english_lines()
    source = "English lines from ../shared/data"
    if len(pool) < 1000:
        pool, source = zipf_lines(rng), "made-up Zipf words (../shared/data absent)"
    folder.mkdir(parents=True, exist_ok=True)
    per_dir = 500
    for i in range(files):
        sub = folder / f"part{i // per_dir:03d}"
        sub.mkdir(exist_ok=True)
        words: list[str] = []
        lines: list[str] = []
        while len(words) < words_per_file:
            line = rng.choice(pool).split()[: words_per_file - len(words)]
            words += line
            lines.append(" ".join(line))
        (sub / f"doc{i:05d}.md").write_text(
            f"# Document {i}\n\n" + "\n".join(lines) + "\n", encoding="utf-8"
        )
    return source


def measure(command: list[str]) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS in MB, stdout and CPU seconds (user + system) of one whole
    process."""
    # As installed packages run: with their bytecode cached (pip compiles it at install; a
    # sandbox's PYTHONDONTWRITEBYTECODE would make every run compile every module again).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr}")
    return elapsed, usage.ru_maxrss / 1024, stdout, usage.ru_utime + usage.ru_stime


def dry_run(executable: Path, corpus: Path, n: int) -> list[str]:
    return [str(executable), "benchmark", "synthesize", str(corpus), "--n", str(n), "--dry-run"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of the 6,000-passage case")
    parser.add_argument("--reference-lasagna", type=Path, help="lasagna-rag 0.1.0's executable")
    parser.add_argument("--skip-large", action="store_true", help="skip the 100,000 passages")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="synth-plan-") as tmp:
        corpus = Path(tmp) / "corpus"
        started = time.perf_counter()
        source = build_corpus(corpus, files=2_000, words_per_file=600)
        print(
            f"corpus: 2,000 files x 600 words ({source}), built in "
            f"{time.perf_counter() - started:.1f} s"
        )

        measure(dry_run(LASAGNA, corpus, 1000))  # warm the file cache and .pyc files
        runs = [measure(dry_run(LASAGNA, corpus, 1000)) for _ in range(args.repeat)]
        seconds = [r[0] for r in runs]
        memory = [r[1] for r in runs]
        cpu = [r[3] for r in runs]
        passages = next(line for line in runs[0][2].splitlines() if line.startswith("Passages"))
        print(passages)
        print(
            f"lasagna dry run, --n 1000: best {min(seconds):.2f} s, median "
            f"{statistics.median(seconds):.2f} s (CPU user+system: median "
            f"{statistics.median(cpu):.2f} s); peak memory {max(memory):.0f} MB "
            f"({args.repeat} runs; load average {os.getloadavg()[0]:.1f} on "
            f"{os.cpu_count()} cores)"
        )

        if args.reference_lasagna:
            ref_s, ref_mb, _, _ = measure(dry_run(args.reference_lasagna, corpus, 1000))
            label = "lasagna-rag, measured in this run"
        else:
            ref_s, ref_mb = RECORDED_REFERENCE
            label = "lasagna-rag 0.1.0, recorded in issue 4 on this machine"
        # The best run is the one least slowed by other work on the machine.
        speedup = ref_s / min(seconds)
        share = max(memory) / ref_mb
        print(f"reference ({label}): {ref_s:.1f} s, {ref_mb:.0f} MB")
        median_speedup = ref_s / statistics.median(seconds)
        print(
            f"speed: {speedup:.1f}x faster in the best run, {median_speedup:.1f}x in the median "
            f"one (goal >= 10x: {'met' if speedup >= 10 else 'MISSED'})"
        )
        print(
            f"memory: {share:.2f} of the reference (goal <= 0.25: "
            f"{'met' if share <= 0.25 else 'MISSED'})"
        )

        # Why the word-overlap index is numpy's and not scikit-learn's: the import alone.
        sklearn = [sys.executable, "-c", "import sklearn.feature_extraction.text"]
        try:
            measure(sklearn)  # its bytecode cached, as for lasagna
            import_s, import_mb, _, _ = measure(sklearn)
            print(
                f"for scale: importing scikit-learn's text features alone takes {import_s:.2f} s "
                f"and {import_mb:.0f} MB"
            )
        except SystemExit:
            pass  # scikit-learn is not installed

        if not args.skip_large:
            large = Path(tmp) / "large"
            started = time.perf_counter()
            build_corpus(large, files=5_000, words_per_file=4_000, seed=1)
            print(
                f"\ncorpus: 5,000 files x 4,000 words, built in "
                f"{time.perf_counter() - started:.1f} s"
            )
            elapsed, peak, out, cpu_large = measure(dry_run(LASAGNA, large, 1000))
            print(next(line for line in out.splitlines() if line.startswith("Passages")))
            print(
                f"lasagna dry run over 100,000 passages, --n 1000: {elapsed:.1f} s (CPU "
                f"{cpu_large:.1f} s), peak {peak:.0f} MB (goal < 30 s: "
                f"{'met' if elapsed < 30 else 'MISSED'})"
            )


if __name__ == "__main__":
    main()
