"""The seeded plan: which passages each question is written from, in which order.

One `random.Random(seed)` draws, in this order: the factoid passages, each multihop
question's first passage, the unanswerable passages; then it shuffles the items. Each draw
goes through every passage once, in random order, before it reuses any. A multihop
question's second passage is the passage of another document that shares the most words
with the first (see `_overlap`), ties to corpus order, chosen when first asked for (see
`_partners`). Plan position p (from 1) becomes the row id `synth-000p`.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from lasagna_synth._chunking import DEFAULT_CHUNK_WORDS, Chunker, check_chunking, chunk_document
from lasagna_synth._corpus import Corpus, Document, DocumentInfo, Passage, Skipped, text_sha256
from lasagna_synth._errors import SynthError, SynthUsageError
from lasagna_synth._loading import iter_corpus, supported_suffixes
from lasagna_synth._mix import DEFAULT_MIX, QUESTION_TYPES, Mix, QuestionType, ShareLike, parse_mix
from lasagna_synth._overlap import WordIndex
from lasagna_synth._partners import LazyIndex, Partners

NEIGHBOURS = 3
# More questions than anyone writes from one corpus (2,000,000 LLM calls): past it the plan
# and the dry run's exact count, linear in n, take minutes before a word is printed.
MAX_QUESTIONS = 1_000_000


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One planned question: its type and the passages it is written from."""

    position: int  # from 1, in plan order
    id: str
    question_type: QuestionType
    source: Passage  # the passage drawn for it
    use: int  # 1 the first time this type draws the passage, 2 on its first reuse, ...
    _at: int = field(repr=False, compare=False)  # the source's position in the corpus
    _partners: Partners | None = field(default=None, repr=False, compare=False)

    @property
    def passages(self) -> tuple[Passage, ...]:
        """The source; for multihop, then its partner (chosen on first access: see
        `_partners`)."""
        if self._partners is None:
            return (self.source,)
        return (self.source, self._partners.of(self._at))

    @property
    def needs_index(self) -> bool:
        """Whether its passages, or its check's, need the word index (multihop partners,
        unanswerable neighbours)."""
        return self.question_type != "factoid"


@dataclass(frozen=True)
class Plan:
    """Everything decided before any LLM call. Build it with `plan(...)`."""

    root: str
    documents: tuple[DocumentInfo, ...]  # the documents read, in corpus order
    skipped: tuple[Skipped, ...]  # the files left out, with the reason
    passages: tuple[Passage, ...]
    chunker: Chunker
    chunk_words: int
    n: int
    mix: Mix
    seed: int
    counts: Mapping[QuestionType, int]
    items: tuple[PlanItem, ...]
    warnings: tuple[str, ...]
    _positions: Mapping[str, int] = field(repr=False, compare=False)
    _index: LazyIndex = field(repr=False, compare=False)

    @property
    def index(self) -> WordIndex:
        """The word-overlap index over the passages (built on first use)."""
        return self._index.get()

    async def _index_soon(self) -> WordIndex:
        """`index`, built without holding up the event loop it runs in."""
        return await self._index.build_soon()

    def neighbours(self, source: Passage, text: str, k: int = NEIGHBOURS) -> tuple[Passage, ...]:
        """The `k` passages other than `source` sharing the most words with `text`."""
        scores = self.index.text_scores(text)
        best = WordIndex.top(scores, k, self._positions[source.id])
        return tuple(self.passages[i] for i in best)

    def passage_neighbours(self, source: Passage, k: int = NEIGHBOURS) -> tuple[Passage, ...]:
        """The `k` passages sharing the most words with `source` itself (an estimate of
        what an unanswerable check will see, before its question exists)."""
        at = self._positions[source.id]
        best = self._index.for_passage(at).nearest(at, k)
        return tuple(self.passages[i] for i in best)

    @property
    def documents_with_passages(self) -> int:
        return len({p.doc_id for p in self.passages})


def _draw(rng: random.Random, size: int, k: int) -> list[tuple[int, int]]:
    """`k` passage numbers: whole random permutations of range(size), then a random
    sample for the rest; each with its use number (1 for the first pass)."""
    drawn: list[tuple[int, int]] = []
    use = 1
    while k > 0:
        take = min(k, size)
        drawn.extend((i, use) for i in rng.sample(range(size), take))
        k -= take
        use += 1
    return drawn


def largest_n_without_reuse(mix: Mix, pool: int, n: int) -> int:
    """The largest number of questions (at most `n`) whose counts all fit in `pool`."""
    bound = n
    for _, share in mix.shares:
        if share > 0:
            # count >= floor(share * n): past (pool + 1) / share some count exceeds pool
            bound = min(bound, math.ceil((pool + 1) / share))
    for candidate in range(bound, 0, -1):
        if all(c <= pool for c in mix.counts(candidate).values()):
            return candidate
    return 0


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SynthUsageError(f"the number of questions must be a whole number >= 1, got {n!r}")
    if n > MAX_QUESTIONS:
        raise SynthUsageError(
            f"the number of questions must be at most {MAX_QUESTIONS:,} per plan "
            f"({2 * MAX_QUESTIONS:,} LLM calls), got {n:,}; write a larger set in parts, "
            "each with its own seed and output file"
        )


def _no_step(stage: str, done: int, total: int | None) -> None:
    pass


def plan(
    corpus: str | os.PathLike[str] | Corpus,
    *,
    n: int = 100,
    mix: str | Mapping[str, ShareLike] | Mix = DEFAULT_MIX,
    seed: int = 42,
    chunker: Chunker = "fixed",
    chunk_words: int = DEFAULT_CHUNK_WORDS,
    on_step: Callable[[str, int, int | None], None] | None = None,
    include_license: bool = False,
) -> Plan:
    """Load (unless given a Corpus), chunk and plan; refuse, before any call, a plan that
    cannot be made. `on_step(stage, done, total)` is told the steps as they go: "reading
    and cutting documents" (total None: the folder is read as it is walked), then
    "planning N questions"; nothing is drawn here. A license file in a folder is read only
    with `include_license`."""
    _check_n(n)
    parsed_mix = parse_mix(mix)
    check_chunking(chunker, chunk_words)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SynthUsageError(f"the seed must be a whole number, got {seed!r}")
    # Documents are chunked as they are read, so that only the passages stay in memory.
    entries: Iterable[Document | Skipped]
    if isinstance(corpus, Corpus):
        root, entries = corpus.root, (*corpus.documents, *corpus.skipped)
    else:
        root, entries = os.fspath(corpus), iter_corpus(corpus, include_license=include_license)
    documents: list[DocumentInfo] = []
    skipped: list[Skipped] = []
    chunks: list[Passage] = []
    step = on_step or _no_step
    reading = f"reading and cutting the documents of {root}"
    step(reading, 0, None)
    for entry in entries:
        if isinstance(entry, Skipped):
            skipped.append(entry)
            continue
        cut = chunk_document(entry, chunker, chunk_words)
        digest = cut[0].doc_sha256 if cut else text_sha256(entry.text)
        documents.append(DocumentInfo(entry.id, entry.kind, digest))
        chunks.extend(cut)
        step(reading, len(documents), None)
    step(reading, len(documents), len(documents))
    if not documents:
        found = (
            f"{len(skipped)} file(s), all skipped (first: {skipped[0].path}: {skipped[0].reason})"
            if skipped
            else "no files"
        )
        raise SynthError(
            f"no readable document in {root}: found {found}; expected files of type "
            f"{', '.join(supported_suffixes())}"
        )
    passages = tuple(chunks)
    del chunks
    if not passages:
        raise SynthError(
            f"no passage in {root}: the {len(documents)} readable document(s) "
            f"are all shorter than a passage (20 words); add longer documents"
        )
    counts = parsed_mix.counts(n)
    doc_spans: dict[str, tuple[int, int]] = {}
    for i, passage in enumerate(passages):
        start, _ = doc_spans.get(passage.doc_id, (i, i))
        doc_spans[passage.doc_id] = (start, i + 1)
    if counts["multihop"] > 0 and len(doc_spans) < 2:
        only = next(iter(doc_spans))
        raise SynthError(
            f"multihop questions need passages from two documents, but only one document "
            f"has passages ({only}); add documents, or set multihop=0 in the mix"
        )

    size = len(passages)
    warnings = []
    if any(c > size for c in counts.values()):
        best = largest_n_without_reuse(parsed_mix, size, n)
        for question_type in QUESTION_TYPES:
            if counts[question_type] > size:
                warnings.append(
                    f"{counts[question_type]} {question_type} questions asked but the corpus "
                    f"has {size} passages, so passages will be reused; the largest n without "
                    f"reuse is {best}"
                )

    planning = f"planning {n:,} question(s) over {size:,} passages"
    step(planning, 0, n)
    rng = random.Random(seed)
    draws = {t: _draw(rng, size, counts[t]) for t in QUESTION_TYPES}
    queries = [i for t in ("multihop", "unanswerable") for i, _ in draws[t]]
    index = LazyIndex(passages, queries)
    partners = Partners(passages, doc_spans, index)
    unordered = [(t, i, use) for t in QUESTION_TYPES for i, use in draws[t]]
    rng.shuffle(unordered)
    step(planning, n, n)
    width = max(4, len(str(n)))
    items = tuple(
        PlanItem(
            position,
            f"synth-{position:0{width}d}",
            question_type,
            passages[i],
            use,
            i,
            partners if question_type == "multihop" else None,
        )
        for position, (question_type, i, use) in enumerate(unordered, start=1)
    )
    return Plan(
        root=root,
        documents=tuple(documents),
        skipped=tuple(skipped),
        passages=passages,
        chunker=chunker,
        chunk_words=chunk_words,
        n=n,
        mix=parsed_mix,
        seed=seed,
        counts=counts,
        items=items,
        warnings=tuple(warnings),
        _positions={p.id: i for i, p in enumerate(passages)},
        _index=index,
    )
