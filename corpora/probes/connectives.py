"""The ``conjunction`` phenomenon (INSteD, Shen et al. 2021, Table 7): the first connective joining clauses to
one of the opposite relation, the paper's pairs both ways: contrast to consequence (but/yet -> and therefore,
however/nevertheless -> therefore, although -> and therefore, sentence-initially -> because) and back (and therefore
-> but, therefore/thus/hence/consequently -> however, nevertheless or but by position, because -> although,
so -> but, and -> but). Only connectives that join clauses are sites: never list *and* (``designed and
developed``, ``metallophones and a set of hand-drums``), never *not X but Y*, never a connective before a
participle or a phrase (``..., thus allowing``; ``Although a tributary of the Mississippi, ...``).
"""

from __future__ import annotations

from incoherent.corpora.probes.edits import Edit, NoSite, replace
from incoherent.corpora.probes.text import Token, analyse, match_case
from incoherent.corpora.probes.words import FINITE, SUBORDINATORS, verb_form

_CLAUSE_CONNECTIVES = {"but": "and therefore", "yet": "and therefore", "because": "although", "so": "but"}


_SUBJECT_WORDS = ("PRP", "DT", "NN", "NNS", "NNP", "NNPS", "JJ", "CD", "PRP$", "POS", "EX")


def _clause_follows(tokens: tuple[Token, ...], i: int, bare: bool = True, strict: bool = False) -> bool:
    """Whether a clause starts after position ``i``: a subject (a pronoun, or a noun phrase opened by a
    determiner, possessive, number, adjective or name) then a finite verb before any comma (``but he won``,
    ``and the team lost``), or with ``bare`` a finite verb at once (``but lost``); adverbs may come first. The
    verb must be a verb form of its tag (``the Solomon Islands``, ``species widely grown`` are not); with
    ``strict`` (no comma before the connective), or a subject without a determiner, a noun subject needs a verb
    that is nothing else: no noun or adjective reading, no past form that is also the participle (``the time
    elapsed since``, ``, and female inflorescences called ears``)."""
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR") and tokens[j].text.lower() != "not":
        j += 1
    if (
        bare
        and j < len(tokens)
        and (tokens[j].tag in FINITE or (tokens[j].tag == "VB" and tokens[i - 1].text == ","))
    ):
        return verb_form(tokens[j]) and not (
            strict and _ambiguous_verb(tokens[j])
        )  # but lost; (did it win,) but lose
    if j >= len(tokens) or tokens[j].tag not in _SUBJECT_OPENERS:
        return False
    pronoun = (
        tokens[j].tag in ("PRP", "EX") and j + 1 < len(tokens) and tokens[j + 1].tag not in _SUBJECT_WORDS
    )
    strict = strict or tokens[j].tag in (
        "JJ",
        "JJS",
        "NN",
        "NNS",
    )  # ..., and female inflorescences called ears
    subject, noun, opener = 0, False, j
    while (
        j < len(tokens)
        and subject < 8
        and (
            tokens[j].tag in _SUBJECT_WORDS
            or (subject and tokens[j].text.lower() == "of")
            or (
                subject
                and tokens[j].tag in ("VBG", "VBN")
                and j + 1 < len(tokens)
                and tokens[j + 1].tag == "NN"
            )
        )
    ):
        noun = noun or not tokens[j].tag.startswith("JJ")
        j, subject = (
            j + 1,
            subject + 1,
        )  # the visual perception of non-humans extends; the underlying cause is
    if not noun:
        return False  # ..., and later became: an adverb the tagger calls an adjective
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR"):
        j += 1
    if j >= len(tokens) or tokens[j].tag not in FINITE or not verb_form(tokens[j]):
        return False
    if (
        tokens[j].text.lower() in ("do", "does")
        and j + 1 < len(tokens)
        and tokens[j + 1].tag.startswith("NNP")
    ):
        return False  # Mato Grosso do Sul
    if pronoun or not strict or not _ambiguous_verb(tokens[j]):
        return True
    # a past form with an object after it is finite (critics disliked it; not: the time elapsed since), and so
    # is one that ends the clause after a subject with a determiner (but the inner rooms survived.; but the
    # population increased so they built): a reduced relative would need its noun phrase to go on
    if j + 1 < len(tokens) and tokens[j].tag == "VBD" and tokens[j + 1].tag in ("PRP", "DT", "PRP$"):
        return True
    ends = j + 1 >= len(tokens) or tokens[j + 1].text.lower() in _CLAUSE_ENDS
    return tokens[j].tag == "VBD" and ends and tokens[opener].tag in ("DT", "PRP$")


def _verb_follows(tokens: tuple[Token, ...], i: int, strict: bool) -> bool:
    """Whether a finite verb follows ``i`` at once, adverbs apart (``but has denied``, ``but quickly became``)."""
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR") and tokens[j].text.lower() != "not":
        j += 1
    return (
        _clause_follows(tokens, j - 1, bare=True, strict=strict)
        and j < len(tokens)
        and tokens[j].tag in FINITE + ("VB",)
    )


def _ambiguous_verb(token: Token) -> bool:
    """Whether a finite verb could be read otherwise: a noun (``rays``, ``plays``) or a past participle
    (``elapsed``: a reduced relative)."""
    import lemminflect

    word = token.text.lower()
    if token.tag == "MD" or word in (
        "is",
        "was",
        "has",
        "'s",
        "does",
        "are",
        "were",
        "have",
        "had",
        "did",
        "do",
    ):
        return False
    readings = lemminflect.getAllLemmas(word)
    if "NOUN" in readings or "ADJ" in readings:
        return True
    return _participle_form(token)


_CLAUSE_ENDS = frozenset({".", "!", "?", ";", "so", "because", "when", "after", "until"})
_SUBJECT_OPENERS = ("PRP", "DT", "PRP$", "NNP", "NNPS", "NNS", "NN", "CD", "EX", "JJ", "JJS")


def _segment_has_finite(tokens: tuple[Token, ...], i: int, strict: bool = False) -> bool:
    """Whether the stretch before ``i`` back to the previous comma, semicolon, dash or the sentence's start
    has a finite verb: the left conjunct is a clause, not an item of a list (``visible, ultraviolet, and
    infrared``; ``the Milky Way and its satellites form``; ``Rio de Janeiro to the east, and``). With ``strict``
    (no comma before the connective) a past form that is also the participle counts only after a pronoun
    (``the cells produced by meiosis from a male and a female will fuse``), and a subordinator or relative
    before the verb means the left conjunct is part of that clause (``the view that the mental and the
    physical are``)."""
    j = i - 1
    if j >= 0 and tokens[j].text == ",":
        j -= 1
    while j >= 0 and tokens[j].text not in (",", ";", ":", "--", "—", "–"):
        if tokens[j].tag in FINITE and verb_form(tokens[j]):
            if not _participle_form(tokens[j]) or (j and tokens[j - 1].tag == "PRP"):
                return True
            if j + 1 < i and tokens[j + 1].tag in ("PRP", "DT", "PRP$"):
                return True  # The United States intercepted those communications and
            if not strict and not _opens_with_preposition(tokens, j):
                return (
                    True  # Russia conquered Turkestan, and (not: as securities tied to U.S. real estate, and)
                )
        if strict and (
            tokens[j].tag in ("WDT", "WP", "WRB")
            or tokens[j].text.lower() in SUBORDINATORS
            or (tokens[j].text.lower() == "that" and tokens[j].tag != "DT")  # not: at that time
        ):
            return False
        j -= 1
    return False


def _opens_with_preposition(tokens: tuple[Token, ...], j: int) -> bool:
    """Whether the stretch holding ``j`` (from the previous comma, semicolon or dash) opens with a preposition
    or a relative word: then a participle in it is not its verb (``as securities tied to real estate``)."""
    while j > 0 and tokens[j - 1].text not in (",", ";", ":", "--", "—", "–"):
        j -= 1
    return tokens[j].tag in ("IN", "TO", "WDT", "WRB")


def _serial(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``, and`` at ``i`` ends a list of three or more clauses (``where p is the density, m is the mass,
    and V is the volume``): the stretch before the comma before it has a finite verb too."""
    j = i - 2
    while j >= 0 and tokens[j].text not in (",", ";", ":"):
        j -= 1
    return j > 0 and tokens[j].text == "," and _segment_has_finite(tokens, j)


def _participle_form(token: Token) -> bool:
    """Whether a past form is also its verb's past participle (``produced``, ``elapsed``; not ``began``)."""
    import lemminflect

    word = token.text.lower()
    return (
        token.tag == "VBD"
        and word != "had"
        and any(
            word in lemminflect.getInflection(base, "VBN", inflect_oov=False)
            for base in lemminflect.getAllLemmas(word).get("VERB", ())
        )
    )


def _and_joins_clauses(tokens: tuple[Token, ...], i: int) -> str | None:
    """None when ``and`` at ``i`` joins clauses with their own subjects (``..., and it won``; ``he lost and the
    team left``), else why not: ``list_and`` (``dues and fees``, ``designed and developed``, ``a defender, and
    an attorney``, ``visible, ultraviolet, and infrared``, ``cools plants, changes ..., and enables``,
    ``between the dose and the time elapsed``)."""
    comma = i > 0 and tokens[i - 1].text == ","
    if i == 0 or i + 1 >= len(tokens):
        return "list_and"
    if comma and _verb_phrase_follows(tokens, i):
        return (
            None  # The school was founded in 1908, and has been; It was described in 1982 ..., and named for
        )
    if not _segment_has_finite(tokens, i, strict=not comma):
        return "list_and"
    if comma and _serial(tokens, i):
        return "list_and"  # where A is the density, m is the mass, and V is the volume
    if tokens[i - 1].tag in FINITE or tokens[i - 1].tag in ("VBN", "VB", "VBG"):
        return "list_and"  # sang and danced, designed and developed
    if not comma and tokens[i + 1].tag not in ("PRP", "DT", "PRP$", "EX"):
        return "list_and"  # living conditions and resources meet: nouns of one subject
    if any(t.text.lower() == "between" for t in tokens[max(0, i - 8) : i]) and not any(
        t.text.lower() == "and" for t in tokens[max(0, i - 8) : i]
    ):
        return "list_and"  # the relationship between the dose and the time elapsed
    return None if _clause_follows(tokens, i, bare=False, strict=not comma) else "list_and"


def _verb_phrase_follows(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``, and`` at ``i`` joins a verb phrase to a clause before it: a finite verb follows at once
    (adverbs apart: *The school was founded in 1908, and has been*; *..., Europe and the Middle East, and is
    part of*), or a participle after a passive (*It was described in 1982 by Brandon, Maruska, and Rumph, and
    named for*); not the last of a list of three or more (*has four seats, is rear mid-engined, and is*), and not
    after a *but* (*not a grass but rather a pseudocereal ..., and originated*: but ..., but)."""
    if (
        _serial(tokens, i)
        or not _finite_before(tokens, i)
        or any(t.text.lower() == "but" for t in tokens[:i])
    ):
        return False
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR") and tokens[j].text.lower() != "not":
        j += 1
    if _verb_follows(tokens, i, strict=False):
        # a verb with a noun reading or a participle form may end a list of nouns (pidgins, creoles, and
        # constructed languages; national security, and conflict hot spots): only after a clause
        if not _ambiguous_verb(tokens[j]) or _segment_has_finite(tokens, i, strict=True):
            return True
        item = next((k for k in range(i - 1) if tokens[i - 2 - k].text in (",", ";")), i)  # its last item
        takes = j + 1 < len(tokens) and tokens[j + 1].tag in ("IN", "DT", "TO", "RP", "PRP$", "PRP", "CD")
        return (
            takes and item > 1
        )  # aired in Mexico on April 24, 2007, and finished on (not: wrote, directed, and)
    passive = any(t.text.lower() in ("was", "were", "is", "are") and t.tag in FINITE for t in tokens[:i])
    return (
        passive and j + 1 < len(tokens) and tokens[j].tag == "VBN" and tokens[j + 1].tag in ("IN", "TO", "RP")
    )


def _finite_before(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether a finite verb comes before ``i`` in the sentence: one tagged so, or a past form tagged a
    participle with no auxiliary before it (``Her demand ... generated a controversy but quickly became``)."""
    for j in range(i):
        word = tokens[j].text.lower()
        if word in _AUXILIARY_WORDS:
            return True
        if tokens[j].tag in FINITE or (tokens[j].tag == "VBN" and verb_form(tokens[j]._replace(tag="VBD"))):
            return True
    return False


_AUXILIARY_WORDS = frozenset({"is", "are", "was", "were", "has", "have", "had", "be", "been"})


def _not_before(tokens: tuple[Token, ...], i: int) -> bool:
    """A ``not``/``never`` earlier in the sentence (``not on the facts but on the law``)."""
    return any(t.text.lower() in ("not", "n't", "never", "no") for t in tokens[max(0, i - 12) : i])


_CONTRAST_ADVERBS = frozenset({"however", "nevertheless", "nonetheless"})
_CONSEQUENCE_ADVERBS = frozenset({"therefore", "thus", "hence", "consequently"})
_ENDS = frozenset({"", ".", "!", "?", ")", "''", '"'})


def _sentence_adverb(tokens: tuple[Token, ...], i: int) -> str:
    """The replacement of a sentence adverb at ``i``, or ``"!" + reason`` when it is not a site. Contrast becomes
    consequence (however -> therefore). Consequence becomes contrast by position: ``however`` before its comma
    (``Thus, X`` -> ``However, X``), ``but`` opening a clause after a comma (``..., therefore it is essential``),
    ``nevertheless`` inside a clause or without a comma (``He was thus the first`` -> ``He was nevertheless the
    first``: ``however`` there reads *in whatever way*); never before a participle (``..., thus allowing``)."""
    word = tokens[i].text.lower()
    prev = tokens[i - 1].text.lower() if i else ""
    nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
    if nxt in _ENDS:
        return "!sentence_final"  # Not all salamanders are newts, however.
    if prev == "and":
        return "!not_a_clause"  # the genome, and therefore the maternal line, is
    if word in _CONTRAST_ADVERBS:
        if word == "however" and not (i == 0 or prev in (",", ";", ":") or nxt == ","):
            return "!not_a_clause"  # however much, however it is done
        return "therefore"
    if nxt == ",":
        return "however"
    if prev == ",":
        return "but" if _clause_follows(tokens, i, bare=False) else "!not_a_clause"
    return "nevertheless"


def _parenthetical(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the clause opened at ``i`` sits inside another one: after ``and,`` (``bosons and, although they
    have energy, do not``), or closed by a comma that a verb follows."""
    if i > 1 and tokens[i - 2].tag == "CC":
        return True
    for j in range(i + 1, len(tokens) - 1):
        if tokens[j].text in (",", ";", ":"):
            return tokens[j].text == "," and tokens[j + 1].tag in FINITE
    return False


def _but_site(tokens: tuple[Token, ...], i: int) -> str | None:
    """None when ``but``/``yet`` at ``i`` joins clauses, else why not (``not_x_but_y``, ``not_a_clause``)."""
    prev = tokens[i - 1].text.lower()
    nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
    if nxt in ("also", "rather", "only") or prev in ("not", "anything", "nothing", "all", "none"):
        return "not_x_but_y"
    if prev == "last" or (prev == "," and i > 1 and tokens[i - 2].tag in ("IN", "TO")):
        return "not_a_clause"  # the last but one; similar to, but distinguished from, passion
    if _not_before(tokens, i) and not _clause_follows(tokens, i, bare=False):
        return "not_x_but_y"  # not on the facts but on the law; not a singer but an actor
    comma = prev in (",", ";", ":", "--", "—", "–")
    if _clause_follows(tokens, i, bare=False, strict=not comma):
        if comma or _segment_has_finite(tokens, i, strict=True):
            return None
        return "not_a_clause"  # Atoms with the same number of protons but a different number of neutrons are
    if _verb_follows(tokens, i, strict=not comma) and _finite_before(tokens, i):
        return None  # he collaborated but has denied it (a verb phrase: the left one has its verb too)
    if _verb_follows(tokens, i, strict=False) and _segment_has_finite(tokens, i, strict=True):
        return None  # was released in August 1968 but failed to chart: its left conjunct a clause
    return "not_a_clause"  # Straddling the river, but spread chiefly west


def conjunction(sentence: str, tokens: tuple[Token, ...] | None = None) -> list[Edit]:
    """The first connective joining clauses to one of the opposite relation (the paper's pairs, both ways):
    but -> and therefore, and -> but, although -> and therefore, and therefore -> but, therefore -> however,
    because -> although. A clause *and* is the site only where no other connective of the sentence is one:
    *and* -> *but* often reads as a plausible contrast (issue #50's readings), the others as a clash.

    >>> [e.after for e in conjunction("He was injured, but he won the race.")]
    ['and therefore']
    >>> [e.after for e in conjunction("Although it rained, the match went ahead.")]
    ['Because']
    >>> conjunction("It was designed and developed in Leeds.")
    NoSite('list_and')
    """
    tokens = analyse(sentence) if tokens is None else tokens
    reason = "no_connective"
    fallback: list[Edit] | None = None  # a clause and -> but, taken only where no other connective is a site

    def note(why: str) -> None:
        nonlocal reason
        reason = why if reason == "no_connective" else reason

    for i, token in enumerate(tokens):
        word = token.text.lower()
        prev = tokens[i - 1].text.lower() if i else ""
        nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
        if word == "and" and nxt in ("therefore", "thus", "hence", "so", "consequently"):
            if _clause_follows(tokens, i + 1) and (
                i == 0 or _segment_has_finite(tokens, i) or (prev == "," and _finite_before(tokens, i))
            ):  # and therefore -> but
                end = tokens[i + 1]
                return [
                    Edit(token.start, end.end, sentence[token.start : end.end], match_case(token.text, "but"))
                ]
            note("not_a_clause")
            continue
        if word in _CONTRAST_ADVERBS or word in _CONSEQUENCE_ADVERBS:
            after = _sentence_adverb(tokens, i)
            if after.startswith("!"):
                note(after[1:])
                continue
        elif word in ("although", "though") and (i == 0 or prev == ","):
            if not _clause_follows(tokens, i, bare=False):
                note(
                    "not_a_clause"
                )  # Although a tributary of the Mississippi, ...; natively, though informally
                continue
            if i > 0 and _parenthetical(tokens, i):
                note("parenthetical")  # bosons and, although they have quanta, do not have rest mass
                continue
            after = "because" if i == 0 else "and therefore"  # , therefore X: a comma splice
        elif word in ("but", "yet") and i > 0:
            why = _but_site(tokens, i)
            if why is not None:
                note(why)
                continue
            after = _CLAUSE_CONNECTIVES[word]
        elif word == "because" and nxt != "of":
            if nxt != "," and not _clause_follows(tokens, i, bare=False):
                note("not_a_clause")
                continue
            if any(
                tokens[m].text.lower() in ("but", "yet") and tokens[m - 1].text == ","
                for m in range(i + 2, len(tokens))
            ):
                note("although_but")  # unusual because X, but Y -> although X, but Y: a double concessive
                continue
            after = "although"
        elif word == "so" and prev == "," and token.tag in ("CC", "IN", "RB") and _clause_follows(tokens, i):
            after = "but"
        elif word == "and":
            why = _and_joins_clauses(tokens, i)
            if why is not None:
                note(why)
                continue
            if fallback is None:  # and -> but: only where no clearer connective follows
                fallback = [replace(token, match_case(token.text, "but"))]
            continue
        else:
            continue
        return [replace(token, match_case(token.text, after))]
    return fallback if fallback is not None else NoSite(reason)
