"""Function-word phenomena: ``demonstrative`` and ``conjunction`` (INSteD, Shen et al. 2021, Table 7).

- ``demonstrative``: a singular demonstrative determiner to the plural (this -> these, that -> those), its
  head noun to the plural and a present or past form of "be"/"have" right after the noun phrase to agree
  (``this city was`` -> ``these cities were``). "this"/"that" as pronouns (``This is``) or complementisers
  (``said that``) are not sites.
- ``conjunction``: the first connective of the sentence to one of the opposite relation: contrast to
  consequence (but -> and therefore, however -> therefore, although -> therefore, yet -> and therefore,
  nevertheless -> therefore) and back (therefore/thus/hence/consequently -> however, so -> but, because ->
  although); "and" joining clauses (after a comma, or before a verb) -> but. A sentence-initial "Although"
  becomes "Because" (``Therefore X, Y`` would not parse).
"""

from __future__ import annotations

import functools

from corpora.probes.edits import Edit, replace
from corpora.probes.text import Token, analyse, match_case

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


def _determiner(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether this/that at ``i`` is a determiner: tagged so, or a ``that`` tagged a complementiser before a
    singular noun that ends its clause (``disliked that film.``)."""
    if tokens[i].tag == "DT":
        return True
    if tokens[i].text.lower() != "that" or i + 2 >= len(tokens) or tokens[i + 1].tag != "NN":
        return False
    return tokens[i + 2].tag in (".", ",", "IN", "TO", ":")


def demonstrative(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """The first singular demonstrative determiner and its noun phrase to the plural.

    >>> from corpora.probes.edits import apply_edits
    >>> s = "In that year this small city was renamed."
    >>> apply_edits(s, demonstrative(s))
    'In those years this small city was renamed.'
    """
    tokens = analyse(sentence) if tokens is None else tokens
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if word not in ("this", "that") or not _determiner(tokens, i):
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].tag in ("JJ", "JJR", "JJS", "RB", "VBN", "VBG") and j - i <= 3:
            j += 1
        if j >= len(tokens) or tokens[j].tag not in _SINGULAR_NOUN:
            continue
        while (
            j + 2 < len(tokens) and tokens[j + 1].tag == "NN" and tokens[j + 2].tag.startswith(("VB", "MD"))
        ):
            j += 1  # a compound before its verb (that football club has): the last noun is the head
        noun = plural(tokens[j].text)
        if noun is None:
            continue
        k = j + 1
        while k < len(tokens) and tokens[k].tag in ("RB", "RBR"):
            k += 1
        if k < len(tokens) and (tokens[k].text == "," or tokens[k].tag in ("WDT", "WP")):
            return []  # a relative clause or an apposition comes between: its verbs would have to agree too
        edits = [
            replace(token, match_case(token.text, "these" if word == "this" else "those")),
            replace(tokens[j], noun),
        ]
        agreeing = _plural_verb(tokens[k]) if k < len(tokens) else None
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
    return []


_SENTENCE_ADVERBS = {
    "however": "therefore",
    "nevertheless": "therefore",
    "nonetheless": "therefore",
    "therefore": "however",
    "thus": "however",
    "hence": "however",
    "consequently": "however",
}
_CLAUSE_CONNECTIVES = {"but": "and therefore", "yet": "and therefore", "because": "although", "so": "but"}


def _and_joins_clauses(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``and`` at ``i`` joins clauses (``..., and it won``; ``sang and danced``), not words of a list
    (``dues and fees``, ``programs, and standards``): a finite verb follows it before the next comma, right
    away or after a comma before ``and``."""
    if i == 0 or i + 1 >= len(tokens):
        return False
    if tokens[i + 1].tag in _FINITE:
        return True
    if tokens[i - 1].text != ",":
        return False
    for token in tokens[i + 1 :]:
        if token.text in (",", ";", ":"):
            return False
        if token.tag in _FINITE:
            return True
    return False


_FINITE = ("VBD", "VBZ", "VBP", "MD")


def conjunction(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """The first connective of the sentence to its opposite.

    >>> [e.after for e in conjunction("He was injured, but he won the race.")]
    ['and therefore']
    >>> [e.after for e in conjunction("Although it rained, the match went ahead.")]
    ['Because']
    """
    tokens = analyse(sentence) if tokens is None else tokens
    for i, token in enumerate(tokens):
        word = token.text.lower()
        prev = tokens[i - 1].text.lower() if i else ""
        nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
        if word in _SENTENCE_ADVERBS and (i == 0 or prev in (",", ";") or nxt == "," or word != "however"):
            after = _SENTENCE_ADVERBS[word]
        elif word in ("although", "though") and i == 0:
            after = "because"
        elif word in ("although", "though") and prev == ",":
            after = "therefore"
        elif (
            word in ("but", "yet")
            and (token.tag == "CC" or prev == ",")
            and nxt not in ("also", "rather", "only")
            and i > 0
        ):
            if prev in ("not", "anything", "nothing", "all", "last"):
                continue
            after = _CLAUSE_CONNECTIVES[word]
        elif word == "because" and nxt != "of" and i > 0:
            after = "although"
        elif word == "so" and prev == "," and token.tag in ("CC", "IN", "RB"):
            after = "but"
        elif word == "and" and _and_joins_clauses(tokens, i):
            after = "but"
        else:
            continue
        return [replace(token, match_case(token.text, after))]
    return []
