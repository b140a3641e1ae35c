"""BM25 retrieval: formulas, text analysis, ties, and rank-bm25 agreement."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from lasagna_cli.engine.retrieval._bm25 import BM25Index, RetrievalError

DOCS = {
    "d1": "The cat sat on the mat.",
    "d2": "Dogs are running in the park; a dog runs fast.",
    "d3": "A cat and a dog.",
    "d4": "Nothing to see here.",
}


def build(**options: object) -> BM25Index:
    return BM25Index.build(list(DOCS), list(DOCS.values()), **options)  # type: ignore[arg-type]


def test_best_first_and_only_matching_documents() -> None:
    hits = build().search("cat", 10)
    assert [doc for doc, _ in hits] == ["d1", "d3"] or [doc for doc, _ in hits] == ["d3", "d1"]
    assert all(score > 0 for _, score in hits)
    assert "d4" not in dict(hits)
    assert hits[0][1] >= hits[1][1]


def test_lucene_scores_by_hand() -> None:
    index = BM25Index.build(["a", "b"], ["apple banana", "banana banana cherry"], k1=1.2, b=0.75)
    n, avgdl = 2, 2.5
    idf_apple = math.log1p((n - 1 + 0.5) / (1 + 0.5))
    idf_banana = math.log1p((n - 2 + 0.5) / (2 + 0.5))
    norm_a = 1.2 * (1 - 0.75 + 0.75 * 2 / avgdl)
    norm_b = 1.2 * (1 - 0.75 + 0.75 * 3 / avgdl)
    expected_a = idf_apple * 1 / (1 + norm_a) + idf_banana * 1 / (1 + norm_a)
    expected_b = idf_banana * 2 / (2 + norm_b)
    found = dict(index.search("apple banana", 2))
    assert found["a"] == pytest.approx(expected_a, rel=1e-12)
    assert found["b"] == pytest.approx(expected_b, rel=1e-12)


def test_a_repeated_query_term_counts_twice() -> None:
    index = BM25Index.build(["a", "b"], ["apple pie", "banana bread"])
    once = dict(index.search("apple banana", 2))
    twice = dict(index.search("apple apple banana", 2))
    assert twice["a"] == pytest.approx(2 * once["a"])
    assert twice["b"] == pytest.approx(once["b"])


def test_ties_follow_corpus_order_even_at_the_cut() -> None:
    texts = ["same words here"] * 6 + ["other"]
    ids = [f"d{i}" for i in (5, 3, 9, 1, 7, 2)] + ["x"]
    index = BM25Index.build(ids, texts)
    assert [d for d, _ in index.search("same words", 4)] == ["d5", "d3", "d9", "d1"]


@pytest.mark.parametrize("shared", [3000, 40])  # the query's common term in all, or few
def test_a_large_block_of_tied_scores_is_cut_by_corpus_order(shared: int) -> None:
    """Short passages sharing a query term tie by the thousand (numpy's partition was 10x
    slower there): the top k are still the best, then the tied in corpus order."""
    texts = [f"item w{i} pasta" if i < shared else f"w{i} sauce" for i in range(3000)]
    texts[1234] = "item w1234 pasta item"  # one above the tie block
    ids = [f"d{i}" for i in range(3000)]
    found = BM25Index.build(ids, texts).search("item w7 pasta", 12)
    assert [d for d, _ in found][:2] == ["d7", "d1234"]
    tied = [i for i in range(3000) if i not in (7, 1234) and i < shared][:10]
    assert [d for d, _ in found][2:] == [f"d{i}" for i in tied]
    assert len({s for _, s in found[2:]}) == 1


def test_stemming_stopwords_and_their_settings() -> None:
    assert "d2" in dict(build().search("run", 5))  # running, runs -> run
    assert "d2" not in dict(build(stemmer="none").search("run", 5))
    assert build().search("the and of", 5) == []  # only stopwords: nothing to match
    assert build(stopwords="none").search("the", 5) != []


def test_unicode_words_are_tokens() -> None:
    index = BM25Index.build(["a", "b"], ["من هو عبد المطلب", "مكة المكرمة"], stemmer="arabic")
    assert [d for d, _ in index.search("عبد", 5)] == ["a"]


def test_describe_records_the_text_analysis() -> None:
    found = build().describe()
    assert found["tokenizer"] == "lowercase, regex \\w\\w+ (unicode)"
    assert found["stopwords"] == "lucene-english-33"
    assert found["stemmer"].startswith("snowball-english (PyStemmer ")
    assert (found["variant"], found["k1"], found["b"]) == ("lucene", 1.5, 0.75)


def test_search_and_search_many_agree() -> None:
    index = build()
    queries = ["cat", "dog park", "unseen words", "", "running cat mat"]
    assert index.search_many(queries, 3) == [index.search(q, 3) for q in queries]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: BM25Index.build(["a", "a"], ["x", "y"]), "unique"),
        (lambda: BM25Index.build(["a"], ["x", "y"]), "pair up"),
        (lambda: BM25Index.build(["a"], ["x"], stemmer="englsh"), 'did you mean "english"'),
        (lambda: BM25Index.build(["a"], ["x"], b=2.0), "0 <= b <= 1"),
        (lambda: BM25Index.build(["a"], ["x"]).search("x", 0), "k must be"),
    ],
)
def test_bad_settings_are_named(call: object, message: str) -> None:
    with pytest.raises(RetrievalError, match=message):
        call()  # type: ignore[operator]


WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "the", "of"]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=12), min_size=1, max_size=25
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    k=st.integers(1, 30),
)
@example(
    docs=[[], [], ["beta"], ["alpha", "beta"], ["alpha", "beta"], ["alpha"] + ["beta"] * 4,
          ["beta"] * 4 + ["gamma"], ["alpha"] * 3 + ["beta"] * 6, ["alpha"] * 3 + ["beta"] * 6,
          ["alpha"] * 3 + ["beta"] * 8 + ["delta"]],
    query=["alpha"],
    k=1,
)  # fmt: skip
def test_okapi_matches_rank_bm25_exactly(docs: list[list[str]], query: list[str], k: int) -> None:
    """The okapi variant is rank-bm25's BM25Okapi: same scores, same ranking."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    assume(any(docs))  # rank-bm25 divides by zero on an empty vocabulary
    ids = [f"d{i}" for i in range(len(docs))]
    index = BM25Index.build(
        ids, [" ".join(d) for d in docs], variant="okapi", stemmer="none", stopwords="none"
    )
    reference = BM25Okapi(docs)
    scores = reference.get_scores(query)
    order = np.lexsort((np.arange(len(scores)), -scores))
    expected = [(ids[i], float(scores[i])) for i in order if scores[i] > 0][:k]
    found = index.search(" ".join(query), k)
    # The same ranking: at each rank a passage rank-bm25 scores as it scores that rank's.
    # Passages whose scores tie exactly in real numbers may differ in the last bit of the
    # two sums and so in order (tf 1 in 2 words and tf 3 in 9 words, pinned below).
    reference_of = dict(zip(ids, scores, strict=True))
    assert len(found) == len(expected)
    for (doc, mine), (_, theirs) in zip(found, expected, strict=True):
        assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-12)
        assert reference_of[doc] == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    assert len({doc for doc, _ in found}) == len(found)
