"""Tokens with character spans and Penn Treebank part-of-speech tags, offline.

The tagger is NLTK's averaged perceptron with weights trained by NLTK on its Penn Treebank sample and shipped as
JSON (``corpora/probes/data/tagger-wsj.json``, written by ``tools/train_probe_tagger.py``; its provenance,
licence and held-out accuracy are in the file), tagging as :mod:`corpora.probes.tagger`. Nothing is downloaded
and nothing is unpickled. Tokens follow the treebank's conventions where the tagger needs them
(``don't`` -> ``do`` + ``n't``, ``John's`` -> ``John`` + ``'s``, brackets as ``-LRB-``), but keep their
spans in the sentence, so an edit is a replacement of characters of the original text.

>>> [(t.text, t.tag) for t in tag("She didn't sell it.")]
[('She', 'PRP'), ('did', 'VBD'), ("n't", 'RB'), ('sell', 'VB'), ('it', 'PRP'), ('.', '.')]
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

MAX_SENTENCE_CHARS = 2000  # longer "sentences" are not analysed (a probe edits one sentence; see rows.py)


class Token(NamedTuple):
    text: str
    start: int
    end: int
    tag: str = ""


_ABBREVIATIONS = r"(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Inc|Corp|Co|Ltd|No|vs|Gen|Gov|Sen|Rep|Rev|Mt|Ft|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\."
_TOKEN = re.compile(
    r"(?:[A-Za-z]\.){2,}"  # U.S., e.g.
    rf"|{_ABBREVIATIONS}"
    r"|\d+(?:[.,:/]\d+)*(?!\w)"  # 1,234.5  10:30  1/2 (1990s, 3rd: words)
    r"|\w+(?:[-'’]\w+)*"  # words, hyphenated words, contractions (split below)
    r"|\.\.\.|--|``|''"
    r"|[^\w\s]",
)
_CONTRACTION = re.compile(r"(?i)^(.+?)(n['’]t|['’](?:s|re|ve|ll|d|m))$")
_PTB = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_PTB |= {"“": "``", "”": "''", "‘": "`", "’": "'"}


def tokenize(sentence: str) -> list[Token]:
    """Tokens of a sentence with their ``[start, end)`` character spans (untagged).

    >>> [t.text for t in tokenize("It's 51.7 km (U.S.), isn't it?")]
    ['It', "'s", '51.7', 'km', '(', 'U.S.', ')', ',', 'is', "n't", 'it', '?']
    """
    tokens: list[Token] = []
    position = 0
    while (match := _TOKEN.search(sentence, position)) is not None:
        text, start = match.group(), match.start()
        position = end = _cluster_end(sentence, match.end())
        if end != match.end():  # He + U+0301: the token is the whole grapheme cluster, so no edit splits it
            tokens.append(Token(sentence[start:end], start, end))
            continue
        split = _CONTRACTION.match(text) if ("'" in text or "’" in text) else None
        if split and split.group(1)[-1:].isalpha():
            head = split.group(1)
            if split.group(2).lower().startswith("n") and head.lower() == "ca":  # can't -> ca + n't
                pass
            tokens.append(Token(head, start, start + len(head)))
            tokens.append(Token(split.group(2), start + len(head), match.end()))
        else:
            tokens.append(Token(text, start, match.end()))
    return tokens


def _cluster_end(sentence: str, end: int) -> int:
    """``end`` moved past the combining marks (and zero-width joiners) that belong to the character before it."""
    while end < len(sentence) and (
        unicodedata.category(sentence[end]).startswith("M") or sentence[end] == "\u200d"
    ):
        end += 1
    return end


def _ptb_form(text: str, previous: str | None) -> str:
    if text == '"':
        return "``" if previous is None or previous in ("(", "[", "{", "``") else "''"
    return _PTB.get(text, text.replace("’", "'"))


def tagger_info() -> dict:
    """The tagger weights' provenance, licence and held-out accuracy."""
    from incoherent.corpora.probes.tagger import info

    return info()


def tag(sentence: str) -> tuple[Token, ...]:
    """Tagged tokens of a sentence."""
    tokens = tokenize(sentence)
    if not tokens:
        return ()
    forms, previous = [], None
    for token in tokens:
        forms.append(_ptb_form(token.text, previous))
        previous = forms[-1]
    from incoherent.corpora.probes.tagger import load

    tags = load().tag(forms)
    return tuple(Token(t.text, t.start, t.end, tg) for t, tg in zip(tokens, tags, strict=True))


# Closed-class words whose tag the phenomena rely on: fixed where the treebank sample is thin (questions,
# sentence-initial auxiliaries).
_FIXED = {
    "did": "VBD", "does": "VBZ", "was": "VBD", "were": "VBD", "is": "VBZ", "am": "VBP", "are": "VBP",
    "has": "VBZ", "he": "PRP", "she": "PRP", "him": "PRP", "it": "PRP", "they": "PRP", "himself": "PRP",
    "herself": "PRP", "itself": "PRP", "his": "PRP$", "its": "PRP$", "will": "MD", "would": "MD",
    "can": "MD", "could": "MD", "should": "MD", "may": "MD", "might": "MD", "must": "MD", "shall": "MD",
}  # fmt: skip
_SUBJECT_PRONOUNS = frozenset({"i", "you", "he", "she", "it", "we", "they"})
_AUXILIARIES = frozenset(
    {
        "be",
        "been",
        "being",
        "is",
        "are",
        "was",
        "were",
        "am",
        "has",
        "have",
        "had",
        "having",
        "'s",
        "'re",
        "'ve",
        "'d",
    }
)


def fix_tags(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """The tagger's output with closed-class words fixed and a past participle that can only be a finite past
    verb (right after a subject pronoun; or the sentence's only verb, after a noun, with no auxiliary before
    it) retagged ``VBD``.

    >>> [t.tag for t in fix_tags((Token("Did", 0, 3, "IN"), Token("he", 4, 6, "PRP")))]
    ['VBD', 'PRP']
    """
    out = []
    lowered = [t.text.lower() for t in tokens]
    for i, token in enumerate(tokens):
        word = lowered[i]
        tag_ = _FIXED.get(word, token.tag)
        if word == "her":
            tag_ = token.tag if token.tag in ("PRP", "PRP$") else "PRP"
        if token.text == "May" and tag_ == "MD" and _in_date(tokens, i):
            tag_ = "NNP"  # on 9 May 2002, in May 1968: the month, not the modal
        if (
            tag_ == "VBN"
            and i > 0
            and (_finite_participle(tokens, lowered, i) or _listed_past(out, lowered, i))
        ):
            tag_ = "VBD"
        elif tag_ == "VBD" and i > 1 and lowered[i - 1] in _SUBJECT_PRONOUNS:  # was he elected, did he win
            if lowered[i - 2] in ("was", "were", "is", "are", "had", "has", "have"):
                tag_ = "VBN"
            elif lowered[i - 2] in ("did", "does", "do"):
                tag_ = "VB"
        out.append(token._replace(tag=tag_))
    return tuple(out)


def _in_date(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the word at ``i`` stands in a date: a number, or *in*/*of*/*since*/*until*, right before it, or a
    number right after it (*9 May 2002*, *in May*, *May 2002*)."""
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return (
        before is not None
        and (before.tag == "CD" or before.text.lower() in ("in", "of", "since", "until", "by"))
    ) or (after is not None and after.tag == "CD")


def _clause(tokens: tuple[Token, ...], i: int, step: int) -> list[int]:
    """Positions from ``i`` (excluded) to the clause boundary in direction ``step`` (-1 or 1)."""
    out, j = [], i + step
    while 0 <= j < len(tokens) and tokens[j].tag not in _BOUNDARY_TAGS and tokens[j].text not in ",;:":
        out.append(j)
        j += step
    return out


def _finite_participle(tokens: tuple[Token, ...], lowered: list[str], i: int) -> bool:
    if lowered[i - 1] in _SUBJECT_PRONOUNS:  # he elected -> finite; was he elected -> a participle
        return i < 2 or (
            lowered[i - 2] not in _AUXILIARIES and tokens[i - 2].tag not in ("MD", "VBD", "VBZ", "VBP")
        )
    before, after = _clause(tokens, i, -1), _clause(tokens, i, 1)
    p = i - 1
    while p > 0 and tokens[p].tag == "RB" and lowered[p].endswith("ly"):
        p -= 1  # Plato purposely created
    return (
        tokens[p].tag.startswith("NN")
        and not any(lowered[j] in _AUXILIARIES or tokens[j].tag == "MD" for j in before)
        and not any(tokens[j].tag in ("VBD", "VBZ", "VBP", "MD") or lowered[j] in _FIXED for j in after)
    )


def _listed_past(done: list[Token], lowered: list[str], i: int) -> bool:
    """Whether the participle at ``i`` is the past verb of a list whose previous verb is a finite past one (*She
    appeared in films, performed in musicals*; *he adhered to X, but moved*), or a demonstrative's verb at the
    start (*This existed after*). ``done`` holds the fixed tags before ``i``."""
    if i == 1 and lowered[0] in ("this", "these", "those"):
        return True
    j = i - 1
    if done[j].tag != "CC" and done[j].text != ",":
        return False
    for k in range(j - 1, -1, -1):
        tag_ = done[k].tag
        if tag_ in ("VBD", "VBN", "VBZ", "VBP", "MD", "VB", "VBG"):
            before = lowered[k - 1] if k > 0 else ""
            return tag_ == "VBD" and before not in _AUXILIARIES and lowered[k] not in _AUXILIARIES
        if tag_ in ("WDT", "WP", "WRB") or lowered[k] in (";", ":", "that"):
            return False
    return False


_BOUNDARY_TAGS = frozenset({"CC", "WDT", "WP", "WRB"})


def analyse(sentence: str) -> tuple[Token, ...]:
    """:func:`tag` followed by :func:`fix_tags`: the tokens every phenomenon reads (a phenomenon analyses its
    sentence unless given the tokens; ``probes`` analyses each intruder sentence once for all phenomena).

    >>> [(t.text, t.tag) for t in analyse("Did her mother smile?")][:3]
    [('Did', 'VBD'), ('her', 'PRP$'), ('mother', 'NN')]
    """
    if len(sentence) > MAX_SENTENCE_CHARS:
        return ()
    return fix_tags(tag(sentence))


def match_case(original: str, replacement: str) -> str:
    """``replacement`` in the case of ``original`` (``He`` -> ``She``, ``HIS`` -> ``HER``).

    >>> match_case("He", "she"), match_case("HIS", "her"), match_case("it", "he")
    ('She', 'HER', 'he')
    """
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement
