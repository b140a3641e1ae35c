"""normalize_answer, exact_match and f1 equal the official SQuAD scripts for every input."""

from __future__ import annotations

from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lasagna_metrics import MetricsError, exact_match, exact_match_and_f1, f1, normalize_answer

# Pieces that exercise every branch of the normalisation: articles in all cases and glued to
# punctuation or to non-ASCII symbols, ASCII and non-ASCII punctuation, Unicode whitespace,
# characters whose lower case is longer (İ), digits of other scripts, and plain words.
PIECES = [
    "a", "an", "the", "The", "A", "AN", "THE", "tHe", "theatre", "another", "and",
    ",", ".", "-", "'", '"', "!", "?", "(", ")", "_", "`", "~",
    " ", "  ", "\t", "\n", "\u00a0", "\u2009", "\u3000", "\x1c", "\x85",
    "«", "»", "’", "“", "”", "—", "…", "¿",
    "İ", "ß", "é", "É", "ǅ", "Σ", "ς", "٣", "²", "ⅷ", "中文", "🙂", "\u0301",
    "cat", "Cat", "CAT", "dog", "sat", "on", "mat", "1", "42", "U.S.", "rock-n-roll",
]  # fmt: skip

pieces_text = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
texts = st.one_of(st.text(max_size=40), pieces_text)
references = st.one_of(texts, st.lists(texts, max_size=4))


def as_list(refs: str | list[str]) -> list[str]:
    return [refs] if isinstance(refs, str) else refs


@settings(max_examples=400)
@given(texts)
@example("The  Eiffel-Tower!")
@example("İthe")
@example("«the»")
def test_normalize_answer_equals_official(official: ModuleType, text: str) -> None:
    assert normalize_answer(text) == official.normalize_answer(text)
    assert normalize_answer(text) == official.normalize_answer_v1(text)


@settings(max_examples=600)
@given(texts, references)
@example("", "")
@example("", [])
@example("the", "a")
@example("", ["the", "Paris"])
@example("Paris", ["the", "a"])
@example("the the cat cat", ["cat the cat", "cat"])
def test_v2_scores_equal_official(
    official: ModuleType, prediction: str, refs: str | list[str]
) -> None:
    want_em = official.v2_exact(prediction, as_list(refs))
    want_f1 = official.v2_f1(prediction, as_list(refs))
    assert exact_match(prediction, refs) == want_em
    assert f1(prediction, refs) == want_f1  # bit-identical, not approximately
    assert exact_match_and_f1(prediction, refs) == (want_em, want_f1)
    assert type(f1(prediction, refs)) is float
    assert type(exact_match(prediction, refs)) is float


@settings(max_examples=400)
@given(texts, st.lists(texts, min_size=1, max_size=4))
@example("", [""])
@example("", ["the", "Paris"])
def test_v1_scores_equal_official(official: ModuleType, prediction: str, refs: list[str]) -> None:
    assert exact_match(prediction, refs, version="1.1") == official.v1_exact(prediction, refs)
    assert f1(prediction, refs, version="1.1") == official.v1_f1(prediction, refs)
    assert exact_match_and_f1(prediction, refs, version="1.1") == (
        official.v1_exact(prediction, refs),
        official.v1_f1(prediction, refs),
    )


@given(texts, references)
def test_bounds(prediction: str, refs: str | list[str]) -> None:
    for version in ("2.0", "1.1"):
        if version == "1.1" and not as_list(refs):
            continue
        em = exact_match(prediction, refs, version=version)  # type: ignore[arg-type]
        score = f1(prediction, refs, version=version)  # type: ignore[arg-type]
        assert em in (0.0, 1.0)
        assert 0.0 <= score <= 1.0
        if em == 1.0 and normalize_answer(prediction):
            assert score == 1.0  # an exact match of real tokens is a perfect F1


@given(texts)
def test_a_text_against_itself(text: str) -> None:
    assert exact_match(text, text) == 1.0
    assert f1(text, text) == 1.0  # v2.0: empty against empty agrees too
    assert f1(text, text, version="1.1") == (1.0 if normalize_answer(text) else 0.0)


@pytest.mark.parametrize(
    ("prediction", "refs", "em", "score"),
    [
        # Either side empty after normalisation: 1.0 only if both are.
        ("", "", 1.0, 1.0),
        ("the", "a", 1.0, 1.0),
        ("!!!", "An", 1.0, 1.0),
        ("Paris", "", 0.0, 0.0),
        ("", "Paris", 0.0, 0.0),
        # References normalising to nothing are dropped; [""] stands in when none remain.
        ("", [], 1.0, 1.0),
        ("Paris", [], 0.0, 0.0),
        ("", ["the", "Paris"], 0.0, 0.0),
        ("an", ["a", "the"], 1.0, 1.0),
        # Punctuation: ASCII only, removed inside words too.
        ("U.S.A.", "USA", 1.0, 1.0),
        ("rock-n-roll", "rocknroll", 1.0, 1.0),
        ("«Paris»", "Paris", 0.0, 0.0),
        ("Paris!", "paris", 1.0, 1.0),
        # Articles: whole words only.
        ("The Beatles", "beatles", 1.0, 1.0),
        ("Theatre", "atre", 0.0, 0.0),
        ("an apple a day", "apple day", 1.0, 1.0),
        # Unicode: case folds through lower(); accents stay.
        ("CAFÉ", "café", 1.0, 1.0),
        ("naïve", "naive", 0.0, 0.0),
        # Several references: the best one counts.
        ("the cat sat", ["dog", "a cat", "cat sat down"], 0.0, 0.8),
        ("cat", ["dog", "the Cat"], 1.0, 1.0),
        # Repeated tokens count as many times as both sides have them.
        ("cat cat cat", "cat", 0.0, 0.5),
    ],
)
def test_edge_cases(prediction: str, refs: str | list[str], em: float, score: float) -> None:
    assert exact_match(prediction, refs) == em
    assert f1(prediction, refs) == pytest.approx(score)


def test_v1_option_scores_empty_against_empty_as_zero() -> None:
    assert f1("", "", version="1.1") == 0.0
    assert f1("the", "a", version="1.1") == 0.0
    assert exact_match("", "", version="1.1") == 1.0
    # v1.1 keeps references that normalise to nothing, so "" matches "the" exactly.
    assert exact_match("", ["the", "Paris"], version="1.1") == 1.0
    assert exact_match("", ["the", "Paris"]) == 0.0


def test_v1_without_references_is_an_error() -> None:
    with pytest.raises(MetricsError, match="at least one reference"):
        f1("Paris", [], version="1.1")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: f1(None, "x"), "prediction: expected a string, found NoneType"),  # type: ignore[arg-type]
        (lambda: exact_match("x", 3), "references: expected a string or a sequence"),  # type: ignore[arg-type]
        (lambda: f1("x", ["ok", 7]), r"references\[1\]: expected a string, found int"),  # type: ignore[list-item]
        (lambda: f1("x", "y", version="3"), 'version: expected "2.0" or "1.1"'),  # type: ignore[arg-type]
        (lambda: normalize_answer(b"x"), "text: expected a string, found bytes"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_is_a_metrics_error(call: object, message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        call()  # type: ignore[operator]


@settings(max_examples=60)
@given(st.lists(st.sampled_from(PIECES), min_size=60, max_size=400).map(" ".join), texts)
def test_long_answers_are_scored_the_same(official: ModuleType, long: str, short: str) -> None:
    # Texts over 256 characters skip the normalisation cache; the results must not change.
    for prediction, refs in ((long, [short, long[:300]]), (short, [long]), (long, long)):
        assert f1(prediction, refs) == official.v2_f1(prediction, as_list(refs))
        assert exact_match(prediction, refs) == official.v2_exact(prediction, as_list(refs))


# Every path of the normaliser: ASCII text (one bytes.translate), short non-ASCII text
# (str.translate), long non-ASCII text (through its UTF-8 bytes, lone surrogates included),
# and the article regex that skips ahead to the next "a" or "t".
TRICKY = [*PIECES, "\ud800", "\udfff", "\x01", "\x7f", "\x1f", "ta", "at", "ata", "tthe", "aan"]
any_text = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=200),  # lone surrogates too
    st.lists(st.sampled_from(TRICKY), max_size=80).map("".join),
    st.lists(st.sampled_from(TRICKY), max_size=40).map(" ".join),
)


@settings(max_examples=1500)
@given(any_text)
@example("\ud800 the" + "é" * 60)
@example("a" * 47 + "é")
@example("«the»" * 20)
@example("Ata the\x01the \x7fan tthe aan")
def test_every_normalisation_path_equals_official(official: ModuleType, text: str) -> None:
    assert normalize_answer(text) == official.normalize_answer(text)


@settings(max_examples=300)
@given(st.lists(st.tuples(any_text, st.lists(any_text, max_size=3)), min_size=1, max_size=6))
def test_scores_in_sequence_equal_official(
    official: ModuleType, pairs: list[tuple[str, list[str]]]
) -> None:
    # exact_match and f1 share the last call's tokens: any order of calls on any pairs
    # gives the official scores.
    for prediction, refs in pairs + pairs[::-1]:
        assert f1(prediction, refs) == official.v2_f1(prediction, refs)
        assert exact_match(prediction, refs) == official.v2_exact(prediction, refs)
        assert f1(prediction, tuple(refs)) == official.v2_f1(prediction, refs)
        assert exact_match(prediction, refs[0] if refs else "") == official.v2_exact(
            prediction, [refs[0] if refs else ""]
        )
        if refs:
            assert f1(prediction, refs, version="1.1") == official.v1_f1(prediction, refs)


def test_a_list_changed_between_the_two_calls_is_scored_as_it_is_now() -> None:
    refs = ["Paris"]
    assert exact_match("Paris", refs) == 1.0
    refs[0] = "London"
    assert f1("Paris", refs) == 0.0
    assert exact_match("Paris", refs) == 0.0
    refs.append("the Paris")
    assert exact_match("Paris", refs) == 1.0
    refs.append(7)  # type: ignore[arg-type]
    with pytest.raises(MetricsError, match=r"references\[2\]: expected a string, found int"):
        f1("Paris", refs)


def test_the_shared_tokens_never_call_an_objects_own_equality() -> None:
    class Touchy(str):
        def __eq__(self, other: object) -> bool:
            raise AssertionError("compared")

        __hash__ = str.__hash__

    refs = ["Paris", Touchy("the Paris")]
    assert exact_match("Paris", refs) == 1.0
    assert f1("Paris", refs) == 1.0
    assert f1("Paris", ["Paris", Touchy("London")]) == 1.0
    with pytest.raises(MetricsError, match="version"):
        f1("Paris", refs, version="2")  # type: ignore[arg-type]
