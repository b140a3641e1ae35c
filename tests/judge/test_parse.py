"""The fallback parser: JSON (fences stripped), a score pattern, a standalone number."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lasagna_judge import Rubric, load_rubric, parse_score
from lasagna_judge._parse import strip_code_fences

BINARY = load_rubric("binary")
SCALE = load_rubric("scale")


def parsed(text: str, rubric: Rubric = SCALE) -> tuple[int, str] | None:
    result = parse_score(text, rubric)
    return None if result is None else (result.score, result.path)


# -- JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"reasoning": "same fact", "score": 3}',
        '```json\n{"reasoning": "same fact", "score": 3}\n```',
        '```\n{"reasoning": "same fact", "score": 3}\n```',
        'Here is my grade:\n```JSON\n{"reasoning": "same fact", "score": 3}\n```\nThanks.',
        'Sure! {"reasoning": "same fact", "score": 3} Hope that helps.',
        '{"Reasoning": "same fact", "Score": 3}',
        '{"reasoning": "same fact", "score": "3"}',
        '{"reasoning": "same fact", "score": 3.0}',
        '{"reasoning": "same fact", "score": "3/4"}',
        '{"reasoning": "same fact", "grade": 3}',
    ],
)
def test_json_in_any_wrapping(text: str) -> None:
    result = parse_score(text, SCALE)
    assert result is not None
    assert (result.score, result.path, result.reasoning) == (3, "json", "same fact")


def test_json_nested_braces_and_later_objects() -> None:
    text = 'Context {not json} then {"details": {"a": 1}, "score": 4, "explanation": "e"}'
    result = parse_score(text, SCALE)
    assert result is not None and (result.score, result.path, result.reasoning) == (4, "json", "e")
    # the first object without a score is skipped for the one that has it
    assert parsed('{"a": 1}\n{"score": 2}') == (2, "json")


def test_json_out_of_scale_follows_the_rubric() -> None:
    assert parsed('{"score": 3}', BINARY) == (0, "json")
    assert parsed('{"score": 4}', BINARY) == (4, "json")
    assert parsed('{"score": 10}', SCALE) == (4, "json")
    assert parsed('{"score": -2}', SCALE) == (0, "json")
    assert parsed('{"score": 2.7}', SCALE) == (3, "json")
    result = parse_score('{"score": 10}', SCALE)
    assert result is not None and result.value == 10  # what the model wrote is kept


@pytest.mark.parametrize(
    "text",
    ['{"score": null}', '{"score": true}', '{"score": "high"}', '{"score": NaN}', "{}", "[4]"],
)
def test_json_without_a_usable_score_is_not_a_json_grade(text: str) -> None:
    # no JSON score; and no other number either, except "[4]" which is a standalone 4
    result = parse_score(text, SCALE)
    assert result is None or result.path == "regex"


def test_code_fences_are_stripped() -> None:
    assert strip_code_fences("```json\n{}\n```") == "{}\n"
    assert strip_code_fences("no fence") == "no fence"


# -- the score pattern ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('"score": 3', 3),
        ("'score': 3", 3),
        ("Score: 3", 3),
        ("SCORE=3", 3),
        ("**Score:** 3", 3),
        ("Final score: **3**", 3),
        ("I give it a score of 3.", 3),
        ("The score is 3", 3),
        ("reasoning: close but not exact. score 3", 3),
        ("3/4", 3),
        ("I'd rate this 3 out of 4.", 3),
        ('{"reasoning": "unterminated, "score": 3', 3),  # broken JSON still has the pattern
    ],
)
def test_score_patterns(text: str, score: int) -> None:
    assert parsed(text) == (score, "regex")


def test_the_last_score_pattern_wins() -> None:
    text = "A score of 4 would need the date. It is missing, so score: 1"
    assert parsed(text) == (1, "regex")


def test_score_pattern_out_of_scale_follows_the_rubric() -> None:
    assert parsed("Score: 7", SCALE) == (4, "regex")
    assert parsed("Score: 3", BINARY) == (0, "regex")
    assert parsed("Score: 4", BINARY) == (4, "regex")
    assert parsed("score: -1", SCALE) == (0, "regex")


def test_out_of_pattern_needs_the_rubrics_top_score() -> None:
    # "3/10" is not a score on a 0-4 scale, and 3, 10 are not one standalone value
    assert parsed("I'd say 3/10, or maybe 4") == (4, "regex")  # only 4 stands alone
    assert parsed("3/10") is None


# -- a standalone number --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", (4, "regex")),
        ("  2\n", (2, "regex")),
        ("The answer matches the reference. 4", (4, "regex")),
        ("Grade - 1.", (1, "regex")),
        ("4 - it is correct, definitely 4", (4, "regex")),  # repeated, one value
        ("Two references, one match.\n\n**3**", (3, "regex")),
    ],
)
def test_standalone_numbers(text: str, expected: tuple[int, str]) -> None:
    assert parsed(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "CORRECT",
        "I cannot grade this.",
        "The revenue was 2023 million in FY2022, up 15%.",  # no number in the scale
        "$4 per share and 4.5%",  # money and decimals are not scores
        "v4 of the model",
        "It lists 2 items; I would say 3 overall.",  # two different values: no guess
        "1,234",
    ],
)
def test_nothing_parsable_is_none(text: str) -> None:
    assert parse_score(text, SCALE) is None


def test_standalone_only_accepts_in_scale_numbers() -> None:
    assert parsed("7", SCALE) is None  # step 3 does not coerce
    assert parsed("2", BINARY) is None  # 2 is not in binary's scale
    assert parsed("The answer is wrong: 0", BINARY) == (0, "regex")
    assert parsed("It found 3 of the facts. 4", BINARY) == (4, "regex")  # only 4 is in scale


def test_a_lone_number_on_the_last_line_settles_several_values() -> None:
    assert parsed("Missing 1 fact, 2 are right.\n3") == (3, "regex")


def test_json_beats_pattern_beats_standalone() -> None:
    assert parsed('Score: 1\n{"score": 2}') == (2, "json")
    assert parsed("4\nScore: 1") == (1, "regex")


# -- properties -----------------------------------------------------------------------------


@given(st.text(max_size=300))
def test_never_raises_and_always_lands_in_the_scale(text: str) -> None:
    for rubric in (BINARY, SCALE):
        result = parse_score(text, rubric)
        if result is not None:
            assert result.score in rubric.scale
            assert result.path in ("json", "regex")


@given(st.text(alphabet=st.characters(blacklist_categories=("Nd",)), max_size=200))
def test_text_without_digits_never_yields_a_score(text: str) -> None:
    assert parse_score(text, SCALE) is None


@given(
    st.integers(min_value=-100, max_value=100),
    st.text(max_size=80),
    st.sampled_from(["{}", "```json\n{}\n```", "```\n{}\n```", "Verdict:\n{}\nDone."]),
)
def test_a_json_verdict_in_any_wrapper_is_read(value: int, reasoning: str, wrap: str) -> None:
    body = json.dumps({"reasoning": reasoning, "score": value})
    text = wrap.replace("{}", body)
    for rubric in (BINARY, SCALE):
        result = parse_score(text, rubric)
        assert result is not None
        assert (result.score, result.path) == (rubric.coerce(value), "json")
        assert result.reasoning == reasoning.strip()


@given(st.sampled_from([0, 1, 2, 3, 4]), st.text(alphabet="abc .,!", max_size=40))
def test_a_score_line_after_prose_is_read(score: int, prose: str) -> None:
    assert parsed(f"{prose}\nScore: {score}") == (score, "regex")
