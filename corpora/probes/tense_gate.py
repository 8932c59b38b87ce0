"""The precision gate of ``past-to-future``: a sentence whose edit rests on a weak signal is skipped, counted.

The tagger reads many participles and adjectives as past verbs (*disorganized or incoherent thoughts*, *a species
presumed extinct*, *Models built to the same scale ... are called*), and rules that recognise them one by one kept
missing new ones. So :func:`past_to_future <corpora.probes.verbs.past_to_future>` edits a verb whose past form is
also its participle (*used, called, held, made, built*) only where it is surely finite, and skips a sentence that
would keep a past verb beside a future one:

- ``uncertain_finite``: an edited verb whose past is its participle that does not follow a subject pronoun
  (*he, they, who, which*), a subject noun phrase opening a clause (the sentence's start, or after a comma, a
  semicolon, a conjunction, a subordinator, *when*/*where*, or a verb of saying: *said the plan failed*) with
  nothing but adverbs between, nor a conjunction joining it to an edited verb (*appeared in films, performed in
  musicals*); or one followed by an adjective (*a species presumed extinct*) or, in its clause, by another finite
  verb (a reduced relative: *The tools he used in the shop are*). Unambiguous past forms (*was, went, became,
  took, wrote*) keep the clause rules.
- ``mixed_tense_left``: after the edits, a past verb the tagger marks as one is left unedited (*48 voted in
  favour ... and two will not vote*; also *was born in Leeds and raised in York*, which cannot be told from
  *was born in Delft and studied at Leiden*), or a past form stands after a clause's subject (*The Roman
  Republic then unified Italy ... and will rise*), or right after a conjunction or comma joining it to a lexical
  verb made future (*will not consider ... but viewed it*). A participle the tagger marks as one (``VBN``) joined to
  *will be*/*will have* is fine.

>>> from incoherent.corpora.probes.verbs import past_to_future
>>> past_to_future("The tools he used in the shop are now in a museum.")
NoSite('uncertain_finite')
>>> past_to_future("Of the 58 members, 48 voted in favour, eight abstained, and two did not vote.")
NoSite('mixed_tense_left')
"""

from __future__ import annotations

from incoherent.corpora.probes.lexicon import inflect, is_noun, lemma, past_forms
from incoherent.corpora.probes.text import Token

_SUBJECT_PRONOUNS = frozenset({"i", "you", "he", "she", "it", "we", "they", "who", "which"})
_NP_TAGS = frozenset({"DT", "PDT", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "PRP$", "POS", "CD"})
_HEAD_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "CD", "PRP"})
_ADVERB_TAGS = frozenset({"RB", "RBR", "RBS"})
_CLAUSE_OPENERS = frozenset(
    {"although", "though", "when", "while", "after", "before", "because", "if", "since", "once", "until",
     "unless", "whereas", "where", "that", "so", "then"}
)  # fmt: skip
_DEMONSTRATIVES = frozenset({"this", "that", "these", "those", "all", "both", "many", "most", "some"})
_LINKING = frozenset({"be", "have", "get", "feel", "seem", "become", "remain", "look", "appear"})
_SAYING = frozenset(
    "say think believe claim report announce note know find show argue suggest confirm add state insist fear hope "
    "feel realize realise learn hear conclude reveal admit deny warn explain assume decide discover".split()
)
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
_BOUNDARY_TAGS = frozenset({"CC", "WDT", "WP", "WRB", ",", ":", "."})


def ambiguous_past(word: str) -> bool:
    """Whether a past form is also its verb's participle (*called*, *made*), so that its tag alone is weak
    evidence of a finite verb; *was*, *went*, *took* are not."""
    word = word.lower()
    base = lemma(word)
    if base is None or base == "be":
        return False
    return word == inflect(base, "VBN") or word == base


def _before(tokens: tuple[Token, ...], i: int) -> int:
    j = i - 1
    while j >= 0 and tokens[j].tag in _ADVERB_TAGS and tokens[j].text.lower() not in ("not", "n't"):
        j -= 1
    return j


def _clause_opening(tokens: tuple[Token, ...], k: int) -> bool:
    """Whether a clause can open right after position ``k`` (-1: the sentence's start)."""
    if k < 0:
        return True
    token = tokens[k]
    return (
        token.text in (",", ";", ":", "—", "–", "--", '"', "“", "”", "(")
        or token.tag in ("CC", "WRB")
        or token.text.lower() in _CLAUSE_OPENERS
        or (token.text.lower() == "as" and (k == 0 or tokens[k - 1].text.lower() not in ("well", "such")))
    )


def subject_before(tokens: tuple[Token, ...], i: int, through_of: bool = True) -> bool:
    """Whether the word at ``i`` follows its subject, adverbs aside: a subject pronoun or relative pronoun, or a
    noun phrase that opens a clause (not a bare singular noun inside one: *expectations that outline required*)."""
    j = _before(tokens, i)
    if j < 0:
        return False
    word = tokens[j].text.lower()
    if word in _SUBJECT_PRONOUNS or (word == "that" and tokens[j].tag == "WDT"):
        return True
    if (
        tokens[j].tag == "VBD"
        and j >= 2
        and tokens[j - 1].text.lower() in _SUBJECT_PRONOUNS
        and tokens[j - 2].tag in ("NN", "NNS")
    ):
        return subject_before(tokens, j - 1, through_of)  # The regime he created lasted: a contact relative
    if tokens[j].tag == "DT" and word in _DEMONSTRATIVES:
        return _clause_opening(tokens, j - 1)  # This existed after ...
    if tokens[j].tag not in _HEAD_TAGS or (word.endswith("ly") and not is_noun(word)):
        return False  # the cognitively disabled: an adverb the tagger calls a noun
    k, through = j, False
    while k >= 0 and (
        tokens[k].tag in _NP_TAGS
        or (tokens[k].tag in ("VBN", "VBG") and k < j)  # trained disaster relief troops
        or (tokens[k].tag in ("CC", "IN") and k > 0 and tokens[k - 1].tag in _HEAD_TAGS)
        and (through_of or tokens[k].tag == "CC")  # The war between Israel and Hamas militants in Gaza
    ):
        through = through or tokens[k].tag == "IN"
        k -= 1
    if through and k >= 0 and tokens[k].text not in (",", ";"):
        return False  # as well as the amnesty of the Communards exiled to: a noun phrase inside a clause
    if k >= 0 and tokens[k].tag == "CC" and tokens[k].text.lower() in ("and", "or"):
        if k > 0 and tokens[k - 1].text != ",":
            return False  # civil unrest and armed rebellion: a noun phrase's conjunct, no clause opens
    bare = j == k + 1 and tokens[j].tag == "NN" and k >= 0
    saying = (
        k >= 0 and tokens[k].tag in _FINITE and lemma(tokens[k].text.lower()) in _SAYING
    )  # said the plan failed
    return (_clause_opening(tokens, k) or saying) and not bare


def _finite_follows(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether another finite verb follows the verb at ``i`` in its clause, its subject not right after ``i``
    (*Models built to the same scale as the prototype are called*; but *said he lied* is a complement)."""
    for j in range(i + 1, len(tokens)):
        token = tokens[j]
        if (
            token.tag in _BOUNDARY_TAGS
            or token.text in (";", "(", ")", '"', "“", "”")
            or token.text.lower() in _CLAUSE_OPENERS
        ):
            return False
        if token.tag in _FINITE:
            k = j - 1
            while k > i and (
                tokens[k].tag in _NP_TAGS or tokens[k].tag in ("PRP",) or tokens[k].tag in _ADVERB_TAGS
            ):
                k -= 1
            return k != i
    return False


def _adjective_follows(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether an adjective (one the dictionary does not know as a noun) follows the verb at ``i`` (*a species
    presumed extinct*, *extinct* tagged as a noun): the word is then a participle with its complement."""
    if (
        i + 1 >= len(tokens)
        or tokens[i + 1].tag not in ("JJ", "NN")
        or not tokens[i - 1].tag.startswith("NN")
    ):
        return False  # after its noun only: *and scored twice* is a verb
    if i + 2 < len(tokens) and tokens[i + 2].tag.startswith("NN"):
        return False  # made seminal contributions: the adjective of an object
    word = tokens[i + 1].text.lower()
    return word not in ("last", "next", "early", "late") and not is_noun(word) and word.isalpha()


def _past_form(token: Token) -> bool:
    word = token.text.lower()
    base = lemma(word)
    return base not in (None, "be", word) and word in past_forms(base)


def gate(tokens: tuple[Token, ...], edited: dict[int, str], kept: set[int]) -> str | None:
    """The skip reason for a sentence with the edits ``edited`` (position -> ``lexical`` for a verb made
    future or present itself, ``auxiliary`` for *was*/*had* before a participle), or None when they stand;
    ``kept`` holds the past verbs deliberately left (a temporal clause of a present sentence, a title)."""
    for i, kind in sorted(edited.items()):
        if kind == "lexical" and ambiguous_past(tokens[i].text):
            strong = subject_before(tokens, i) or _conjunct(tokens, i, edited) is not None
            complement = _adjective_follows(tokens, i)  # a species presumed extinct
            if not strong or complement or _finite_follows(tokens, i):
                return "uncertain_finite"
    for i, token in enumerate(tokens):
        if i in edited or i in kept:
            continue
        joined = _conjunct(tokens, i, edited, strict=False)
        passive = token.tag != "VBD" and not (
            i + 1 < len(tokens) and tokens[i + 1].tag in ("DT", "PRP$", "PRP")
        )
        if joined is not None and edited[joined] != "lexical" and passive:
            continue  # will be born in Leeds and raised in York: a participle of the same auxiliary
        base = lemma(token.text.lower())
        if (
            token.tag == "VBD"
            and base is not None
            and token.text.lower() in past_forms(base)
            and not _after_be(tokens, i)  # feels abandoned by
        ):
            return "mixed_tense_left"  # a past verb left (a participle, *used to*, *put*) beside a future one
        if token.tag in ("VBD", "VBN", "JJ", "NN", "VBP") and _past_form(token):
            if (
                token.tag != "NN"
                and subject_before(tokens, i, through_of=False)
                and not _after_be(tokens, i)
                and not (i + 1 < len(tokens) and tokens[i + 1].text.lower() == "by")
            ):
                return "mixed_tense_left"  # The Roman Republic then unified Italy ... and will rise
            if joined is not None:
                return "mixed_tense_left"  # will not consider ... but viewed it
    return None


def _after_be(tokens: tuple[Token, ...], i: int) -> bool:
    j = _before(tokens, i)
    if j > 0 and tokens[j].tag == "PRP":
        j -= 1  # Was he elected in 1990?
    return j >= 0 and lemma(tokens[j].text.lower()) in _LINKING


def _conjunct(tokens: tuple[Token, ...], i: int, edited: dict[int, str], strict: bool = True) -> int | None:
    """The edited verb that the word at ``i`` is coordinated with (*signed for the club and scored*, *appeared in
    films, performed in musicals*), or None: a conjunction or comma before it, the nearest edited verb before that
    with no clause between, and not an adjective before another one (*disorganized or incoherent*)."""
    j = _before(tokens, i)
    if j < 0 or not (tokens[j].tag == "CC" or tokens[j].text == ","):
        return None
    if strict and i + 1 < len(tokens) and tokens[i + 1].tag in ("CC", "JJ"):
        return None
    if strict and i + 1 < len(tokens) and tokens[i + 1].tag in ("NN", "NNS") and is_noun(tokens[i + 1].text):
        k = j - 1 if j > 0 and tokens[j - 1].text == "," else j
        if k > 0 and tokens[k - 1].tag in ("NN", "NNS", "NNP", "NNPS"):
            return None  # fertilizers, pesticides, and controlled irrigation: an adjective in a list of nouns
    last = max((k for k in edited if k < j), default=None)
    return last if last is not None and _joined(tokens, last, j) else None


def _joined(tokens: tuple[Token, ...], verb: int, conjunction: int) -> bool:
    """Whether the conjunction or comma at ``conjunction`` joins a later word to the verb at ``verb``: no
    clause of its own (no finite verb, relative or subordinator) opens between them."""
    return not any(
        t.tag in _FINITE or t.tag in ("WDT", "WP", "WRB") or t.text in (";", ":")
        for t in tokens[verb + 1 : conjunction]
    )
