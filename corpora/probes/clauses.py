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

>>> from incoherent.corpora.probes.text import analyse
>>> tokens = analyse("In papers filed Friday, prosecutors said he lied.")
>>> [(t.text, nonfinite_reason(tokens, i)) for i, t in enumerate(tokens) if t.tag == "VBD"]
[('filed', 'reduced_relative'), ('said', None), ('lied', None)]
"""

from __future__ import annotations

from incoherent.corpora.probes.lexicon import is_noun, lemma, past_forms
from incoherent.corpora.probes.participles import (
    _CLAUSE_VERBS,
    _INTRANSITIVE,
    _NAMING,
    _NOT_PASSIVE_BY,
    _NP,
    _NP_START,
    _OPENERS,
    FINITE_TAGS,
    TEMPORAL,
    _agent_follows,
    _closes_relative,
    _in_present_sentence,
    _participle_form,
    _prenominal,
    _reduced_after_noun,
    _verb_list_follows,
)
from incoherent.corpora.probes.text import Token

# clauses whose verb stays in the present when the sentence is put in the future (after a video surfaces)
_TIME_WORDS = frozenset(
    {"today", "now", "then", "currently", "still", "also", "thereby", "there", "here"}
)  # adverbs the tagger reads as nouns
_NOT_A_SUBJECT = frozenset(
    {"IN", "TO", "WRB", "DT", "JJ", "JJR", "JJS", "PRP$", "POS", "CD", "RP", "VBG", "VB", "VBN", "MD"}
)
_AUXILIARY_FORMS = frozenset(
    {"is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "having", "'s", "'re", "'ve",
     "get", "gets", "got", "gotten", "getting", "become", "became", "feel", "feels", "felt", "seem", "seems",
     "seemed", "remain", "remains", "remained"}
)  # fmt: skip
_ASKING = frozenset("determine know ask see wonder decide check tell learn find investigate question".split())
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
_PASSIVE_NEXT = frozenset({"in", "by", "at", "as", "on", "from", "with", "for", "into"})
# verbs with no passive: after "was born in X and", they are finite (and died in Y)
_COMPLEMENT_VERBS = frozenset({"consider", "regard", "deem", "hail", "rank", "list", "describe", "credit"})
_NUMBER_WORDS = frozenset(
    "two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand several "
    "many few".split()
)
_MISREAD_PREPOSITIONS = frozenset({"towards", "toward", "upwards", "downwards", "backwards", "forwards"})
_HEAD_PREPOSITIONS = frozenset({"of", "between", "among", "with", "for", "in", "on", "from"})
_PARTICLES = frozenset({"up", "out", "back", "off", "down", "over", "away", "together"})
_PLURAL_PRONOUNS = frozenset({"we", "they", "you", "i"})
_SINGULAR_PRONOUNS = frozenset({"he", "she", "it", "this", "that", "one", "who", "which"})


def _before_adverbs(tokens: tuple[Token, ...], i: int) -> int:
    """Position of the first token before ``i`` that is not an adverb (-1 at the sentence's start)."""
    j = i - 1
    while j >= 0 and (
        tokens[j].tag in ("RB", "RBR", "RBS")
        or tokens[j].text.lower() in _TIME_WORDS
        or tokens[j].text.lower() in ("itself", "himself", "herself", "themselves")  # is itself subdivided
        or (len(tokens[j].text) > 5 and tokens[j].text.lower().endswith("ally"))  # spherically, tagged NN
        or tokens[j].text.lower().endswith(("-most", "-least"))  # the sixth-most populated country
    ):
        j -= 1
    return j


def _other_finite_verb(tokens: tuple[Token, ...], i: int) -> bool:
    return any(t.tag in FINITE_TAGS for k, t in enumerate(tokens) if k != i)


def nonfinite_reason(tokens: tuple[Token, ...], i: int, base: str | None = None) -> str | None:
    """None when the past-tagged word at ``i`` is a finite verb; else why it is not (``participle``,
    ``participle_clause``, ``reduced_relative``)."""
    word = tokens[i].text.lower()
    base = base or lemma(word)
    if base is not None and word not in past_forms(base):
        return "participle"  # known, taken, given
    j = _before_adverbs(tokens, i)
    if 0 < j < i - 1 and tokens[j].tag == "CC" and tokens[j - 1].tag in ("RB", "RBR", "RBS"):
        j = _before_adverbs(tokens, j)  # was more slowly and manually built: the conjunction joins adverbs
    if j < 0 and not (bool(tokens) and tokens[-1].text == "?"):
        return "participle_clause"  # Founded in 1900, the club ...
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if j >= 0 and tokens[j].text in (",", ";", ":", "(", "-", "–", "—"):
        return _after_punctuation(tokens, i, j, base)
    closing = tokens[j].text in ('"', "''", "”", ")") and nxt is not None and nxt.tag in ("IN", "TO", "RP")
    if closing and j > 0 and tokens[j - 1].tag.startswith("NN"):
        j -= 1  # in his book "Social Mobility" published in 1927
    before = tokens[j]
    if before.tag == "VBZ" and is_noun(before.text) and j > 0 and tokens[j - 1].tag.startswith(("NN", "JJ")):
        before = before._replace(tag="NNS")  # barbarian federates settled throughout: no verb before a verb
    low = before.text.lower()
    demonstrative_subject = (
        low in ("this", "these", "those")
        and (j == 0 or tokens[j - 1].text in (",", ";") or tokens[j - 1].tag == "CC")
        and (nxt is None or nxt.tag not in ("NN", "NNS", "JJ"))
    )  # This existed after ...; These included
    if (before.tag in _NOT_A_SUBJECT or low in _NUMBER_WORDS) and low != "that" and not demonstrative_subject:
        return "participle_clause"  # with added features, when asked, the limited edition, carrying out
    if low in _AUXILIARY_FORMS:
        return "participle"  # are today recognized, has long used
    if before.tag == "CC":
        return _coordinated(tokens, j, base, nxt)
    if before.tag.startswith("NN") and _participle_form(word, base) and base not in _NOT_PASSIVE_BY:
        if _agent_follows(tokens, i):
            return "reduced_relative"  # products and services banned by the state (exist read as a noun)
        m = j
        while m >= 0 and (tokens[m].tag in _NP or tokens[m].tag in ("NNP", "NNPS", "VBG")):
            m -= 1
        if m >= 0 and tokens[m].text.lower() in ("with", "without"):
            return "participle_clause"  # with Opening Day held during the last week
    if before.tag.startswith("NN") and _other_finite_verb(tokens, i):
        return _after_noun(tokens, i, j, base)
    return None


def _after_punctuation(tokens: tuple[Token, ...], i: int, j: int, base: str | None) -> str | None:
    """:func:`nonfinite_reason` for a past form at ``i`` after a comma, colon, bracket or dash at ``j``."""
    word = tokens[i].text.lower()
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    later = any(t.tag in FINITE_TAGS for t in tokens[i + 1 :])
    earlier = any(t.tag in FINITE_TAGS for t in tokens[:j])  # She appeared in films, performed in ...
    present = earlier and all(t.tag in ("VBZ", "VBP") for t in tokens[:j] if t.tag in FINITE_TAGS)
    if present and nxt is not None and nxt.tag in ("IN", "TO"):
        return "participle_clause"  # is a genus of plants, widely distributed throughout
    if (
        nxt is not None
        and (nxt.tag in ("IN", "TO") or nxt.text == "," or base in _NAMING)
        and later
        and not earlier
    ):
        return "participle_clause"  # The club, founded in 1900, is ...
    if _participle_form(word, base) and base not in _NOT_PASSIVE_BY and _agent_follows(tokens, i):
        return "participle_clause"  # a significant minority, followed by Turks; Panina—composed entirely by
    if nxt is not None and nxt.tag in ("NN", "NNS", "JJ") and (j == _first_comma(tokens) or earlier):
        return "participle_clause"  # Violence, increased cost of living, and ...; ears, reduced hindlimbs
    if (
        nxt is not None
        and nxt.tag in ("IN", "TO")
        and j > 0
        and tokens[_before_adverbs(tokens, j)].tag == "VBN"
    ):
        return "participle_clause"  # have been identified, grouped into 7 orders
    if j > 0 and tokens[_before_adverbs(tokens, j)].tag == "VBN":
        return "participle_clause"  # was arrested, charged and released
    finite_before = any(
        t.tag in FINITE_TAGS and (t.tag != "VBD" or t.text.lower() in past_forms(lemma(t.text.lower()) or ""))
        for t in tokens[:j]
    )  # Go, also known as Weiqi, spread: "known" is no finite verb
    if (
        finite_before
        and not later
        and nxt is not None
        and (nxt.tag in ("IN", "TO", "RP", "CD") or base in _NAMING or base in ("situate", "locate"))
        and _participle_form(word, base)
        and base not in _INTRANSITIVE
        and not _verb_list_follows(tokens, i)
        and not _closes_relative(tokens, j)
    ):
        return "participle_clause"  # a classical style, adapted to modern purposes; often called a blues harp
    return None


def _after_noun(tokens: tuple[Token, ...], i: int, j: int, base: str | None) -> str | None:
    """:func:`nonfinite_reason` for a past form at ``i`` after a noun at ``j``, another finite verb in the
    sentence: a reduced relative or a participle clause, or None (a finite verb)."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if _reduced_after_noun(tokens, i, j, base, _nonfinite) or _in_present_sentence(tokens, i, j, base):
        return "reduced_relative"
    if _prenominal(tokens, i, base):
        return "participle_clause"  # The white or pink flowered marsh worts ... are
    k = _noun_phrase_start(tokens, j)
    no_object = nxt is None or nxt.tag in ("IN", "RB", "TO", ",", ".") or nxt.text.lower() in _TIME_WORDS
    predicative = (
        nxt is not None
        and nxt.tag == "JJ"
        and i + 2 < len(tokens)
        and tokens[i + 2].tag[:2] not in ("NN", "JJ")
    )
    if predicative and any(t.tag in FINITE_TAGS for t in tokens[i + 2 :]):
        return "reduced_relative"  # a species presumed extinct abruptly reappears
    if k >= 0 and _takes_object(tokens, k) and no_object:
        return "reduced_relative"  # is a national park located in; containing 46 species found in
    attached = k > 0 and tokens[k - 1].tag.startswith("NN") and tokens[k].text.lower() != "with"
    # The Kingdom of Germany consisted of (but: forelimbs with large paws adapted for digging)
    if k >= 0 and tokens[k].tag in ("IN", "TO") and tokens[k].text.lower() not in _OPENERS and not attached:
        return "reduced_relative"  # In papers filed Friday, prosecutors said ...
    if i + 1 < len(tokens) and tokens[i + 1].tag in ("IN", "TO") and _verb_follows_in_clause(tokens, i):
        return "reduced_relative"  # The men killed in the attack were soldiers.
    return None


# verbs that take a clause without "that" (said the company closed), or that are not passives before "by"
def _noun_phrase_start(tokens: tuple[Token, ...], j: int) -> int:
    """Position of the token before the noun phrase that ends at ``j`` (through ``of`` phrases and ``and``
    between nouns: *a national park of the United States*, *their agility and speed*); -1 at the start."""
    k = j
    while k >= 0:
        tag, word = tokens[k].tag, tokens[k].text.lower()
        if tag == "CD" and len(tokens[k].text) == 4 or word in _MONTHS:
            return k  # In 2010 Smith joined: a year, not part of the noun phrase
        if tag in _NP_START:
            k -= 1
        elif tag in _NP:
            k -= 1
            continue
        elif (
            word in ("of", "and", "or", ",")
            and k > 0
            and tokens[k - 1].tag[:2] in ("NN", "JJ")
            and (word != "," or tokens[k + 1].tag.startswith("JJ"))
        ):
            k -= 1
            continue
        if (
            k >= 0
            and tokens[k].text.lower() in ("of", "and")
            and k > 0
            and tokens[k - 1].tag.startswith("NN")
        ):
            k -= 1
            continue
        return k
    return k


def _nonfinite(tokens: tuple[Token, ...], k: int) -> bool:
    return nonfinite_reason(tokens, k) is not None


def _takes_object(tokens: tuple[Token, ...], k: int) -> bool:
    """A verb whose object the noun phrase after it is: a copula, a non-finite verb (not one used as an
    adjective: *of trained troops*), or a finite verb that does not take a clause (*use their speed combined
    with*, but *said the company closed*)."""
    token = tokens[k]
    word = token.text.lower()
    if word in (
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "became",
        "becomes",
        "remained",
        "remains",
    ):
        return True
    if token.tag in ("VBG", "VBN", "VB"):
        return k == 0 or tokens[k - 1].tag not in ("DT", "IN", "JJ", "PRP$", "CD", "POS")
    return token.tag in ("VBZ", "VBP") and (lemma(word) or word) not in _CLAUSE_VERBS


def _first_comma(tokens: tuple[Token, ...]) -> int:
    return next((k for k, t in enumerate(tokens) if t.text == ","), -1)


def _coordinated(tokens: tuple[Token, ...], j: int, base: str | None, following: Token | None) -> str | None:
    """A past form after the conjunction at ``j``: a participle when what it joins is one (``Founded in 1636,
    and named ...``; ``was born in Leeds and raised in York``), finite otherwise (``was built in 1890 and led to
    the town``; ``was born in Leeds and died in York``)."""
    nxt = following.text.lower() if following is not None else ""
    k = _before_adverbs(tokens, j)
    listed = k >= 0 and tokens[k].text == ","
    if listed:
        k -= 1  # the list's last comma
    if listed and k >= 0 and tokens[k].tag.startswith("NN") and nxt and j + 2 < len(tokens):
        noun = (
            tokens[j + 2].tag in ("NN", "NNS", "JJ")
            and tokens[j + 2].text.lower() not in _MISREAD_PREPOSITIONS
        )
        verb = next((t.text.lower() for t in reversed(tokens[:k]) if t.tag in FINITE_TAGS), "")
        copula = verb in ("is", "are", "was", "were", "became", "becomes", "remained", "remains", "")
        if (
            noun
            and copula
            and tokens[j + 1].tag in ("VBD", "VBN")
            and tokens[j].text.lower() in ("and", "or")
        ):
            return "participle_clause"  # a politician, aviator, and convicted war criminal
    if k >= 0 and tokens[k].tag in ("VBN", "VBD"):
        previous = tokens[k].text.lower()
        if tokens[k].tag == "VBN" or previous not in past_forms(lemma(previous) or previous):
            return "participle_clause"  # was widely known and admired
    noun_left = j > 0 and tokens[j - 1].tag.startswith("NN")
    if noun_left and following is not None and following.tag == "JJ":
        m = j - 1
        while m >= 0 and tokens[m].tag in _NP:
            m -= 1
        if m >= 0 and tokens[m].tag == "IN":
            return "participle_clause"  # by a plethora of vassal kingdoms and allied nomadic tribes
    participle = adjective = False
    for k in range(j - 1, -1, -1):
        if tokens[k].tag == "VBN" or (tokens[k].tag == "VBD" and nonfinite_reason(tokens, k) is not None):
            participle = True  # is chopped onto the field and ploughed back in, or laid out
        elif tokens[k].tag in ("JJ", "JJR"):
            adjective = True
        elif tokens[k].tag in FINITE_TAGS:
            present = tokens[k].tag in ("VBZ", "VBP")
            if present and not participle and (adjective or noun_left):
                return "participle_clause"  # is continuous with, and related to; views language and thought
            copula = tokens[k].text.lower() in ("was", "were", "is", "are")
            if copula and not participle and nxt in _PASSIVE_NEXT and base not in _INTRANSITIVE:
                return "participle_clause"  # was a prince ... and often credited as
            if not participle:
                return None  # joins a finite verb
            passive = tokens[k].text.lower() in _AUXILIARY_FORMS
            particle = following is None or following.tag in ("RP", "RB", "IN", ",", ".") or nxt in _PARTICLES
            words = [t.text.lower() for t in tokens[j + 1 : j + 6]]
            particle = particle or any(
                words[m : m + 2] == ["to", "as"] for m in range(len(words))
            )  # referred to as
            complement = base in _NAMING or base in _COMPLEMENT_VERBS  # is regarded ... and considered one of
            if passive and (nxt in _PASSIVE_NEXT or particle or complement) and base not in _INTRANSITIVE:
                return "participle_clause"
            return None
    later = any(t.tag in FINITE_TAGS for t in tokens[j + 2 :])
    return "participle_clause" if participle or later else None  # (RRT) and commonly referred to as metro, is


def _verb_follows_in_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether a finite verb follows ``i`` with no boundary, pronoun or subordinator between (so the noun
    phrase before ``i`` is that verb's subject and ``i`` opens a reduced relative)."""
    for m in range(i + 2, len(tokens)):  # after the participle's own preposition (kept as pets have)
        token = tokens[m]
        word = token.text.lower()
        same_as = word == "as" and any(
            t.text.lower() in ("same", "such") for t in tokens[max(0, m - 3) : m]
        )  # the same scale as the prototype
        if (
            token.text in (",", ";", ":")
            or token.tag in ("CC", "PRP", "WDT", "WP", "WRB")
            or (word in _OPENERS and not same_as)
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
            while k >= 0 and tokens[k].tag in _NP:
                k -= 1
            if k > 0 and tokens[k].text.lower() in _HEAD_PREPOSITIONS and tokens[k - 1].tag.startswith("NN"):
                j = k - 1  # signs of life: the head is "signs"
                tag, word = tokens[j].tag, tokens[j].text.lower()
            k = j - 1
            while k >= 0 and tokens[k].tag in _NP:
                k -= 1
            coordinated = k >= 0 and tokens[k].text.lower() == "and"
            demonym = tag == "NNP" and word.endswith(("ers", "ians", "ists", "ites", "ans"))  # the Crusaders
            return tag in ("NNS", "NNPS") or coordinated or demonym
        if tag in ("IN", "WDT", "WP", "WRB") and j < i - 1:
            return None
        j -= 1
    return None


def in_temporal_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the verb at ``i`` is the first finite verb of a clause opened by a temporal or conditional
    subordinator (``after a video surfaced``, ``if he won``); a question's opening ``When`` is not one."""
    question = bool(tokens) and tokens[-1].text == "?"
    j, joined = i - 1, False
    while j >= 0:
        token = tokens[j]
        if token.tag == "CC":
            joined = True  # As the family searched ... and tussled: both verbs of the clause
        elif token.text in (",", ";", ":") or (token.tag in FINITE_TAGS and not joined):
            return False
        elif token.tag in FINITE_TAGS:
            joined = False
        opener_ok = (
            token.text.lower() != "as"
            or j == 0
            or tokens[j - 1].text in (",", ";")
            or tokens[j - 1].tag == "CC"
        )
        if token.text.lower() in TEMPORAL and token.tag in ("IN", "WRB", "RB") and opener_ok:
            whether = (
                token.text.lower() == "if" and j > 0 and (lemma(tokens[j - 1].text.lower()) or "") in _ASKING
            )
            relative = j + 1 < len(tokens) and tokens[j + 1].text.lower() in ("which", "whom")
            if j == i - 1 or whether or relative:
                return (
                    False  # once lived (an adverb); determine if (whether); after which he led (a relative)
                )
            return not (question and j == 0)
        j -= 1
    return False
