"""Stable samples: counts and fractions become one threshold on a hash of (seed, id)."""

from __future__ import annotations

import pytest

from incoherent.corpora.sampling import ALL, SampleSpec, in_sample, parse_sample, sample_key, threshold_for
from incoherent.schemas.records import InputError

IDS = [f"doc:{i}" for i in range(1000)]


def sampled(spec: str, seed: int = 0, ids=IDS) -> set[str]:
    threshold = threshold_for(parse_sample(spec, "--sample"), ids, seed)
    return {i for i in ids if in_sample(seed, i, threshold)}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("100", SampleSpec(count=100)), (100, SampleSpec(count=100)), ("100_000", SampleSpec(count=100_000)),
     ("0.1", SampleSpec(fraction=0.1)), (0.5, SampleSpec(fraction=0.5))],
)  # fmt: skip
def test_counts_and_fractions(value, expected):
    assert parse_sample(value, "--sample") == expected


@pytest.mark.parametrize("value", ["0", "-3", "1.0", "1.5", "0.0", "ten", ""])
def test_bad_samples_are_input_errors_naming_the_option(value):
    with pytest.raises(InputError, match="intruders.sample"):
        parse_sample(value, "intruders.sample")


def test_a_count_takes_exactly_the_n_smallest_keys_and_grows_monotonically():
    small, large = sampled("10"), sampled("300")
    assert len(small) == 10 and len(large) == 300 and small < large
    assert small == set(sorted(IDS, key=lambda i: sample_key(0, i))[:10])
    assert sampled("1000") == set(IDS) and sampled("5000") == set(IDS)


def test_duplicate_ids_count_once_and_order_does_not_matter():
    assert sampled("10", ids=IDS + IDS[::-1]) == sampled("10") == sampled("10", ids=IDS[::-1])


def test_fractions_are_nested_and_close_to_their_share():
    quarter, half = sampled("0.25"), sampled("0.5")
    assert quarter < half
    assert 200 < len(quarter) < 300 and 450 < len(half) < 550


def test_the_seed_changes_the_sample():
    assert sampled("50", seed=1) != sampled("50", seed=2)
    assert threshold_for(SampleSpec(count=5), [], seed=0) == ALL
