"""Rubrics as data: the built-ins, loading from TOML/YAML, out-of-scale rules, the prompt."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lasagna_judge import BUILTIN_RUBRICS, JudgeError, Rubric, build_prompt, load_rubric

TEMPLATE = "Q: {question}\nRefs: {references}\nA: {prediction}"


def test_builtins_are_the_documented_scales() -> None:
    assert BUILTIN_RUBRICS == ("binary", "scale")
    binary = load_rubric("binary")
    scale = load_rubric("scale")
    assert (binary.id, binary.scale, binary.out_of_scale) == ("binary", (0, 4), "lowest")
    assert (scale.id, scale.scale, scale.out_of_scale) == ("scale", (0, 1, 2, 3, 4), "nearest")
    assert binary.version and scale.version


def test_binary_prompt_is_lenient_on_paraphrase_and_date_formats() -> None:
    text = load_rubric("binary").system.lower()
    assert "generous" in text
    assert "format" in text and "relative" in text and "date" in text
    assert '" | "' in text  # several references: a match with any counts


def test_scale_prompt_has_every_anchor() -> None:
    rubric = load_rubric("scale")
    for anchor in ("4:", "3:", "2:", "1:", "0:"):
        assert anchor in rubric.system
    assert "minor issues" in rubric.system
    assert "important fact" in rubric.system
    assert '" | "' in rubric.system


def test_binary_coerces_anything_but_the_top_score_to_zero() -> None:
    rubric = load_rubric("binary")
    assert rubric.coerce(4) == 4
    assert rubric.coerce(4.0) == 4
    for value in (0, 1, 2, 3, 3.99, 5, 10, -1, 100.5):
        assert rubric.coerce(value) == 0, value


def test_scale_clamps_and_rounds_to_the_nearest_score() -> None:
    rubric = load_rubric("scale")
    assert [rubric.coerce(v) for v in (-3, 0, 1, 2, 3, 4, 9, 1e9)] == [0, 0, 1, 2, 3, 4, 4, 4]
    assert rubric.coerce(2.4) == 2
    assert rubric.coerce(2.6) == 3
    assert rubric.coerce(2.5) == 2  # a tie goes to the lower score
    assert rubric.coerce(float("inf")) == 4
    assert rubric.coerce(float("-inf")) == 0


@given(st.floats(allow_nan=False))
def test_coerce_always_lands_in_the_scale(value: float) -> None:
    for name in BUILTIN_RUBRICS:
        rubric = load_rubric(name)
        assert rubric.coerce(value) in rubric.scale


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_nearest_is_within_half_a_step_inside_the_range(value: float) -> None:
    rubric = load_rubric("scale")
    score = rubric.coerce(value)
    if 0 <= value <= 4:
        assert abs(score - value) <= 0.5
    else:
        assert score == (0 if value < 0 else 4)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_loads_a_toml_rubric(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "strict.toml",
        'id = "strict"\nversion = 2\nscale = [0, 1]\nout_of_scale = "lowest"\n'
        'system = "Be strict."\nprompt = """' + TEMPLATE + '"""\n',
    )
    rubric = load_rubric(path)
    assert rubric == Rubric(
        id="strict",
        version="2",
        prompt=TEMPLATE,
        scale=(0, 1),
        system="Be strict.",
        out_of_scale="lowest",
    )
    assert load_rubric(str(path)) == rubric  # a str path works too


def test_loads_a_yaml_rubric(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tenpoint.yaml",
        "id: tenpoint\nversion: '1.0'\nscale: [0, 5, 10]\n"
        "prompt: |\n  Question {question}\n  Gold {references}\n  Answer {prediction}\n",
    )
    rubric = load_rubric(path)
    assert rubric.id == "tenpoint"
    assert rubric.version == "1.0"
    assert rubric.scale == (0, 5, 10)
    assert rubric.out_of_scale == "nearest"  # the default
    assert rubric.system == ""
    assert rubric.coerce(7) == 5 and rubric.coerce(8) == 10
    assert load_rubric(write(tmp_path, "same.yml", path.read_text())) == rubric


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('version = "1"\nscale = [0, 4]\nprompt = "{references} {prediction}"', "missing"),
        ('id = "x"\nscale = [0, 4]\nprompt = "{references} {prediction}"', "version"),
        ('id = "x"\nversion = "1"\nprompt = "{references} {prediction}"', "scale"),
        ('id = "x"\nversion = "1"\nscale = [0, 4]', "prompt"),
    ],
)
def test_a_missing_field_is_named(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(JudgeError, match="missing rubric field") as info:
        load_rubric(write(tmp_path, "r.toml", text))
    assert expected in str(info.value)
    assert "r.toml" in str(info.value)


def test_an_unknown_field_is_named_with_the_allowed_ones(tmp_path: Path) -> None:
    text = 'id = "x"\nversion = "1"\nscale = [0, 4]\nprompt = "{references} {prediction}"\n'
    with pytest.raises(JudgeError) as info:
        load_rubric(write(tmp_path, "r.toml", text + "temprature = 0\n"))
    message = str(info.value)
    assert "unknown rubric field(s) temprature" in message
    assert "out_of_scale" in message  # tells what is allowed


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("scale = [4, 0]", "increasing order"),
        ("scale = [4]", "at least two"),
        ("scale = [0, 0, 4]", "distinct"),
        ('scale = ["a", "b"]', "whole numbers"),
        ("scale = [0.5, 1]", "whole numbers"),
        ('scale = "0-4"', "list of whole numbers"),
    ],
)
def test_a_bad_scale_is_explained(tmp_path: Path, body: str, expected: str) -> None:
    text = f'id = "x"\nversion = "1"\n{body}\nprompt = "{{references}} {{prediction}}"\n'
    with pytest.raises(JudgeError, match=expected):
        load_rubric(write(tmp_path, "r.toml", text))


def test_a_prompt_without_the_placeholders_is_refused(tmp_path: Path) -> None:
    text = 'id = "x"\nversion = "1"\nscale = [0, 4]\nprompt = "Grade {question}"\n'
    with pytest.raises(JudgeError, match=r"\{references\}, \{prediction\}"):
        load_rubric(write(tmp_path, "r.toml", text))


def test_a_bad_out_of_scale_rule_is_refused(tmp_path: Path) -> None:
    text = (
        'id = "x"\nversion = "1"\nscale = [0, 4]\nout_of_scale = "round"\n'
        'prompt = "{references} {prediction}"\n'
    )
    with pytest.raises(JudgeError, match=r"'lowest' or 'nearest'.*'round'"):
        load_rubric(write(tmp_path, "r.toml", text))


def test_unknown_names_missing_files_and_broken_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="binary, scale or a path"):
        load_rubric("lenient")
    with pytest.raises(JudgeError, match="rubric file not found"):
        load_rubric(tmp_path / "absent.toml")
    with pytest.raises(JudgeError, match="not valid TOML"):
        load_rubric(write(tmp_path, "bad.toml", "id = \n"))
    with pytest.raises(JudgeError, match="not valid YAML"):
        load_rubric(write(tmp_path, "bad.yaml", "id: [unclosed\n"))
    with pytest.raises(JudgeError, match="expected a table of rubric fields"):
        load_rubric(write(tmp_path, "list.yaml", "- 1\n- 2\n"))


def test_a_yaml_rubric_gives_no_traceback_for_odd_types(tmp_path: Path) -> None:
    text = "id: x\nversion: '1'\nscale: [0, 4]\nprompt: 42\n"
    with pytest.raises(JudgeError, match="prompt must be a string"):
        load_rubric(write(tmp_path, "r.yaml", text))


# -- the prompt --------------------------------------------------------------------------


def test_prompt_fills_the_template_and_joins_references() -> None:
    rubric = Rubric(id="t", version="1", prompt=TEMPLATE, scale=(0, 4), system="Judge.")
    prompt = build_prompt(
        rubric, question=" When? ", references=["7 May 2023", " May 7 "], prediction="May 7th"
    )
    assert prompt.as_list() == [
        {"role": "system", "content": "Judge."},
        {"role": "user", "content": "Q: When?\nRefs: 7 May 2023 | May 7\nA: May 7th"},
    ]
    canonical = json.dumps(
        prompt.as_list(), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    assert prompt.sha256 == hashlib.sha256(canonical.encode()).hexdigest()


def test_prompt_without_system_text_is_one_user_message() -> None:
    rubric = Rubric(id="t", version="1", prompt=TEMPLATE, scale=(0, 4))
    prompt = build_prompt(rubric, question="q", references="r", prediction="p")
    assert [m["role"] for m in prompt.messages] == ["user"]


def test_placeholders_inside_answers_are_not_substituted_again() -> None:
    rubric = Rubric(id="t", version="1", prompt=TEMPLATE, scale=(0, 4))
    prompt = build_prompt(
        rubric, question="{prediction}", references=["{question}"], prediction="{references}"
    )
    assert prompt.messages[-1]["content"] == "Q: {prediction}\nRefs: {question}\nA: {references}"


def test_the_builtin_prompts_keep_their_json_example_braces() -> None:
    prompt = build_prompt(load_rubric("binary"), question="q", references="r", prediction="p")
    assert '{"reasoning": "...", "score": 4}' in prompt.messages[-1]["content"]


@given(st.text(), st.lists(st.text(min_size=1).filter(str.strip), min_size=1), st.text())
def test_prompt_sha_is_a_pure_function_of_the_inputs(
    question: str, references: list[str], prediction: str
) -> None:
    rubric = load_rubric("scale")
    a = build_prompt(rubric, question=question, references=references, prediction=prediction)
    b = build_prompt(rubric, question=question, references=references, prediction=prediction)
    assert a == b
    c = build_prompt(rubric, question=question, references=references, prediction=prediction + "!")
    assert c.sha256 != a.sha256


def test_prompt_sha_changes_with_the_rubric_text() -> None:
    base = Rubric(id="t", version="1", prompt=TEMPLATE, scale=(0, 4))
    other = Rubric(id="t", version="1", prompt=TEMPLATE + " ", scale=(0, 4), system="x")
    kwargs = {"question": "q", "references": "r", "prediction": "p"}
    assert build_prompt(base, **kwargs).sha256 != build_prompt(other, **kwargs).sha256


@pytest.mark.parametrize(
    ("references", "expected"),
    [
        ([], "at least one reference"),
        (["", "  "], "every reference answer is empty"),
        (["ok", 3], r"references\[1\]: expected a string, found int"),
    ],
)
def test_bad_references_are_explained(references: list[object], expected: str) -> None:
    with pytest.raises(JudgeError, match=expected):
        build_prompt(
            load_rubric("binary"),
            question="q",
            references=references,  # type: ignore[arg-type]
            prediction="p",
        )


def test_a_non_string_prediction_is_explained() -> None:
    with pytest.raises(JudgeError, match="prediction: expected a string, found NoneType"):
        build_prompt(
            load_rubric("binary"),
            question="q",
            references="r",
            prediction=None,  # type: ignore[arg-type]
        )
