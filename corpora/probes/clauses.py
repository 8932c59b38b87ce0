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

from corpora.probes.lexicon import inflect, is_noun, lemma, past_forms
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
_COMPLEMENT_VERBS = frozenset({"consider", "regard", "deem", "hail", "rank", "list", "describe", "credit"})
_NUMBER_WORDS = frozenset(
    "two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand several "
    "many few".split()
)
_NAMING = frozenset({"call", "name", "term", "dub", "nickname", "style", "title", "label", "know"})
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
            return (
                "participle_clause"  # a significant minority, followed by Turks; Panina—composed entirely by
            )
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
            t.tag in FINITE_TAGS
            and (t.tag != "VBD" or t.text.lower() in past_forms(lemma(t.text.lower()) or ""))
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
    if before.tag.startswith("NN") and _other_finite_verb(tokens, i):
        if _reduced_after_noun(tokens, i, j, base) or _in_present_sentence(tokens, i, j, base):
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
        if (
            k >= 0
            and tokens[k].tag in ("IN", "TO")
            and tokens[k].text.lower() not in _OPENERS
            and not attached
        ):
            return "reduced_relative"  # In papers filed Friday, prosecutors said ...
        if i + 1 < len(tokens) and tokens[i + 1].tag in ("IN", "TO") and _verb_follows_in_clause(tokens, i):
            return "reduced_relative"  # The men killed in the attack were soldiers.
    return None


# verbs that take a clause without "that" (said the company closed), or that are not passives before "by"
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


def _reduced_after_noun(tokens: tuple[Token, ...], i: int, j: int, base: str | None) -> bool:
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
        if token.tag == "VBD" and nonfinite_reason(tokens, k) is not None:
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
