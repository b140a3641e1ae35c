"""The mix: parsing, did-you-mean, exact shares, largest-remainder counts."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lasagna_synth import DEFAULT_MIX, QUESTION_TYPES, SynthUsageError, parse_mix


def test_default_mix() -> None:
    mix = parse_mix(DEFAULT_MIX)
    assert mix.shares == (
        ("factoid", Fraction(3, 5)),
        ("multihop", Fraction(3, 10)),
        ("unanswerable", Fraction(1, 10)),
    )
    assert str(mix) == DEFAULT_MIX
    assert mix.counts(100) == {"factoid": 60, "multihop": 30, "unanswerable": 10}


def test_missing_types_get_zero_and_order_does_not_matter() -> None:
    mix = parse_mix(" unanswerable = 0.25 , factoid=0.75 ")
    assert mix.counts(8) == {"factoid": 6, "multihop": 0, "unanswerable": 2}
    assert str(mix) == "factoid=0.75,unanswerable=0.25"


def test_fractions_and_mappings() -> None:
    assert parse_mix("factoid=1/3,multihop=1/3,unanswerable=1/3").counts(10) == {
        "factoid": 4,  # three remainders of 1/3 tie: type order breaks the tie
        "multihop": 3,
        "unanswerable": 3,
    }
    assert parse_mix({"factoid": 0.7, "multihop": 0.2, "unanswerable": 0.1}).counts(10) == {
        "factoid": 7,
        "multihop": 2,
        "unanswerable": 1,
    }


def test_largest_remainder_examples() -> None:
    mix = parse_mix(DEFAULT_MIX)
    assert mix.counts(1) == {"factoid": 1, "multihop": 0, "unanswerable": 0}
    assert mix.counts(7) == {"factoid": 4, "multihop": 2, "unanswerable": 1}  # 4.2, 2.1, 0.7
    assert mix.counts(3) == {"factoid": 2, "multihop": 1, "unanswerable": 0}  # 1.8, 0.9, 0.3
    assert parse_mix("factoid=0.5,multihop=0.5").counts(3) == {
        "factoid": 2,
        "multihop": 1,
        "unanswerable": 0,
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("factiod=1", r"unknown question type 'factiod' in the mix: .*did you mean 'factoid'\?"),
        ("multi-hop=1", r"did you mean 'multihop'\?"),
        (
            "banana=1",
            r"unknown question type 'banana' in the mix: expected factoid, multihop, "
            r"unanswerable$",
        ),
        ("factoid=0.6,multihop=0.3", r"mix shares must sum to 1, they sum to 0.9"),
        ("factoid=0.5,multihop=0.3,unanswerable=0.3", r"sum to 1.1"),
        ("factoid=1.2,multihop=-0.2", r"share of multihop must not be negative, got '-0.2'"),
        ("factoid=lots", r"share of factoid must be a number such as 0.3 or 1/3, got 'lots'"),
        ("factoid=nan", r"share of factoid must be a number"),
        ("factoid=1/0", r"share of factoid must be a number"),
        ("factoid", r"mix item 'factoid' is not type=share"),
        ("factoid=1,", r"mix item '' is not type=share"),
        ("factoid=0.5,factoid=0.5", r"factoid appears twice in the mix"),
    ],
)
def test_bad_mixes_are_usage_errors(spec: str, message: str) -> None:
    with pytest.raises(SynthUsageError, match=message):
        parse_mix(spec)


shares = st.lists(st.integers(min_value=0, max_value=50), min_size=3, max_size=3).filter(
    lambda xs: sum(xs) > 0
)


@given(shares, st.integers(min_value=1, max_value=10_000))
def test_counts_sum_to_n_and_stay_within_one_of_the_quota(weights: list[int], n: int) -> None:
    total = sum(weights)
    mix = parse_mix({t: Fraction(w, total) for t, w in zip(QUESTION_TYPES, weights, strict=True)})
    counts = mix.counts(n)
    assert sum(counts.values()) == n
    quotas = {t: Fraction(w, total) * n for t, w in zip(QUESTION_TYPES, weights, strict=True)}
    for t in QUESTION_TYPES:
        assert math.floor(quotas[t]) <= counts[t] <= math.ceil(quotas[t])
    # the extra questions go to the largest remainders, ties in type order
    extra = [t for t in QUESTION_TYPES if counts[t] > math.floor(quotas[t])]
    missed = [t for t in QUESTION_TYPES if counts[t] == math.floor(quotas[t]) < quotas[t]]
    for winner in extra:
        for loser in missed:
            rw = quotas[winner] - math.floor(quotas[winner])
            rl = quotas[loser] - math.floor(quotas[loser])
            assert rw > rl or (
                rw == rl and QUESTION_TYPES.index(winner) < QUESTION_TYPES.index(loser)
            )
