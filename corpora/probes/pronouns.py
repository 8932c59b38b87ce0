"""Pronoun phenomena: ``gender``, ``animacy-down`` and ``animacy-up`` (INSteD, Shen et al. 2021, Table 7).

Each is a pure function ``sentence -> list of edits`` (empty: the sentence has no site).

- ``gender``: the third-person pronouns of the gender of the sentence's first gendered pronoun are flipped
  (he <-> she, him <-> her, his <-> her/hers, himself <-> herself); pronouns of the other gender refer to
  someone else and stay. "her" is an object (-> him) or a possessive (-> his) by its part of speech.
- ``animacy-down``: the same pronouns to inanimate ones (he/she/him/her -> it, his/her -> its, hers/his (standing alone) -> its own,
  himself/herself -> itself). He, she and it are all third person singular: every verb still agrees.
- ``animacy-up``: it -> he/she (subject) or him/her (object), its -> his/her, itself -> himself/herself;
  ``gender`` picks the pronoun (``probes`` draws it from the seed and the document's id).
"""

from __future__ import annotations

from corpora.probes.edits import Edit, replace
from corpora.probes.text import Token, analyse, match_case

MASCULINE = frozenset({"he", "him", "his", "himself"})
FEMININE = frozenset({"she", "her", "hers", "herself"})
_NOMINAL = ("NN", "JJ", "CD", "VBG")  # what a possessive determiner stands before


def _possessive(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``his``/``her`` at ``i`` is a determiner (``her mother``), not a pronoun (``saw her``,
    ``it is his``). The next word decides where it can; the tagger's tag otherwise."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None or not nxt.text[:1].isalnum():
        return False
    if nxt.tag.startswith(_NOMINAL) or nxt.text.lower() == "own":
        return True
    if nxt.tag in ("DT", "IN", "TO", "RB", "PRP", "PRP$", "CC", "WDT", "WP", "MD") or nxt.tag.startswith(
        "VB"
    ):
        return False
    return tokens[i].tag == "PRP$"


def _gendered(tokens: tuple[Token, ...]) -> list[int]:
    """Positions of the gendered pronouns of the first one's gender."""
    first = next((i for i, t in enumerate(tokens) if t.text.lower() in MASCULINE | FEMININE), None)
    if first is None:
        return []
    group = MASCULINE if tokens[first].text.lower() in MASCULINE else FEMININE
    return [i for i, t in enumerate(tokens) if t.text.lower() in group]


def _flipped(tokens: tuple[Token, ...], i: int) -> str:
    word = tokens[i].text.lower()
    if word in ("his", "her"):
        possessive = _possessive(tokens, i)
        if word == "his":
            return "her" if possessive else "hers"
        return "his" if possessive else "him"
    return {
        "he": "she",
        "she": "he",
        "him": "her",
        "hers": "his",
        "himself": "herself",
        "herself": "himself",
    }[word]


def gender(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """Flip the gender of the pronouns of the sentence's first gendered pronoun.

    >>> [e.after for e in gender("He thanked her and gave her mother his book.")]
    ['She', 'her']
    >>> [e.after for e in gender("She gave him her book, which was hers.")]
    ['He', 'his', 'his']
    """
    tokens = analyse(sentence) if tokens is None else tokens
    return [replace(tokens[i], match_case(tokens[i].text, _flipped(tokens, i))) for i in _gendered(tokens)]


def animacy_down(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """Personal pronouns to inanimate: he/she/him/her -> it, his/her -> its, hers -> its own, himself/herself ->
    itself.

    >>> [e.after for e in animacy_down("His son said he met her.")]
    ['Its', 'it']
    """
    tokens = analyse(sentence) if tokens is None else tokens
    edits = []
    for i in _gendered(tokens):
        word = tokens[i].text.lower()
        if word == "hers" or (word == "his" and not _possessive(tokens, i)):
            after = "its own"  # the house was hers -> the house was its own
        elif word in ("his", "her"):
            after = "its" if word == "his" or _possessive(tokens, i) else "it"
        elif word in ("himself", "herself"):
            after = "itself"
        else:
            after = "it"
        edits.append(replace(tokens[i], match_case(tokens[i].text, after)))
    return edits


def _subject(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``it`` at ``i`` is a subject: a verb or modal follows (an adverb may come between), or it opens
    a question's inverted clause after an auxiliary (``Is it ...?``)."""
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR"):
        j += 1
    nxt = tokens[j] if j < len(tokens) else None
    if nxt is not None and (nxt.tag.startswith("VB") or nxt.tag == "MD") and nxt.tag != "VBG":
        return True
    if i == 0 or tokens[i - 1].text in (",", ";", ":"):
        return True
    prev = tokens[i - 1]
    if prev.tag in ("IN", "TO") or (prev.tag.startswith("VB") and prev.text.lower() not in _AUX_QUESTION):
        return False
    return prev.text.lower() in _AUX_QUESTION or prev.tag in ("CC", "WDT", "WP", "WRB")


_AUX_QUESTION = frozenset(
    {
        "is",
        "was",
        "does",
        "did",
        "has",
        "had",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
    }
)


def animacy_up(sentence: str, gender: str = "f", tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """Inanimate pronouns to personal ones of ``gender`` (``"f"`` or ``"m"``); every ``it``, ``its`` and
    ``itself`` of the sentence.

    >>> [e.after for e in animacy_up("It sold its shares and kept it.", "m")]
    ['He', 'his', 'him']
    >>> [e.after for e in animacy_up("It is a town in Italy.", "f")]
    ['She']
    """
    if gender not in ("f", "m"):
        raise ValueError(f"gender must be 'f' or 'm', got {gender!r}")
    subject, obj, possessive, reflexive = (
        ("she", "her", "her", "herself") if gender == "f" else ("he", "him", "his", "himself")
    )
    tokens = analyse(sentence) if tokens is None else tokens
    edits = []
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if word == "it":
            after = subject if _subject(tokens, i) else obj
        elif word == "its":
            after = possessive
        elif word == "itself":
            after = reflexive
        else:
            continue
        edits.append(replace(token, match_case(token.text, after)))
    return edits
