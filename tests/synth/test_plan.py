"""The seeded plan: draw order, no reuse before every passage is used, partners, neighbours,
refusals before any call."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_synth import (
    QUESTION_TYPES,
    Corpus,
    Document,
    Passage,
    SynthError,
    SynthUsageError,
    parse_mix,
    plan,
)

VOCAB = [f"term{i:03d}" for i in range(60)] + ["a", "of", "the", "ab1", "x_yz"]


def corpus_of(texts: dict[str, str]) -> Corpus:
    return Corpus("mem", tuple(Document(k, v, "text") for k, v in texts.items()), ())


def random_corpus(seed: int, docs: int = 5, passages_per_doc: tuple[int, int] = (1, 4)) -> Corpus:
    rng = random.Random(seed)
    texts = {}
    for d in range(docs):
        count = rng.randint(*passages_per_doc)
        words = [rng.choice(VOCAB) for _ in range(200 * count)]
        texts[f"doc{d}.md"] = " ".join(words)
    return corpus_of(texts)


def overlap(a: str, b: str) -> int:
    def bag(text: str) -> set[str]:
        return set(re.findall(r"[^\W_]{4,}", text.lower()))

    return len(bag(a) & bag(b))


def reference_items(corpus: Corpus, n: int, mix: str, seed: int) -> list[tuple[str, list[str]]]:
    """The plan as the issue words it, recomputed by brute force."""
    p = plan(corpus, n=n, mix=mix, seed=seed)  # for its passages only
    passages = p.passages
    counts = parse_mix(mix).counts(n)
    rng = random.Random(seed)

    def draw(k: int) -> list[int]:
        out: list[int] = []
        while k > 0:
            take = min(k, len(passages))
            out += rng.sample(range(len(passages)), take)
            k -= take
        return out

    factoid, multihop, unanswerable = (draw(counts[t]) for t in QUESTION_TYPES)
    items: list[tuple[str, list[str]]] = [("factoid", [passages[i].id]) for i in factoid]
    for i in multihop:
        others = [j for j, q in enumerate(passages) if q.doc_id != passages[i].doc_id]
        best = max(others, key=lambda j: (overlap(passages[i].text, passages[j].text), -j))
        items.append(("multihop", [passages[i].id, passages[best].id]))
    items += [("unanswerable", [passages[i].id]) for i in unanswerable]
    rng.shuffle(items)
    return items


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(0, 2**31))
def test_plan_follows_the_draw_order_and_partner_rule(corpus_seed: int, n: int, seed: int) -> None:
    corpus = random_corpus(corpus_seed)
    mix = "factoid=0.5,multihop=0.3,unanswerable=0.2"
    got = plan(corpus, n=n, mix=mix, seed=seed)
    assert [(i.question_type, [p.id for p in i.passages]) for i in got.items] == reference_items(
        corpus, n, mix, seed
    )
    assert [i.id for i in got.items] == [f"synth-{k:04d}" for k in range(1, n + 1)]
    assert [i.position for i in got.items] == list(range(1, n + 1))


def test_planning_counts_no_overlap_and_any_exact_index_gives_the_same_partners() -> None:
    # Partners are chosen when first asked for: by a dry run with the index restricted to
    # the words of the drawn passages, by a run with the full index it builds anyway.
    corpus = random_corpus(3, docs=8)
    mix = "factoid=0.4,multihop=0.4,unanswerable=0.2"
    restricted = plan(corpus, n=30, mix=mix, seed=11)
    full = plan(corpus, n=30, mix=mix, seed=11)
    assert not restricted._index.built and restricted._index._of_queries is None
    assert full.index.size == len(full.passages)  # built first: every partner comes from it
    assert [i.passages for i in restricted.items] == [i.passages for i in full.items]
    assert restricted._index._of_queries is not None and not restricted._index.built
    assert full._index._of_queries is None
    assert sum(len(i.passages) == 2 for i in full.items) == 12


def test_same_corpus_and_seed_give_the_same_plan_and_another_seed_does_not() -> None:
    corpus = random_corpus(1, docs=8)
    a = plan(corpus, n=30, seed=7)
    b = plan(corpus, n=30, seed=7)
    c = plan(corpus, n=30, seed=8)
    assert a.items == b.items
    assert a.items != c.items


def test_each_draw_uses_every_passage_before_reusing_any() -> None:
    corpus = random_corpus(3, docs=3, passages_per_doc=(2, 2))  # 6 passages
    p = plan(corpus, n=20, mix="factoid=0.7,multihop=0.3", seed=1)  # 14 factoid, 6 multihop
    factoid = [i for i in sorted(p.items, key=lambda i: i.position) if i.question_type == "factoid"]
    assert len(p.passages) == 6 and len(factoid) == 14
    uses: dict[int, list[str]] = {}
    for item in factoid:
        uses.setdefault(item.use, []).append(item.passages[0].id)
    assert sorted(uses[1]) == sorted(q.id for q in p.passages)
    assert sorted(uses[2]) == sorted(q.id for q in p.passages)
    assert len(uses[3]) == 2 and len(set(uses[3])) == 2
    assert p.warnings == (
        "14 factoid questions asked but the corpus has 6 passages, so passages will be reused; "
        "the largest n without reuse is 9",
    )
    # the named n really is the largest without reuse
    mix = parse_mix("factoid=0.7,multihop=0.3")
    assert mix.counts(9) == {"factoid": 6, "multihop": 3, "unanswerable": 0}
    assert all(max(mix.counts(k).values()) > 6 for k in range(10, 200))


def test_multihop_partner_is_the_best_overlap_in_another_document_ties_to_corpus_order(
    make: type,
) -> None:
    texts = {
        "a.md": "alpha bravo charlie delta " + make.words(40, stem="aaaa"),
        "b.md": "alpha bravo " + make.words(40, stem="bbbb"),  # shares 2 with a
        "c.md": "alpha bravo charlie " + make.words(40, stem="cccc"),  # shares 3 with a
        "d.md": "alpha bravo charlie " + make.words(40, stem="dddd"),  # also 3: c comes first
    }
    p = plan(corpus_of(texts), n=1, mix="multihop=1", seed=0)
    (item,) = p.items
    partner = {"a.md": "c.md#0", "b.md": "a.md#0", "c.md": "a.md#0", "d.md": "a.md#0"}
    assert item.passages[1].id == partner[item.passages[0].doc_id]
    for doc_id, expected in partner.items():
        index = [q.doc_id for q in p.passages].index(doc_id)
        assert p.passages[p.index.best_outside(index, index, index + 1)].id == expected


def test_partner_with_no_shared_word_is_the_first_passage_of_another_document(
    make: type,
) -> None:
    texts = {"a.md": make.words(30, stem="qqqq"), "b.md": make.words(30, stem="rrrr")}
    p = plan(corpus_of(texts), n=2, mix="multihop=1", seed=3)
    assert sorted(tuple(q.id for q in i.passages) for i in p.items) == [
        ("a.md#0", "b.md#0"),
        ("b.md#0", "a.md#0"),
    ]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.sampled_from(VOCAB), max_size=30))
def test_neighbours_are_the_three_best_others_ties_to_corpus_order(
    corpus_seed: int, question_words: list[str]
) -> None:
    p = plan(random_corpus(corpus_seed, docs=4), n=1, mix="factoid=1", seed=0)
    question = " ".join(question_words) + "?"
    source = p.passages[len(p.passages) // 2]
    others = [i for i, q in enumerate(p.passages) if q.id != source.id]
    expected = sorted(others, key=lambda i: (-overlap(question, p.passages[i].text), i))[:3]
    assert [q.id for q in p.neighbours(source, question)] == [p.passages[i].id for i in expected]


def test_refusals_before_any_call(tmp_path: Path, make: type) -> None:
    corpus = corpus_of({"a.md": make.words(50)})
    for bad in (0, -3):
        with pytest.raises(SynthUsageError, match=f"whole number >= 1, got {bad}"):
            plan(corpus, n=bad)
    with pytest.raises(SynthError, match=r"no passage in mem: the 1 readable document\(s\)"):
        plan(corpus_of({"a.md": "too short"}), n=5)
    with pytest.raises(
        SynthError,
        match=r"multihop questions need passages from two documents, but only one document "
        r"has passages \(a.md\); add documents, or set multihop=0 in the mix",
    ):
        plan(corpus_of({"a.md": make.words(50), "b.md": "short"}), n=10)
    # one document is fine when no multihop question is asked
    assert plan(corpus, n=3, mix="factoid=0.7,unanswerable=0.3").counts["multihop"] == 0
    # multihop share that rounds to no question is not "asked"
    assert len(plan(corpus, n=1).items) == 1
    with pytest.raises(SynthError, match=r"no readable document in .*: found no files"):
        plan(tmp_path, n=5)


def test_ids_widen_past_9999(make: type) -> None:
    p = plan(corpus_of({"a.md": make.words(100)}), n=10_001, mix="factoid=1", seed=0)
    assert p.items[0].id == "synth-00001" and p.items[-1].id == "synth-10001"
    assert sorted(i.use for i in p.items) == list(range(1, 10_002))  # one passage, reused


def test_passages_are_what_the_chunker_made(make: type) -> None:
    p = plan(corpus_of({"a.md": make.words(450)}), n=2, mix="factoid=1", chunk_words=200)
    assert [q.id for q in p.passages] == ["a.md#0", "a.md#1", "a.md#2"]
    assert all(isinstance(q, Passage) for q in p.passages)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=st.characters(max_codepoint=127), max_size=200),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200),
    )
)
def test_index_words_are_the_rule_words(text: str) -> None:
    from lasagna_synth._overlap import overlap_words, word_keys, word_runs

    words = overlap_words(text)
    assert words == set(re.findall(r"[^\W_]{4,}", text.lower()))
    assert word_keys(text) == {w.encode() for w in words}
    assert {w.decode() for w in word_runs(text) if len(w.decode()) >= 4} == words


RANDOM_WORDS = st.lists(
    st.sampled_from(["alpha", "bravo", "CHARLIE", "delta", "echo", "foxtrot", "golf", "x1y2",
                     "hotel", "Ünïcode", "naïve", "ab", "abc", "a-b-c-d", "word_s", "1234"]),
    min_size=20,
    max_size=60,
).map(" ".join)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(RANDOM_WORDS, min_size=1, max_size=3), min_size=2, max_size=5))
def test_the_restricted_index_answers_as_the_full_one(docs: list[list[str]]) -> None:
    # Planning uses an index over the words of the passages it asks about; it must give the
    # same partners and neighbours as the index over every word.
    from lasagna_synth import Corpus, Document
    from lasagna_synth._overlap import WordIndex

    documents = tuple(
        Document(f"d{i}.md", "\n\n".join(paragraphs), "text") for i, paragraphs in enumerate(docs)
    )
    corpus = Corpus("mem", documents, ())
    p = plan(corpus, n=6, mix="factoid=1/3,multihop=1/3,unanswerable=1/3", seed=1, chunk_words=20)
    full = WordIndex(p.passages)
    spans: dict[str, tuple[int, int]] = {}
    for i, passage in enumerate(p.passages):
        spans[passage.doc_id] = (spans.get(passage.doc_id, (i, i))[0], i + 1)
    for item in p.items:
        first = p.passages.index(item.passages[0])
        if item.question_type == "multihop":
            start, end = spans[item.passages[0].doc_id]
            assert item.passages[1] is p.passages[full.best_outside(first, start, end)]
        if item.question_type == "unanswerable":
            want = WordIndex.top(full.passage_scores(first), 3, first)
            assert p.passage_neighbours(item.passages[0]) == tuple(p.passages[i] for i in want)


OVERLAP_WORDS = st.sampled_from(
    ["alpha", "bravo", "CHARLIE", "delta", "echo", "x1y2", "Ünïcode", "naïve", "abc", "1234"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(OVERLAP_WORDS, max_size=12), min_size=1, max_size=12),
    st.data(),
    st.integers(0, 3),
)
def test_query_overlaps_answer_as_the_full_index(
    texts: list[list[str]], data: st.DataObject, k: int
) -> None:
    # A dry run's overlaps of the passages it asks about, in plain Python, against numpy's
    # full index: the same best passage outside any range and the same k nearest, ties in
    # corpus order; also when a query has 256 words or more (a field of two bytes).
    from lasagna_synth._overlap import WordIndex
    from lasagna_synth._query_overlaps import QueryOverlaps

    long = " ".join(f"w{i:04d}" for i in range(300))
    passages = [Passage(f"d.md#{i}", "d.md", i, " ".join(t)) for i, t in enumerate(texts)]
    if data.draw(st.booleans()):
        passages.append(Passage("long.md#0", "long.md", 0, long + " alpha"))
    queries = data.draw(st.sets(st.integers(0, len(passages) - 1), min_size=1))
    ours, full = QueryOverlaps(passages, queries), WordIndex(passages)
    for query in queries:
        start = data.draw(st.integers(0, len(passages)))
        end = data.draw(st.integers(start, len(passages)))
        assert ours.best_outside(query, start, end) == full.best_outside(query, start, end)
        assert ours.nearest(query, k) == full.nearest(query, k)
