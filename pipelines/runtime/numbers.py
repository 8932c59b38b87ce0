"""Numeric flags checked before any work: one line naming the flag for a value that is not finite or out of its
range (a learning rate of ``nan`` or ``inf`` would train for hours on NaN losses; a batch size of 0 would fail
only after the model loaded).

>>> check_numbers({"learning_rate": float("nan")}, {"learning_rate": POSITIVE_RATE})
Traceback (most recent call last):
...
incoherent.errors.InputError: --learning-rate: must be a finite number in (0, 1], got nan
>>> check_numbers({"batch_size": 0}, {"batch_size": AT_LEAST_ONE})
Traceback (most recent call last):
...
incoherent.errors.InputError: --batch-size: must be at least 1, got 0
"""

from __future__ import annotations

import math
from typing import NamedTuple

from incoherent.schemas.records import InputError


class Rule(NamedTuple):
    low: float
    high: float = math.inf
    low_open: bool = False  # the range excludes ``low``
    whole: bool = False  # a whole number


AT_LEAST_ONE = Rule(1, whole=True)
POSITIVE_RATE = Rule(0, 1, low_open=True)  # a learning rate: (0, 1]
FRACTION = Rule(0, 1, low_open=True)  # a share: (0, 1); the upper bound is checked as open too
MAX_WHOLE = 2**31 - 1  # larger counts are typos, and overflow the tokenizers' and torch's C integers

# The flags of the training commands (train-filter, finetune-lm, train-shuffle), checked before a model loads.
TRAINING = {
    "learning_rate": POSITIVE_RATE,
    "epochs": Rule(1, 10_000, whole=True),
    "batch_size": Rule(1, 1 << 20, whole=True),
    "max_steps": AT_LEAST_ONE,
    "max_length": Rule(2, 1 << 24, whole=True),
    "heldout_fraction": FRACTION,
}


def _range(rule: Rule) -> str:
    if rule.whole and rule.high == math.inf:
        return f"at least {int(rule.low)}"
    if rule.whole:
        return f"between {int(rule.low)} and {int(rule.high)}"
    return f"a finite number in {'(' if rule.low_open else '['}{rule.low:g}, {rule.high:g}]"


def check_number(value, option: str, rule: Rule) -> None:
    """``value`` (None: not given) within ``rule``, else one :class:`InputError` line naming ``option``."""
    if value is None:
        return
    bad = isinstance(value, float) and not math.isfinite(value)
    bad = bad or value < rule.low or (rule.low_open and value == rule.low) or value > rule.high
    if not bad and rule.whole and value > MAX_WHOLE:
        raise InputError(f"{option}: must be at most {MAX_WHOLE:,}, got {value}")
    if rule is FRACTION and not bad:
        bad = value >= 1
    if bad:
        shown = _range(rule) if rule is not FRACTION else "a fraction in (0, 1)"
        raise InputError(f"{option}: must be {shown}, got {value}")


def check_numbers(values: dict, rules: dict[str, Rule]) -> None:
    """Every key of ``rules`` present in ``values`` (an argparse namespace's ``vars``) within its rule."""
    for key, rule in rules.items():
        if key in values:
            check_number(values[key], "--" + key.replace("_", "-"), rule)
