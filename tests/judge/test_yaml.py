"""load_yaml: safe_load's values, with what aliases expand to bounded and no recursion."""

from __future__ import annotations

import pytest
import yaml

from lasagna_judge import load_yaml

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
)  # 10**9 values once the last alias is written out


def test_an_alias_bomb_is_refused_at_its_line() -> None:
    with pytest.raises(yaml.YAMLError, match="at most 100,000 values") as caught:
        load_yaml(BOMB)
    assert caught.value.problem_mark.line + 1 == 5  # e: the first past the limit


def test_an_alias_inside_its_own_value_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="contains itself"):
        load_yaml("a: &a [1, *a]\n")


def test_yaml_nested_100000_deep_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="nested too deep"):
        load_yaml("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "seed: 3\n",
        "base: &b {top_k: 3}\nsetups:\n  - {name: a, retriever: *b}\n  - {name: b}\n",
        "x: &x [1, 2]\ny: {<<: {k: *x}}\n",
        b"k: v\n",
    ],
)
def test_ordinary_yaml_reads_as_safe_load_reads_it(text: str | bytes) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_the_limit_counts_values_after_expansion() -> None:
    text = "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n"  # 1 + (1 + 4 + 1 + 3 * 4) ... 20 values
    assert load_yaml(text, max_values=100) == yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError):
        load_yaml(text, max_values=10)
