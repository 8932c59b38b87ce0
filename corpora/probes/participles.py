"""Where a past form is a participle, not a finite verb, by the words around it (the helpers of
:func:`corpora.probes.clauses.nonfinite_reason`): a reduced relative after an object (*other structures used
for this purpose*), an agent after it (*a form of jazz characterized by*), a present sentence (*lifestyles often
linked to*), a naming verb after an indefinite noun phrase (*an area called the Tricity*), a participle before
its noun (*pink flowered marsh worts are*), and the lists and relative clauses these checks step over.
"""

from __future__ import annotations

from collections.abc import Callable

from incoherent.corpora.probes.lexicon import inflect, lemma, past_forms
from incoherent.corpora.probes.text import Token

FINITE_TAGS = ("VBD", "VBZ", "VBP", "MD")
TEMPORAL = frozenset(
    {"when", "whenever", "after", "before", "until", "till", "once", "if", "unless", "as", "while"}
)
_CLAUSE_VERBS = frozenset(
    "say tell announce report believe think know claim find show reveal note add argue insist suggest confirm "
    "deny learn hear feel see mean ensure warn state estimate expect hope fear say predict assume".split()
)
_OPENERS = TEMPORAL | {"that", "because", "although", "though", "since", "while", "as", "whether", "where"}
_NP = frozenset(
    {"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD", "POS", "PRP$", "DT", "PDT", "RBS", "RBR"}
)
_NP_START = frozenset({"DT", "PRP$", "PDT"})
_INTRANSITIVE = frozenset(
    "die live serve work remain stay return move retire go come arrive play compete run fight emigrate "
    "graduate rise fall stand sit lie appear occur happen belong sleep travel flee settle".split()
)
_NAMING = frozenset({"call", "name", "term", "dub", "nickname", "style", "title", "label", "know"})


_BARE_CLAUSE_VERBS = _CLAUSE_VERBS | frozenset(
    "realize realise understand recall remember admit reckon guess doubt wish suspect agree indicate acknowledge "
    "explain reply testify discover prove determine assert conclude allege maintain emphasize stress demonstrate "
    "complain recognize recognise worry decide observe mention imply declare promise swear write notice".split()
)
_NOT_PASSIVE_BY = frozenset(
    "rise grow increase decrease decline drop fall climb win lose gain shrink pass stand live go come finish stop "
    "swear abide die".split()
)
_PREDICATE_BOUNDARY = frozenset({"than", "like", "so"})


def _participle_form(word: str, base: str | None) -> bool:
    """Whether ``word`` is also the past participle of its verb (``used``, ``found``; not ``wrote``)."""
    return base is not None and (word == inflect(base, "VBN") or word in _participles(base))


def _participles(base: str) -> frozenset[str]:
    import lemminflect

    return frozenset(lemminflect.getInflection(base, "VBN", inflect_oov=False))


def _reduced_after_noun(
    tokens: tuple[Token, ...],
    i: int,
    j: int,
    base: str | None,
    nonfinite: Callable[[tuple[Token, ...], int], bool],
) -> bool:
    """Whether the past form at ``i``, right after the noun at ``j``, is a reduced relative by its place: the
    noun stands inside the predicate of a finite verb earlier in the same clause (*other structures used for
    this purpose*, *the perception stimulated when*, *pieces connected at angles*), an agent follows (*a form
    of jazz characterized by*), or a relative clause does (*The earliest inscriptions found which are*)."""
    word = tokens[i].text.lower()
    if not _participle_form(word, base):
        return False  # wrote: no participle
    if base not in _NOT_PASSIVE_BY and _agent_follows(tokens, i):
        return True  # a form of jazz characterized by; the role played by; questions referred to it by
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    after = tokens[i + 2] if i + 2 < len(tokens) else None
    if nxt is not None and nxt.text.lower() in ("which", "who") and after is not None:
        if after.tag in FINITE_TAGS:
            return True  # The earliest inscriptions found which are identifiably Maya date to
    if base in _NAMING and _indefinite_noun_phrase(tokens, j):
        return True  # a metropolitan area called the Tricity; along broad lines called weather fronts
    k = j - 1
    while k >= 0:
        token = tokens[k]
        low = token.text.lower()
        if token.tag == "VBG" and k > 0:
            return True  # giving their audiences heightened feelings
        if token.tag == "VBD" and nonfinite(tokens, k):
            pass  # nine recognised subspecies split between: an adjective
        elif token.tag in FINITE_TAGS or (token.tag == "VB" and k > 0):  # follow lifestyles often linked to
            if (lemma(low) or low) in _BARE_CLAUSE_VERBS:
                return False  # said the company closed
            if (
                k + 2 < j
                and tokens[k + 1].tag in ("JJ", "RB")
                and tokens[k + 2].tag in ("DT", "PRP$", "NNS", "NNP")
            ):
                return False  # it's unlikely the sisters survived: the adjective takes a clause
            if _in_relative_clause(tokens, k):
                return any(
                    t.tag in FINITE_TAGS for t in tokens[i + 1 :]
                )  # The man who founded the company died
            return True
        if (
            token.text in (";", ":", "(", ")", "-", "–", "—")
            and not _glued(tokens, k)
            or token.tag in ("WDT", "WP", "WP$", "WRB", "POS")
            or (token.tag == "PRP" and not (k > 0 and tokens[k - 1].tag.startswith("VB")))  # classify it as
            or (low in _OPENERS and not (low == "as" and _preposition_as(tokens, k)))
            or low in _PREDICATE_BOUNDARY
        ):
            return False
        if token.tag == "CC" or token.text == ",":
            embedded = token.tag == "CC" and any(t.tag == "IN" for t in tokens[k + 1 : j])
            if not (
                embedded or _in_list(tokens, k)
            ):  # between disgust and anxiety disorders such as ..., and
                return False
        k -= 1
    return False


def _prenominal(tokens: tuple[Token, ...], i: int, base: str | None) -> bool:
    """Whether the past form at ``i`` modifies the noun after it inside a subject whose finite verb comes
    later (*The white or pink flowered marsh St. John's worts of North America and eastern Asia are*)."""
    if (
        i + 1 >= len(tokens)
        or tokens[i + 1].tag not in ("NN", "NNS", "JJ")
        or (base or "") in _BARE_CLAUSE_VERBS
    ):
        return False
    for m in range(i + 1, len(tokens)):
        token = tokens[m]
        if token.tag in FINITE_TAGS:
            return True
        joined = token.tag == "CC" and m + 1 < len(tokens) and tokens[m + 1].tag in ("JJ", "NN", "NNP", "NNS")
        if (
            not (token.tag in _NP or token.tag in ("NNP", "NNPS", "IN") or joined)
            or token.text.lower() in _OPENERS
        ):
            return False
    return False


def _verb_list_follows(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether a conjunction and a past form follow ``i`` (*appeared in films, performed in musicals, and
    recorded*: the verbs of a list)."""
    for m in range(i + 1, len(tokens) - 1):
        if tokens[m].tag == "CC":
            n = _after_adverbs(tokens, m)
            if n < len(tokens) and tokens[n].tag in ("VBD", "VBN"):
                return True
    return False


def _after_adverbs(tokens: tuple[Token, ...], m: int) -> int:
    n = m + 1
    while n < len(tokens) and tokens[n].tag in ("RB", "RBR", "RBS"):
        n += 1
    return n


def _preposition_as(tokens: tuple[Token, ...], k: int) -> bool:
    """Whether the *as* at ``k`` is a preposition (*such as*, *thought of as*, *known as*), not a subordinator."""
    before = tokens[k - 1] if k > 0 else None
    return before is not None and (
        before.text.lower() in ("such", "of") or before.tag in ("VBN", "VB", "VBG")
    )


def _closes_relative(tokens: tuple[Token, ...], j: int) -> bool:
    """Whether the comma at ``j`` closes a relative clause (*The man, who lived in Paris, founded*)."""
    m = j - 1
    while m >= 0 and tokens[m].text not in (",", ";", ":"):
        if tokens[m].tag in ("WDT", "WP", "WP$") or tokens[m].text.lower() in ("who", "which"):
            return (
                m > 0 and tokens[m - 1].text == ","
            )  # The man, who lived in Paris, founded (not: styles that)
        m -= 1
    return False


def _glued(tokens: tuple[Token, ...], k: int) -> bool:
    """Whether the token at ``k`` touches both neighbours (the hyphen of *29-member*)."""
    return (
        0 < k < len(tokens) - 1
        and tokens[k - 1].end == tokens[k].start
        and tokens[k].end == tokens[k + 1].start
    )


def _in_present_sentence(tokens: tuple[Token, ...], i: int, j: int, base: str | None) -> bool:
    """Whether the participle form at ``i`` after the noun at ``j`` stands in a sentence whose verbs are in the
    present, with no clause opener and no other past form (*individuals are expected to ..., follow lifestyles
    often linked to*): a reduced relative, whatever the tags of the words between."""
    if not _participle_form(tokens[i].text.lower(), base) or base in _INTRANSITIVE:
        return False
    present = False
    for k, token in enumerate(tokens):
        low = token.text.lower()
        if k == i:
            continue
        if token.tag in ("VBZ", "VBP") and k < j:
            present = True
        if low in ("was", "were", "had", "did") or (low in _OPENERS and j > k):
            return False
        if (
            token.tag == "VBD"
            and low in past_forms(lemma(low) or low)
            and not _participle_form(low, lemma(low))
        ):
            return False  # wrote, began: a past sentence
    return present


def _agent_follows(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether *by* follows the past form at ``i`` within a few words, before any verb or comma (*characterized
    by*, *referred to it by*)."""
    for token in tokens[i + 1 : i + 5]:
        if token.text.lower() == "by":
            return True
        if token.tag in FINITE_TAGS or token.tag.startswith("VB") or token.text in (",", ";", ":"):
            return False
    return False


def _indefinite_noun_phrase(tokens: tuple[Token, ...], j: int) -> bool:
    """Whether the noun phrase ending at ``j`` opens with *a*/*an* or is a bare plural (*a metropolitan area*,
    *broad lines*), as a named thing is introduced (but: *The man called the police*)."""
    k = j
    while k >= 0 and tokens[k].tag in _NP and tokens[k].tag not in _NP_START:
        k -= 1
    if k >= 0 and tokens[k].text.lower() in ("a", "an"):
        return True
    return tokens[j].tag in ("NN", "NNS") and (k < 0 or tokens[k].tag not in _NP_START)  # broth called oden


def _in_relative_clause(tokens: tuple[Token, ...], k: int) -> bool:
    """Whether the finite verb at ``k`` follows a relative pronoun in its clause (*who founded*)."""
    m = k - 1
    while m >= 0 and (tokens[m].tag in _NP or tokens[m].tag in ("RB", "PRP")):
        m -= 1
    return m >= 0 and tokens[m].text.lower() in ("who", "which", "that", "whom", "whose")


def _in_list(tokens: tuple[Token, ...], k: int) -> bool:
    """Whether the comma or conjunction at ``k`` joins the items of a list of three or more noun phrases
    (*pipes, ditches, canals, and other structures*; *A, B and C*), not two clauses (*He bought cars, and the
    men left*): the stretch of noun-phrase words, commas and conjunctions around it has two commas, or one
    comma and a conjunction without one; a conjunction between words of a noun phrase (*two or more*) too."""

    def joins(m: int) -> bool:
        token = tokens[m]
        if token.text == ",":
            return m > 0 and tokens[m - 1].tag.startswith("NN")
        if token.tag == "VBD":  # an instrument called a rebab, and ...: a participle of an earlier item
            return (
                m > 0
                and tokens[m - 1].tag.startswith("NN")
                and _participle_form(token.text.lower(), lemma(token.text.lower()))
            )
        return token.tag in _NP or token.tag in (
            "CC",
            "NNP",
            "NNPS",
            "FW",
            "VBG",
            "VBN",
        )  # a bowed string instrument

    if (
        tokens[k].tag == "CC"
        and k > 0
        and (
            tokens[k - 1].tag in ("CD", "JJ", "JJR", "RB", "RBR")
            or "/" in (tokens[k - 1].text, tokens[k + 1].text if k + 1 < len(tokens) else "")
        )
    ):
        return True  # two or more straight pieces; black and white
    first, last = k, k
    while first > 0 and joins(first - 1):
        first -= 1
    while last + 1 < len(tokens) and joins(last + 1):
        last += 1
    stretch = range(first, last + 1)
    commas = sum(tokens[m].text == "," for m in stretch)
    bare_and = any(tokens[m].tag == "CC" and tokens[m - 1].text != "," for m in stretch if m > 0)
    return joins(k) and (commas >= 2 or (commas == 1 and bare_and))
