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

from corpora.probes.lexicon import lemma, past_forms
from corpora.probes.text import Token

FINITE_TAGS = ("VBD", "VBZ", "VBP", "MD")
# clauses whose verb stays in the present when the sentence is put in the future (after a video surfaces)
TEMPORAL = frozenset(
    {"when", "whenever", "after", "before", "until", "till", "once", "if", "unless", "as", "while"}
)
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
_CLAUSE_VERBS = frozenset(
    "say tell announce report believe think know claim find show reveal note add argue insist suggest confirm "
    "deny learn hear feel see mean ensure warn state estimate expect hope fear say predict assume".split()
)
_OPENERS = TEMPORAL | {"that", "because", "although", "though", "since", "while", "as", "whether", "where"}
_NP = frozenset(
    {"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD", "POS", "PRP$", "DT", "PDT", "RBS", "RBR"}
)
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


def _before_adverbs(tokens: tuple[Token, ...], i: int) -> int:
    """Position of the first token before ``i`` that is not an adverb (-1 at the sentence's start)."""
    j = i - 1
    while j >= 0 and (
        tokens[j].tag in ("RB", "RBR", "RBS")
        or tokens[j].text.lower() in _TIME_WORDS
        or tokens[j].text.lower() in ("itself", "himself", "herself", "themselves")  # is itself subdivided
        or (len(tokens[j].text) > 5 and tokens[j].text.lower().endswith("ally"))  # spherically, tagged NN
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
    if j < 0 and not (bool(tokens) and tokens[-1].text == "?"):
        return "participle_clause"  # Founded in 1900, the club ...
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if j >= 0 and tokens[j].text in (",", ";", ":", "(", "-", "–", "—"):
        later = any(t.tag in FINITE_TAGS for t in tokens[i + 1 :])
        earlier = any(t.tag in FINITE_TAGS for t in tokens[:j])  # She appeared in films, performed in ...
        present = earlier and all(t.tag in ("VBZ", "VBP") for t in tokens[:j] if t.tag in FINITE_TAGS)
        if present and nxt is not None and nxt.tag in ("IN", "TO"):
            return "participle_clause"  # is a genus of plants, widely distributed throughout
        if nxt is not None and (nxt.tag in ("IN", "TO") or nxt.text == ",") and later and not earlier:
            return "participle_clause"  # The club, founded in 1900, is ...
        if nxt is not None and nxt.tag in ("NN", "NNS") and (j == _first_comma(tokens) or earlier):
            return "participle_clause"  # Violence, increased cost of living, and ...; ears, reduced hindlimbs
        if (
            nxt is not None
            and nxt.tag in ("IN", "TO")
            and j > 0
            and tokens[_before_adverbs(tokens, j)].tag == "VBN"
        ):
            return "participle_clause"  # have been identified, grouped into 7 orders
        return None
    before = tokens[j]
    low = before.text.lower()
    if before.tag in _NOT_A_SUBJECT and low != "that":
        return "participle_clause"  # with added features, when asked, the limited edition, carrying out
    if low in _AUXILIARY_FORMS:
        return "participle"  # are today recognized, has long used
    if before.tag == "CC":
        return _coordinated(tokens, j, base, nxt.text.lower() if nxt is not None else "")
    if before.tag.startswith("NN") and _other_finite_verb(tokens, i):
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
        if (
            k >= 0
            and tokens[k].tag in ("IN", "TO")
            and tokens[k].text.lower() not in _OPENERS
            and not attached
        ):
            return "reduced_relative"  # In papers filed Friday, prosecutors said ...
        if i + 1 < len(tokens) and tokens[i + 1].tag == "IN" and _verb_follows_in_clause(tokens, i):
            return "reduced_relative"  # The men killed in the attack were soldiers.
    return None


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


def _coordinated(tokens: tuple[Token, ...], j: int, base: str | None, nxt: str) -> str | None:
    """A past form after the conjunction at ``j``: a participle when what it joins is one (``Founded in 1636,
    and named ...``; ``was born in Leeds and raised in York``), finite otherwise (``was built in 1890 and led to
    the town``; ``was born in Leeds and died in York``)."""
    k = _before_adverbs(tokens, j)
    listed = k >= 0 and tokens[k].text == ","
    if listed:
        k -= 1  # the list's last comma
    if listed and k >= 0 and tokens[k].tag.startswith("NN") and nxt and j + 2 < len(tokens):
        if tokens[j + 2].tag in ("NN", "NNS", "JJ") and tokens[j + 1].tag in ("VBD", "VBN"):
            return "participle_clause"  # a politician, aviator, and convicted war criminal
    if k >= 0 and tokens[k].tag in ("VBN", "VBD"):
        previous = tokens[k].text.lower()
        if tokens[k].tag == "VBN" or previous not in past_forms(lemma(previous) or previous):
            return "participle_clause"  # was widely known and admired
    noun_left = j > 0 and tokens[j - 1].tag.startswith("NN")
    participle = adjective = False
    for k in range(j - 1, -1, -1):
        if tokens[k].tag == "VBN":
            participle = True
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
            if passive and nxt in _PASSIVE_NEXT and base not in _INTRANSITIVE:
                return "participle_clause"
            return None
    later = any(t.tag in FINITE_TAGS for t in tokens[j + 2 :])
    return "participle_clause" if participle or later else None  # (RRT) and commonly referred to as metro, is


def _verb_follows_in_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether a finite verb follows ``i`` with no boundary, pronoun or subordinator between (so the noun
    phrase before ``i`` is that verb's subject and ``i`` opens a reduced relative)."""
    for token in tokens[i + 2 :]:  # after the participle's own preposition (kept as pets have)
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
            while k >= 0 and tokens[k].tag in _NP:
                k -= 1
            if k > 0 and tokens[k].text.lower() == "of" and tokens[k - 1].tag.startswith("NN"):
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
            if j == i - 1 or whether:
                return False  # once lived (an adverb); determine if (whether)
            return not (question and j == 0)
        j -= 1
    return False
