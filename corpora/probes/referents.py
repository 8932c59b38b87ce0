"""What the context says about the intruder's pronouns: the gender of the entity the context talks about, ships
and countries (which English may call *she*), a referent named inside the intruder, and expletive *it*.

The pronoun phenomena (:mod:`corpora.probes.pronouns`) read these to *reinforce* the intruder's incoherence and
never repair it (INSteD, Shen et al. 2021, §7: a probe that makes the intruder fit its context better measures
something else).

>>> context_gender(["He was born in Leeds.", "His father was a miner.", "She was his sister."])
('m', None)
>>> context_gender(["The bridge opened in 1890."])
(None, 'no_context_gender')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from incoherent.corpora.probes.text import Token

_MASCULINE_WORDS = re.compile(r"\b(?:he|him|his|himself|Mr|Sir)\b", re.IGNORECASE)
_FEMININE_WORDS = re.compile(r"\b(?:she|her|hers|herself|Mrs|Ms|Miss|Madam|Dame)\b", re.IGNORECASE)
DOMINANCE = 3  # the context's gender: its pronouns outnumber the other gender's at least this many times


def context_gender(context: Sequence[str]) -> tuple[str | None, str | None]:
    """``("m" | "f", None)``: the gender of the entity the context talks about, told by its pronouns and titles
    (Mr, Mrs, Ms, Sir, Dame); ``(None, reason)`` when the context gives no gender (``no_context_gender``) or
    both without one dominating (``mixed_context_gender``: neither outnumbers the other three to one).

    >>> context_gender(["She and he met.", "He left."])
    (None, 'mixed_context_gender')
    """
    masculine = sum(_pronoun_count(_MASCULINE_WORDS, s) for s in context)
    feminine = sum(_pronoun_count(_FEMININE_WORDS, s) for s in context)
    if masculine == feminine == 0:
        return None, "no_context_gender"
    if masculine >= DOMINANCE * feminine:
        return "m", None
    if feminine >= DOMINANCE * masculine:
        return "f", None
    return None, "mixed_context_gender"


def _pronoun_count(words: re.Pattern, sentence: str) -> int:
    """How many of ``words`` in ``sentence`` are pronouns or titles: a capitalised *He* or *His* inside a
    sentence, not after an opening quote or bracket, is a symbol or a name (*it has symbol He*), not a
    pronoun.

    >>> _pronoun_count(_MASCULINE_WORDS, "Helium has symbol He; he named it.")
    1
    """
    return sum(_is_pronoun_or_title(sentence, match) for match in words.finditer(sentence))


_PRONOUNS = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})


def context_about_thing(context: Sequence[str]) -> bool:
    """Whether the context talks about a thing rather than a person: more of its sentences open with *It* or
    *Its* than with a gendered pronoun (*The nebular hypothesis ... It suggests ...*, where a *his* names the
    theory's author), so that *it* in the intruder would find its referent there.

    >>> context_about_thing(["The theory is old.", "It was proposed by Kant in his book."])
    True
    >>> context_about_thing(["Kant was a philosopher.", "He wrote it in 1755.", "It was his first book."])
    False
    """
    openers = [s.lstrip('"“‘( ').split(" ", 1)[0] for s in context]
    things = sum(w in ("It", "Its") for w in openers)
    persons = sum(w in ("He", "She", "His", "Her") for w in openers)
    return things > persons


def in_quotation(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the token at ``i`` stands inside a direct quotation of the sentence (after an odd number of
    double quotes): a pronoun there may stand for anyone the speaker knows, not for the context's person.

    >>> from incoherent.corpora.probes.text import analyse
    >>> toks = analyse('"He was my hero," his son wrote.')
    >>> in_quotation(toks, 1), in_quotation(toks, 7)
    (True, False)
    """
    return sum(t.text in QUOTES for t in tokens[:i]) % 2 == 1


QUOTES = frozenset({'"', "“", "”", "``", "''"})  # double quotation marks, as the tokenizer gives them
_SAYING = frozenset(
    """said says say told tells added adds explained explains stated states wrote writes insisted insists
    warned warns argued argues claimed claims noted notes believes believed thinks thought announced announces
    reported reports confirmed confirms admitted admits agreed agrees replied replies acknowledged""".split()
)


def speech_attribution(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the pronoun at ``i`` is the speaker of a report (*he said*, *he says the survey*, *said he*):
    organisations say things too, so *it said* may find its referent in a news text.

    >>> from incoherent.corpora.probes.text import analyse
    >>> toks = analyse('"It is over," he said.')
    >>> speech_attribution(toks, 6), speech_attribution(toks, 1)
    (True, False)
    """
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR"):
        j += 1
    following = tokens[j].text.lower() if j < len(tokens) else ""
    preceding = tokens[i - 1].text.lower() if i > 0 else ""
    return following in _SAYING or preceding in _SAYING and tokens[i].text.lower() in ("he", "she")


def opener_referent(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the pronoun at ``i`` stands in an opening phrase whose comma is followed by a noun phrase, the
    subject the pronoun looks forward to (*For much of its history, Novgorod was*, *Despite his illness, the
    king*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> opener_referent(analyse("For much of its history, Novgorod was a city."), 3)
    True
    >>> opener_referent(analyse("Known under his rule as Il Duce, he founded fascism."), 2)
    False
    >>> opener_referent(analyse("During its history the city has had several names."), 1)
    True
    """
    if tokens[0].tag not in _OPENING_TAGS:
        return False
    comma = next((j for j, t in enumerate(tokens) if t.text == ","), None)
    verb = next((j for j, t in enumerate(tokens) if t.tag in ("VBD", "VBZ", "VBP", "MD")), None)
    if verb is not None and i < verb and (comma is None or comma > verb):
        # no comma: During its history the city has had, where a new noun phrase opens after the pronoun's
        return any(
            tokens[k].tag in ("DT", "NNP") and tokens[k - 1].tag.startswith("NN") for k in range(i + 2, verb)
        )
    if comma is None or comma < i or comma + 1 >= len(tokens):
        return False
    if any(_finite(t) for t in tokens[:comma]):
        return False  # a clause, not a phrase: When he died, the estate
    return tokens[comma + 1].tag in ("DT", "NN", "NNS", "NNP", "NNPS", "JJ", "CD", "PRP$")


PRONOUN_PHENOMENA = ("gender", "animacy-down", "animacy-up")


def referent_spans(sentences: Sequence[str], intruder_index: int) -> list[dict]:
    """Where the context tells the gender of the person it talks about, for the review page: the spans of the
    pronouns and titles (*he*, *his*, *Mr*, ...) of the context's gender (:func:`context_gender`; both genders
    where the context mixes them), as ``{"sentence", "start", "end"}`` (character offsets in the sentence).
    The intruder sentence is not searched.

    >>> referent_spans(["Mr Smith retired.", "It rained.", "He moved to Leeds; his wife stayed."], 1)
    [{'sentence': 0, 'start': 0, 'end': 2}, {'sentence': 2, 'start': 0, 'end': 2}, {'sentence': 2, 'start': 19, 'end': 22}]
    """
    context = [s for k, s in enumerate(sentences) if k != intruder_index]
    gender, _ = context_gender(context)
    patterns = {"m": [_MASCULINE_WORDS], "f": [_FEMININE_WORDS]}.get(
        gender, [_MASCULINE_WORDS, _FEMININE_WORDS]
    )
    spans = []
    for k, sentence in enumerate(sentences):
        if k == intruder_index:
            continue
        for pattern in patterns:
            spans += [{"sentence": k, "start": m.start(), "end": m.end()} for m in pattern.finditer(sentence)
                      if _is_pronoun_or_title(sentence, m)]  # fmt: skip
    return sorted(spans, key=lambda span: (span["sentence"], span["start"]))


def _is_pronoun_or_title(sentence: str, match: re.Match) -> bool:
    word, before = match.group(), sentence[: match.start()].rstrip()
    return not (word[:1].isupper() and word.lower() in _PRONOUNS and before and before[-1] not in _OPENERS)


_OPENERS = "\"“‘'([:;—–-"


# Ships and boats are "she" in ordinary English (and so, in older or formal use, are countries): a "she" that
# stands for one is no animacy site, and "it" in a text about one may be given "she" by its writer.
_VESSEL_NOUNS = (
    "ship|ships|vessel|vessels|boat|boats|yacht|frigate|submarine|cruiser|destroyer|battleship|warship|"
    "steamer|steamship|schooner|liner|sloop|ketch|barque|brig|brigantine|corvette|tanker|freighter|ferry|"
    "tugboat|galleon|gunboat|trawler|lifeboat|dreadnought|minesweeper|clipper|paddle steamer|aircraft carrier|"
    "locomotive|locomotives|steam engine|airship|airliner"  # engines and craft English gives "she" as it does ships
)
_VESSEL = re.compile(rf"\b(?:{_VESSEL_NOUNS})\b", re.IGNORECASE)
_SHIP_PREFIX = re.compile(r"\b(?:HMS|USS|RMS|HMAS|HMCS|HMNZS|USNS|USCGC|SS|MV|MS|SMS|INS|NRP)\s+[A-Z]")
_COUNTRY_NOUNS = re.compile(
    r"\b(?:country|countries|nation|homeland|motherland|fatherland|kingdom|empire|republic|territory|colony|"
    r"dominion|commonwealth|capital)\b",
    re.IGNORECASE,  # a capital or a territory: its capital and largest city is Saint-Denis
)
_COUNTRIES = frozenset(
    """Afghanistan Albania Algeria Andorra Angola Argentina Armenia Australia Austria Azerbaijan Bahamas Bahrain
    Bangladesh Barbados Belarus Belgium Belize Benin Bhutan Bolivia Bosnia Botswana Brazil Britain Brunei
    Bulgaria Burma Burundi Cambodia Cameroon Canada Chad Chile China Colombia Comoros Congo Croatia Cuba Cyprus
    Czechia Czechoslovakia Denmark Djibouti Dominica Ecuador Egypt England Eritrea Estonia Eswatini Ethiopia Fiji
    Finland France Gabon Gambia Georgia Germany Ghana Greece Grenada Guatemala Guinea Guyana Haiti Honduras
    Hungary Iceland India Indonesia Iran Iraq Ireland Israel Italy Jamaica Japan Jordan Kazakhstan Kenya Kiribati
    Korea Kosovo Kuwait Kyrgyzstan Laos Latvia Lebanon Lesotho Liberia Libya Liechtenstein Lithuania Luxembourg
    Madagascar Malawi Malaysia Maldives Mali Malta Mauritania Mauritius Mexico Micronesia Moldova Monaco Mongolia
    Montenegro Morocco Mozambique Myanmar Namibia Nauru Nepal Netherlands Nicaragua Niger Nigeria Norway Oman
    Pakistan Palau Palestine Panama Paraguay Persia Peru Philippines Poland Portugal Prussia Qatar Romania Russia
    Rwanda Samoa Scotland Senegal Serbia Seychelles Singapore Slovakia Slovenia Somalia Spain Sudan Suriname
    Sweden Switzerland Syria Taiwan Tajikistan Tanzania Thailand Togo Tonga Tunisia Turkey Turkmenistan Tuvalu
    Uganda Ukraine Uruguay USSR Uzbekistan Vanuatu Venezuela Vietnam Wales Yemen Yugoslavia Zambia Zimbabwe
    America U.S. US UK""".split()
)


def _names_country(text: str) -> bool:
    words = re.findall(
        r"[A-Z][\w.]*", text
    )  # U.S. keeps its dots; a sentence's last word loses its full stop
    return bool(_COUNTRY_NOUNS.search(text)) or any(
        w in _COUNTRIES or w.rstrip(".") in _COUNTRIES for w in words
    )


def she_referent(sentence: str, context: Sequence[str], upto: int | None = None) -> str | None:
    """``"vessel"`` or ``"country"`` when the intruder's pronouns may stand for something English calls
    *she*: a ship or boat named in the intruder or its context, a country named in the intruder (before
    character ``upto``, the pronoun: a country after it is not its referent, *She resided in Spain*) or opening
    the context (the entity a text is about); else None.

    >>> she_referent("She was launched in 1912.", ["HMS Dreadnought was a battleship."])
    'vessel'
    >>> she_referent("It declared war in 1914.", ["Germany is a country in Europe."])
    'country'
    >>> she_referent("She was born in 1912.", ["Ada Lovelace was a mathematician."]) is None
    True
    """
    texts = [sentence, *context]
    if any(_VESSEL.search(t) or _SHIP_PREFIX.search(t) for t in texts):
        return "vessel"
    if _names_country(sentence[:upto]) or (context and _names_country(" ".join(context[0].split()[:3]))):
        return "country"
    return None


def named_before(
    tokens: tuple[Token, ...], i: int, common: bool = False, anywhere: bool = False, start_at: int = 0
) -> bool:
    """Whether a noun phrase that can be the referent of the pronoun at ``i`` comes before it in the sentence
    (or ``anywhere`` in it; from ``start_at``): a name (with ``common``, any singular noun phrase, as *it* needs) that no
    preposition governs (``In Paris,
    she`` is no referent; ``Prosecutor Fatou Bensouda said her`` and ``consecrated the church and proclaimed
    it`` are).

    >>> from incoherent.corpora.probes.text import analyse
    >>> toks = analyse("Prosecutor Fatou Bensouda said her office would appeal.")
    >>> named_before(toks, 4)
    True
    >>> named_before(analyse("In Paris, she met a painter."), 3)
    False
    >>> named_before(analyse("The pope consecrated the church and proclaimed it a basilica."), 7, common=True)
    True
    """
    nouns = ("NN",) if common else ("NNP",)
    end = len(tokens) if anywhere else i
    for j in range(start_at, end):
        if j < i and tokens[j].text[:1].isupper() and _who_follows(tokens, j) and not in_quotation(tokens, j):
            return True  # Arthurs, who has not played since October, says he
        if j != i and _unknown_name(tokens, j):
            return True  # Achilles was raised ... with his companion (tagged NNS), Shajarian started his (JJ)
        token = tokens[j]
        if common and j != i and _object_misread(tokens, j):
            return True  # It detects light (tagged JJ) and converts it
        if j == i or not token.tag.startswith(nouns) or (j + 1 < end and tokens[j + 1].tag.startswith(nouns)):
            continue  # the head: the last noun of its run
        if token.tag.startswith("NNP") and (not token.text[:1].isupper() or _calendar(token.text)):
            continue
        if common and _plural(token):
            continue  # it needs a singular referent: Some scholars define him -> it
        if j + 1 < len(tokens) and tokens[j + 1].tag == "PRP":
            continue  # a verb the tagger misread: Many scholars consider him
        start = j
        while start > 0 and _modifies(tokens, start - 1):
            start -= 1
        while start > 1 and tokens[start - 1].tag == "CC" and tokens[start - 2].tag in _NP_WORDS:
            start -= 1  # the governor of a coordination: Trained in physics and mathematics, he
            while start > 0 and _modifies(tokens, start - 1):
                start -= 1
        if start == 0 and tokens[0].text.lower() in _CAPITALISED_OPENERS:
            start = 1
        if token.tag.startswith("NNP") and tokens[start].text.lower() == "the" and _plural(token):
            continue  # the Chicago Bears, the Browns: a plural is no referent of he, she or it
        governor = tokens[start - 1] if start > 0 else None
        subject = j + 1 < len(tokens) and (_finite(tokens[j + 1]) or tokens[j + 1].tag in ("POS", "VBG"))
        # after Jesus announces; a possessor is a referent whatever governs it (in Rachmaninoff's output), and so
        # is the subject of a gerund (with President Bush saying he)
        governed = (
            not subject
            and governor is not None
            and (governor.text.lower() != "by" or j > i)  # the agent: named by Carl Linnaeus in his book
            and (
                (governor.tag in ("IN", "TO") and governor.text.lower() not in _SUBORDINATORS)
                or governor.text.lower() in ("of", "'s")
            )
        )
        if not governed:
            return True
    return False


_OPENING_TAGS = frozenset({"IN", "TO", "RB", "VBN", "VBG"})  # For much of, Despite, Widely regarded, Known


_FUNCTION_WORDS = frozenset(
    """the a an this that these those some any each every no all both either neither another such what which
    whose""".split()
)


def _object_misread(tokens: tuple[Token, ...], j: int) -> bool:
    """An adjective tag on the bare object of a verb other than *be*: *detects light and*."""
    if tokens[j].tag != "JJ" or j == 0 or j + 1 >= len(tokens):
        return False
    verb = tokens[j - 1]
    return (
        verb.tag in ("VBZ", "VBD", "VBP")
        and verb.text.lower() not in _BE | _LINKING
        and tokens[j + 1].text.lower() in ("and", ",", ".", ";")
    )


_LINKING = frozenset({"seems", "seemed", "looks", "looked", "feels", "felt", "sounds", "sounded", "appears",
                      "appeared", "grew", "grows", "turned", "turns", "stays", "stayed", "gets", "got", "went"})  # fmt: skip


def _plural(token: Token) -> bool:
    """A plural noun by its form, whatever its tag (*tribes* tagged NN is plural, *chlorophyll* tagged NNS is
    not)."""
    word = token.text.lower()
    if not word.endswith("s"):
        return False
    import lemminflect

    lemma = lemminflect.getLemma(word, upos="NOUN")
    return bool(lemma) and lemma[0] != word


def _modifies(tokens: tuple[Token, ...], k: int) -> bool:
    """Whether the word at ``k`` belongs to the noun phrase after it: a participle only inside one (*the winning
    team*), not as the verb that takes it (*of seeing Mr Strachan*)."""
    if tokens[k].tag not in _NP_WORDS:
        return False
    if tokens[k].tag in ("VBG", "VBN"):
        return k > 0 and tokens[k - 1].tag in ("DT", "PRP$", "JJ", "CD", "POS", "RB")
    return True


def _unknown_name(tokens: tuple[Token, ...], j: int) -> bool:
    """A capitalised word the lexicon does not know, opening the sentence or as the subject of a finite verb: a
    name whatever the tagger called it (*Achilles was*, *Shajarian started*, *Tao Yuanming spent*)."""
    token = tokens[j]
    if (
        not token.text[:1].isupper()
        or not token.text.isalpha()
        or not token.tag.startswith(("NN", "JJ", "VB", "DT"))
    ):
        return False
    if token.tag.startswith("NNP") or token.text.lower() in _FUNCTION_WORDS:
        return False
    opening = j <= 1  # the tagger fails on foreign names that open a sentence: Tao (DT) Yuanming (VBG) spent
    if not opening and (j + 1 >= len(tokens) or tokens[j + 1].tag not in ("VBD", "VBZ", "VBP", "MD")):
        return False
    import lemminflect

    return not lemminflect.getAllLemmas(token.text.lower())


def _who_follows(tokens: tuple[Token, ...], j: int) -> bool:
    """A capitalised word a *who* clause follows (*Arthurs, who*): a person, whatever its tag."""
    rest = [t.text.lower() for t in tokens[j + 1 : j + 3]]
    return rest[:1] == ["who"] or rest == [",", "who"]


def _finite(token: Token) -> bool:
    """A finite verb, or an -s word the tagger called a plural noun that has a verb reading (``announces``)."""
    if token.tag in ("VBD", "VBZ", "VBP", "MD"):
        return True
    if token.tag != "NNS" or not token.text.endswith("s"):
        return False
    import lemminflect

    return "VERB" in lemminflect.getAllLemmas(token.text.lower())


_NP_WORDS = frozenset(
    {"DT", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "CD", "PRP$", "POS", "VBN", "VBG"}
)
_SUBORDINATORS = frozenset(
    {"while", "although", "though", "because", "if", "as", "since", "that", "whether", "when"}
)
_CAPITALISED_OPENERS = frozenset(
    {"after", "before", "during", "despite", "although", "when", "while", "since"}
)
_CALENDAR = frozenset(
    "January February March April May June July August September October November December Monday Tuesday "
    "Wednesday Thursday Friday Saturday Sunday".split()
)


def _calendar(word: str) -> bool:
    return word in _CALENDAR


# Expletive and extraposed "it": no referent, so no animacy to change.
_WEATHER_AND_RAISING = frozenset(
    {"seem", "seems", "seemed", "appear", "appears", "appeared", "happen", "happens", "happened", "rain",
     "rains", "rained", "snow", "snows", "snowed", "matter", "matters", "mattered", "transpired", "emerged"}
)  # fmt: skip
_BE = frozenset({"is", "was", "'s", "be", "been", "being", "were", "are", "became", "becomes", "become",
                 "remains", "remained", "remain"})  # fmt: skip
_CLAUSE_OPENERS = frozenset(
    {"that", "to", "whether", "if", "who", "whom", "when", "how", "why", "what", "for"}
)
_LIGHT_VERBS = frozenset(
    {"make", "makes", "made", "making", "find", "finds", "found", "consider", "considers", "considered",
     "deem", "deemed", "think", "thought", "leave", "left", "take", "takes", "took"}
)  # fmt: skip


_REPORTING = frozenset(
    """said reported believed thought expected estimated known rumoured rumored alleged understood claimed feared
    hoped decided agreed announced confirmed revealed noted suggested argued proposed planned recommended
    determined found assumed presumed claimed stated learned learnt feared acknowledged speculated""".split()
)


def expletive_it(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``it`` at ``i`` is expletive or extraposed: a raising or weather verb follows (``it seems``,
    ``it rained``), ``it`` + *be* + a participle, adjective or focus and then a clause (``it was reported
    that``, ``it is hard to``, ``it is Facebook that``, ``it was in 1990 that``), ``it takes ... to``, or an
    object ``it`` before an adjective (``made it clear that``).

    >>> from incoherent.corpora.probes.text import analyse
    >>> s = analyse("It was reported that it sank.")
    >>> expletive_it(s, 0), expletive_it(s, 4)
    (True, False)
    """
    words = [t.text.lower() for t in tokens]
    if i > 0 and words[i - 1] == "be":
        return True  # be it brothers or friends: a subjunctive idiom
    rest = words[i + 1 :]
    j = i + 1
    while j < len(tokens) and (tokens[j].tag in ("RB", "MD") or words[j] in ("not", "n't", "also", "have", "has",
                                                                           "had")):  # fmt: skip
        j += 1
    if j >= len(tokens):
        return False
    if i > 0 and words[i - 1] in _LIGHT_VERBS and tokens[j].tag.startswith("JJ"):
        return True  # made it clear that, found it hard to
    if words[j] in _WEATHER_AND_RAISING:
        return True
    if words[j] in ("takes", "took", "take") and "to" in rest[j - i :]:
        return True  # it takes two hours to
    if words[j] not in _BE:
        return False
    k = j + 1
    while k < len(tokens) and tokens[k].tag in ("RB", "RBR"):
        k += 1
    if k >= len(tokens):
        return False
    after = words[k + 1 : k + 8]
    opens_clause = any(w in _CLAUSE_OPENERS for w in after[:6])
    if words[k] in _REPORTING and (after[:1] == ["that"] or after[:1] == ["to"] or "that" in after[:4]):
        return True  # it was reported that, it is said to, it was announced on Monday that
    if tokens[k].tag == "VBN" and after[:1] == ["that"]:
        return True  # it is now well accepted that
    if tokens[k].tag.startswith("JJ") and any(w in _CLAUSE_OPENERS for w in after[:2]):
        return True  # it is important to, it is unclear whether (not: it is nonmetallic and ...—meaning that)
    if words[k] in ("time", "possible", "likely", "unclear", "clear", "true", "now", "not") and opens_clause:
        return True
    if tokens[k].tag.startswith(("NNP", "IN", "PRP")) or words[k] in (
        "only",
        "here",
        "there",
        "this",
        "these",
    ):
        return (
            "that" in after or "who" in after or "when" in after
        )  # it is Facebook that, it was in 1990 that
    return False
