"""Clause facts the verb phenomena read: which past-tense forms are finite verbs, the subject's number, and the
temporal and conditional clauses whose verbs keep the present tense in a future sentence.

A word tagged as a past verb is **not finite** (:func:`nonfinite_reason` says why) when it is

- a participle by its form (``known``, ``taken``: not the verb's past tense);
- a participle or adjective by its place: right after a preposition, a determiner or an adjective
  (``with added features``), at the start of the sentence or after a comma with no subject
  (``Founded in 1900, the club ...``; ``Go, also known as Weiqi, ...``), or coordinated with a participle
  (``was born in Leeds and raised in York``);
- a reduced relative: right after a noun phrase that is the object of a preposition or a verb, while the
  sentence has another finite verb (``In papers filed Friday, prosecutors said ...``).

>>> from corpora.probes.text import analyse
>>> tokens = analyse("In papers filed Friday, prosecutors said he lied.")
>>> [(t.text, nonfinite_reason(tokens, i)) for i, t in enumerate(tokens) if t.tag == "VBD"]
[('filed', 'reduced_relative'), ('said', None), ('lied', None)]
"""

from __future__ import annotations

import functools

from corpora.probes.text import Token

FINITE_TAGS = ("VBD", "VBZ", "VBP", "MD")
# clauses whose verb stays in the present when the sentence is put in the future (after a video surfaces)
TEMPORAL = frozenset({"when", "whenever", "after", "before", "until", "till", "once", "if", "unless"})
_OPENERS = TEMPORAL | {"that", "because", "although", "though", "since", "while", "as", "whether", "where"}
_NP = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD", "POS", "PRP$", "DT", "PDT"})
_NP_START = frozenset({"DT", "PRP$", "PDT"})
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
_PASSIVE_NEXT = frozenset({"in", "by", "at", "as", "on", "from", "with", "for", "into"})
# verbs with no passive: after "was born in X and", they are finite (and died in Y)
_INTRANSITIVE = frozenset(
    "die live serve work remain stay return move retire go come arrive play compete run fight emigrate "
    "graduate rise fall stand sit lie appear occur happen belong sleep travel flee settle".split()
)
_PLURAL_PRONOUNS = frozenset({"we", "they", "you", "i"})
_SINGULAR_PRONOUNS = frozenset({"he", "she", "it", "this", "that", "one", "who", "which"})


@functools.lru_cache(maxsize=8192)
def past_forms(base: str) -> frozenset[str]:
    """Every past-tense form of a verb in lemminflect's dictionary (``be``: was, were)."""
    import lemminflect

    if base == "be":
        return frozenset({"was", "were"})
    return frozenset(lemminflect.getInflection(base, "VBD", inflect_oov=False))


def _before_adverbs(tokens: tuple[Token, ...], i: int) -> int:
    """Position of the first token before ``i`` that is not an adverb (-1 at the sentence's start)."""
    j = i - 1
    while j >= 0 and tokens[j].tag in ("RB", "RBR", "RBS"):
        j -= 1
    return j


def _other_finite_verb(tokens: tuple[Token, ...], i: int) -> bool:
    return any(t.tag in FINITE_TAGS for k, t in enumerate(tokens) if k != i)


def nonfinite_reason(tokens: tuple[Token, ...], i: int, base: str | None = None) -> str | None:
    """None when the past-tagged word at ``i`` is a finite verb; else why it is not (``participle``,
    ``participle_clause``, ``reduced_relative``)."""
    from corpora.probes.verbs import lemma

    word = tokens[i].text.lower()
    base = base or lemma(word)
    if base is not None and word not in past_forms(base):
        return "participle"  # known, taken, given
    j = _before_adverbs(tokens, i)
    if j < 0 and not (bool(tokens) and tokens[-1].text == "?"):
        return "participle_clause"  # Founded in 1900, the club ...
    if j >= 0 and tokens[j].text in (",", ";", ":", "(", "-", "–", "—"):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        later = any(t.tag in FINITE_TAGS for t in tokens[i + 1 :])
        if nxt is not None and (nxt.tag in ("IN", "TO") or nxt.text == ",") and later:
            return "participle_clause"  # The club, founded in 1900, is ...
        return None
    before = tokens[j]
    low = before.text.lower()
    if before.tag in ("IN", "TO", "WRB", "DT", "JJ", "JJR", "JJS", "PRP$", "POS", "CD") and low != "that":
        return "participle_clause"  # with added features, when asked, the limited edition
    if before.tag == "CC":  # was born in Leeds and raised in York (but: and died in York, and led to)
        nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
        if nxt not in _PASSIVE_NEXT or base in _INTRANSITIVE:
            return None
        for k in range(j - 1, -1, -1):
            if tokens[k].tag in FINITE_TAGS:
                return None
            if tokens[k].tag == "VBN":
                return "participle_clause"
        return None
    if before.tag.startswith("NN") and _other_finite_verb(tokens, i):
        k = j
        while k >= 0 and tokens[k].tag in _NP and tokens[k].text.lower() not in _MONTHS:
            if tokens[k].tag == "CD" and len(tokens[k].text) == 4:
                break  # In 2010 Smith joined: a year, not part of the noun phrase
            if tokens[k].tag in _NP_START:
                k -= 1
                break
            k -= 1
        if k >= 0 and tokens[k].tag in ("IN", "TO") and tokens[k].text.lower() not in _OPENERS:
            return "reduced_relative"  # In papers filed Friday, prosecutors said ...
        if i + 1 < len(tokens) and tokens[i + 1].tag == "IN" and _verb_follows_in_clause(tokens, i):
            return "reduced_relative"  # The men killed in the attack were soldiers.
    return None


def _verb_follows_in_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether a finite verb follows ``i`` with no boundary, pronoun or subordinator between (so the noun
    phrase before ``i`` is that verb's subject and ``i`` opens a reduced relative)."""
    for token in tokens[i + 1 :]:
        word = token.text.lower()
        if (
            token.text in (",", ";", ":")
            or token.tag in ("CC", "PRP", "WDT", "WP", "WRB")
            or word in _OPENERS
        ):
            return False
        if token.tag in FINITE_TAGS:
            return True
    return False


def subject_is_plural(tokens: tuple[Token, ...], i: int) -> bool | None:
    """Whether the subject of the verb at ``i`` is plural (``they``, ``the players``, ``A and B``): the
    nearest noun or pronoun before the verb in its clause; None when there is none."""
    j = i - 1
    while j >= 0 and tokens[j].text not in (",", ";", ":"):
        tag, word = tokens[j].tag, tokens[j].text.lower()
        if tag == "PRP" or word in _SINGULAR_PRONOUNS:
            if word in _PLURAL_PRONOUNS:
                return True
            return False if word in _SINGULAR_PRONOUNS else None
        if tag.startswith("NN"):
            k = j - 1
            while k >= 0 and tokens[k].tag in _NP - _NP_START:
                k -= 1
            coordinated = k >= 0 and tokens[k].text.lower() == "and"
            return tag in ("NNS", "NNPS") or coordinated
        if tag in ("IN", "WDT", "WP", "WRB") and j < i - 1:
            return None
        j -= 1
    return None


def in_temporal_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the verb at ``i`` is the first finite verb of a clause opened by a temporal or conditional
    subordinator (``after a video surfaced``, ``if he won``); a question's opening ``When`` is not one."""
    question = bool(tokens) and tokens[-1].text == "?"
    j = i - 1
    while j >= 0:
        token = tokens[j]
        if token.text in (",", ";", ":") or token.tag in FINITE_TAGS:
            return False
        if token.text.lower() in TEMPORAL and token.tag in ("IN", "WRB", "RB"):
            return not (question and j == 0)
        j -= 1
    return False
