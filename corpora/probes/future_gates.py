"""``past-to-future``'s own checks on where a past form may become a future (beside the shared clause reading of
:mod:`corpora.probes.clauses`): participles that only look finite, *since* clauses, an opening prepositional phrase
read as a temporal clause, and the number a temporal clause's verb keeps.
"""

from __future__ import annotations

from incoherent.corpora.probes.participles import _participle_form
from incoherent.corpora.probes.text import Token

# verbs that take an object before any preposition: "X intended for Y" is a participle, never a finite verb
_PASSIVE_BEFORE_PREPOSITION = frozenset(
    "intend design base locate situate dedicate devote derive compose equip destine".split()
)
# verbs whose past form joined to a passive, before a preposition, is that passive's second participle (*was
# tried by the tribunals and sentenced to 15 years*); another verb there may be active (*and led to the town*)
_PASSIVE_CONJUNCTS = _PASSIVE_BEFORE_PREPOSITION | frozenset(
    "sentence convict convert attach rename induct imprison deport exile station assign appoint elect promote "
    "reassign relegate demote".split()
)
_AUXILIARY = frozenset({"is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "'s"})
_SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "they", "we", "i", "you"})
_NP_TAGS = frozenset(
    {"DT", "PDT", "JJ", "JJR", "JJS", "CD", "POS", "PRP$", "NN", "NNS", "NNP", "NNPS", "HYPH"}
)


def _before_adverbs(tokens: tuple[Token, ...], i: int) -> int:
    j = i - 1
    while j >= 0 and tokens[j].tag in ("RB", "RBR"):
        j -= 1
    return j


def participle_read_as_finite(tokens: tuple[Token, ...], i: int, base: str) -> bool:
    """Whether the past form at ``i`` is a participle the clause reading took for a finite verb: a verb of
    :data:`_PASSIVE_BEFORE_PREPOSITION` right before a preposition (*an engine, intended for heavy goods*), or a
    past form after the sentence's subject noun whose phrase ends at a present verb, a comma between or not (*The
    liberties explicitly defined, make up the Bill of Rights*; *Small additions added in the 19th and 20th
    centuries expand the building*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> participle_read_as_finite(analyse("It was an engine, intended for goods trains, and was based on the G 7."), 5, "intend")
    True
    >>> participle_read_as_finite(analyse("He intended to stay."), 1, "intend")
    False
    """
    if not _participle_form(tokens[i].text.lower(), base):
        return False  # wrote, co-wrote: never a participle
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if (
        base in _PASSIVE_BEFORE_PREPOSITION
        and nxt is not None
        and nxt.tag == "IN"
        and nxt.text.lower() != "to"
    ):
        return True
    j = _before_adverbs(tokens, i)
    if j < 0 or not tokens[j].tag.startswith("NN"):
        return False
    if any(t.tag in ("VBD", "VBZ", "VBP", "MD") for t in tokens[:j]):
        return False
    if nxt is not None and nxt.tag in ("DT", "PRP$", "PRP", "CD", "JJ", "NN", "NNS", "NNP", "NNPS"):
        return False  # prompted the need for ...: an object, so a finite verb
    for k in range(i + 1, len(tokens)):
        token = tokens[k]
        if token.text.lower() in ("that", "which", "who", "whom", "whose"):
            return False  # alternatives that overcome this limitation: a relative clause's verb
        if token.tag in ("VBZ", "VBP") and token.text.islower():
            return True  # Small additions added in the 19th and 20th centuries expand the building
        if token.text == ",":
            m = k + 1
            while m < len(tokens) and tokens[m].tag in ("RB", "RBR"):
                m += 1
            return m < len(tokens) and tokens[m].tag in ("VBZ", "VBP", "VB")  # the subject's own verb
        if token.text in (";", ":", '"', "“", "(") or token.tag in ("VBD", "MD", "VB", "WDT", "WP", "WRB"):
            return False
    return False


def since_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the verb at ``i`` is the first verb of a clause opened by *since* (*since it started in 2001*),
    which cannot take the future.

    >>> from incoherent.corpora.probes.text import analyse
    >>> since_clause(analyse("She is the third to compete, since it started in 2001."), 8)
    True
    """
    for j in range(i - 1, -1, -1):
        token = tokens[j]
        if token.text.lower() == "since":
            after = tokens[j + 1]
            return not (
                after.text.lower() in ("then", "now") or after.tag == "CD"
            )  # since then no date was given
        if token.text in (",", ";", ":") or token.tag in ("VBD", "VBZ", "VBP", "MD", "WDT", "WP", "WRB"):
            return False
        if token.tag == "IN":
            return False
    return False


def prepositional_opener(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the subordinator before the verb at ``i`` is a preposition with its own noun phrase: the verb's
    subject is a pronoun after it (*After the war he retired*: the main clause, not a temporal clause).

    >>> from incoherent.corpora.probes.text import analyse
    >>> prepositional_opener(analyse("After the war he retired to Brest."), 4)
    True
    >>> prepositional_opener(analyse("After he retired, he moved."), 2)
    False
    """
    p = _before_adverbs(tokens, i)
    if p < 1 or tokens[p].text.lower() not in _SUBJECT_PRONOUNS or tokens[p].tag != "PRP":
        return False
    k = p - 1
    while k >= 0 and (tokens[k].tag in _NP_TAGS or tokens[k].text.lower() == "of"):
        k -= 1
    return 0 <= k < p - 1 and tokens[k].tag in ("IN", "WRB") and (k == 0 or tokens[k - 1].text == ",")


def temporal_subject_plural(tokens: tuple[Token, ...], i: int, plural: bool | None) -> bool | None:
    """The number of the subject of a temporal clause's verb at ``i``: *was* and *were* say it themselves (*When
    the Elgin and Belvidere Electric Company was built*: singular), and a name ending in a Roman numeral is one
    (*before World War I began*); else ``plural`` as read."""
    word = tokens[i].text.lower()
    j = _before_adverbs(tokens, i)
    if j >= 0 and tokens[j].text == "I" and (j == 0 or not tokens[j - 1].tag.startswith("NNP")):
        return None  # when I was: no third person form
    if word == "was":
        return False
    if word == "were":
        return True
    if j > 0 and tokens[j].text == "I" and tokens[j - 1].tag.startswith("NNP"):
        return False
    return plural


def passive_conjunct(tokens: tuple[Token, ...], i: int, base: str) -> bool:
    """Whether the past form at ``i`` is a participle joined by *and*/*or* to the participle of an earlier
    *was*/*were* with no object after it (*she was re-acquired by the RCN in December 1940 and converted to a gate
    vessel*): it shares the auxiliary, which becomes *will be*, and stays as it is.

    >>> from incoherent.corpora.probes.text import analyse
    >>> toks = analyse("Sold in 1937, she was re-acquired by the RCN in December 1940 and converted to a gate vessel.")
    >>> passive_conjunct(toks, 14, "convert")
    True
    >>> passive_conjunct(analyse("He was elected in 1990 and served until 1994."), 6, "serve")
    False
    >>> passive_conjunct(analyse("The bridge was built in 1890 and led to the town."), 7, "lead")
    False
    """
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if (
        not _participle_form(tokens[i].text.lower(), base)
        or nxt is None
        or nxt.tag not in ("IN", "TO")
        or base not in _PASSIVE_CONJUNCTS
    ):
        return (
            False  # was elected in 1990 and served until 1994; was built in 1890 and led to the town: active
        )
    j = _before_adverbs(tokens, i)
    if j < 1 or tokens[j].text.lower() not in ("and", "or") or tokens[j - 1].text == ",":
        return False  # was freed at the age of twelve, and immigrated: a comma opens a predicate of its own
    for k in range(j - 1, 0, -1):
        token = tokens[k]
        if token.tag in ("VBZ", "VBP", "MD", "WDT", "WP", "WRB") or token.text in (";", ":"):
            return False
        if token.tag == "PRP" and token.text.lower() in _SUBJECT_PRONOUNS:
            return False
        if token.text.lower() in ("was", "were"):
            m = k + 1
            while m < len(tokens) and tokens[m].tag in ("RB", "RBR"):
                m += 1
            participle = tokens[m].tag == "VBN" or (tokens[m].tag == "JJ" and tokens[m].text.endswith("ed"))
            return m < j and participle
        if token.tag == "VBD":
            return False
    return False


def joined_by_then(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the past verb at ``i`` follows *then* right after a noun phrase with no conjunction (*He completed
    his degree at Northwestern State then became head coach*): the second verb of the first one's subject, which
    takes the first one's *will* (*will complete ... then become*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> joined_by_then(analyse("He completed his degree at Northwestern State then became head coach."), 8)
    True
    """
    return (
        i >= 2
        and tokens[i - 1].text.lower() == "then"
        and tokens[i - 2].tag in ("NN", "NNS", "NNP", "NNPS", "CD")
        and any(t.tag == "VBD" for t in tokens[: i - 2])
        and not any(t.tag in ("WDT", "WP", "WRB", "IN") and t.text.lower() in ("when", "which", "who", "that",
                                                                             "after", "before", "until", "if")
                    for t in tokens[: i - 2])
    )  # fmt: skip


def future_in(sentence: str) -> bool:
    """Whether the sentence has a future: *will*, *shall* or *'ll* before a verb's base form (adverbs between), or
    it calls its subject *upcoming* or *forthcoming*.

    >>> future_in("A OVA will be released alongside the light novels ninth volume.")
    True
    >>> future_in("The Will of the People was published in 1850.")
    False
    >>> future_in("CHiPs is an upcoming American action comedy film written and directed by Dax Shepard.")
    True
    """
    from incoherent.corpora.probes.text import analyse

    tokens = analyse(sentence)
    for k, token in enumerate(tokens):
        if token.text.lower() in ("upcoming", "forthcoming"):
            return True  # CHiPs is an upcoming American action comedy film
        if token.tag == "MD" and token.text.lower() in ("will", "shall", "'ll"):
            m = k + 1
            while m < len(tokens) and tokens[m].tag in ("RB", "RBR"):
                m += 1
            if m < len(tokens) and tokens[m].tag == "VB" and tokens[m].text.islower():
                return True  # not a title's (When the Pawn ... He'll Win the Whole Thing)
    return False


def past_after_pronoun(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """A past form in *-ed* right after a subject pronoun (adverbs between) that the tagger read as an adverb, an
    adjective, a noun, a participle or a present verb is the pronoun's finite verb (*He previously enjoyed consecutive loan spells*:
    *enjoyed* tagged RB; *, he enjoyed occasional all round success*: VBZ); a pronoun takes no reduced relative.

    >>> from incoherent.corpora.probes.text import analyse
    >>> [t.tag for t in past_after_pronoun(analyse("He previously enjoyed consecutive loan spells."))][:3]
    ['PRP', 'RB', 'VBD']
    """
    from incoherent.corpora.probes.lexicon import lemma, past_forms

    out = list(tokens)
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if token.tag not in ("RB", "JJ", "VBN", "NN", "VBZ", "VBP") or not word.endswith("ed"):
            continue
        j = _before_adverbs(tokens, i)
        if j < 0 or tokens[j].tag != "PRP" or tokens[j].text.lower() not in _SUBJECT_PRONOUNS - {"it", "you"}:
            continue
        if j > 0 and tokens[j - 1].text not in (",", ";") and tokens[j - 1].tag != "CC":
            continue  # told him: an object
        base = lemma(word)
        if base is not None and word != base and word in past_forms(base):
            out[i] = token._replace(tag="VBD")
    return tuple(out)


def prefixed_lemma(word: str) -> str | None:
    """The base form of a past verb with a hyphenated prefix (*co-wrote* -> *co-write*), or None.

    >>> prefixed_lemma("co-wrote")
    'co-write'
    """
    from incoherent.corpora.probes.lexicon import lemma, past_forms

    prefix, _, rest = word.partition("-")
    if prefix not in ("co", "re", "pre", "self") or not rest:
        return None
    base = lemma(rest)
    return f"{prefix}-{base}" if base is not None and rest != base and rest in past_forms(base) else None


def past_read_as_base(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """A past form after *and*/*or* (adverbs between) that the tagger read as a base or present form is a past verb
    joined to the one before (*a drive belt that linked both rotors and spun them*: *spun* tagged VB; *, and also
    played for the NFL's Atlanta Falcons*: VBZ), and so is one read as a participle that takes an object with no
    *be* or *have* before it (*bats left-handed, and primarily played first base*), so it takes the future with it.

    >>> from incoherent.corpora.probes.text import analyse
    >>> toks = past_read_as_base(analyse("Power was transmitted by a belt that linked both rotors and spun them."))
    >>> [t.tag for t in toks if t.text == "spun"]
    ['VBD']
    """
    from incoherent.corpora.probes.lexicon import lemma, past_forms

    out = list(tokens)
    for i, token in enumerate(tokens):
        j = _before_adverbs(tokens, i)
        if j < 0 or tokens[j].text.lower() not in ("and", "or"):
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        participle = (
            token.tag == "VBN"
            and nxt is not None
            and nxt.tag in ("DT", "PRP", "PRP$", "JJ", "NN", "NNS", "NNP", "CD")
            and not any(t.text.lower() in _AUXILIARY for t in tokens[:j])
        )  # bats left-handed, and primarily played first base: an object, and no be/have to take a participle
        if token.tag not in ("VB", "VBZ", "VBP") and not participle:
            continue
        word = token.text.lower()
        base = lemma(word)
        if base is not None and word != base and word in past_forms(base):
            out[i] = token._replace(tag="VBD")
    return tuple(out)
