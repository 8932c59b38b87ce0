"""The ``demonstrative`` phenomenon (INSteD, Shen et al. 2021, Table 7): a singular demonstrative determiner to
the plural (this -> these, that -> those), alone as in INSteD's released probes, or with ``agree`` its head noun
to the plural and the verb that agrees with the noun phrase too (``this city was`` -> ``these cities were``).
"this"/"that" as pronouns (``This is``), complementisers (``said that``) or relatives (``stars that``) are not
sites. ``conjunction`` is in :mod:`corpora.probes.connectives`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from incoherent.corpora.probes.edits import Edit, NoSite, replace
from incoherent.corpora.probes.text import Token, analyse, match_case

FINITE = ("VBD", "VBZ", "VBP", "MD")  # the tags of finite verbs
_AGREEMENT = {"is": "are", "was": "were", "has": "have", "'s": "'re", "does": "do"}


def _plural_verb(token: Token) -> str | None:
    """The plural form of a singular present or past verb right after the noun phrase (None: it agrees as it
    is). The tagger often calls a verb after a noun a noun (``team plays``): an -s word with a verb lemma
    counts as a verb there."""
    from incoherent.corpora.probes.verbs import lemma

    word = token.text.lower()
    if word in _AGREEMENT:
        return match_case(token.text, _AGREEMENT[word])
    if token.tag == "VBZ" or (token.tag in ("NN", "NNS") and word.endswith("s")):
        base = lemma(word)
        if base is not None and base != word:
            return match_case(token.text, base)
    return None


_SINGULAR_NOUN = ("NN",)


@functools.lru_cache(maxsize=4096)
def plural(noun: str) -> str | None:
    """The plural of a singular noun from lemminflect's dictionary (None when it has none).

    >>> plural("city"), plural("child"), plural("xqzzy")
    ('cities', 'children', None)
    """
    import lemminflect

    forms = lemminflect.getInflection(noun.lower(), "NNS", inflect_oov=False)
    if not forms or forms[0] == noun.lower():
        return None
    return match_case(noun, forms[0])


_NOUN_MODIFIERS = ("JJ", "JJR", "JJS", "VBN", "VBG", "CD")
_BE_FORMS = frozenset({"is", "was", "are", "were", "be", "been", "'s"})  # the problem is that X
_TIME_NOUNS = frozenset(
    """year day season month week night time morning evening afternoon summer winter spring
    autumn decade century era""".split()
)
_COMPLEMENTISER_HOSTS = frozenset({"so", "such", "now", "except", "given", "provided", "save", "than"})


def _noun_phrase(tokens: tuple[Token, ...], i: int) -> tuple[int | None, str | None]:
    """``(head, None)``: the position of the singular head noun that this/that at ``i`` determines (``this
    hybrid code``, ``that football club``, ``that year's``), or ``(None, reason)`` when it determines none:
    ``pronoun`` (``this is``, ``that much``), ``plural_head`` (``that award tickets``: a complementiser),
    ``that_complementiser`` (``said that man was``, ``so that``)."""
    word = tokens[i].text.lower()
    # carry this medium voltage power to: no verb after an object, once the clause has its verb (not:
    # dialogues between characters employing this method feature in)
    subject = _subject_position(tokens, i) or not any(t.tag in FINITE for t in tokens[:i])
    j = i + 1
    if (
        j < len(tokens)
        and tokens[j].tag in ("RB", "RBS")
        and tokens[j].text.lower() in ("very", "same", "most")
    ):
        j += 1
    while j < len(tokens) and tokens[j].tag in _NOUN_MODIFIERS:
        j += 1
    head = None
    while j < len(tokens) and tokens[j].tag in ("NN", "NNP", "NNS", "NNPS") and tokens[j].text[:1].isalnum():
        if _verb_after_noun(tokens, j, head is None or not subject):
            break  # this team plays in, was this bridge built by, this intensified in: the tagger's noun is a verb
        head = j
        if tokens[j].tag in ("NNS", "NNPS"):
            break
        j += 1
    if head is None:
        return None, "pronoun"
    first = next(m for m in range(i + 1, head + 1) if tokens[m].tag.startswith("NN"))
    next_to = first == i + 1 or (first == i + 2 and tokens[i + 1].text.lower() in ("same", "very"))
    if word == "that" and next_to and tokens[first].text.lower() in _TIME_NOUNS:
        after = tokens[first + 1] if first + 1 < len(tokens) else None
        if after is None or after.tag not in FINITE:
            return (
                first,
                None,
            )  # later that year, that same season, at Toronto that same year: a time, not a clause
    if (
        head > first
        and i == 1
        and tokens[0].text.lower() in _OPENING_PREPOSITIONS
        and head + 1 < len(tokens)
        and tokens[head + 1].tag in FINITE
        and not any(t.tag in FINITE for t in tokens[:i])
    ):
        head -= 1  # In this general sense nature refers: "nature" is the subject of "refers"
    if tokens[head].tag.startswith("NNP"):
        return None, "proper_noun"  # before this Pharaoh was: a pronoun before a name more often than not
    before = i - 1
    while before >= 0 and tokens[before].tag in ("''", "``", "-RRB-", "-RSB-"):
        before -= 1  # "enigmatic mood pieces" that feature: the word before the quote
    prev = tokens[before] if before >= 0 else None
    if word == "that" and prev is not None and prev.text.lower() in _COMPLEMENTISER_HOSTS | _BE_FORMS:
        return None, "that_complementiser"  # the problem is that people forget; so that
    if _plural_form(tokens[head]):
        return None, "plural_head"
    if word == "that" and prev is not None and prev.tag.startswith("VB") and _noun_not_verb(tokens, before):
        prev = prev._replace(tag="NNS")  # halteres, organs that sense; the militia that conducted
    if (
        word == "that"
        and prev is not None
        and prev.tag.startswith("JJ")
        and prev.text.lower() not in _PREPOSITIONAL
    ):
        return None, "that_complementiser"  # it is important that direct contact is; so large that
    if (
        word == "that"
        and prev is not None
        and prev.text.lower() == "in"
        and _finite_after(tokens, head)
        and not subject
    ):
        return None, "that_complementiser"  # different from fear in that fear is defined
    if word == "that" and prev is not None and prev.tag.startswith("VB") and _clause_verb(prev.text):
        return None, "that_complementiser"  # believe that pasta in a form ... was; states that pleasure and
    if word == "that" and prev is not None:
        k = head + 1
        while k < len(tokens) and tokens[k].tag in ("RB", "RBR"):
            k += 1
        ends = (
            k >= len(tokens)
            or tokens[k].tag in (".", ",", ":", "IN", "TO", "CC")
            or tokens[k].text in ("'s", "’s")
        )
        verb = prev.tag.startswith(("VB", "JJ")) or (prev.tag.startswith("NN") and _verb_only(prev.text))
        if not verb and (prev.tag.startswith("NN") or prev.tag in ("PRP", "CD", "RP")):
            return None, "that_relative"  # stars that collapse, pieces that feature
        if verb and not ends:
            return None, "that_complementiser"  # indicates that fog also functions; said that man was
        if prev.text == "," and k < len(tokens) and tokens[k].tag in FINITE:
            return None, "that_complementiser"
    return head, None


# Verbs that take a that-clause: "that" after them is a complementiser, whatever follows it.
_CLAUSE_VERBS = frozenset({
    "say", "state", "believe", "think", "know", "claim", "argue", "suggest", "show", "find", "note", "report",
    "indicate", "assume", "conclude", "estimate", "agree", "feel", "hope", "fear", "ensure", "realize", "realise",
    "predict", "propose", "reveal", "insist", "warn", "admit", "deny", "confirm", "announce", "add", "explain",
    "recommend", "demand", "emphasize", "emphasise", "acknowledge", "discover", "observe", "prove", "establish",
    "notice", "hypothesize", "hypothesise", "decide", "learn", "determine", "imply", "assert", "maintain",
    "contend", "declare", "recognize", "recognise", "understand", "tell", "teach", "posit", "theorize", "speculate",
    "stress", "allege", "doubt", "guarantee", "mean", "require", "specify", "stipulate", "dictate", "demonstrate",
})  # fmt: skip


_OPENING_PREPOSITIONS = frozenset({
    "in", "on", "at", "by", "for", "with", "from", "under", "over", "during", "after", "before", "among", "within",
    "through", "throughout", "across", "between", "without", "since", "until", "into", "despite", "upon", "beyond",
    "along", "around", "against", "towards", "toward", "unlike", "like",
})  # fmt: skip
# Adjectives before a demonstrative determiner: with an object (near that town) or of time (later that month).
_PREPOSITIONAL = frozenset({"near", "like", "unlike", "worth", "opposite", "next", "due", "earlier", "later", "early",
                            "late"})  # fmt: skip


def _finite_after(tokens: tuple[Token, ...], head: int) -> bool:
    """Whether a finite verb follows the noun at ``head`` (adverbs apart)."""
    k = head + 1
    while k < len(tokens) and tokens[k].tag in ("RB", "RBR"):
        k += 1
    return k < len(tokens) and tokens[k].tag in FINITE


def _clause_verb(word: str) -> bool:
    """Whether a verb form is one of a verb that takes a that-clause (``believed``, ``states``)."""
    from incoherent.corpora.probes.lexicon import lemma

    return lemma(word) in _CLAUSE_VERBS


def verb_form(token: Token) -> bool:
    """Whether a token tagged as a verb is a form of a verb with that tag in lemminflect's dictionary (a modal
    or a contraction always is; a capitalised word inside the sentence is a name; ``machines``/VB is not)."""
    import lemminflect

    word = token.text.lower()
    if token.tag == "MD" or word in ("'s", "'re", "'ve", "'d", "'m", "’s", "’re", "’ve", "’d", "’m"):
        return True
    if token.text[:1].isupper() and token.start > 0:
        return False
    readings = lemminflect.getAllLemmas(word)
    lemmas = readings.get("VERB", ()) + readings.get("AUX", ())
    tags = {"VBD": ("VBD",), "VBZ": ("VBZ",), "VBN": ("VBN",), "VBG": ("VBG",)}.get(token.tag, ("VBP", "VB"))
    return any(
        word in lemminflect.getInflection(base, tag, inflect_oov=False) for base in lemmas for tag in tags
    )


def _noun_not_verb(tokens: tuple[Token, ...], j: int) -> bool:
    """Whether a word the tagger called a verb is a noun: it has no verb reading (``militia``), or it is a
    plural noun where no subject precedes it (``halteres, organs that``; ``these are claims that``)."""
    import lemminflect

    word = tokens[j].text.lower()
    readings = lemminflect.getAllLemmas(word)
    if not verb_form(tokens[j]):
        return tokens[j].tag != "MD"  # the militia that; machines that (not a form of a verb with its tag)
    plural = word in lemminflect.getInflection(readings.get("NOUN", ("~",))[0], "NNS", inflect_oov=False)
    return (
        "NOUN" in readings
        and plural
        and tokens[j].tag in ("VBZ", "VBP")
        and (j == 0 or not tokens[j - 1].tag.startswith(("NN", "PRP", "WDT", "WP")))
    )


def _verb_only(word: str) -> bool:
    """A word the tagger called a noun that has only verb readings (``played``)."""
    import lemminflect

    readings = lemminflect.getAllLemmas(word.lower())
    return bool(readings) and "NOUN" not in readings and "VERB" in readings


_VERB_FOLLOWERS = ("IN", "DT", "RB", "RBR", "PRP", "PRP$", "TO", "CD", ".")


def _verb_after_noun(tokens: tuple[Token, ...], j: int, first: bool = False) -> bool:
    """Whether the word at ``j``, tagged a noun after a noun, is a verb: it has no noun reading (``built``,
    ``lose``), or it has a verb reading and a preposition, determiner, adverb or the sentence's end follows
    (``team plays in``; ``football club has`` keeps ``club`` a noun)."""
    import lemminflect

    word = tokens[j].text.lower()
    readings = lemminflect.getAllLemmas(word)
    if tokens[j].tag.startswith("NNP") or not readings:
        return False
    if "NOUN" not in readings:
        return "VERB" in readings or "AUX" in readings
    if first:
        return False  # a word with a noun reading right after this/that is its noun
    nxt = tokens[j + 1].tag if j + 1 < len(tokens) else "."
    if j + 1 < len(tokens) and tokens[j + 1].text.lower() == "of":
        return False  # this extreme form of abstraction
    return "VERB" in readings and nxt in _VERB_FOLLOWERS


def _plural_form(token: Token) -> bool:
    """Whether a noun is plural: tagged so (``tickets``; not ``species``, ``status``), or its noun lemma is
    another word (``data`` -> ``datum``, ``criteria``)."""
    import lemminflect

    word = token.text.lower()
    if token.tag in ("NNS", "NNPS"):
        return not word.endswith(("ss", "us", "is", "ies" if word in ("species", "series") else "~"))
    lemmas = lemminflect.getAllLemmas(word).get("NOUN", ())
    return token.tag == "NN" and bool(lemmas) and word not in lemmas


SUBORDINATORS = frozenset({"if", "because", "although", "though", "when", "while", "since", "as", "until", "unless",
                           "whether", "once"})  # fmt: skip
# Quantifiers whose verb agrees with their of-complement (most of these pressures result; not: one of these
# methods is, an important part of these methods involves).
_PARTITIVES = frozenset({"most", "all", "some", "half", "none", "any", "many"})


def _subject_position(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the noun phrase opened at ``i`` can be a subject (no preposition or verb governs it; ``most
    of this pressure results``: a partitive's verb agrees with it)."""
    if i == 0:
        return True
    if i > 1 and tokens[i - 1].text.lower() == "of" and tokens[i - 2].text.lower() in _PARTITIVES:
        return i == 2 or not tokens[i - 3].tag.startswith(("IN", "TO", "VB"))
    if tokens[i - 1].text.lower() in SUBORDINATORS or tokens[i - 1].text in _DASHES:
        return True  # if this collision occurs; inaccurate – this quantity is (the tagger may call "–" IN)
    return not tokens[i - 1].tag.startswith(("IN", "TO", "VB")) or tokens[i - 1].text.lower() == "that"


_DASHES = frozenset({"–", "—", "--", "-"})
_NOT_DETERMINERS = frozenset({"no_demonstrative", "pronoun", "proper_noun", "plural_head", "that_complementiser",
                              "that_relative"})  # fmt: skip


def demonstrative(
    sentence: str,
    tokens: tuple[Token, ...] | None = None,
    agree: bool = False,
    context: Sequence[str] | None = None,
    preceding: str | None = None,
) -> list[Edit]:
    """The first singular demonstrative determiner to the plural: the determiner alone (INSteD's released
    probes), or with ``agree`` its head noun and an agreeing verb too (the paper's description). Given the
    document's other sentences (``context``, as ``incoherent probes`` gives them), ``agree`` makes only a plural
    that clashes with the document (:func:`_clash`; ``preceding``, the sentence before the intruder, where a
    coordination of two things makes a plural referent); without them, any grammatical plural. ``agree`` edits
    nothing inside a quotation or a title (``in_quotation``, ``in_title``: the words are someone else's).

    >>> from incoherent.corpora.probes.edits import apply_edits
    >>> s = "In that year this small city was renamed."
    >>> apply_edits(s, demonstrative(s)), apply_edits(s, demonstrative(s, agree=True))
    ('In those year this small city was renamed.', 'In those years this small city was renamed.')
    >>> apply_edits(s, demonstrative(s, agree=True, context=["The city was founded in 1850."]))
    'In that year these small cities were renamed.'
    >>> s = "Under this hybrid code, players could pass."
    >>> apply_edits(s, demonstrative(s))
    'Under these hybrid code, players could pass.'
    >>> demonstrative("He said that this is true.")
    NoSite('pronoun')
    """
    tokens = analyse(sentence) if tokens is None else tokens
    reason = "no_demonstrative"
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if word not in ("this", "that"):
            continue
        j, why = _noun_phrase(tokens, i)
        if j is None:
            reason = why if reason == "no_demonstrative" else reason
            continue
        determiner = replace(token, match_case(token.text, "these" if word == "this" else "those"))
        if not agree:
            return [determiner]
        edits = _quoted(tokens, i) or _agreeing(sentence, tokens, i, j, determiner)
        if not isinstance(edits, str):
            edits = _unsure_head(tokens, i, j) or _clash(tokens, i, j, context, preceding) or edits
        if isinstance(edits, str):
            reason = edits if reason in _NOT_DETERMINERS else reason  # a determiner agree skips: say why
            continue
        return edits
    return NoSite(reason)


def _quoted(tokens: tuple[Token, ...], i: int) -> str | None:
    """``in_quotation`` when the determiner at ``i`` stands inside a direct quotation (*"this film is a
    masterpiece," he said*), ``in_title`` inside a title's capitalised words (*the song All This Time*), as
    negation skips its verbs (:func:`corpora.probes.verbs._in_title`); or None."""
    from incoherent.corpora.probes.referents import in_quotation

    if in_quotation(tokens, i):
        return (
            "in_quotation"  # (also a quotation that goes on into the next sentence: "We still have far to go
        )
    if any(t.text in ("“", "‘") for t in tokens[:i]) and any(t.text in ("”", "’") for t in tokens[i + 1 :]):
        return "in_quotation"  # curly quotes: an opening one before, a closing one after
    if i > 0 and tokens[i].text[:1].isupper() and tokens[i - 1].text not in _TITLE_OPENERS:
        return "in_title"  # the album Love This Giant
    return None


_TITLE_OPENERS = frozenset({'"', "“", "(", ":", ";", "--", "—", "–", "‘", "'", "``"})


# Nouns whose plural English does not use, or uses in another sense (damages: money; staffs: sticks).
MASS_NOUNS = frozenset({
    "information", "discrimination", "advice", "equipment", "evidence", "knowledge", "furniture", "luggage", "baggage", "news",
    "research", "homework", "software", "hardware", "machinery", "clothing", "jewellery", "jewelry", "traffic",
    "pollution", "wildlife", "livestock", "feedback", "infrastructure", "welfare", "safety", "nutrition", "staff",
    "personnel", "music", "poetry", "scenery", "weather", "presence", "continuity", "damage", "access",
    "assistance", "permission", "progress", "mail", "garbage", "rubbish", "merchandise", "cash", "money",
    "electricity", "gravity", "fun", "luck", "courage", "patience", "violence", "harm", "guidance", "transport",
    "accommodation", "applause", "chaos", "conduct", "employment", "unemployment", "enjoyment", "expertise",
    "fame", "heat", "help", "hospitality", "importance", "inflation", "intelligence", "justice", "legislation",
    "logic", "nonsense", "obesity", "peace", "photography", "pride", "privacy", "publicity", "sunshine", "warmth",
    "wealth", "wisdom", "anger", "health", "heritage", "literacy", "agriculture", "education", "leadership",
    "mathematics", "physics", "economics", "advertising", "independence", "happiness", "poverty",
    "prosperity", "racism", "slavery", "terrorism", "tourism", "pasta", "rice", "bread", "milk", "butter",
    "oxygen", "hydrogen", "nitrogen", "carbon", "silver", "gold", "copper", "iron", "steel", "aluminium",
    "aluminum", "plastic", "cotton", "wool", "silk", "leather", "flour", "coffee", "tea",
    "blood", "mud", "sand", "dust", "smoke", "snow", "ice", "rain", "fog", "air", "soil", "grass", "weed",
    "stuff", "trash", "debris", "litter", "vandalism", "mankind", "humanity", "nature", "biodiversity",
    "funding", "housing", "training", "shopping", "spending", "understanding", "wellbeing", "well-being",
    "aid", "ammunition", "artillery", "cavalry", "infantry", "police", "clergy", "youth", "offspring",
})  # fmt: skip

# Time nouns that this/that makes a deictic adverbial (this morning, earlier this month, that year's race):
# pluralised they no longer point to one time (these mornings), so ``agree`` keeps them only after a preposition.
_TIME_NOUNS = frozenset({
    "morning", "afternoon", "evening", "night", "day", "week", "weekend", "fortnight", "month", "year", "season",
    "time", "summer", "winter", "spring", "autumn", "fall", "decade", "century", "quarter", "semester", "moment",
})  # fmt: skip
_CLAUSE_OPENERS = SUBORDINATORS | {"that", "which", "who", "whom", "whose", "where", "what", "how", "why"}
_PREPOSITIONS = frozenset({"as", "since", "until", "once"})
_SINGULAR_VERBS = frozenset({"is", "was", "has", "does", "'s"})


def _agreeing(sentence: str, tokens: tuple[Token, ...], i: int, j: int, determiner: Edit) -> list[Edit] | str:
    """``agree``'s edits for the noun phrase this/that at ``i`` with head ``j``: the determiner, the noun, the
    verb that agrees with the noun phrase and the verbs coordinated with it (``This area is ... and
    encompasses`` -> ``These areas are ... and encompass``); or why not: ``no_plural``, ``mass_noun``
    (*these informations*), ``deictic_time`` (*this morning*), ``mass_partitive`` (*much of this*),
    ``agreement_beyond_phrase`` (a relative clause or apposition whose verbs would agree too),
    ``coordinated_head`` (*this ability or affliction*: the second noun would need the plural too),
    ``pronoun_agreement`` (an *it*/*its*/*itself* after it that may stand for it: *these drains may itself*)."""
    noun = plural(tokens[j].text) if tokens[j].tag == "NN" else None
    if noun is None:
        return "no_plural"
    lowered = tokens[j].text.lower()
    if lowered in MASS_NOUNS or lowered in plural_forms(lowered) and lowered.endswith("ness"):
        return "mass_noun"
    k = j + 1
    genitive = k < len(tokens) and tokens[k].text in ("'s", "’s")
    governed = i > 0 and tokens[i - 1].tag in ("IN", "TO") and tokens[i - 1].text.lower() not in SUBORDINATORS
    opens = (
        i == 0
        or tokens[i - 1].tag in (",", "CC", ":")
        or tokens[i - 1].text.lower() in _CLAUSE_OPENERS
        or tokens[i - 1].text in _DASHES
    )
    verb_after = opens and k < len(tokens) and tokens[k].tag in FINITE  # This year was the warmest
    idiom = (
        lowered == "day" and i > 0 and tokens[i - 1].text.lower() in ("to", "until", "till")
    )  # to this day
    if lowered in _TIME_NOUNS and (idiom or not (genitive or governed or verb_after)):
        return "deictic_time"  # earlier this month, the House this morning passed (not: in that year, that year's)
    if i > 1 and tokens[i - 1].text.lower() == "of" and tokens[i - 2].text.lower() in ("much", "little"):
        return "mass_partitive"  # much of this period -> much of these periods: "much" would have to change
    if _pronoun_after(tokens, i, j) or _that_of_after(tokens, j):
        return "pronoun_agreement"
    if genitive:  # that year's -> those years'
        after = noun + ("'" if noun.endswith("s") else "'s")
        return [
            determiner,
            Edit(tokens[j].start, tokens[k].end, sentence[tokens[j].start : tokens[k].end], after),
        ]
    subject = _subject_position(tokens, i)
    if not subject and i > 0 and tokens[i - 1].text.lower() in ("before", "after", "till"):
        verb = _subject_verb(tokens, k)  # before these stages of the inquiry are reached: a clause's subject
        subject = verb is not None and verb >= 0
    if k + 1 < len(tokens) and tokens[k].text.lower() in ("or", "and", ",") and tokens[k + 1].tag == "NN":
        if tokens[k].text != "," or any(t.text.lower() in ("and", "or") for t in tokens[k + 2 : k + 6]):
            return "coordinated_head"  # this ability or affliction; this desire, attachment, and revulsion
    m = k
    while m < len(tokens) and tokens[m].tag in ("RB", "RBR"):
        m += 1
    relative = m < len(tokens) and (tokens[m].tag in ("WDT", "WP") or tokens[m].text.lower() == "that")
    if m < len(tokens) and (subject and tokens[m].text == "," or relative or _relative_after(tokens, m)):
        return "agreement_beyond_phrase"  # a relative clause or an apposition: its verbs would agree too
    edits = [determiner, replace(tokens[j], noun)]
    verb = _subject_verb(tokens, k) if subject else None
    if verb == -1:
        return "agreement_beyond_phrase"  # the book he wrote is; this tendency, ...: the verb is out of reach
    agreeing = _plural_verb(tokens[verb]) if verb is not None else None
    if verb is not None and _singular_predicate(tokens, verb):
        return (
            "singular_predicate"  # This school is a residence school -> These schools are a residence school
        )
    if agreeing is not None:
        edits.append(replace(tokens[verb], agreeing))
    if (
        verb is not None
    ):  # These territories contained ..., and serve: a past needs no change, its partner does
        coordinated = _coordinated_verbs(tokens, verb)
        if coordinated is None:
            return "agreement_beyond_phrase"  # continues and together forms: a verb the tagger calls a noun
        edits += [replace(tokens[n], form) for n, form in coordinated]
    if _singular_verb_left(tokens, i, k, edits):
        return "agreement_beyond_phrase"  # these quantities is: a verb agreeing with the noun not found
    if i > 0 and tokens[i - 1].text.lower() in _AGREEMENT:  # Was this bridge built -> Were these bridges
        edits.insert(
            0, replace(tokens[i - 1], match_case(tokens[i - 1].text, _AGREEMENT[tokens[i - 1].text.lower()]))
        )
    return edits


def _that_of_after(tokens: tuple[Token, ...], j: int) -> bool:
    """Whether a *that of* after the head noun at ``j`` stands for it (*These roles contrast with that of
    external components*: the plural wants *those of*)."""
    return any(
        tokens[m].text.lower() == "that" and tokens[m + 1].text.lower() == "of"
        for m in range(j + 1, len(tokens) - 1)
    )


def _singular_verb_left(tokens: tuple[Token, ...], i: int, k: int, edits: list[Edit]) -> bool:
    """Whether a singular present or *was* right after the noun phrase from ``i`` to before ``k`` (adverbs
    between) is left unchanged by ``edits``: the verb of the new plural subject, which ``agree`` must change or
    skip. A phrase governed by a word (*the leader of this group was*) is not that verb's subject."""
    if i > 0 and tokens[i - 1].text[:1].isalpha() and tokens[i - 1].tag.startswith(("IN", "TO", "VB")):
        return False
    m = k
    while m < len(tokens) and tokens[m].tag in ("RB", "RBR"):
        m += 1
    if m >= len(tokens) or m == k and k < len(tokens) and tokens[k].text.lower() in ("'s", "’s"):
        return False
    verb = tokens[m]
    singular = verb.tag == "VBZ" or verb.text.lower() in _SINGULAR_VERBS
    return singular and verb_form(verb) and all(e.start != verb.start for e in edits)


# Nouns of time: their plural reads as an idiom of time (*at those times*, *during these days*, *in those
# years*) that needs no plural referent, so ``agree`` in a document makes no probe of them (``time_noun``).
_TIMES = _TIME_NOUNS | {"period", "era", "epoch", "age", "hour", "minute", "date", "occasion", "times",
                        "days"}  # fmt: skip
# Nouns whose plural reads naturally after any antecedent, one thing or several (*for these reasons*, *these
# kinds of rap music* after a list of names, *in these cases*, *in these ways*): ``agree`` skips them (``idiom``).
_IDIOMS = frozenset({
    "reason", "kind", "type", "sort", "form", "variety", "category", "way", "case", "respect", "regard",
    "sense", "point", "stage", "extent", "manner",
})  # fmt: skip


def _unsure_head(tokens: tuple[Token, ...], i: int, j: int) -> str | None:
    """``unsure_head`` when the noun at ``j`` may not be the noun phrase's head, the last noun before a
    non-noun: the word after it has a noun reading its tag cannot have (*this central city site before*: *site*
    tagged a past tense), or a noun after another noun has an adverb reading (*visit this religious place
    daily*: *daily* is the adverb, *place* the head)."""
    import lemminflect

    after = tokens[j + 1] if j + 1 < len(tokens) else None
    if after is not None and after.tag.startswith("VB") and after.text[:1].islower():
        if "NOUN" in lemminflect.getAllLemmas(after.text.lower()) and not verb_form(after):
            return "unsure_head"
    compound = j > i + 1 and tokens[j - 1].tag.startswith("NN")
    if compound and "ADV" in lemminflect.getAllLemmas(tokens[j].text.lower()):
        return "unsure_head"
    return None


def _clash(
    tokens: tuple[Token, ...], i: int, j: int, context: Sequence[str] | None, preceding: str | None = None
) -> str | None:
    """Why the plural of the noun phrase this/that at ``i`` with head ``j`` would not clash with its document
    (``context``, the other sentences; None: not read), or None when it would. A plural demonstrative with
    nothing plural to point to is what a reader notices; one that finds a referent, or reads as an idiom, is
    not. ``time_noun``: a noun of time, whose plural is an idiom (*at those times*, *during these days*, *for
    that same time period*). ``idiom``: a noun whose plural fits any antecedent (*for these reasons*, *these
    kinds of rap music* after a list of its names, *in these cases*). ``plural_referent``: a plural of the noun
    in the sentence (*Indian and Bangladesh forces were put under a joint command ..., and this force came to
    be known*) or in the context (*the band's two albums* before *this album*), or a plural demonstrative
    phrase in the context (*these vessels*: the context has a group the new plural would join), or two noun
    phrases coordinated in the sentence before (``preceding``: *both quantum electrodynamics and quantum field
    theory* before *these fields*; *The provinces and the capital* before *these areas*).
    ``no_singular_in_context``: the context never names the noun as a singular noun
    phrase of its own (a determiner or possessive, then the noun, its modifiers none or shared with the
    intruder's: *the album*, *its late First Period house*; not a name's *Church*, a compound's *area
    networks*, the verb *increase*, or *the immune system* before *this minoritarian system*), so nothing there
    is the ONE thing the plural contradicts (*these machines* after a list of CERN's accelerators)."""
    if context is None:
        return None
    if any(t.text in _TIMES for t in tokens[i + 1 : j + 2] if t.tag.startswith("NN")):
        return "time_noun"
    word = tokens[j].text.lower()
    if word in _IDIOMS or word == "order" and i > 0 and tokens[i - 1].text.lower() == "in":
        return "idiom"  # in that order -> in those orders
    forms = {f.lower() for f in plural_forms(word)} - {word}
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(f) for f in sorted(forms)) + r")\b", re.IGNORECASE)
    if forms and any(pattern.fullmatch(t.text) for n, t in enumerate(tokens) if n != j):
        return "plural_referent"
    if forms and any(pattern.search(s) for s in context):
        return "plural_referent"
    if any(_PLURAL_DEMONSTRATIVE.search(s) for s in context):
        return "plural_referent"  # Prince George, and her sister ship ... Originally these vessels served
    if preceding and _coordination(analyse(preceding)):
        return "plural_referent"  # both quantum electrodynamics and quantum field theory. ... these fields
    modifiers = {t.text.lower() for t in tokens[i + 1 : j]}
    singular = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])")
    if not any(_singular_phrase(analyse(s), word, modifiers) for s in context if singular.search(s)):
        return "no_singular_in_context"
    return None


_DETERMINERS = frozenset(
    {"the", "a", "an", "this", "that", "its", "his", "her", "their", "our", "my", "your"}
)


def _singular_phrase(tokens: tuple[Token, ...], word: str, modifiers: set[str]) -> bool:
    """Whether ``tokens`` (a context sentence) have ``word`` as the singular head noun (tag NN, no noun after it)
    of a noun phrase with a determiner or possessive of its own (*the system*, *its system*, *the band's
    album*), whose modifiers are none or share one with the intruder's (``modifiers``: *the late First Period
    house* for *this First Period house*; not *the immune system* for *this minoritarian system*; any for a
    noun without modifiers: *an extinct genus* for *this genus*)."""
    for n, token in enumerate(tokens):
        if token.text.lower() != word or token.tag != "NN":
            continue
        if n + 1 < len(tokens) and tokens[n + 1].tag.startswith("NN"):
            continue  # local area networks: a modifier inside a compound
        m = n - 1
        while m >= 0 and tokens[m].tag in ("JJ", "JJR", "JJS", "NN", "NNP", "VBN", "VBG", "CD", "HYPH"):
            m -= 1
        if m < 0:
            continue
        has_determiner = tokens[m].text.lower() in _DETERMINERS or tokens[m].tag in ("PRP$", "POS")
        own = {t.text.lower() for t in tokens[m + 1 : n]}
        if has_determiner and (not own or not modifiers or own & modifiers):
            return True
    return False


_NOUN_PHRASE_TAGS = frozenset({"DT", "PRP$", "JJ", "JJS", "RB", "CD", "VBN", "NNP", "NN", "NNS", "NNPS"})


def _coordination(tokens: tuple[Token, ...]) -> bool:
    """Whether ``tokens`` coordinate two noun phrases of things with *and*: a common noun, lower case, right
    before it and a noun phrase after it whose head is one too (*both quantum electrodynamics and quantum field
    theory*, *The provinces and the capital*), two things a new plural may gather; not names (*Gregory and
    Laflamme*, *Parents and Children* of a study's name) nor an ordinal (*ninth solo album and the second*)."""
    for n in range(1, len(tokens) - 1):
        if tokens[n].text.lower() != "and" or not _common_noun(tokens[n - 1]):
            continue
        m = n + 1
        while m < len(tokens) and tokens[m].tag in _NOUN_PHRASE_TAGS:  # (both quantum electrodynamics and
            # quantum field theory: "quantum" tagged an adverb, "field" an adjective)
            if tokens[m].tag.startswith("NN") and (
                m + 1 == len(tokens) or not tokens[m + 1].tag.startswith("NN")
            ):
                return _common_noun(tokens[m])
            m += 1
    return False


_ORDINALS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth last latter former".split()
)


def _common_noun(token: Token) -> bool:
    return (
        token.tag in ("NN", "NNS")
        and token.text.isalpha()
        and token.text.islower()
        and token.text not in _ORDINALS
    )


# A plural demonstrative noun phrase (*these vessels*, *those early tablets*): the document already has a group
# that a new *these*/*those* would refer to.
_PLURAL_DEMONSTRATIVE = re.compile(r"\b(?:[Tt]hese|[Tt]hose)(?:\s+[a-z][\w-]*){0,2}?\s+[a-z][\w-]*[^s\W]s\b")


_COPULAS = frozenset("is was are were be been become becomes became remain remains remained".split())


def _singular_predicate(tokens: tuple[Token, ...], verb: int) -> bool:
    """Whether the copula at ``verb`` takes a singular noun as predicate, which a plural subject cannot take
    (*These schools are a residence school*, *These schools are residence school*, *These conflicts were one of
    the influences*); *part of* and *home to* agree with either.

    >>> from incoherent.corpora.probes.text import analyse
    >>> toks = analyse("This school is a residence school.")
    >>> _singular_predicate(toks, 2), _singular_predicate(analyse("This area is part of Kent."), 2)
    (True, False)
    """
    if tokens[verb].text.lower() not in _COPULAS:
        return False
    m = verb + 1
    while m < len(tokens) and tokens[m].tag in ("RB", "RBR"):
        m += 1
    named = m < len(tokens) and tokens[m].text.lower() in _NAMING  # are also known as the lithium family
    if named:
        m += 1
        while m < len(tokens) and tokens[m].text.lower() in ("as", "to"):
            m += 1
    if m >= len(tokens):
        return False
    word = tokens[m].text.lower()
    if word in ("a", "an", "one", "another"):
        return True
    if word == "the" and _superlative_singular(tokens, m + 1, named):
        return True  # These genera are the most species-rich genus of ants
    if named:
        return False  # These exhibitions ... are called self-similarity: a bare name agrees with either
    after = tokens[m + 1].tag if m + 1 < len(tokens) else "."
    return (
        tokens[m].tag == "NN" and word not in ("part", "home") and (after == "NN" or not after[:1].isalpha())
    )


_MODIFIER_TAGS = frozenset({"JJ", "JJS", "RBS", "JJR", "RB", "CD", "VBN", "HYPH", "NN", "NNP"})
_NAMING = frozenset({"known", "called", "named", "termed", "referred", "designated"})
_SOLE = frozenset({"most", "least", "only", "sole", "single", "first", "last", "second", "third", "main"})


def _superlative_singular(tokens: tuple[Token, ...], m: int, named: bool = False) -> bool:
    """Whether the words from ``m`` (after a copula's *the*) are a superlative or a sole thing, then a singular
    head noun (*the most species-rich genus*, *the largest genus*, *the only school*), which a plural subject
    cannot take; after a naming participle (``named``: *known as the euro area*) any singular head noun."""
    marked = named
    while m < len(tokens) and tokens[m].tag in _MODIFIER_TAGS:
        marked = marked or tokens[m].tag in ("JJS", "RBS") or tokens[m].text.lower() in _SOLE
        if tokens[m].tag == "NN" and (m + 1 == len(tokens) or not tokens[m + 1].tag.startswith("NN")):
            return marked
        m += 1
    return False


def plural_forms(noun: str) -> tuple[str, ...]:
    """Every plural lemminflect's dictionary gives a noun (the noun itself among them when it is also a mass
    noun)."""
    import lemminflect

    return lemminflect.getInflection(noun, "NNS", inflect_oov=False)


def _relative_after(tokens: tuple[Token, ...], k: int) -> bool:
    """A comma, then a relative pronoun and a singular verb (``in this study, which is``): the relative
    clause's verb agrees with the noun phrase wherever it stands."""
    if tokens[k].text != "," or k + 2 >= len(tokens):
        return False
    return tokens[k + 1].text.lower() in ("which", "who", "that") and tokens[k + 2].text.lower() in _SINGULAR_VERBS | {
        "remains", "becomes", "includes", "contains", "means"}  # fmt: skip


# Singular pronouns that may stand for the noun phrase (these characters are ..., although he may have).
_SINGULAR_PRONOUNS = frozenset(
    {"it", "its", "itself", "he", "him", "his", "himself", "she", "her", "hers", "herself"}
)


def _pronoun_after(tokens: tuple[Token, ...], i: int, j: int) -> bool:
    """Whether an *it*/*its*/*itself* (or *he*, *she*, ...) after the noun phrase may stand for it. The subject of the main clause
    after an opening prepositional phrase does not (``In this context, it is``)."""
    opening = i == 1 and tokens[0].tag == "IN"
    other = False  # a singular noun between them, the object of a preposition or verb, may be its referent
    for m in range(j + 1, len(tokens)):
        if tokens[m].tag == "NN" and _governed(tokens, m):
            other = True
        word = tokens[m].text.lower()
        person = any(t.tag.startswith("NNP") for t in tokens) or any(
            t.text.lower() in _SINGULAR_PRONOUNS - {"it", "its", "itself"} for t in tokens[:i]
        )
        if word not in ("it", "its", "itself") and person:
            continue  # his lifetime, making her; She wrote this song for her mother: a person named before
        if word in _SINGULAR_PRONOUNS and not other:
            if opening and tokens[m - 1].text in (",",) and all(t.text != "," for t in tokens[j + 1 : m - 1]):
                continue
            if opening and m == j + 1:
                continue  # Above this temperature it is
            return True
    return False


def _governed(tokens: tuple[Token, ...], m: int) -> bool:
    """Whether the noun at ``m`` is in a phrase governed by a preposition or a verb other than *be* (``restoring
    a body part``, ``as the lithium family``; not ``are a popular pastime``)."""
    while m > 0 and tokens[m - 1].tag in ("DT", "JJ", "JJR", "JJS", "NN", "PRP$", "CD", "RB", "VBN", "VBG"):
        m -= 1
    if m == 0:
        return False
    before = tokens[m - 1]
    return before.tag in ("IN", "TO") or (
        before.tag.startswith("VB") and before.text.lower() not in _BE_FORMS
    )


def _subject_verb(tokens: tuple[Token, ...], k: int) -> int | None:
    """The position of the finite verb of the subject whose head noun ends before ``k``, across its
    complements (``these kinds of surgery focus``, ``this tendency to conform occurs``, ``this era of
    migration and settlement was``); None when the clause has none; -1 when it cannot be told: a comma,
    a relative or another subject comes first (``this book he wrote is``)."""
    m = k
    while m < len(tokens) and m < k + 16:
        token, word = tokens[m], tokens[m].text.lower()
        if token.tag == "." or word in ("''", "``"):
            return None
        if token.text in (",", ";", ":", "(", "-LRB-") or token.tag in ("WDT", "WP") or word == "that":
            return -1
        if token.tag in FINITE:
            return m if verb_form(token) else -1  # (this food supports nearly half: "half" is no verb)
        if token.tag == "WRB" or word in SUBORDINATORS:
            return -1
        if token.tag in ("PRP", "EX") or (token.tag == "DT" and tokens[m - 1].tag.startswith("NN") and m > k):
            return -1  # a subject of its own: a relative clause without a pronoun
        if token.tag in ("NN", "NNS") and word.endswith("s") and _noun_is_verb(tokens, m, first=m == k):
            return m  # kinds of surgery focuses on: the tagger's noun is the verb
        m += 1
    return -1


def _noun_is_verb(tokens: tuple[Token, ...], m: int, first: bool = False) -> bool:
    """Whether an -s word tagged a noun inside a subject is its verb: it has a verb reading and what follows
    it is not a verb (``family of card games also includes``: a noun), and, unless it comes right after the
    head noun (``this team plays``, ``this article deals only with``), an object or a complement."""
    from incoherent.corpora.probes.lexicon import lemma

    n = m + 1
    while n < len(tokens) and tokens[n].tag in ("RB", "RBR"):
        n += 1
    if lemma(tokens[m].text) is None or (n < len(tokens) and tokens[n].tag in FINITE):
        return False
    if n < len(tokens) and tokens[n].text.lower() == "of":
        return False  # parts of, norms of: a noun
    if first:
        return True
    import lemminflect

    before = lemminflect.getAllLemmas(tokens[m - 1].text.lower())
    if tokens[m - 1].tag in ("DT", "PRP$", "CD") or (before and set(before) <= {"ADJ", "ADV"}):
        return False  # of similar patterns at: after an adjective or determiner, the head noun
    follows = ("DT", "IN", "PRP$", "JJ", "CD", "TO", "PRP", "WRB", "WDT", "WP")
    return n < len(tokens) and tokens[n].tag in follows  # field of study evaluates how


def _coordinated_verbs(tokens: tuple[Token, ...], k: int) -> list[tuple[int, str]] | None:
    """The singular verbs coordinated with the agreeing verb at ``k`` (``is ... and encompasses``, ``is
    denoted NA, and is``), up to a clause of another subject (a relative, a subordinate clause, a semicolon);
    None when an adverb separates *and* from an -s word the tagger calls a noun (``and together forms``)."""
    out, m = [], k + 1
    while m < len(tokens):
        word = tokens[m].text.lower()
        if (
            word in _CLAUSE_OPENERS - _PREPOSITIONS
            or tokens[m].tag in ("WDT", "WP", "WRB")
            or word in (";", ":")
        ):
            break  # (chosen as the Unity Day, and has: "as" a preposition)
        if tokens[m].tag in ("PRP", "EX") and m + 1 < len(tokens) and tokens[m + 1].tag in FINITE:
            break  # as he witnesses and experiences: a clause of another subject
        if tokens[m].tag == "CC" and word in ("and", "or", "but"):
            n = m + 1
            while n < len(tokens) and (tokens[n].text == "," or tokens[n].tag in ("RB", "RBR")):
                n += 1
            if n < len(tokens) and tokens[n].tag in FINITE:
                verb = _plural_verb(tokens[n])
                if verb is not None:
                    out.append((n, verb))
                m = n + 1
                continue
            objects = ("DT", "PRP$", "PRP", "CD", "JJ")
            after = tokens[n + 1] if n + 1 < len(tokens) else None
            if (
                n == m + 1
                and tokens[n].tag == "NNS"
                and _noun_is_verb(tokens, n)
                and after is not None
                and (after.tag in objects or after.text.lower() == "as")
            ):
                verb = _plural_verb(tokens[n])
                out += [(n, verb)] if verb is not None else []  # ..., and serves as the capital
                m = n + 1
                continue
            if n < len(tokens) and tokens[n].tag in ("NN", "NNS") and tokens[n].text.lower().endswith("s"):
                from incoherent.corpora.probes.lexicon import lemma

                if lemma(tokens[n].text) is not None and n > m + 1:
                    return None  # and together forms: a verb or a noun, the tags cannot tell
            if n < len(tokens) and tokens[n].tag in ("DT", "PRP", "PRP$", "NNP", "EX"):
                break  # and the term "Viking" also ...: another subject
        m += 1
    return out
