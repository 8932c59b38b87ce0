"""The ``number`` phenomenon (INSteD, Shen et al. 2021, Table 7): the first number of the sentence that states a
quantity or a date, changed to an implausible value with one of the paper's moves, in the number's own format.

- a **year** goes to the era before the common era (``in 1857`` -> ``in 1857 BC``) or a millennium into the
  future (``in 1857`` -> ``in 2857``); a year that modifies a noun (``the 2012 election``) only to the future;
  in a date (``14 March 1901``, ``March 14, 1901``) the year is the site, never the day;
- a **measure** keeps its number and gets a far smaller or a far larger unit (``51.7 km`` -> ``51.7 mm`` or
  ``51.7 light-years``, ``3 hours`` -> ``3 seconds`` or ``3 centuries``);
- an amount in **millions or billions** goes to trillions (``$4 billion`` -> ``$4 trillion``; thousands to
  billions);
- a **percentage** changes sign (``12%`` -> ``-12%``, ``-3 per cent`` -> ``3 per cent``);
- any other **count** is made implausible, up or down by its size, and stays an integer with thousands
  separators (``18 members`` -> ``18,000 members``; ``30,000 soldiers`` -> ``30 soldiers``, never
  ``3000.0``).

Where two moves fit (a year; a measure), the sentence's own hash picks one, so no single token (``BC``) marks
most probes: :data:`MOVES` names the moves. Numbers that label or name things are never sites
(``Boeing 747``, ``Route 66``, ``Season 3``, ``episode 12``, ``F-16``), nor times (``10:30``), ranges and
scores (``1939–1945``, ``3–1``), fractions and number words (``three``), ordinals and decades (``1990s``).
A decimal that is neither a measure nor a percentage (a rating of ``4.5``) is no site either: scaling it would
change its format.

>>> from incoherent.corpora.probes.edits import apply_edits
>>> s = "The club has 18 members."
>>> apply_edits(s, number(s))
'The club has 18,000 members.'
>>> number("Season 3 aired on HBO.")
NoSite('label')
"""

from __future__ import annotations

import re

from incoherent.corpora.probes.edits import Edit, Moved, NoSite, replace
from incoherent.corpora.probes.text import Token, analyse
from incoherent.corpora.seeding import stable_hash

MOVES = ("year_bc", "year_future", "unit_smaller", "unit_larger", "scale_up", "percent_sign", "count_up",
         "count_down")  # fmt: skip
SMALLER = {
    "km": "mm", "kilometres": "millimetres", "kilometers": "millimeters", "kilometre": "millimetre",
    "kilometer": "millimeter", "metres": "millimetres", "meters": "millimeters", "metre": "millimetre",
    "meter": "millimeter", "miles": "inches", "mile": "inch", "feet": "millimetres", "foot": "millimetre",
    "kg": "mg", "kilograms": "milligrams", "kilogram": "milligram", "tonnes": "grams", "tons": "ounces",
    "tonne": "gram", "ton": "ounce", "pounds": "milligrams", "km2": "mm2", "km²": "mm²", "hectares": "square inches",
    "acres": "square inches", "hours": "seconds", "hour": "second", "days": "seconds", "weeks": "minutes",
    "months": "minutes", "years": "hours", "decades": "days", "centuries": "weeks", "mph": "inches per hour",
    "MW": "mW", "GW": "W", "litres": "millilitres", "liters": "milliliters", "gallons": "drops",
}  # fmt: skip
LARGER = {
    "km": "light-years", "kilometres": "light-years", "kilometers": "light-years", "metres": "kilometres",
    "meters": "kilometers", "metre": "kilometre", "meter": "kilometer", "cm": "km", "centimetres": "kilometres",
    "millimetres": "kilometres", "mm": "km", "inches": "miles", "inch": "mile", "feet": "miles", "foot": "mile",
    "miles": "light-years", "kg": "tonnes", "kilograms": "tonnes", "grams": "tonnes", "pounds": "tons",
    "seconds": "days", "second": "day", "minutes": "years", "minute": "year", "hours": "centuries",
    "hour": "century", "days": "centuries", "day": "century", "weeks": "millennia", "months": "millennia",
    "years": "millennia", "mph": "times the speed of light", "km/h": "times the speed of light",
    "litres": "cubic kilometres", "liters": "cubic kilometers", "hectares": "million square kilometres",
    "acres": "million square miles",
}  # fmt: skip
SCALES = {"thousand": "billion", "million": "trillion", "billion": "trillion"}
MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
# words before a number that make it a label, not a quantity (Season 3, Route 66, No. 1)
LABELS = frozenset(
    "season seasons episode episodes series route routes highway interstate chapter chapters volume vol vol. "
    "no no. number nos page pages track tracks model version v platform gate room flight division section "
    "article articles rule psalm act scene part book level phase stage round game week day grade class "
    "channel district ward exit pier bus line lot unit floor apollo windows type mark mk title amendment "
    "resolution bill code figure fig table appendix verse op opus symphony concerto sonata number. pg "
    "squadron regiment battalion brigade corps wing army fleet group battery company # rank".split()
)
_NUMBER = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$|^\d+(?:\.\d+)?$")
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_PERCENT = frozenset({"%", "percent", "pc"})
_DASHES = frozenset({"-", "–", "—", "−", "/", "to"})
_YEAR_WORDS = frozenset({"in", "since", "from", "until", "till", "by", "of", "during", "before", "after", "around",
                         "circa", "c.", "ca.", "early", "late", "mid", "(", "year", "between", "and", "summer",
                         "winter", "spring", "autumn", "fall"})  # fmt: skip

_COMPOUND_UNITS = frozenset({"year", "month", "week", "day", "hour", "minute", "page", "story", "storey", "mile",
                             "metre", "meter", "foot", "acre", "man", "member", "seat", "game", "episode", "time",
                             "step"})  # fmt: skip
_YEAR_NOUNS = frozenset({"year", "years", "end", "spring", "summer", "autumn", "fall", "winter", "class", "season",
                         "election", "elections", "half", "start", "beginning", "middle", "part"} | MONTHS)  # fmt: skip


def _word(tokens: tuple[Token, ...], i: int) -> str:
    return tokens[i].text if 0 <= i < len(tokens) else ""


def _glued(tokens: tuple[Token, ...], i: int, j: int) -> bool:
    """Whether tokens ``i`` and ``j`` (``i < j``) touch, with no space between (``F-16``, ``747-400``)."""
    return 0 <= i < j < len(tokens) and tokens[i].end == tokens[j].start


def _skip_reason(tokens: tuple[Token, ...], i: int) -> str | None:
    """Why the number at ``i`` is not a site (``label``, ``name``, ``notation``, ``range``, ``day``), or
    None."""
    prev, nxt = _word(tokens, i - 1), _word(tokens, i + 1)
    if prev.lower() in LABELS or prev in ("#", "©", "No", "Year", "Years"):  # Year 10: a school grade
        return "label"
    if prev in ("×", "^", "'", "’", "x", "e") and _glued(tokens, i - 1, i):
        return "notation"  # 1.2×1015, '57
    if prev in ("-", "–", "/") and _glued(tokens, i - 1, i) and _glued(tokens, i - 2, i - 1):
        return "name"  # F-16, COVID-19, 9/11
    if nxt in ("-", "–", "/") and _glued(tokens, i, i + 1) and not _NUMBER.match(_word(tokens, i + 2)):
        if not (
            _word(tokens, i + 2).lower().split("-")[0] in _COMPOUND_UNITS and _glued(tokens, i + 1, i + 2)
        ):
            return "name"  # 3-D, 4-H (but a 40-year-old, a 16-page manuscript: counts)
    if i > 0 and tokens[i - 1].tag in ("NNP", "NNPS") and prev.lower().rstrip(".") not in MONTHS:
        return "name"  # Boeing 747, Super Bowl 50
    if nxt in _DASHES and _NUMBER.match(_word(tokens, i + 2)):
        return "range"  # 1939–1945, 3–1, 9/11
    if prev in _DASHES and i > 1 and _NUMBER.match(_word(tokens, i - 2)):
        if _YEAR.match(tokens[i].text) and _YEAR.match(_word(tokens, i - 2)):
            return None  # 1939–1945: the end year is a site (-> 1939–2945)
        return "range"
    if (
        prev.lower() in ("between", "from")
        and _word(tokens, i + 1).lower() in ("and", "to")
        and _NUMBER.match(_word(tokens, i + 2))
    ):
        return "range"  # between 1901 and 2000: the second number is the site's pair
    text = tokens[i].text
    month_near = (
        _word(tokens, i - 1).lower().rstrip(".") in MONTHS
        or _word(tokens, i + 1).lower().rstrip(".") in MONTHS
    )
    if text.isdigit() and 1 <= int(text) <= 31 and month_near:
        return "day"
    if (
        i + 1 < len(tokens)
        and tokens[i + 1].tag in ("NNP",)
        and nxt.lower() not in MONTHS
        and not _YEAR.match(text)
    ):
        return "name"  # 7 Eleven, 221 Baker Street
    return None


def _formatted(value: int, like: str) -> str:
    """``value`` written as ``like`` writes numbers: with thousands separators unless ``like`` has four or more
    digits and none (``1500`` -> ``1500000``; ``18`` -> ``18,000``, English's default)."""
    return str(value) if len(like) >= 4 and "," not in like else f"{value:,}"


def _count(text: str) -> tuple[str, str] | None:
    """An integer count up (``18`` -> ``18,000``) or down (``30,000`` -> ``30``), as ``(move, text)``."""
    value = int(text.replace(",", ""))
    if value >= 2000:
        return "count_down", _formatted(max(2, round(value / 1000)), text)
    if value == 0:
        return None
    return "count_up", _formatted(value * 1000, text)


def _unit(tokens: tuple[Token, ...], i: int, pick: int) -> tuple[int, str, str] | None:
    """``(position, new unit, move)`` for a number followed by a unit (``square`` units too)."""
    j = i + 1
    if _word(tokens, j).lower() == "square":
        j += 1
    unit = _word(tokens, j)
    key = unit if unit in SMALLER or unit in LARGER else unit.lower()
    if key in ("m", "mi", "ft", "g", "in"):  # too ambiguous to read as a unit on their own
        return None
    options = [(SMALLER.get(key), "unit_smaller"), (LARGER.get(key), "unit_larger")]
    options = [(u, move) for u, move in options if u is not None]
    if not options:
        return None
    new, move = options[pick % len(options)]
    if j > i + 1:  # square kilometres -> square millimetres (not "square square inches")
        new = new.removeprefix("square ").removeprefix("million square ")
    return j, new, move


def _spoken_with_vowel(text: str) -> bool:
    """Whether a number written in digits is read starting with a vowel (*an 8*, *an 18*, *an 1897*, *an
    11,000*), so takes *an*."""
    digits = text.replace(",", "").split(".")[0]
    if not digits.isdigit():
        return False
    if digits.startswith("8"):
        return True
    groups = text.split(".")[0].split(",")
    head = groups[0] if "," in text else digits
    if len(head) in (2, 5) or (len(head) == 4 and "," not in text):  # eleven, eighteen; 11,000; 1897
        return head[:2] in ("11", "18")
    return False


def _with_article(tokens: tuple[Token, ...], i: int, edits: list[Edit]) -> list[Edit]:
    """The edits, and the article before the number made to agree with the new number (*an 1897 novel* ->
    *a 2897 novel*)."""
    if (
        i == 0
        or tokens[i - 1].text.lower() not in ("a", "an")
        or len(edits) != 1
        or edits[0].start != tokens[i].start
    ):
        return edits
    article = tokens[i - 1]
    wanted = "an" if _spoken_with_vowel(edits[0].after.split("-")[0].split(" ")[0]) else "a"
    if article.text.lower() == wanted:
        return edits
    return [replace(article, wanted.capitalize() if article.text[0].isupper() else wanted), *edits]


def number_edit(sentence: str, tokens: tuple[Token, ...]) -> tuple[list[Edit], str]:
    """``(edits, move)`` for the sentence's first quantity, or ``(NoSite(reason), "")``."""
    edits, move, i = _number_edit(sentence, tokens)
    return (_with_article(tokens, i, edits), move) if move else (edits, move)


def _number_edit(sentence: str, tokens: tuple[Token, ...]) -> tuple[list[Edit], str, int]:
    reason = "no_number"
    pick = stable_hash("number", sentence)
    for i, token in enumerate(tokens):
        text = token.text
        if not _NUMBER.match(text):
            continue
        why = _skip_reason(tokens, i)
        if why is not None:
            reason = why if reason == "no_number" else reason
            continue
        nxt, after_next = _word(tokens, i + 1), _word(tokens, i + 2)
        prev = _word(tokens, i - 1)
        negative = prev in ("-", "−") and i > 0 and tokens[i - 1].end == token.start
        if nxt.lower() in _PERCENT or (nxt.lower() == "per" and after_next.lower() == "cent"):
            if negative:
                return [replace(tokens[i - 1], "")], "percent_sign", i
            return [replace(token, "-" + text)], "percent_sign", i
        unit = _unit(tokens, i, pick)
        if unit is not None:
            j, new, move = unit
            return [replace(tokens[j], new)], move, i
        if nxt.lower() in SCALES:
            return [replace(tokens[i + 1], SCALES[nxt.lower()])], "scale_up", i
        count_of = (
            prev.lower() == "of"
            and i > 1
            and tokens[i - 2].tag in ("NN", "NNS")
            and (_word(tokens, i - 2).lower() not in _YEAR_NOUNS)
        )  # a population of 1500
        year = (
            _YEAR.match(text)
            and not negative
            and not count_of
            and prev not in ("$", "£", "€")
            and not (i + 1 < len(tokens) and tokens[i + 1].tag == "NNS")
        )
        if year and (prev.lower() in _YEAR_WORDS or prev.lower().rstrip(".") in MONTHS or prev == ","):
            modifier = i + 1 < len(tokens) and tokens[i + 1].tag[:2] in ("NN", "JJ")
            if modifier or pick % 2:
                return [replace(token, str(int(text) + 1000))], "year_future", i
            return [replace(token, f"{text} BC")], "year_bc", i
        if year:
            return [replace(token, str(int(text) + 1000))], "year_future", i
        if "." in text:
            reason = "decimal" if reason == "no_number" else reason
            continue
        counted = _count(text)
        if counted is None:
            reason = "zero" if reason == "no_number" else reason
            continue
        move, new = counted
        return [replace(token, new)], move, i
    return NoSite(reason), "", -1


def number(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """The first quantity of the sentence to an implausible value (see the module's moves).

    >>> [e.after for e in number("He was born on 14 March 1901.")]
    ['1901 BC']
    >>> [e.after for e in number("He was born on March 14, 1901.")]
    ['2901']
    >>> [e.after for e in number("The journey took 3 hours.")]
    ['seconds']
    >>> number("The meeting started at 10:30.")
    NoSite('no_number')
    """
    tokens = analyse(sentence) if tokens is None else tokens
    edits, move = number_edit(sentence, tokens)
    return Moved(edits, move) if move else edits
