"""MCQ grading (kag's rule) and reading the chosen option out of a verbose answer."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import MetricsError, extract_choice, grade_mcq

OPTIONS = {"a": "Vitamin A", "b": "Vitamin C", "c": "Iron", "d": "None of the above"}


@pytest.mark.parametrize(
    ("answer", "correct", "expected"),
    [("b", "b", True), ("  B \n", "b", True), ("b", " B", True), ("c", "b", False),
     ("b) Vitamin C", "b", False), ("", "b", False)],
)  # fmt: skip
def test_kag_rule_is_a_trimmed_case_insensitive_id_match(
    answer: str, correct: str, expected: bool
) -> None:
    assert grade_mcq(answer, correct) is expected


@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ("b", "b"),
        (" B ", "b"),
        ("(b) Vitamin C", "b"),
        ("b) Vitamin C", "b"),
        ("B. Vitamin C", "b"),
        ("[c] Iron", "c"),
        ("d: none of the above", "d"),
        ("c - Iron", "c"),
        ("The answer is (b) Vitamin C", "b"),
        ("The answer is (B).", "b"),
        ("Answer: c", "c"),
        ("answer: c.", "c"),
        ("The correct option is D.", "d"),
        ("I choose option a, since it is fat-soluble.", "a"),
        ("The answer is B because citrus fruit holds it.", "b"),
        ("vitamin c", "b"),
        ("Iron.", "c"),
        # Not choices: an article, a bare letter in prose, an unknown text.
        ("the answer is a vitamin found in fruit", None),
        ("Citrus fruit holds it", None),
        ("a lot of people take vitamin supplements", None),
        ("", None),
    ],
)
def test_extract_choice(answer: str, choice: str | None) -> None:
    assert extract_choice(answer, OPTIONS) == choice


@pytest.mark.parametrize(
    "answer",
    [
        "a: two\nb: three\nc: four",  # the options echoed as the prompt shows them
        "a) two\nb) three\nc) four",
        "(a) two\n(b) three",
        "- a. two\n- b. three",
        "(a) two (b) three (c) four",  # on one line
        "Option a: two\nOption b: three",
        "b: three\na: two",
    ],
)
def test_a_reply_listing_several_options_picks_none(answer: str) -> None:
    assert extract_choice(answer, {"a": "two", "b": "three", "c": "four"}) is None


def test_a_listing_followed_by_a_committed_answer_picks_it() -> None:
    options = {"a": "two", "b": "three", "c": "four"}
    assert extract_choice("a: two\nb: three\nc: four\n\nThe answer is (b).", options) == "b"
    assert extract_choice("a) two\nb) three\nAnswer: c", options) == "c"
    # Listing the same option twice is still one choice, and so is mentioning another in
    # the explanation.
    assert extract_choice("(b) three\n(b) is right", options) == "b"
    assert extract_choice("(b) three, since (a) is too small", options) == "b"


# Option ids and texts that never spell "answer", "option", "choice" or "i choose".
_IDS = st.lists(
    st.text("abcdefgh12345", min_size=1, max_size=3), min_size=2, max_size=6, unique=True
)
_TEXT = st.text("bcdefghjklmnpqrstuvxyz ", min_size=1, max_size=20).filter(str.strip)
_STYLES = ("{}: {}", "{}) {}", "({}) {}", "{}. {}", "[{}] {}", "- {}: {}")


@settings(max_examples=300, deadline=None)
@given(_IDS, st.data())
def test_echoing_the_options_is_no_choice_and_a_marked_one_is(
    ids: list[str], data: st.DataObject
) -> None:
    options = {i: data.draw(_TEXT) for i in ids}
    style = data.draw(st.sampled_from(_STYLES))
    listing = "\n".join(
        style.format(i, text) for i, text in data.draw(st.permutations(list(options.items())))
    )
    assert extract_choice(listing, options) is None
    pick = data.draw(st.sampled_from(ids))
    for reply in (
        pick,
        f" {pick.upper()} ",
        f"({pick})",
        f"{pick}) {options[pick]}",
        f"The answer is ({pick}) {options[pick]}",
        f"{listing}\n\nAnswer: ({pick})",
    ):
        assert extract_choice(reply, options) == pick, reply


def test_extract_choice_returns_the_id_as_spelled_in_options() -> None:
    assert extract_choice("the answer is (b)", {"A": "x", "B": "y"}) == "B"
    assert extract_choice("b) y", ["A", "B"]) == "B"


def test_longer_ids_win_over_their_prefixes() -> None:
    ids = [str(i) for i in range(1, 12)]
    assert extract_choice("Answer: 10", ids) == "10"
    assert extract_choice("(11) eleven", ids) == "11"
    assert extract_choice("1) one", ids) == "1"


def test_ids_are_matched_literally() -> None:
    assert extract_choice("Answer: (a.b)", ["a.b", "axb"]) == "a.b"
    assert extract_choice("Answer: (axb)", ["a.b", "axb"]) == "axb"


def test_grading_a_verbose_answer_with_options() -> None:
    assert grade_mcq("The answer is (b) Vitamin C", "b", OPTIONS)
    assert not grade_mcq("The answer is (c) Iron", "b", OPTIONS)
    assert not grade_mcq("I am not sure", "b", OPTIONS)  # no option named: incorrect
    assert grade_mcq("b", "B", iter(["a", "b"]))  # an iterator of ids is read once


def test_bad_input_is_a_metrics_error() -> None:
    with pytest.raises(MetricsError, match="not one of the option ids"):
        grade_mcq("b", "e", OPTIONS)
    with pytest.raises(MetricsError, match="correct: expected the correct option id"):
        grade_mcq("b", "")
    with pytest.raises(MetricsError, match="options: expected option ids"):
        extract_choice("b", "abcd")
    with pytest.raises(MetricsError, match="answer: expected a string"):
        extract_choice(None, OPTIONS)  # type: ignore[arg-type]
    with pytest.raises(MetricsError, match="non-empty string ids"):
        extract_choice("b", ["a", ""])
