"""The one judge of question text: placeholders, questions too short, exact and near
duplicates, as synthesize, validate-data and run apply them."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lasagna_synth import (
    PROMPTS,
    first_copies,
    is_placeholder,
    is_too_short,
    near_duplicate_key,
    normalize_question,
    question_issues,
)
from lasagna_synth._prompts import CHECKER_SYSTEM, SCHEMA_JSON, WRITER_SYSTEM


def test_the_echo_smollm2_wrote_six_times_is_a_placeholder() -> None:
    assert is_placeholder("A question and its short reference answer.")
    assert is_placeholder("a question and its short reference answer")


def instruction_sentences() -> list[str]:
    """Every sentence of the prompts and the schemas' descriptions, as sent."""
    texts = [WRITER_SYSTEM, CHECKER_SYSTEM]
    texts += [spec.write_template for spec in PROMPTS.values()]
    texts += re.findall(r'"description": "([^"]+)"', " ".join(SCHEMA_JSON.values()))
    found = []
    for text in texts:
        for sentence in re.split(r"(?<=[.:?])\s+", re.sub(r"\{\w+\}", "", text)):
            if len(normalize_question(sentence).split()) > 1:
                found.append(sentence)
    return found


@pytest.mark.parametrize("sentence", instruction_sentences())
def test_every_sentence_the_model_is_shown_is_a_placeholder_when_echoed(sentence: str) -> None:
    assert is_placeholder(sentence)
    assert is_placeholder(sentence.upper())


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "?",
        "...",
        "What is the answer to the question",
        "Your question here",
        "Question 1",
        "Q3",
        "TODO",
        "N/A",
        "{question}",
        "{{ question }}",
        "<question>",
        "[your question here]",
        "Lorem ipsum dolor sit amet?",
        "Write one factoid question",  # a run of words inside an instruction
        "The question, understandable without the passages.",
    ],
)
def test_placeholder_questions(text: str) -> None:
    assert is_placeholder(text)


@pytest.mark.parametrize(
    "text",
    [
        "What does httpx.Client do?",
        "Who wrote httpx?",
        "What is the default timeout in httpx?",
        "Does the {url} placeholder of base_url take a scheme?",  # a slot inside a question
        "Which passage of the HTTP/2 spec defines stream priorities?",
        "What is the author's name?",
        "北京是中国的首都吗？",
    ],
)
def test_real_questions_are_no_placeholders(text: str) -> None:
    assert not is_placeholder(text)


def test_answers_are_placeholders_only_when_whole() -> None:
    for answer in (
        "a",
        "The",
        "n/a",
        "Your answer here",
        "The short answer, as stated in the passages.",
    ):
        assert is_placeholder(answer, "answer"), answer
    # short real answers, some of them words the prompts use too
    for answer in ("None", "a number", "1781", "string", "yes", "the passage", "HTTP/2"):
        assert not is_placeholder(answer, "answer"), answer


@pytest.mark.parametrize(
    ("text", "short"),
    [
        ("Why?", True),
        ("Bo's age?", True),  # 2 words, 6 letters
        ("HTTP/2?", True),
        ("What's httpx?", False),  # 2 words but 10 letters
        ("Who wrote httpx?", False),  # 3 words
        ("Photosynthesis?", False),  # 1 word of 14 letters
        ("首都?", True),
        ("北京是中国的首都吗", False),  # 9 characters, each a word
    ],
)
def test_too_short(text: str, short: bool) -> None:
    assert is_too_short(text) is short


def test_exact_and_near_duplicates() -> None:
    assert normalize_question("What is HTTPX?") == normalize_question("what is  the httpx")
    near = ["What is the default timeout in httpx?", "What was the default timeout of httpx"]
    assert normalize_question(near[0]) != normalize_question(near[1])
    assert near_duplicate_key(near[0]) == near_duplicate_key(near[1])
    # what changes the question is kept: the word that matters, direction, order, negation
    for a, b in [
        (
            "Which function sends a GET request in httpx?",
            "Which function sends a POST request in httpx?",
        ),
        ("Who sent the request to the proxy?", "Who sent the request from the proxy?"),
        ("Is httpx faster than requests?", "Is requests faster than httpx?"),
        ("Does httpx follow redirects?", "Does httpx not follow redirects?"),
        ("When was httpx released?", "Where was httpx released?"),
    ]:
        assert near_duplicate_key(a) != near_duplicate_key(b), (a, b)


def test_the_first_copy_is_kept() -> None:
    texts = ["What is X?", "What is Y?", "what is x", "What was X", "What is Y"]
    assert first_copies(texts) == {2: 0, 4: 1}
    assert first_copies(texts, near=True) == {2: 0, 3: 0, 4: 1}


words = st.sampled_from(["what", "is", "was", "the", "timeout", "of", "in", "httpx", "pool"])


@given(st.lists(st.lists(words, min_size=1, max_size=5).map(" ".join), max_size=30))
def test_copies_are_an_equivalence_whatever_the_order(texts: list[str]) -> None:
    """Each group of copies keeps exactly one text, its first; reversing the order keeps as
    many (a threshold rule could not promise this)."""
    for near in (False, True):
        copies = first_copies(texts, near=near)
        key = near_duplicate_key if near else normalize_question
        kept = [t for i, t in enumerate(texts) if i not in copies]
        assert len({key(t) for t in kept}) == len(kept) == len({key(t) for t in texts})
        assert all(j < i and key(texts[i]) == key(texts[j]) for i, j in copies.items())
        assert len(first_copies(texts[::-1], near=near)) == len(copies)


def test_question_issues_by_row_id() -> None:
    rows = [
        ("q1", "What kind of pasta is layered to make lasagna?", ["sheets"]),
        ("q2", "WHAT KIND OF PASTA IS LAYERED TO MAKE A LASAGNA", ["sheets"]),
        ("q3", "What kind of pasta was layered to make lasagna?", ["sheets"]),
        ("q4", "Which cheese tops a lasagna?", ["a"]),
        ("q5", "Why?", ["because"]),
        ("q6", "{question}", ["x"]),
    ]
    issues = question_issues(rows)
    assert issues.duplicates == [("q2", "q1")]
    assert issues.near_duplicates == [("q3", "q1")]
    assert issues.placeholders == ["q4", "q6"]
    assert issues.too_short == ["q5"]
    assert question_issues(rows, check_length=False).too_short == []
    assert not question_issues(rows[:1])


def test_judging_questions_loads_no_model_stack() -> None:
    """validate-data and run judge every question: the instructions are read from the
    schemas' JSON text, never from the pydantic models."""
    code = (
        "import sys, lasagna_synth\n"
        "lasagna_synth.question_issues([('q', 'A question and its short reference answer.', [])])\n"
        "print(sorted(m for m in ('pydantic', 'numpy', 'openai') if m in sys.modules))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.strip() == "[]", found.stderr
