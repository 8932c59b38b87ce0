"""The ``number`` phenomenon (INSteD, Shen et al. 2021, Table 7): the first number of the sentence that states a
quantity or a date, changed to an implausible value with one of the paper's moves, in the number's own format.

- a **year** moves a few years (3 to 9, from the sentence's hash) out of the span of the years the context
  names, to a date possible on its own that breaks the document's order: before the context's earliest year
  (*born 1870 ... died 1931*: ``left Liverpool in 1872`` -> ``in 1867``) or, where that is too far, for a year
  inside the span, after its last (``in 1913`` -> ``in 1934``); never more than :data:`MAX_YEAR_MOVE` years,
  never after :data:`CURRENT_YEAR`, never across another year of the same sentence (*December 2010 ...
  elected 20 June 2011*). Issue #50's held-out reading found whole centuries back absurd on their own (*first
  made-for-web episodes in 1914*, *Of Mice and Men (1839)*). A year is no site where the move clashes with
  nothing: the context names no year (``no_context_year``), the year already lies before the context's
  earliest (``year_outside_context``), or no move fits (``year_order``); the next quantity of the sentence is
  then the site. Never *BC*; in a date (``14 March 1901``, ``March 14, 1901``) the year is the site, never
  the day;
- a **count** (a number before a plural noun, a measure's number, an amount in millions) rises by a modest
  step, possible on its own: a 1 before its digits below 100 (``2 children`` -> ``12 children``, ``31 km`` ->
  ``131 km``, ``$4 billion`` -> ``$14 billion``), doubled from 100 (``30,000 soldiers`` -> ``60,000``). In a
  document, a count that contradicts the context's count for the same noun is chosen first (``count_clash``);
  where the sentence has none, its first count (``count_up``). Never a new unit nor a new scale word (*lasted
  7 centuries*, *US$23 trillion of the US$47 million project*: absurd on their own), nor the first member of
  a range (*3.2 km–5.7 km*), a height (*5 foot 6 inches*) or a conversion in brackets (*(165 cm)*), nor a
  number with no noun counted (*date back to 372*);
- a **percentage** moves by 40 points within 0 to 100 (``12%`` -> ``52%``, ``88%`` -> ``48%``), never below 0;
- where the sentence has no such number in digits, a **count in words** from *two* to *nine* rises by ten
  (``two albums`` -> ``twelve albums``; ``word_clash`` first, as for digits): the hundredfold move of before
  (*two hundred children*) was absurd on its own.

:data:`MOVES` names the moves. Numbers that label or name things are never sites (``Boeing 747``, ``Route 66``,
``Season 3``, ``episode 12``, ``F-16``, ``4×100-metre``, ``26°28′N``), nor times (``10:30``), ranges and scores
(``1939–1945``'s start, ``3–1``), fractions and *one*, ordinals and decades (``1990s``).
A decimal that is neither a measure, an amount in millions nor a percentage (a rating of ``4.5``) is no site
either.

>>> from incoherent.corpora.probes.edits import apply_edits
>>> s = "The club has 18 members."
>>> apply_edits(s, number(s))
'The club has 118 members.'
>>> number("Season 3 aired on HBO.")
NoSite('label')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from incoherent.corpora.probes.edits import Edit, Moved, NoSite, replace
from incoherent.corpora.probes.text import Token, analyse
from incoherent.corpora.seeding import stable_hash

MOVES = ("year_earlier", "year_later", "year_century", "unit_smaller", "unit_larger", "percent_share",
         "count_clash", "count_up", "word_clash", "word_up")  # fmt: skip
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
_SHORT = frozenset({"m", "mi", "ft", "g", "in", "cm", "mm", "lb", "lbs", "oz"})
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
    "squadron regiment battalion brigade corps wing army fleet group battery company # rank top".split()
)
_NUMBER = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$|^\d+(?:\.\d+)?$")
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_PERCENT = frozenset({"%", "percent", "pc"})
_DASHES = frozenset({"-", "–", "—", "−", "/", "to", "&ndash;", "&mdash;"})
_COMPOUND_UNITS = frozenset({"year", "month", "week", "day", "hour", "minute", "page", "story", "storey", "mile",
                             "metre", "meter", "foot", "acre", "man", "member", "seat", "game", "episode", "time",
                             "step"})  # fmt: skip
_COUNT_NOUNS = frozenset({"population", "total", "crowd", "attendance", "capacity", "maximum", "minimum", "sum",
                          "budget", "cost", "area", "length", "height", "depth", "estimate", "average", "number",
                          "score", "audience", "circulation", "enrollment", "enrolment", "strength", "force",
                          "army", "garrison", "staff", "workforce", "fleet", "record", "distance", "altitude",
                          "elevation", "range", "weight", "mass", "speed", "density", "value", "price",
                          "income", "revenue", "debt", "body", "membership", "turnout"})  # fmt: skip


CURRENT_YEAR = 2026  # a moved year stays at or before it: never a date in the future
MAX_YEAR_MOVE = 40  # a year moved further lands before the thing existed (*Billy Wilder's 1880 film*)
_CONTEXT_YEAR = re.compile(r"(?<![\d,.])(1\d{3}|20[0-2]\d)(?!\d|,\d)")


def context_years(context: Sequence[str]) -> tuple[int, ...]:
    """The years (1000 to :data:`CURRENT_YEAR`) the document's other sentences name, sorted.

    >>> context_years(["Born in 1901, she died in 1980.", "It had 1,500 seats and 2 rooms."])
    (1901, 1980)
    """
    years = {int(m.group(1)) for s in context for m in _CONTEXT_YEAR.finditer(s)}
    return tuple(sorted(y for y in years if y <= CURRENT_YEAR))


# things a sentence may name that did not exist before a year everyone knows: a year moved before it is absurd
# on its own (*the first made-for-web episodes ... in 1985*, issue #50's readings)
_INVENTED = {
    "web": 1993, "website": 1993, "websites": 1993, "online": 1993, "internet": 1983, "blog": 1999,
    "blogger": 1999, "podcast": 2004, "youtube": 2005, "facebook": 2004, "twitter": 2006, "instagram": 2010,
    "smartphone": 2007, "iphone": 2007, "ipod": 2001, "app": 2008, "dvd": 1996, "dvds": 1996, "cd": 1982,
    "cds": 1982, "e-mail": 1971, "email": 1971, "video": 1950, "videos": 1950, "television": 1928,
    "televised": 1928, "tv": 1928, "radio": 1906, "film": 1890, "films": 1890, "movie": 1890, "aircraft": 1903,
    "airline": 1914, "airport": 1910, "helicopter": 1936, "jet": 1939, "computer": 1940, "computers": 1940,
}  # fmt: skip


def invented_floor(words: Sequence[str]) -> int:
    """The earliest year the things a sentence names can date from (:data:`_INVENTED`), 0 for none.

    >>> invented_floor("the first made-for-web episodes".replace("-", " ").split())
    1993
    """
    return max((_INVENTED.get(w.lower(), 0) for w in words), default=0)


def moved_year(
    year: int,
    years: tuple[int, ...] | None,
    pick: int,
    start: int = 0,
    sentence: Sequence[int] = (),
    floor: int = 0,
) -> tuple[int, str] | None:
    """``(new year, move)``: the year moved a few years (3 to 9, from ``pick``) out of the span of the
    context's years (``years``), to a date possible on its own that breaks the order of the document's dates:
    before the context's earliest year (its subject's birth, founding or launch, which nothing may precede),
    or, where that is more than :data:`MAX_YEAR_MOVE` years away, for a year inside the span, after its last
    (*born 1870 ... died 1931*: *in 1872* -> *in 1867*, *in 1913* -> *in 1934*; the hand-site reading of issue
    #50 found a year moved past the context's last date clashing with nothing: *at the end of 2014* for a
    service launched in April 2007, where *2004* clashes); never more than
    :data:`MAX_YEAR_MOVE` years from the original (*Billy Wilder's 1880 film*), never after
    :data:`CURRENT_YEAR`, never before ``floor`` (the invention of what the sentence names: *web*, *YouTube*,
    *television*; :func:`invented_floor`), and keeping its place among the other years of its own ``sentence`` (*on November 1,
    1959, after passage of the Federal Aviation Act of 1958*). Issue #50's held-out reading found whole
    centuries back absurd on their own (*first made-for-web episodes in 1914*, *Of Mice and Men (1839)*). None
    (no site) where the move would clash with nothing: the context names no year (*until 1906 when a
    separation occurred* in a text with no dates: issue #50's reading, seed 6060), or the year already lies
    before the context's earliest (a few years earlier still adds no clash); or where no move fits. The end of
    a range of years (``start``: *from 1939 to 1945*) only moves later, past the context's last year, so the
    range still runs forward.
    Without a document (``years`` None: a lone sentence) the year moves a century earlier (later before 1100).

    >>> moved_year(1872, (1870, 1931), 0), moved_year(1913, (1870, 1931), 0)  # the nearer way out of the span
    ((1867, 'year_earlier'), (1934, 'year_later'))
    >>> moved_year(1920, (1890, 1915), 6)  # already after the context's span: now before it
    (1881, 'year_earlier')
    >>> moved_year(1950, (1889, 1940), 0) is None  # 1880 (*Billy Wilder's 1880 film*): too far back
    True
    >>> moved_year(1906, (1929, 1947, 1996), 0), moved_year(1957, (), 0)
    (None, None)
    >>> moved_year(1002, (1001, 1030), 0)
    (1033, 'year_later')
    >>> moved_year(2010, (2009, 2016), 0, sentence=(2007,))  # earlier would cross the sentence's 2007
    (2019, 'year_later')
    >>> moved_year(1945, (), 0, start=1939), moved_year(2019, (2011, 2025), 0, start=2011)
    ((1948, 'year_later'), None)
    >>> moved_year(1957, None, 0)
    (1857, 'year_century')
    >>> moved_year(2018, (1988, 2012, 2015), 0, floor=1993) is None  # made-for-web episodes: not in 1985
    True
    >>> moved_year(2013, (1988, 2012, 2015), 0, floor=1993)  # the web's 1993 bars 1985: after the last
    (2018, 'year_later')
    """
    if years is None and not start:
        return (year - 100, "year_century") if year - 100 >= 1000 else (year + 100, "year_century")
    years = years or ()
    step = 3 + pick % 7

    def keeps_order(new: int) -> bool:
        return all((y < year) == (y < new) and (y > year) == (y > new) for y in sentence if y != year)

    if start:
        later = max(year, *years) + step if years else year + step
        fits = later <= CURRENT_YEAR and later - year <= MAX_YEAR_MOVE and keeps_order(later)
        return (later, "year_later") if fits else None
    if not years or year < years[0]:  # a few years earlier adds no clash to a year before the context's
        return None
    earlier = min(year, years[0]) - step
    later = max(year, years[-1]) + step  # a clash only where the year lies within the context's span
    moves = [(year - earlier, earlier, "year_earlier")] if earlier >= 1000 and keeps_order(earlier) else []
    if year <= years[-1] and later <= CURRENT_YEAR and keeps_order(later):
        moves.append((later - year, later, "year_later"))
    moves = [m for m in moves if m[0] <= MAX_YEAR_MOVE and m[1] >= min(floor, year)]
    if moves and moves[0][2] == "year_earlier":
        return moves[0][1:]  # before the context's first date (a birth, a founding, a launch) clashes
    return min(moves)[1:] if moves else None


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
    if (prev == ";" and _word(tokens, i - 2) in ("ndash", "mdash")) or (
        nxt == "&" and _word(tokens, i + 2) in ("ndash", "mdash")
    ):
        return "range"  # 1892&ndash;93: an HTML dash left in the text (was 1892&ndash;193)
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


_WORD_VALUES = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}  # fmt: skip


def context_counts(context: Sequence[str], noun: str) -> set[int]:
    """The counts the document's sentences give for ``noun``, in digits or words (*three children*, *3 young
    children*, *a population of 1,500*).

    >>> sorted(context_counts(["They had three young children and 2 dogs.", "It has 1,500 children."], "children"))
    [3, 1500]
    """
    if not noun:
        return set()
    value = r"(\d{1,3}(?:,\d{3})+|\d+|" + "|".join(_WORD_VALUES) + ")"
    before = re.compile(rf"(?<![\w,.]){value}\s+(?:[A-Za-z-]+\s+)?{re.escape(noun)}\b", re.IGNORECASE)
    of = re.compile(
        rf"\b{re.escape(noun)}\s+of\s+(?:about\s+|over\s+|some\s+|around\s+)?{value}(?![\d,])", re.I
    )
    found = set()
    for sentence in context:
        for m in (*before.finditer(sentence), *of.finditer(sentence)):
            text = m.group(1).lower().replace(",", "")
            found.add(int(text) if text.isdigit() else _WORD_VALUES[text])
    return found


def _count(text: str, noun: str = "", context: Sequence[str] | None = None) -> tuple[str, str] | None:
    """A count raised by a modest step: a 1 put before its digits below 100 (``2`` -> ``12``, ``31`` -> ``131``),
    doubled from 100 (``30,000`` -> ``60,000``), as ``(move, text)``: a figure possible on its own (issue #50's held-out reading:
    *18,000 members*, *two hundred children* were absurd without their document). In a document (``context``)
    only where the context gives a count for the same ``noun`` that the new one contradicts; None otherwise.

    >>> _count("31"), _count("30,000"), _count("3", "children", ["They had 3 children."])
    (('count_up', '131'), ('count_up', '60,000'), ('count_up', '13'))
    >>> _count("3", "children", ["They had children."]), _count("0")
    (None, None)
    """
    value = int(text.replace(",", ""))
    if value == 0:
        return None
    new = value + 10 ** len(str(value)) if value < 100 else 2 * value
    if context is not None:
        counts = context_counts(context, noun)
        if not counts or new in counts:
            return None
    return "count_up", _formatted(new, text)


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
    if _word(tokens, j + 1) in _DASHES and _NUMBER.match(_word(tokens, j + 2)):
        return None  # 3.2 km–5.7 km: the first member of a range (was 3.2 mm–5.7 km; issue #50)
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


_WORD_UP = {"two": "twelve", "three": "thirteen", "four": "fourteen", "five": "fifteen", "six": "sixteen",
            "seven": "seventeen", "eight": "eighteen", "nine": "nineteen"}  # fmt: skip
_FRACTIONS = frozenset("half halves third thirds quarter quarters fourth fourths fifth fifths sixth sixths "
                       "eighth eighths tenth tenths".split())  # fmt: skip


def _number_word(
    tokens: tuple[Token, ...], context: Sequence[str] | None = None
) -> tuple[list[Edit], str, int]:
    """A count written as a word from *two* to *nine* moved up by ten (*two albums* -> *twelve albums*), where
    the sentence has no count in digits: ``(edits, "word_up", i)``, or ``(NoSite(reason), "", -1)``. In a
    document (``context``) only where the context gives a count for the same noun (the first plural within
    three words) that the new one contradicts (``no_context_count``): issue #50's held-out reading found the
    hundredfold move (*two hundred children*) absurd on its own, and *twelve albums* alone as plausible as two.
    Never *one* (also a pronoun), a fraction (*five eighths*), a compound or range (*twenty-one*, *two to
    three*, *two or three*) nor a word of a name (*The Four Tops*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> [(e.before, e.after) for e in _number_word(analyse("They released two albums."))[0]]
    [('two', 'twelve')]
    >>> _number_word(analyse("They released two albums."), ["They toured Europe."])[0]
    NoSite('no_context_count')
    >>> _number_word(analyse("It won by five eighths of a second."))[0]
    NoSite('no_number')
    """
    reason = "no_number"
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
        if context is not None:
            noun = next((t.text for t in tokens[i + 1 : i + 4] if t.tag == "NNS"), "")
            counts = context_counts(context, noun)
            if not counts or _WORD_VALUES[new] in counts:
                reason = "no_context_count"
                continue
        return [replace(token, new.capitalize() if token.text[0].isupper() else new)], "word_up", i
    return NoSite(reason), "", -1


_PERCENT_IN = re.compile(r"\d\s*%|\bper ?cent\b", re.IGNORECASE)


def number_edit(
    sentence: str, tokens: tuple[Token, ...], context: Sequence[str] | None = None, clash: bool = False
) -> tuple[list[Edit], str]:
    """``(edits, move)`` for the sentence's first quantity, or ``(NoSite(reason), "")``; ``context``: the
    document's other sentences, whose years a moved year must clash with. A count in words is a site only where
    the sentence has no number in digits that is one. In a document, a count is first a site only where it
    contradicts a count the context gives for the same noun (``count_clash``, ``word_clash``); where the
    sentence has no such site, its first count moved by the same modest step is (``count_up``, ``word_up``),
    so that INSteD's own hand sites, mostly counts the context does not repeat, keep a probe. With ``clash``
    (``incoherent probes --number clash``) that fallback is no site (``no_clash``): every probe then contradicts
    the document (a year out of its dates' span, a count it gives otherwise, a percentage)."""
    years = None if context is None else context_years(context)
    edits, move, i = _number_edit(sentence, tokens, years, context)
    if not move:  # no number in digits is a site (Top 10, 6-8, a year with nothing to clash with): a word's
        words, move, i = _number_word(tokens, context)
        edits = words if move or edits.reason == "no_number" else edits  # else the digits' reason
    if move and context is not None and move in ("count_up", "word_up"):
        move = move.replace("_up", "_clash")
    if clash and move == "percent_share" and not any(_PERCENT_IN.search(c) for c in context or ()):
        move = ""  # a share moved where the document gives no share clashes with nothing
    if not move and context is not None and clash:
        return NoSite("no_clash"), ""  # a count moved where the context counts nothing clashes with nothing
    if not move and context is not None:  # no count clashes with the context: the first count, moved
        relaxed, move, i = _number_edit(sentence, tokens, years, None)
        if not move:
            relaxed, move, i = _number_word(tokens, None)
        edits = relaxed if move else edits
    return (_with_article(tokens, i, edits), move) if move else (edits, move)


def _measure_skip(tokens: tuple[Token, ...], i: int) -> str | None:
    """Why the number at ``i`` is part of a measure's structure and stays, or None: a conversion in brackets
    (*5 foot 6 inches (165 cm)*: the same measure again, was 330 cm), a height (*5 foot 6 inches*: 15 foot 6 was
    absurd on its own), the first member of a range (*3.2 km–5.7 km*)."""
    prev, nxt, after_next = _word(tokens, i - 1), _word(tokens, i + 1), _word(tokens, i + 2)
    before_bracket = _word(tokens, i - 2)
    if prev == "(" and (before_bracket in SMALLER or before_bracket in LARGER or before_bracket in _SHORT):
        return "conversion"
    if (nxt.lower() in ("foot", "feet", "ft") and _NUMBER.match(after_next)) or (
        prev.lower() in ("foot", "feet", "ft") and _NUMBER.match(_word(tokens, i - 2))
    ):
        return "height"
    if after_next in _DASHES and _NUMBER.match(_word(tokens, i + 3)):
        return "range"
    return None


def _counted_noun(tokens: tuple[Token, ...], i: int, count_of: bool, unit, scaled: bool) -> str:
    """The noun the number at ``i`` counts: 19 such *structures*, 4 *centimeters*, a *population* of 1,500,
    2 million *copies*; empty when there is none (*date back to 372*)."""
    nxt, after_next = _word(tokens, i + 1), _word(tokens, i + 2)
    if count_of:
        return _word(tokens, i - 2)
    if unit is not None:
        return tokens[unit[0]].text
    if scaled and after_next[:1].islower():
        return after_next
    return (
        next((t.text for t in tokens[i + 1 : i + 4] if t.tag == "NNS"), "")
        or next((t.text for t in tokens[max(0, i - 5) : i] if t.text.lower() in _COUNT_NOUNS), "")
        or (nxt if nxt == "strong" else "")
    )


def _moved_year_at(
    tokens: tuple[Token, ...], i: int, context_years: tuple[int, ...] | None, pick: int
) -> tuple[int, str] | str:
    """:func:`moved_year` for the year at ``i`` (the end of a range moves later only; the sentence's other
    years and what it names bound the move), or the reason it is no site."""
    text, prev = tokens[i].text, _word(tokens, i - 1)
    between = prev == "and" and _word(tokens, i - 3).lower() == "between"  # between 1969 and 1972
    ranged = (prev in _DASHES or between) and _YEAR.match(_word(tokens, i - 2))
    start = int(_word(tokens, i - 2)) if ranged else 0
    own = [int(t.text) for j, t in enumerate(tokens) if j != i and _YEAR.match(t.text)]
    floor = invented_floor([w for t in tokens for w in re.split(r"[-/]", t.text)])
    own_years = [y for y in own if y <= CURRENT_YEAR]
    moved = moved_year(int(text), context_years, pick, start, own_years, floor)
    if moved is not None:
        return moved
    if start:
        return "range"
    if not context_years:
        return "no_context_year"
    return "year_outside_context" if int(text) < context_years[0] else "year_order"


def _number_edit(
    sentence: str,
    tokens: tuple[Token, ...],
    context_years: tuple[int, ...] | None = None,
    context: Sequence[str] | None = None,
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
        if (
            nxt.lower() in _PERCENT
            or (nxt.lower() == "per" and after_next.lower() == "cent")
            or nxt.lower().startswith("percent-")  # 70 percent-owned
        ):
            share = _share(text, negative)
            if share is None:
                reason = "percentage" if reason == "no_number" else reason
                continue
            return (
                ([replace(tokens[i - 1], "")] if negative else []) + [replace(token, share)],
                "percent_share",
                i,
            )
        unit = _unit(tokens, i, pick)  # a measure's number moves as a count (7 months -> 17 months): a new
        # unit was absurd on its own (*lasted 7 centuries*, *14 minutes* of gestation; issue #50's reading)
        structure = _measure_skip(tokens, i)
        if structure is not None:
            reason = structure if reason == "no_number" else reason
            continue
        scaled = nxt.lower() in SCALES  # never million -> trillion: *US$23 trillion of the US$47 million
        # project* was absurd on its own (issue #50); the number moves as a count (US$147 million)
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
            moved = _moved_year_at(tokens, i, context_years, pick)
            if isinstance(moved, str):
                reason = moved if reason == "no_number" else reason
                continue
            return [replace(token, str(moved[0]))], moved[1], i
        whole, point, fraction = text.partition(".")
        if point and not scaled and unit is None:
            reason = "decimal" if reason == "no_number" else reason
            continue
        noun = _counted_noun(tokens, i, count_of, unit, scaled)
        if not noun and not scaled:
            reason = "no_noun" if reason == "no_number" else reason
            continue  # date back to 372 in Korea: a year, not a count (was *1,372*)
        counted = _count(whole, noun, context)  # 2.3 million copies -> 12.3 million copies
        if counted is None:
            reason = (
                ("zero" if text.strip("0,") == "" else "no_context_count")
                if reason == "no_number"
                else reason
            )
            continue
        move, new = counted
        return [replace(token, new + point + fraction)], move, i
    return NoSite(reason), "", -1


def number(
    sentence: str,
    tokens: tuple[Token, ...] | None = None,
    context: Sequence[str] | None = None,
    clash: bool = False,
) -> list[Edit]:
    """The first quantity of the sentence to an implausible value (see the module's moves); with ``clash`` only
    a value that contradicts the ``context`` (no ``count_up``/``word_up``).

    >>> [e.after for e in number("He was born on 14 March 1901.")]
    ['1801']
    >>> [e.after for e in number("He was born on March 14, 1901.", context=["He married in 1899.", "He died in 1980."])]
    ['1895']
    >>> [e.after for e in number("The journey took 3 hours.")]
    ['13']
    >>> number("The meeting started at 10:30.")
    NoSite('no_number')
    >>> [e.after for e in number("She had 3 children.", context=["She married in 1950."])]
    ['13']
    >>> number("She had 3 children.", context=["She married in 1950."], clash=True)
    NoSite('no_clash')
    >>> [e.after for e in number("She had 3 children.", context=["Her 2 children were born in Rome."], clash=True)]
    ['13']
    """
    tokens = analyse(sentence) if tokens is None else tokens
    edits, move = number_edit(sentence, tokens, context, clash)
    return Moved(edits, move) if move else edits
