"""The ``number`` phenomenon (INSteD, Shen et al. 2021, Table 7): the first number of the sentence changed to
an implausible value.

- a measure keeps its number and gets a much smaller unit (``51.7 km`` -> ``51.7 m``, ``3 hours`` -> ``3
  seconds``, ``200 years`` -> ``200 days``);
- a year becomes a year BC of a tenth of it (``in 1857`` -> ``in 185 BC``); in a date (``14 March 1901``,
  ``March 14, 1901``) the year is the site, never the day;
- a percentage changes sign (``12%`` -> ``-12%``, ``-3 per cent`` -> ``3 per cent``);
- any other number is divided by ten (``18`` -> ``1.8``, ``1,200`` -> ``120.0``).

Numbers that name things (``Boeing 747``, ``Route 66``), times (``10:30``), fractions and number words
(``three``) are not sites.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from corpora.probes.edits import Edit, replace
from corpora.probes.text import Token, analyse

UNITS = {
    "km": "m", "kilometres": "metres", "kilometers": "meters", "kilometre": "metre", "kilometer": "meter",
    "m": "mm", "metres": "millimetres", "meters": "millimeters", "metre": "millimetre", "meter": "millimeter",
    "mi": "in", "miles": "inches", "mile": "inch", "ft": "in", "feet": "inches", "foot": "inch",
    "kg": "g", "kilograms": "grams", "kilogram": "gram", "tonnes": "grams", "tons": "ounces", "tonne": "gram",
    "km2": "m2", "km²": "m²", "hectares": "square metres", "acres": "square inches",
    "hours": "seconds", "hour": "second", "days": "minutes", "years": "days", "year": "day", "months": "hours",
    "mph": "inches per hour", "km/h": "m/h", "MW": "W", "GW": "kW", "litres": "millilitres", "liters": "milliliters",
}  # fmt: skip
MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_NUMBER = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$|^\d+(?:\.\d+)?$")
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_PERCENT = frozenset({"%", "percent"})


def _word(tokens: tuple[Token, ...], i: int) -> str:
    return tokens[i].text if 0 <= i < len(tokens) else ""


def _tenth(text: str) -> str | None:
    """``18`` -> ``1.8``, ``1,200`` -> ``120.0``, ``5`` -> ``0.5``."""
    try:
        value = Decimal(text.replace(",", "")).scaleb(-1)
    except InvalidOperation:
        return None
    return format(value, "f")


def _names_something(tokens: tuple[Token, ...], i: int) -> bool:
    prev = _word(tokens, i - 1)
    return bool(prev) and tokens[i - 1].tag in ("NNP", "NNPS") and prev.lower().rstrip(".") not in MONTHS


def _is_day(tokens: tuple[Token, ...], i: int) -> bool:
    text = tokens[i].text
    if not text.isdigit() or not 1 <= int(text) <= 31:
        return False
    return (
        _word(tokens, i - 1).lower().rstrip(".") in MONTHS
        or _word(tokens, i + 1).lower().rstrip(".") in MONTHS
    )


def number(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """The first number of the sentence to an implausible value.

    >>> [e.after for e in number("The river is 51.7 km long.")]
    ['m']
    >>> [e.after for e in number("He was born on 14 March 1901.")]
    ['190 BC']
    >>> [e.after for e in number("The club has 18 members.")]
    ['1.8']
    """
    tokens = analyse(sentence) if tokens is None else tokens
    for i, token in enumerate(tokens):
        text = token.text
        if not _NUMBER.match(text) or _names_something(tokens, i) or _is_day(tokens, i):
            continue
        nxt, after_next = _word(tokens, i + 1), _word(tokens, i + 2)
        prev = _word(tokens, i - 1)
        negative = prev in ("-", "−") and i > 0 and tokens[i - 1].end == token.start
        percent = nxt.lower() in _PERCENT or (nxt.lower() == "per" and after_next.lower() == "cent")
        if percent:
            if negative:
                return [replace(tokens[i - 1], "")]
            return [replace(token, "-" + text)]
        if nxt in UNITS or nxt.lower() in UNITS and nxt.lower() not in ("m", "mi", "ft", "kg", "km"):
            return [replace(tokens[i + 1], UNITS.get(nxt, UNITS.get(nxt.lower(), nxt)))]
        if nxt.lower() == "square" and after_next in UNITS:
            return [replace(tokens[i + 2], UNITS[after_next])]
        if _YEAR.match(text) and tokens[i + 1 : i + 2] and tokens[i + 1].tag == "NNS":
            pass  # "1500 soldiers": a count, not a year
        elif _YEAR.match(text):
            return [replace(token, f"{int(text) // 10} BC")]
        if negative:
            return [replace(tokens[i - 1], "")]
        tenth = _tenth(text)
        if tenth is not None:
            return [replace(token, tenth)]
    return []
