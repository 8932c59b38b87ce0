"""The ``demonstrative`` phenomenon (INSteD, Shen et al. 2021, Table 7): a singular demonstrative determiner to
the plural (this -> these, that -> those), alone as in INSteD's released probes, or with ``agree`` its head noun
to the plural and the verb that agrees with the noun phrase too (``this city was`` -> ``these cities were``).
"this"/"that" as pronouns (``This is``), complementisers (``said that``) or relatives (``stars that``) are not
sites. ``conjunction`` is in :mod:`corpora.probes.connectives`.
"""

from __future__ import annotations

import functools

from corpora.probes.edits import Edit, NoSite, replace
from corpora.probes.text import Token, analyse, match_case

FINITE = ("VBD", "VBZ", "VBP", "MD")  # the tags of finite verbs
_AGREEMENT = {"is": "are", "was": "were", "has": "have", "'s": "'re", "does": "do"}


def _plural_verb(token: Token) -> str | None:
    """The plural form of a singular present or past verb right after the noun phrase (None: it agrees as it
    is). The tagger often calls a verb after a noun a noun (``team plays``): an -s word with a verb lemma
    counts as a verb there."""
    from corpora.probes.verbs import lemma

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
_COMPLEMENTISER_HOSTS = frozenset({"so", "such", "now", "except", "given", "provided", "save", "than"})


def _noun_phrase(tokens: tuple[Token, ...], i: int) -> tuple[int | None, str | None]:
    """``(head, None)``: the position of the singular head noun that this/that at ``i`` determines (``this
    hybrid code``, ``that football club``, ``that year's``), or ``(None, reason)`` when it determines none:
    ``pronoun`` (``this is``, ``that much``), ``plural_head`` (``that award tickets``: a complementiser),
    ``that_complementiser`` (``said that man was``, ``so that``)."""
    word = tokens[i].text.lower()
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
        if _verb_after_noun(tokens, j, head is None):
            break  # this team plays in, was this bridge built by, this intensified in: the tagger's noun is a verb
        head = j
        if tokens[j].tag in ("NNS", "NNPS"):
            break
        j += 1
    if head is None:
        return None, "pronoun"
    if tokens[head].tag.startswith("NNP"):
        return None, "proper_noun"  # before this Pharaoh was: a pronoun before a name more often than not
    prev = tokens[i - 1] if i > 0 else None
    if word == "that" and prev is not None and prev.text.lower() in _COMPLEMENTISER_HOSTS | _BE_FORMS:
        return None, "that_complementiser"  # the problem is that people forget; so that
    if _plural_form(tokens[head]):
        return None, "plural_head"
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
_PARTITIVES = frozenset({"most", "all", "some", "part", "half", "none", "any", "many", "one", "each"})


def _subject_position(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the noun phrase opened at ``i`` can be a subject (no preposition or verb governs it; ``most
    of this pressure results``: a partitive's verb agrees with it)."""
    if i == 0:
        return True
    if i > 1 and tokens[i - 1].text.lower() == "of" and tokens[i - 2].text.lower() in _PARTITIVES:
        return i == 2 or not tokens[i - 3].tag.startswith(("IN", "TO", "VB"))
    if tokens[i - 1].text.lower() in SUBORDINATORS:
        return True  # if this collision occurs
    return not tokens[i - 1].tag.startswith(("IN", "TO", "VB")) or tokens[i - 1].text.lower() == "that"


def demonstrative(sentence: str, tokens: tuple[Token, ...] | None = None, agree: bool = False) -> list[Edit]:
    """The first singular demonstrative determiner to the plural: the determiner alone (INSteD's released
    probes), or with ``agree`` its head noun and an agreeing verb too (the paper's description).

    >>> from corpora.probes.edits import apply_edits
    >>> s = "In that year this small city was renamed."
    >>> apply_edits(s, demonstrative(s)), apply_edits(s, demonstrative(s, agree=True))
    ('In those year this small city was renamed.', 'In those years this small city was renamed.')
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
        noun = plural(tokens[j].text) if tokens[j].tag == "NN" else None
        if noun is None:
            reason = "no_plural" if reason == "no_demonstrative" else reason
            continue
        k = j + 1
        genitive = k < len(tokens) and tokens[k].text in ("'s", "’s")
        if i > 1 and tokens[i - 1].text.lower() == "of" and tokens[i - 2].text.lower() in ("much", "little"):
            reason = (
                "mass_partitive"  # much of this period -> much of these periods: "much" would have to change
            )
            continue
        if genitive:  # that year's -> those years'
            edits = [determiner, Edit(tokens[j].start, tokens[k].end, sentence[tokens[j].start : tokens[k].end],
                                      noun + ("'" if noun.endswith("s") else "'s"))]  # fmt: skip
            return edits
        if k < len(tokens) and tokens[k].text.lower() == "of":  # these kinds of surgery focus
            k += 1
            of = k
            while k < len(tokens) and tokens[k].tag in ("DT", "JJ", "NN", "NNS", "NNP", "NNPS", "CD", "PRP$"):
                if k > of and tokens[k].tag.startswith("NN") and _verb_after_noun(tokens, k):
                    break  # kinds of surgery focuses: the verb
                k += 1
        while k < len(tokens) and tokens[k].tag in ("RB", "RBR"):
            k += 1
        if (
            _subject_position(tokens, i)
            and k < len(tokens)
            and (tokens[k].text == "," or tokens[k].tag in ("WDT", "WP"))
        ):
            reason = (
                "agreement_beyond_phrase"  # a relative clause or an apposition: its verbs would agree too
            )
            continue
        edits = [determiner, replace(tokens[j], noun)]
        agreeing = _plural_verb(tokens[k]) if k < len(tokens) and _subject_position(tokens, i) else None
        if agreeing is not None:
            edits.append(replace(tokens[k], agreeing))
        if i > 0 and tokens[i - 1].text.lower() in _AGREEMENT:  # Was this bridge built -> Were these bridges
            edits.insert(
                0,
                replace(
                    tokens[i - 1], match_case(tokens[i - 1].text, _AGREEMENT[tokens[i - 1].text.lower()])
                ),
            )
        return edits
    return NoSite(reason)
