"""is_refusal: refusal phrases on word boundaries, any case, either apostrophe."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import MetricsError, is_refusal

REFUSALS = [
    "Not mentioned",
    "not mentioned in the conversation.",
    "This is NOT MENTIONED anywhere.",
    "The date isn't mentioned.",
    "It was never mentioned.",
    "The text does not mention her age.",
    "There is no mention of a dog.",
    "The context does not specify.",
    "No information",
    "There is no relevant information about that.",
    "not enough information to say",
    "Insufficient information.",
    "insufficient context to answer",
    "The documents do not contain any information on this.",
    "This question cannot be answered from the passages.",
    "It can't be answered.",
    "I can not answer that.",
    "I am unable to determine the year.",
    "The answer cannot be determined.",
    "Unanswerable",
    "Unknown",
    "The location is unknown.",
    "I don't know.",
    "I don’t know",  # typographic apostrophe
    "I don\u02bct know",
    "I do not know",
    "dont know",
    "No idea.",
    "None",
    "none.",
    "Not\nmentioned",
    # Chat models' refusals, as FinanceBench's human labellers marked them.
    "I'm sorry, but the filing does not include the 2018 capital expenditure.",
    "I’m sorry, but that figure is not in the excerpt.",
    "I apologize, but the statements end in 2017.",
    "I cannot provide the ratio without the balance sheet.",
    "I'm unable to provide that number.",
    "I don't have access to the cash flow statement.",
    "I do not have the data for Q2 of FY2024.",
    "You haven't provided the income statement.",
    "There is no explicit mention of restructuring costs.",
]

ANSWERS = [
    "Paris",
    "Nonetheless, she went to Paris.",
    "None of the three players scored.",
    "He walked unknowingly into the trap.",
    "The known universe",
    "She mentioned it in 1999.",
    "Mentioned twice, both in May.",
    "It cannot rain in the desert every day.",
    "informational interviews",
    "I know the answer: 42",
    "canned answers",
    "knot mentioned",
    "",
    "Sorry Seems to Be the Hardest Word is an Elton John song.",
    "The company can provide guidance in Q3.",
    "I don't have to pay: the fee was waived.",
]


@pytest.mark.parametrize("text", REFUSALS)
def test_refusals_are_recognised(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)


CORE = [
    "not mentioned",
    "no information",
    "cannot be answered",
    "unknown",
    "don't know",
    "insufficient information",
]
LETTERS = st.text(alphabet="abcxyzABé", min_size=1, max_size=5)
WORDS = st.lists(st.sampled_from(["the", "Answer", "is", "sadly", "here", "42"]), max_size=5)


@given(st.sampled_from(CORE), LETTERS, LETTERS)
def test_a_phrase_glued_inside_a_word_is_not_a_refusal(core: str, before: str, after: str) -> None:
    assert not is_refusal(before + core + after)


@given(st.sampled_from(CORE), WORDS, WORDS, st.sampled_from([str.upper, str.title, str.lower]))
def test_a_phrase_in_a_sentence_is_a_refusal(
    core: str, before: list[str], after: list[str], case: object
) -> None:
    sentence = " ".join([*before, case(core), *after]) + "."  # type: ignore[operator]
    assert is_refusal(sentence)
    assert is_refusal(sentence.replace("'", "\u2019"))


def test_non_text_is_a_metrics_error() -> None:
    with pytest.raises(MetricsError, match="text: expected a string, found NoneType"):
        is_refusal(None)  # type: ignore[arg-type]


# Long ASCII text takes the road of per-phrase patterns on the lower-cased text; it must
# agree with the one case-insensitive regex on everything.
PHRASE_WORDS = [
    "not", "NOT", "n't", "isn't", "never", "been", "explicitly", "mention", "Mentioned",
    "stated", "specify", "no", "No", "enough", "sufficient", "insufficient", "relevant",
    "information", "info", "context", "contain", "provide", "provided", "have", "haven't",
    "cannot", "can", "could", "couldn't", "unable", "to", "be", "answer", "answered",
    "determine", "unanswerable", "answerable", "unknown", "don't", "dont", "do", "know",
    "idea", "i", "I'm", "am", "sorry", "apologise", "apologize", "access", "the", "any",
    "none", "None", ".", "!", "\n", "\t", " ", "  ", "the Eiffel Tower", "1889", "_", "x1",
]  # fmt: skip
long_texts = st.one_of(
    st.lists(st.sampled_from(PHRASE_WORDS), min_size=5, max_size=60).map(" ".join),
    st.lists(st.sampled_from(PHRASE_WORDS + REFUSALS), min_size=3, max_size=20).map(" ".join),
    st.lists(st.sampled_from(PHRASE_WORDS), min_size=10, max_size=60).map("".join),
    st.text(st.characters(max_codepoint=127), min_size=40, max_size=300),
)


@settings(max_examples=1500)
@given(st.one_of(long_texts, st.text(max_size=80)))
def test_the_fast_road_agrees_with_the_one_regex(text: str) -> None:
    from lasagna_metrics._refusal import _APOSTROPHES, _REFUSAL

    assert is_refusal(text) == (_REFUSAL.search(text.translate(_APOSTROPHES)) is not None)
