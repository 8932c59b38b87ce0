"""The ``number`` phenomenon (INSteD, Shen et al. 2021, Table 7): the first number of the sentence that states a
quantity or a date, changed to an implausible value with one of the paper's moves, in the number's own format.

- a **year** moves to a date that is possible on its own but clashes with the document: whole centuries
  earlier until it falls more than a decade before the earliest year the context names (*born 1901 ... died
  1980*: ``in 1957`` -> ``in 1857``; decades later, past the last, only where no century earlier is left).
  A year is no site where the move clashes with nothing: the context names no year (``no_context_year``), or
  the year already lies more than a decade before the context's earliest (``year_outside_context``: moving it
  further back adds nothing); the next quantity of the sentence is then the site. Never *BC* nor a year in the future (issue #50: the paper's own
  probes, *BCE* in 37 of 100, were absurd without their document); in a date (``14 March 1901``, ``March 14,
  1901``) the year is the site, never the day;
- a **measure** keeps its number and gets a far smaller or a far larger unit (``51.7 km`` -> ``51.7 mm`` or
  ``51.7 metres``, ``3 hours`` -> ``3 seconds`` or ``3 centuries``; never a unit no earthly measure takes,
  such as light-years);
- an amount in **millions or billions** goes to trillions (``$4 billion`` -> ``$4 trillion``; thousands to
  billions);
- a **percentage** moves by 40 points within 0 to 100 (``12%`` -> ``52%``, ``88%`` -> ``48%``), never below 0;
- any other **count** is made implausible, up or down by its size, and stays an integer with thousands
  separators (``18 members`` -> ``18,000 members``; ``30,000 soldiers`` -> ``30 soldiers``, never
  ``3000.0``).

- where the sentence has no such number in digits, a **count in words** goes up a hundredfold (``two albums``
  -> ``two hundred albums``, ``twenty`` -> ``two thousand``): *twelve albums*, *his wife and twelve children*
  were as plausible as the original (issue #50's reading, seed 6060).

Where two moves fit (a measure), the sentence's own hash picks one:
:data:`MOVES` names the moves. Numbers that label or name things are never sites (``Boeing 747``, ``Route 66``,
``Season 3``, ``episode 12``, ``F-16``, ``4×100-metre``, ``26°28′N``), nor times (``10:30``), ranges and scores
(``1939–1945``'s start, ``3–1``), fractions and *one*, ordinals and decades (``1990s``).
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
from collections.abc import Sequence

from incoherent.corpora.probes.edits import Edit, Moved, NoSite, replace
from incoherent.corpora.probes.text import Token, analyse
from incoherent.corpora.seeding import stable_hash

MOVES = ("year_earlier", "year_later", "year_century", "unit_smaller", "unit_larger", "scale_up", "percent_share",
         "count_up", "count_down", "word_up")  # fmt: skip
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
    "metres": "kilometres",
    "meters": "kilometers", "metre": "kilometre", "meter": "kilometer", "cm": "km", "centimetres": "kilometres",
    "millimetres": "kilometres", "mm": "km", "inches": "miles", "inch": "mile", "feet": "miles", "foot": "mile",
    "kg": "tonnes", "kilograms": "tonnes", "grams": "tonnes", "pounds": "tons",
    "seconds": "days", "second": "day", "minutes": "years", "minute": "year", "hours": "centuries",
    "hour": "century", "days": "centuries", "day": "century", "weeks": "decades", "months": "centuries",
    "years": "centuries", "litres": "cubic metres", "liters": "cubic meters",
    "hectares": "square kilometres", "acres": "square miles",
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
_COMPOUND_UNITS = frozenset({"year", "month", "week", "day", "hour", "minute", "page", "story", "storey", "mile",
                             "metre", "meter", "foot", "acre", "man", "member", "seat", "game", "episode", "time",
                             "step"})  # fmt: skip
_COUNT_NOUNS = frozenset({"population", "total", "crowd", "attendance", "capacity", "maximum", "minimum", "sum",
                          "budget", "cost", "area", "length", "height", "depth", "estimate", "average", "number",
                          "score", "audience", "circulation", "enrollment", "enrolment", "strength", "force",
                          "army", "garrison", "staff", "workforce", "fleet", "record", "distance", "altitude",
                          "elevation", "range", "weight", "mass", "speed", "density", "value", "price",
                          "income", "revenue", "debt"})  # fmt: skip


CURRENT_YEAR = 2026  # a moved year stays at or before it: never a date in the future
_CONTEXT_YEAR = re.compile(r"(?<![\d,.])(1\d{3}|20[0-2]\d)(?!\d|,\d)")


def context_years(context: Sequence[str]) -> tuple[int, ...]:
    """The years (1000 to :data:`CURRENT_YEAR`) the document's other sentences name, sorted.

    >>> context_years(["Born in 1901, she died in 1980.", "It had 1,500 seats and 2 rooms."])
    (1901, 1980)
    """
    years = {int(m.group(1)) for s in context for m in _CONTEXT_YEAR.finditer(s)}
    return tuple(sorted(y for y in years if y <= CURRENT_YEAR))


def moved_year(year: int, years: tuple[int, ...] | None, pick: int, start: int = 0) -> tuple[int, str] | None:
    """``(new year, move)``: the year moved by whole centuries earlier, to a date that is possible on its own
    (1000 to :data:`CURRENT_YEAR`) but falls before the context's earliest year (of ``years``) by more than a
    decade, so it breaks the order of the document's dates (*born 1901 ... died 1980*: *in 1957* -> *in 1857*);
    decades later, past the context's last year, only where no century earlier is possible. None (no site)
    where the move would clash with nothing: the context names no year (*until 1906 when a separation occurred*
    in a text with no dates: issue #50's reading, seed 6060), or the year already lies more than a decade
    before the context's earliest (*1895* -> *1795* in a text about 1960-1978 adds no clash; crossing the span
    instead, *c. 1960* -> *c. 2000* beside a restoration in 1984, is as plausible as the original). The end of a
    range of years (``start``: *from 1939 to 1945*) only moves later, a decade at a time, so the range still
    runs forward.
    Without a document (``years`` None: a lone sentence) the year moves a century earlier (later before 1100).

    >>> moved_year(1957, (1901, 1980), 0)
    (1857, 'year_earlier')
    >>> moved_year(1949, (1861, 1915), 0)  # already after the context's span: now before it
    (1849, 'year_earlier')
    >>> moved_year(1906, (1929, 1947, 1996), 0), moved_year(1957, (), 0)
    (None, None)
    >>> moved_year(1070, (1066, 1087), 0)
    (1100, 'year_later')
    >>> moved_year(1945, (), 0, start=1939), moved_year(2019, (), 0, start=2011), moved_year(1957, None, 0)
    ((1955, 'year_later'), None, (1857, 'year_century'))
    """
    if years is None and not start:
        return (year - 100, "year_century") if year - 100 >= 1000 else (year + 100, "year_century")
    years = years or ()
    if start:
        later = year + 10
        while years and later <= years[-1] + 10:
            later += 10
        return (later, "year_later") if later <= CURRENT_YEAR else None
    if not years or year < years[0] - 10:
        return None
    lo, hi = years[0], years[-1]
    earlier = year - 100
    while earlier >= lo - 10:
        earlier -= 100
    if earlier >= 1000:
        return earlier, "year_earlier"
    later = year + 10
    while later <= hi + 10:
        later += 10
    return (later, "year_later") if later <= CURRENT_YEAR else None


def _share(text: str, negative: bool) -> str | None:
    """A percentage moved by 40 points within 0-100, in its own format (``12`` -> ``52``, ``88`` -> ``48``), or
    None for one outside 0-100.

    >>> _share("12", False), _share("88.5", False), _share("3", True)
    ('52', '48.5', '37')
    """
    value = float(text.replace(",", ""))
    if value > 100:
        return None
    value = -value if negative else value
    new = value + 40 if value < 50 else value - 40
    new = max(new, 0.0)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{new:.{decimals}f}"


def _word(tokens: tuple[Token, ...], i: int) -> str:
    return tokens[i].text if 0 <= i < len(tokens) else ""


def _glued(tokens: tuple[Token, ...], i: int, j: int) -> bool:
    """Whether tokens ``i`` and ``j`` (``i < j``) touch, with no space between (``F-16``, ``747-400``)."""
    return 0 <= i < j < len(tokens) and tokens[i].end == tokens[j].start


def _open_brackets(tokens: tuple[Token, ...], i: int) -> int:
    """How many brackets are open before token ``i``."""
    return sum((t.text == "(") - (t.text == ")") for t in tokens[:i])


def _list_start(tokens: tuple[Token, ...], i: int) -> int:
    """The first number of the list the number at ``i`` ends (*21, 23, 24 & 25*; *8 or 10*): ``i`` itself
    where no number comes before it through commas and conjunctions."""
    first, j = i, i - 1
    while j > 0:
        while j > 0 and tokens[j].text in (",", "or", "and", "&"):
            j -= 1
        if j == first - 1 or not _NUMBER.match(tokens[j].text):
            break
        first, j = j, j - 1
    return first


def _skip_reason(tokens: tuple[Token, ...], i: int) -> str | None:
    """Why the number at ``i`` is not a site (``label``, ``name``, ``notation``, ``range``, ``day``, ``era``),
    or None."""
    prev, nxt = _word(tokens, i - 1), _word(tokens, i + 1)
    if nxt.rstrip(".") in ("BC", "BCE", "B.C"):
        return "era"  # from 1493 to 1479 BC: a decade "later" is 1489 BC, still a range that fits
    if nxt == ")" and _glued(tokens, i, i + 1) and _open_brackets(tokens, i) <= 0:
        return "label"  # 1) driver's pedestal, 2) front axle: an enumeration
    first = _list_start(tokens, i)
    if first != i and _skip_reason(tokens, first) in ("label", "name"):
        return "label"  # Routes 21, 23, 24 & 25; number 8 or 10: the list of a label's numbers
    if prev.lower() in LABELS or prev in ("#", "©", "No", "Year", "Years"):  # Year 10: a school grade
        return "label"
    if prev in ("×", "^", "'", "’", "x", "e") and _glued(tokens, i - 1, i):
        return "notation"  # 1.2×1015, '57
    if nxt in ("°", "′", "'") and _glued(tokens, i, i + 1):
        return "notation"  # 26°28'N: a coordinate or an angle
    if nxt in ("×", "x") and _glued(tokens, i, i + 1):
        return "label"  # 4×100-metre relay, 6× platinum
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
        and (tokens[i + 1].tag in ("NNP", "NNPS") or (tokens[i + 1].tag == "NNS" and nxt[:1].isupper()))
        and nxt.lower() not in MONTHS
        and not _YEAR.match(text)
    ):
        return "name"  # 7 Eleven, 221 Baker Street, the film 16 Blocks
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
    if _NUMBER.match(_word(tokens, j + 1)):  # 5 foot 6 inches: a height, whose unit has no other size
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


_WORD_UP = {"two": "two hundred", "three": "three hundred", "four": "four hundred", "five": "five hundred",
            "six": "six hundred", "seven": "seven hundred", "eight": "eight hundred", "nine": "nine hundred",
            "twenty": "two thousand", "thirty": "three thousand", "forty": "four thousand",
            "fifty": "five thousand", "sixty": "six thousand", "seventy": "seven thousand",
            "eighty": "eight thousand", "ninety": "nine thousand"}  # fmt: skip
_FRACTIONS = frozenset("half halves third thirds quarter quarters fourth fourths fifth fifths sixth sixths "
                       "eighth eighths tenth tenths".split())  # fmt: skip


def _number_word(tokens: tuple[Token, ...]) -> tuple[list[Edit], str, int]:
    """A count written as a word (*two albums*, *over twenty nationalities*) moved up a hundredfold (*two
    hundred albums*, *two thousand nationalities*), where the sentence has no count in digits: ``(edits, "word_up",
    i)``, or ``(NoSite("no_number"), "", -1)``. Never *one* (also a pronoun), a fraction (*five eighths*), a
    compound or range (*twenty-one*, *two to three*, *two or three*) nor a word of a name (*The Four Tops*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> [(e.before, e.after) for e in _number_word(analyse("They released two albums."))[0]]
    [('two', 'two hundred')]
    >>> _number_word(analyse("It won by five eighths of a second."))[0]
    NoSite('no_number')
    """
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if word not in _WORD_UP or token.tag != "CD":
            continue
        nxt, prev = _word(tokens, i + 1).lower(), _word(tokens, i - 1).lower()
        if token.text[0].isupper() and (
            i > 0 or tokens[i + 1 : i + 2] and tokens[i + 1].tag in ("NNP", "NNPS")
        ):
            continue  # The Four Tops, Group of Seven
        if (
            nxt in _FRACTIONS
            or nxt in _DASHES
            or nxt in ("or", "and", "-")
            or prev in _DASHES
            or prev == "or"
        ):
            continue
        if _glued(tokens, i, i + 1) or _glued(tokens, i - 1, i):
            continue  # twenty-one, two-thirds
        if prev in LABELS or (prev == "and" and nxt in ("hundred", "thousand", "million")):
            continue  # number two on the chart: a position; one million and four hundred thousand
        new = _WORD_UP[word]
        return [replace(token, new.capitalize() if token.text[0].isupper() else new)], "word_up", i
    return NoSite("no_number"), "", -1


def number_edit(
    sentence: str, tokens: tuple[Token, ...], context: Sequence[str] | None = None
) -> tuple[list[Edit], str]:
    """``(edits, move)`` for the sentence's first quantity, or ``(NoSite(reason), "")``; ``context``: the
    document's other sentences, whose years a moved year must clash with. A count in words is a site only where
    the sentence has no number in digits that is one."""
    edits, move, i = _number_edit(sentence, tokens, None if context is None else context_years(context))
    if not move:  # no number in digits is a site (Top 10, 6-8, a year with nothing to clash with): a word's
        words, move, i = _number_word(tokens)
        edits = words if move or edits.reason == "no_number" else edits  # else the digits' reason
    return (_with_article(tokens, i, edits), move) if move else (edits, move)


def _number_edit(
    sentence: str, tokens: tuple[Token, ...], context_years: tuple[int, ...] | None = None
) -> tuple[list[Edit], str, int]:
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
            share = _share(text, negative)
            if share is None:
                reason = "percentage" if reason == "no_number" else reason
                continue
            return (
                ([replace(tokens[i - 1], "")] if negative else []) + [replace(token, share)],
                "percent_share",
                i,
            )
        unit = _unit(tokens, i, pick)
        if unit is not None:
            j, new, move = unit
            return [replace(tokens[j], new)], move, i
        if nxt.lower() in SCALES:
            return [replace(tokens[i + 1], SCALES[nxt.lower()])], "scale_up", i
        count_of = (
            prev.lower() == "of" and i > 1 and _word(tokens, i - 2).lower() in _COUNT_NOUNS
        )  # a population of 1500 (but the game of 1983)
        plural_after = i + 1 < len(tokens) and tokens[i + 1].tag == "NNS"
        first = _list_start(tokens, i)
        year = (first != i and _YEAR.match(tokens[first].text) and _YEAR.match(text)) or (
            _YEAR.match(text)
            and int(text) <= CURRENT_YEAR
            and not negative
            and not count_of
            and prev not in ("$", "£", "€")
            and not (plural_after and prev.lower() not in ("the", "its", "his", "her", "their"))
        )  # the 1969 amendments: a year; 1500 soldiers: a count; the 1995 and 1996 seasons: years
        counted_noun = i + 1 < len(tokens) and tokens[i + 1].tag == "NNS"  # 2050 copies: a count
        if (
            _YEAR.match(text)
            and int(text) > CURRENT_YEAR
            and not (count_of or counted_noun or prev in ("$", "£", "€"))
        ):
            reason = "future_year" if reason == "no_number" else reason
            continue  # by 2050: a target year; moved or made a count, it would no longer read as one
        if year:
            between = prev == "and" and _word(tokens, i - 3).lower() == "between"  # between 1969 and 1972
            ranged = (prev in _DASHES or between) and _YEAR.match(_word(tokens, i - 2))
            start = int(_word(tokens, i - 2)) if ranged else 0
            moved = moved_year(int(text), context_years, pick, start)
            if moved is None:
                why = "range" if start else "no_context_year" if not context_years else "year_outside_context"
                reason = why if reason == "no_number" else reason
                continue
            return [replace(token, str(moved[0]))], moved[1], i
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


def number(
    sentence: str, tokens: tuple[Token, ...] | None = None, context: Sequence[str] | None = None
) -> list[Edit]:
    """The first quantity of the sentence to an implausible value (see the module's moves).

    >>> [e.after for e in number("He was born on 14 March 1901.")]
    ['1801']
    >>> [e.after for e in number("He was born on March 14, 1901.", context=["He died in 1980."])]
    ['1991']
    >>> [e.after for e in number("The journey took 3 hours.")]
    ['seconds']
    >>> number("The meeting started at 10:30.")
    NoSite('no_number')
    """
    tokens = analyse(sentence) if tokens is None else tokens
    edits, move = number_edit(sentence, tokens, context)
    return Moved(edits, move) if move else edits
