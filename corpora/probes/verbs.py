"""Verb phenomena: ``past-to-future`` and ``negation`` (INSteD, Shen et al. 2021, Table 7).

Lemmas and inflections come from lemminflect's dictionary (the NIH SPECIALIST lexicon); its neural models for
out-of-vocabulary words (stored as pickle) are never used, so a verb the dictionary does not know is not a site.

- ``past-to-future``: every finite past-tense verb to the future: ``was``/``were`` -> ``will be``
  (progressives and passives follow: ``was built`` -> ``will be built``), ``had`` + participle -> ``will
  have``, ``did`` (auxiliary) -> ``will``, ``didn't``/``wasn't`` -> ``won't``/``won't be``, any other past
  verb -> ``will`` + its lemma (``led`` -> ``will lead``). In a question that starts with ``Was``/``Were``
  and a pronoun, ``be`` goes after the pronoun (``Was he ...?`` -> ``Will he be ...?``).
- ``negation``: the main clause's finite verb negated: ``be``, modals and auxiliaries take ``not``
  (``was`` -> ``was not``, ``can`` -> ``cannot``), a lexical verb takes ``do`` (``received`` -> ``did not
  receive``, ``has`` -> ``does not have``). A clause already negated (``not``/``n't``, ``cannot``: ``already_negative``, as
  INSteD's probe takes a sentence to its negation) or negated otherwise (``never``, ``no``, ``has yet to``) is no
  site, nor a lexical verb after an adverb of how soon or how fast (*It soon branched out*: ``sequence_adverb``),
  and a past participle modifying a noun before the clause's verb is never the main verb.
  A question opened by an auxiliary takes the contracted form (``Did he win?`` -> ``Didn't he win?``). The
  main clause is the first one not opened by a subordinator or a relative pronoun.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from incoherent.corpora.probes.clauses import (
    in_temporal_clause,
    nonfinite_reason,
    past_forms,
    subject_is_plural,
)
from incoherent.corpora.probes.edits import Edit, NoSite, replace
from incoherent.corpora.probes.future_gates import (
    future_in,
    joined_by_then,
    participle_read_as_finite,
    passive_conjunct,
    past_after_pronoun,
    past_read_as_base,
    prefixed_lemma,
    prepositional_opener,
    since_clause,
    temporal_subject_plural,
)
from incoherent.corpora.probes.lexicon import inflect, is_noun, lemma
from incoherent.corpora.probes.referents import QUOTES, in_quotation
from incoherent.corpora.probes.tense_gate import ambiguous_past, gate
from incoherent.corpora.probes.text import Token, analyse, match_case, tokenize

_BE_PAST = frozenset({"was", "were"})
_BE_ADVERBS = frozenset(
    "also still once then later originally first already previously formerly initially always subsequently "
    "eventually all both each".split()
)
_PRONOUNS = frozenset({"i", "you", "he", "she", "it", "we", "they"})


def _next_word(tokens: tuple[Token, ...], i: int) -> Token | None:
    return tokens[i + 1] if i + 1 < len(tokens) else None


def _is_question(tokens: tuple[Token, ...]) -> bool:
    return bool(tokens) and tokens[-1].text == "?"


def _participle_follows(tokens: tuple[Token, ...], i: int) -> bool:
    j = i + 1
    while j < len(tokens) and (
        tokens[j].tag in ("RB", "RBR") or tokens[j].text.lower() in ("since", "earlier")
    ):
        j += 1  # has since been released, had earlier designed: adverbs there
    if j < len(tokens) and j > i + 1 and tokens[j].tag not in ("NNS", "NNP", "JJ", "VBN"):
        word = tokens[j].text.lower()  # had also become: *become* tagged VBZ; has also expanded: VBD; has
        base = lemma(word)  # since gone: NN (but not a noun that is also a base form: *has also a house*)
        participle = base is not None and inflect(base, "VBN") == word
        return participle and (tokens[j].tag != "NN" or word != base)
    return j < len(tokens) and tokens[j].tag == "VBN"


def _present(base: str, plural: bool | None) -> str | None:
    """The present form of a verb for a subject of that number (``surface`` -> ``surfaces``)."""
    if base == "be":
        return "are" if plural else "is"
    return inflect(base, "VBP" if plural else "VBZ")


def _governed_by_present(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the clause a temporal clause at ``i`` belongs to is in the present (its verb before the clause's
    opener): its verb then stays in the past (*is accepted to have begun in 1941, when the US were brought*)."""
    for k in range(i - 1, -1, -1):
        if tokens[k].tag in ("VBZ", "VBP", "MD") and tokens[k].text.lower() not in ("'s",):
            return True
        if tokens[k].tag == "VBD":
            return False
    return False


def _first_of_joined(tokens: tuple[Token, ...], i: int) -> int:
    """The first of verbs joined by a conjunction (*he studied the rings of Saturn and discovered*): its subject is
    theirs."""
    j = i - 1
    while j >= 0 and tokens[j].tag in ("RB", "RBR"):
        j -= 1
    if j < 0 or tokens[j].tag != "CC":
        return i
    for k in range(j - 1, -1, -1):
        if tokens[k].tag in ("VBD", "VBZ", "VBP") or tokens[k].text in (",", ";", ":"):
            return k if tokens[k].tag in ("VBD", "VBZ", "VBP") else i
    return i


def _temporal(sentence: str, tokens: tuple[Token, ...], i: int, base: str) -> list[Edit] | None:
    """A past verb of a temporal or conditional clause to the present (``after a video surfaced`` ->
    ``after a video surfaces``), with ``did``/``had`` as auxiliaries (``did not`` -> ``does not``);
    None when the subject's number is unknown."""
    token, nxt = tokens[i], _next_word(tokens, i)
    plural = temporal_subject_plural(tokens, i, subject_is_plural(tokens, _first_of_joined(tokens, i)))
    if plural is None and not (i > 0 and tokens[i - 1].tag.startswith("NN")):
        return None
    word = token.text.lower()
    if nxt is not None and nxt.tag in ("VBG", "NN") and i + 2 < len(tokens):
        after = tokens[i + 2].text.lower()
        if after in past_forms(lemma(after) or after) and lemma(after) not in (None, after):
            return None  # unless the Democrats left wing gave ground: two past forms, the clause unclear
    if word == "did" and nxt is not None and (nxt.text.lower() in ("not", "n't") or nxt.tag == "VB"):
        base = "do"
    elif word == "had" and (
        _participle_follows(tokens, i) or (nxt is not None and nxt.text.lower() == "not")
    ):
        base = "have"
    form = _present(base, bool(plural))
    if form is None:
        return None
    if nxt is not None and nxt.text.lower() == "n't":
        return [_span(sentence, token, nxt, match_case(token.text, form + "n't"))]
    return [replace(token, match_case(token.text, form))]


def past_to_future(
    sentence: str, tokens: tuple[Token, ...] | None = None, context: Sequence[str] | None = None
) -> list[Edit]:
    """Every finite past-tense verb of the sentence to the future; verbs of temporal and conditional clauses
    to the present (English keeps them there: *after a video surfaces*); participles, adjectives and reduced
    relatives are not verbs of a clause and never change.

    >>> from incoherent.corpora.probes.edits import apply_edits
    >>> s = "The bridge was built in 1890 and led to the town."
    >>> apply_edits(s, past_to_future(s))
    'The bridge will be built in 1890 and will lead to the town.'
    >>> s = "After the video surfaced, she did a short telefilm."
    >>> apply_edits(s, past_to_future(s))
    'After the video surfaces, she will do a short telefilm.'
    >>> past_to_future("The game, also known as Go, is played with stones.")
    NoSite('participle_only')
    """
    tokens = analyse(sentence) if tokens is None else tokens
    edits: list[Edit] = []
    question = _is_question(tokens)
    skip: set[int] = set()
    reasons: list[str] = []
    edited: dict[int, str] = {}  # position -> lexical / auxiliary / be, for the gate
    kept: set[int] = set()  # past verbs deliberately left
    future = 0
    tokens = past_read_as_base(past_after_pronoun(_surfaced(tokens)))
    for i, token in enumerate(tokens):
        if token.tag != "VBD" or i in skip:
            continue
        word = token.text.lower()
        nxt = _next_word(tokens, i)
        base = "be" if word in _BE_PAST else lemma(word) or prefixed_lemma(word)
        if base is None:
            reasons.append("unknown_verb")
            continue
        auxiliary = (word == "did" and _auxiliary_did(tokens, i)) or (
            word == "had" and _participle_follows(tokens, i)
        )
        left = _left_past(tokens, i, base, auxiliary)
        if left is not None:
            reasons.append(left)
            if left != "participle_only":  # a participle is no verb of a clause: nothing is left beside it
                kept.add(i)
            continue
        if in_temporal_clause(tokens, i) and not prepositional_opener(tokens, i):
            if _governed_by_present(tokens, i):
                reasons.append("temporal_clause_only")  # is accepted to have begun in 1941, when the US were
                kept.add(i)
                continue
            present = _temporal(sentence, tokens, i, base)
            if present is None:
                reasons.append("temporal_clause_subject")
                continue
            edits += present
            edited[i] = "be" if base == "be" else "auxiliary" if auxiliary else "lexical"
            skip.add(i + 1) if nxt is not None and nxt.text.lower() == "n't" else None
            continue
        if future and not auxiliary and joined_by_then(tokens, i):
            edits.append(replace(token, match_case(token.text, base)))  # will complete ... then become
            edited[i] = "be" if base == "be" else "lexical"
            continue
        future += 1
        edited[i] = "be" if word in _BE_PAST else "auxiliary" if auxiliary else "lexical"
        if word in _BE_PAST:
            result = _future_of_be(sentence, tokens, i, question)
        else:
            result = _future_of_verb(sentence, tokens, i, base)
        if isinstance(result, str):  # a past verb left as it is, and why
            future -= 1
            del edited[i]
            reasons.append(result)
            continue
        edits += result[0]
        skip |= result[1]
    if not future and edits:
        return NoSite("temporal_clause_only")  # nothing in the future: the present alone is no probe
    if edits and (weak := gate(tokens, edited, kept)) is not None:
        return NoSite(weak)  # an edit on weak evidence, or a past verb left beside a future one
    if not edits:
        return NoSite(reasons[0] if reasons else "no_past_verb")
    if context is not None and any(future_in(s) for s in context):
        # a document that speaks of the future: a future intruder would fit it
        return NoSite("future_context")
    return edits


def _left_past(tokens: tuple[Token, ...], i: int, base: str, auxiliary: bool) -> str | None:
    """Why the past verb at ``i`` stays as it is, or None: a capitalised verb inside the sentence names something
    (*I Made a Vow*: ``title``); a participle, adjective or reduced relative (``participle_only``); the second
    verb of a passive shares its *will be* (*was re-acquired ... and converted*: ``passive_conjunct``); no future
    after *since* (*since it started in 2001*: ``since_clause``)."""
    if tokens[i].text[:1].isupper() and any(t.text[:1].isalpha() for t in tokens[:i]):
        return "title"
    if (
        base != "be"
        and not auxiliary
        and (
            nonfinite_reason(*_unprefixed(tokens, i, base)) is not None
            or participle_read_as_finite(tokens, i, base)
        )
    ):
        return "participle_only"
    if passive_conjunct(tokens, i, base):
        return "passive_conjunct"
    if since_clause(tokens, i):
        return "since_clause"
    return None


def _unprefixed(tokens: tuple[Token, ...], i: int, base: str) -> tuple[tuple[Token, ...], int, str]:
    """The sentence with a prefixed past verb at ``i`` read without its prefix (*co-wrote* as *wrote*, base
    *write*), ``i`` and the base."""
    word = tokens[i].text
    if "-" not in base or prefixed_lemma(word.lower()) is None:
        return tokens, i, base
    return (
        tokens[:i] + (tokens[i]._replace(text=word.partition("-")[2]),) + tokens[i + 1 :],
        i,
        base.partition("-")[2],
    )


def _future_of_be(
    sentence: str, tokens: tuple[Token, ...], i: int, question: bool
) -> tuple[list[Edit], set[int]] | str:
    """was/were at ``i`` to the future: the edits and the positions they consumed, or why not (``was_to``)."""
    token, nxt = tokens[i], _next_word(tokens, i)
    after = nxt.text.lower() if nxt is not None else ""
    if after == "to" and i + 2 < len(tokens) and tokens[i + 2].tag == "VB":
        return "was_to"  # were to be made: a future in the past already
    late_not = _adverbs_then_not(tokens, i)
    if late_not is not None:  # was probably not built -> will probably not be built
        between = sentence[tokens[i + 1].start : tokens[late_not].end]
        edit = _span(sentence, token, tokens[late_not], match_case(token.text, f"will {between} be"))
        return [edit], set(range(i + 1, late_not + 1))
    if after == "n't":  # wasn't -> won't be
        return [_span(sentence, token, nxt, match_case(token.text, "won't be"))], {i + 1}
    if after == "not":  # was not -> will not be
        return [_span(sentence, token, nxt, match_case(token.text, "will not be"))], {i + 1}
    if after in _BE_ADVERBS:  # was also -> will also be
        return [_span(sentence, token, nxt, match_case(token.text, f"will {nxt.text} be"))], {i + 1}
    if question and i == 0 and after in _PRONOUNS:
        return [replace(token, match_case(token.text, "will")), replace(nxt, nxt.text + " be")], {i + 1}
    return [replace(token, match_case(token.text, "will be"))], set()


def _future_of_verb(
    sentence: str, tokens: tuple[Token, ...], i: int, base: str
) -> tuple[list[Edit], set[int]] | str:
    """Any other past verb at ``i`` to the future (did -> will, had not seen -> will not have seen, played ->
    will play, an adverb before it after *will*): the edits and the positions they consumed, or why not
    (``used_to``, ``unknown_verb``)."""
    token, nxt = tokens[i], _next_word(tokens, i)
    word, after = token.text.lower(), nxt.text.lower() if nxt is not None else ""
    if word == "did" and _auxiliary_did(tokens, i):
        if after == "n't":
            return [_span(sentence, token, nxt, match_case(token.text, "won't"))], {i + 1}
        return [replace(token, match_case(token.text, "will"))], set()
    if word == "had" and after in ("not", "n't") and _participle_follows(tokens, i + 1):
        future = "won't have" if after == "n't" else "will not have"  # had not seen -> will not have seen
        return [_span(sentence, token, nxt, match_case(token.text, future))], {i + 1}
    if word == "used" and after == "to":
        return "used_to"
    if base == word and inflect(base, "VBD") != word:  # put, split: past = base
        return "unknown_verb"
    adverb = tokens[i - 1] if i > 0 else None
    if (
        adverb is not None
        and adverb.tag == "RB"
        and adverb.text.lower() not in ("not", "n't")
        and (i < 2 or tokens[i - 2].tag not in ("RB", "MD"))
    ):  # originally consisted -> will originally consist
        between = sentence[adverb.start : token.start]
        return [_span(sentence, adverb, token, match_case(adverb.text, "will " + between + base))], set()
    return [replace(token, match_case(token.text, "will " + base))], set()  # did -> will do, had -> will have


_NOT_VERBS = frozenset(
    {"well", "so", "better", "more", "much", "right", "wrong", "fine", "too", "also", "not", "back"}
)


def _adverbs_then_not(tokens: tuple[Token, ...], i: int) -> int | None:
    """Position of a ``not`` after one or more adverbs after the verb at ``i`` (*was probably not*), or None."""
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR") and tokens[j].text.lower() not in ("not", "n't"):
        j += 1
    return j if j > i + 1 and j < len(tokens) and tokens[j].text.lower() == "not" else None


def _auxiliary_did(tokens: tuple[Token, ...], i: int) -> bool:
    """``did`` as an auxiliary (``did not win``, ``did he win``, ``did win``), not a main verb (``did a
    short telefilm``)."""
    j = i + 1
    while j < len(tokens) and (tokens[j].tag in ("RB", "PRP") or tokens[j].text.lower() in ("not", "n't")):
        word = tokens[j].text.lower()
        if (
            tokens[j].tag == "RB"
            and lemma(word) == word
            and not word.endswith("ly")
            and word not in _NOT_VERBS
        ):
            return True  # closely related raptors did occur there (occur tagged RB)
        j += 1
    if j < len(tokens) and tokens[j].tag == "VB":
        return True
    # Did the war end? When did the war end? (the tagger may read the verb as a noun)
    return _is_question(tokens) and (i == 0 or (i == 1 and tokens[0].tag in ("WRB", "WP", "WDT")))


def _after_contact_relative(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the verb at ``i`` follows a relative clause without a pronoun (*the regime he created*): noun,
    subject pronoun, past verb, then this verb."""
    return (
        i >= 3
        and tokens[i - 1].tag == "VBD"
        and tokens[i - 2].tag == "PRP"
        and tokens[i - 3].tag.startswith("NN")
        and tokens[i - 2].text.lower() in _PRONOUNS
    )


def _surfaced(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """A clause-final past-tense form that the tagger read as a noun or a present verb, right after its subject,
    is a past verb (*After a video surfaced, ...*, *If the team won, ...*: tagged NN; *they left.*: VBP)."""
    out = list(tokens)
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if token.tag == "VBN" and _after_contact_relative(tokens, i):
            out[i] = token._replace(tag="VBD")  # The regime he created lasted until 1974
            continue
        if _present_read_as_plural(tokens, i):
            out[i] = token._replace(tag="VBZ")  # In the narrow sense, the term refers to
            continue
        if token.tag not in ("NN", "VBP", "VB") or i == 0 or i + 1 >= len(tokens):
            continue
        after_cc = tokens[i - 1].tag == "CC" and tokens[i + 1].tag in ("TO", "IN", "DT")  # and strove to
        clause_final = (
            token.tag != "VB"
            and tokens[i + 1].text in (",", ".", ";")
            and tokens[i - 1].tag.startswith(("NN", "PRP"))
        )
        if not (after_cc or clause_final):
            continue
        base = lemma(word)
        if base is not None and word != base and word in past_forms(base):
            out[i] = token._replace(tag="VBD")
    return tuple(out)


_SUBORDINATORS = frozenset(
    {"although", "though", "when", "while", "after", "before", "because", "if", "since", "as", "once",
     "until", "unless", "whereas", "whether", "despite"}
)  # fmt: skip
_RELATIVES = frozenset({"who", "which", "that", "whom", "whose", "where"})
# subordinators that open a clause inside the sentence after a comma (*, especially if they are armed,*)
_MID_SUBORDINATORS = frozenset(
    {"if", "when", "although", "though", "because", "unless", "whereas", "whenever"}
)
_NOT_ADD = {"can": "cannot"}
_CONTRACTED = {
    "did": "didn't", "does": "doesn't", "do": "don't", "is": "isn't", "are": "aren't", "was": "wasn't",
    "were": "weren't", "has": "hasn't", "have": "haven't", "had": "hadn't", "will": "won't", "would": "wouldn't",
    "can": "can't", "could": "couldn't", "should": "shouldn't", "must": "mustn't",
}  # fmt: skip
_AUXILIARY = frozenset({"be", "have", "do"})
_NEGATIVE = frozenset(
    {"never", "no", "nothing", "nobody", "none", "neither", "nor", "hardly", "scarcely", "nowhere"}
)
_FINITE = ("VBD", "VBZ", "VBP", "MD")


def _main_verb(tokens: tuple[Token, ...]) -> int | None:
    """Position of the main clause's finite verb: the first finite verb outside an opening subordinate
    clause (up to its comma) and not right after a relative pronoun's clause opener."""
    start = 0
    if tokens and tokens[0].text.lower() in _SUBORDINATORS and not _is_question(tokens):
        comma = next((i for i, t in enumerate(tokens) if t.text == ","), None)
        if comma is None:
            return None
        start = comma + 1
    relative = in_relative = subordinate = False
    depth = 0
    for i in range(start, len(tokens)):
        token = tokens[i]
        word = token.text.lower()
        if (
            word in _MID_SUBORDINATORS
            and i > start
            and (tokens[i - 1].text == "," or (tokens[i - 1].tag == "RB" and _word_at(tokens, i - 2) == ","))
        ):
            subordinate = True  # Those who ..., especially if they are armed, are known: the if clause's verb
            continue
        if subordinate:
            subordinate = token.text != ","
            continue
        if i > start:  # (This is a streakline.): a sentence in brackets has its verb inside them
            depth += (token.tag == "-LRB-") - (token.tag == "-RRB-" and depth > 0)
        if depth or (token.tag == "-RRB-" and i > start):
            continue  # (earthenware steamer mainly used for making tteok): a parenthesis is no main clause
        if in_relative and token.tag in _FINITE and _after_conjunction(tokens, i):
            continue  # who secrete enzymes ... and thus do not eat: still the relative clause
        if i == 0 and _is_question(tokens) and token.tag in ("WDT", "WP", "WP$", "WRB"):
            continue  # Who won ...? opens a question, not a relative clause
        if word == "than":
            relative = True  # higher than can be achieved: the comparative clause's verb
            continue
        if (
            word in _RELATIVES
            and token.tag in ("WDT", "WP", "WP$", "WRB")
            or (word == "that" and token.tag == "IN" and i > start and tokens[i - 1].tag.startswith("NN"))
        ):
            relative = True  # the next finite verb is the relative clause's
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if (
            following is not None
            and following.tag in ("VBD", "VBN")
            and _after_contact_relative(tokens, i + 1)
            and not (
                i + 2 < len(tokens) and tokens[i + 2].tag in ("NNS", "JJ")
            )  # he skippered armed trawlers
        ):
            continue  # the regime he created lasted: "created" is the relative clause's verb
        if (
            token.tag in _FINITE
            and token.text[:1].isupper()
            and any(t.text[:1].isalpha() for t in tokens[:i])
        ):
            continue  # "The Price Is Right": a capitalised verb inside the sentence is part of a title
        if token.tag in _FINITE:
            lexical = token.tag == "VBD" and lemma(word) not in (None, "be", "do", "have")
            if lexical and nonfinite_reason(tokens, i) is not None:
                continue  # In papers filed Friday, ...: a reduced relative or participle, not the clause's verb
            if lexical and _adjectival(tokens, i):
                continue  # the vastly outnumbered forces were: "were" is the verb
            if lexical and ambiguous_past(word) and _reduced_relative(tokens, i):
                continue  # the tools he used in the shop are; of water-borne eroded material, acts
            if relative:
                relative, in_relative = False, True
                continue
            if token.tag == "VBZ" and _noun_before_verb(tokens, i):
                return None  # Gymnosperm seeds develop: "seeds" is the subject
            following_be = (
                following is not None and following.tag in _FINITE and lemma(following.text.lower()) == "be"
            )
            if token.tag == "VBZ" and following_be and tokens[i - 1].tag.startswith("NN"):
                continue  # The chapel's stained glass windows were designed: "windows" is a noun
            return i
        if token.text in (",", ";", ":"):
            relative = in_relative = False
    return None


def _adjectival(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the past form at ``i`` is a participle used as an adjective before its noun: after a determiner
    and an *-ly* adverb (*the vastly outnumbered South Vietnamese forces*) or after a preposition and an
    adjective (*of water-borne eroded material*)."""
    if i < 2 or i + 1 >= len(tokens) or not tokens[i + 1].tag.startswith(("NN", "JJ")):
        return False
    before, first = tokens[i - 1], tokens[i - 2]
    if before.text.lower().endswith("ly") and first.tag in ("DT", "PRP$"):
        return True
    return before.tag == "JJ" and first.tag == "IN"


_YEAR = re.compile(r"1[0-9]{3}|20[0-9]{2}")


def negation(
    sentence: str, tokens: tuple[Token, ...] | None = None, context: Sequence[str] | None = None
) -> list[Edit]:
    """Negate the main clause (or make a negated one affirmative). With ``context`` (the document's other
    sentences), a main clause dated by a year the context does not name, where the context names years, is no
    site (``foreign_year``): that date is the intruder's own fact, often one that clashed with the context's
    dates, and negating the clause would deny it (*It was first climbed in 1960* beside a first ascent in 1973 ->
    *It was not first climbed in 1960*: issue #50's readings).

    >>> [e.after for e in negation("The town received its charter in 1201.")]
    ['did not receive']
    >>> [e.after for e in negation("It has a population of 500.")]
    ['does not have']
    >>> negation("He did not win the race.")
    NoSite('already_negative')
    >>> negation("The town received its charter in 1201.", context=["It was founded in 1150."])
    NoSite('foreign_year')
    """
    tokens = _surfaced(analyse(sentence) if tokens is None else tokens)
    edits = _negation(sentence, tokens)
    if not edits or not context:
        return edits
    years = {t.text for c in context for t in tokenize(c) if _YEAR.fullmatch(t.text)}
    i = _main_verb(tokens)
    if years and i is not None:
        end = next(
            (
                j
                for j in range(i + 1, len(tokens))
                if tokens[j].text in (",", ";", ":")
                and not (j + 1 < len(tokens) and _YEAR.fullmatch(tokens[j + 1].text))  # on March 16, 1998
            ),
            len(tokens),
        )
        if any(_YEAR.fullmatch(t.text) and t.text not in years for t in tokens[:end]):
            return NoSite("foreign_year")
    return edits


def _negation(sentence: str, tokens: tuple[Token, ...]) -> list[Edit]:
    """:func:`negation` of ``tokens`` (surfaced), without the context's gate."""
    i = _main_verb(tokens)
    if i is None:
        return NoSite("no_main_verb")
    if _verb_read_as_noun(tokens, i):
        return NoSite(
            "verb_read_as_noun"
        )  # The extent varies depending on ...: the main verb tagged as a noun
    inside = _in_title(tokens, i)
    if inside:
        return NoSite(inside)
    token = tokens[i]
    word = token.text.lower()
    nxt = _next_word(tokens, i)
    nxt_word = nxt.text.lower() if nxt is not None else ""
    if nxt_word == "," and i == 1 and tokens[0].text.lower() in ("you", "i"):
        return NoSite("discourse_marker")  # You know, ...; I mean, ...
    if nxt_word in _NEGATIVE or any(t.text.lower() in _NEGATIVE for t in tokens[:i]):
        return NoSite("negated_otherwise")  # never, no one, nothing
    base = lemma(word) if token.tag != "MD" else word
    if nxt_word in ("not", "n't") and token.tag != "MD" and base not in _AUXILIARY:
        return NoSite("negated_otherwise")  # encountered not X but Y: a phrase negated, not the clause
    if nxt_word in ("not", "n't") or word == "cannot":
        # INSteD's probe takes a sentence to its negation (original_to_negation: none of its 100 hand edits
        # removes one); made affirmative, a negated intruder was repaired (*They are not part of the Apple
        # Macintosh line* -> *They are part of ...*, in a text on Macintosh clones: issue #50's seed-9292
        # reading) or left ungrammatical (*requires horses to jump over any obstacles*)
        return NoSite("already_negative")
    if any(
        t.text.lower() == "too" and k + 1 < len(tokens) and tokens[k + 1].text in (".", ",", ";")
        for k, t in enumerate(tokens)
        if k > i
    ):
        return NoSite("negative_polarity")  # found at lakes too -> *not found at lakes too* (either)
    if base == "have" and nxt_word == "yet" and _word_at(tokens, i + 2) == "to":
        return NoSite("negated_otherwise")  # has yet to win -> *does not have yet to win*
    opens = i == 0 or tokens[i - 1].tag in ("WRB", "WP", "WDT")  # Did he ...? / So what will it take?
    if _is_question(tokens) and opens and (token.tag == "MD" or base in _AUXILIARY) and word in _CONTRACTED:
        return [replace(token, match_case(token.text, _CONTRACTED[word]))]
    perfect = base == "have" and _participle_follows(tokens, i) and not _adjectival_participle(tokens, i)
    if i > 0 and tokens[i - 1].text.lower() in _NO_NOT_BEFORE:
        return NoSite("negative_polarity")  # he only had 69 RBI -> *he only did not have*
    if token.tag == "MD" or base == "be" or perfect:
        negated = match_case(token.text, _NOT_ADD[word]) if word in _NOT_ADD else token.text + " not"
        if nxt_word in _EPISTEMIC:  # was probably born -> was probably not born (never: not probably)
            return [_span(sentence, token, nxt, f"{sentence[token.start : nxt.end]} not")]
        if nxt_word == "also":  # It was also screened -> It was not screened (never: not also)
            return [Edit(token.start, nxt.end, sentence[token.start : nxt.end], negated)]
        return [Edit(token.start, token.end, token.text, negated)]  # he's -> he's not
    if base == "do" and nxt is not None and nxt.tag == "VB":
        return [replace(token, token.text + " not")]
    if base is None:
        return NoSite("unknown_verb")
    if nxt_word in ("and", "or") and i + 2 < len(tokens) and _same_form(tokens[i + 2], token):
        return NoSite("coordinated_verb")  # lives and works in X -> *does not live and works in X*
    if i > 0 and tokens[i - 1].text.lower() in _SEQUENCE:
        return NoSite("sequence_adverb")  # It soon branched out -> *It soon did not branch out*
    do = _do_form(tokens, i, base)
    if do is None:
        return NoSite("unknown_verb")
    if i > 0 and tokens[i - 1].text.lower() == "also":  # He also served -> He did not serve (never: not also)
        also = tokens[i - 1]
        return [
            Edit(
                also.start,
                token.end,
                sentence[also.start : token.end],
                match_case(also.text, f"{do} not {base}"),
            )
        ]
    if i > 0 and tokens[i - 1].text.lower() == "first" and tokens[i - 1].tag == "RB":
        first = tokens[i - 1]  # His writing first gained -> did not first gain (never: first did not gain)
        after = match_case(first.text, f"{do} not {first.text.lower()} {base}")
        return [Edit(first.start, token.end, sentence[first.start : token.end], after)]
    return [replace(token, match_case(token.text, f"{do} not {base}"))]


# adverbs that place an event in a narrative's order or say how soon or how fast it came, which a negated event
# cannot have (*It soon did not branch out*, *European influence gradually did not bring an end*, *She then did
# not become a writer*, *temporarily did not reverse the decline*: issue #50's readings, seeds 9292 and 9501; the
# hand-site reading judged INSteD's own *later did not move* the same way)
_SEQUENCE = frozenset(
    "soon gradually quickly immediately shortly rapidly slowly then later subsequently eventually finally "
    "thereafter afterwards afterward temporarily initially briefly once again successfully".split()
)


def _reduced_relative(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the past form at ``i``, after a noun (adverbs aside), is a participle modifying it, the clause's
    verb coming later in its clause: right after the participle's phrase closes with a comma or a quotation
    mark (*The liberties explicitly defined, make up*; *the birds now nicknamed "Darwin's finches" played*), or
    a present verb, a modal or *be* with no subject pronoun of its own (*The tools he used in the shop are*;
    *His lifetime earned run average of 4.50 was good*)."""
    j = i - 1
    while j >= 0 and tokens[j].tag in ("RB", "RBR", "RBS"):
        j -= 1
    contact = j >= 1 and tokens[j].text.lower() in _PRONOUNS and tokens[j - 1].tag in ("NN", "NNS")
    if j < 0 or not (contact or tokens[j].tag in ("NN", "NNS", "NNP", "NNPS")):
        return False  # he defined: a pronoun's verb is finite (but the tools he used ... are)
    k = i
    while k + 1 < len(tokens):
        k += 1
        token, word = tokens[k], tokens[k].text.lower()
        if token.text in QUOTES:
            close = next((m for m in range(k + 1, len(tokens)) if tokens[m].text in QUOTES), None)
            if close is None:
                return False  # a quotation open to the sentence's end: its verbs are the speaker's
            k = close  # nicknamed "Darwin's finches" played: the verb after the closed quotation
            if k + 1 < len(tokens) and tokens[k + 1].tag in ("VB", "VBZ", "VBP", "VBD", "MD"):
                nxt = tokens[k + 1]
                return nxt.tag != "VBD" or lemma(nxt.text.lower()) == "be"
            continue
        if (
            token.tag in ("CC", "WDT", "WP", "WRB")
            or token.text in (";", ":")
            or word in _SUBORDINATORS
            or word == "that"
        ):
            return False
        if tokens[k - 1].text == "," and (token.tag in ("VB", "VBZ", "VBP", "MD") or lemma(word) == "be"):
            return True  # defined, make up: tagged VB there (but *, centred on*: a participle's phrase)
        if token.tag in _FINITE:
            own_subject = tokens[k - 1].tag == "PRP"
            return not own_subject and (token.tag in ("VBZ", "VBP", "MD") or lemma(word) == "be")
    return False


# adverbs before a verb that a negation cannot follow (*he only did not have*, *already did not*)
_NO_NOT_BEFORE = frozenset({"only", "already", "just", "even", "nearly", "almost"})
# adverbs of likelihood, which the negation follows (*was probably not born*, never *was not probably born*)
_EPISTEMIC = frozenset(
    "probably likely possibly perhaps certainly definitely apparently reportedly allegedly presumably "
    "supposedly seemingly".split()
)


def _word_at(tokens: tuple[Token, ...], i: int) -> str:
    return tokens[i].text.lower() if 0 <= i < len(tokens) else ""


def _same_form(other: Token, verb: Token) -> bool:
    """Whether ``other`` (after *and*/*or*) is a verb in the form of ``verb``: tagged so, or a form lemminflect
    gives for its tag (*works* after *lives*, which the tagger reads as a plural noun)."""
    if other.tag == verb.tag:
        return True
    base = lemma(other.text.lower())
    return base is not None and inflect(base, verb.tag) == other.text.lower()


_TITLE_TAGS = frozenset(
    {"VB", "VBP", "VBZ", "VBD", "VBN", "VBG", "PRP", "PRP$", "DT", "IN", "TO", "RB", "MD"}
)


def _in_title(tokens: tuple[Token, ...], i: int) -> str | None:
    """Why the main verb at ``i`` may not be negated: ``in_quotation`` (inside double quotes: a quotation or a
    headline, *claiming "Alien heads found in Georgia."*) or ``in_title`` (a title's capitalised words: the verb
    capitalised inside the sentence, or followed by a capitalised verb, pronoun or function word, *three albums,
    I'll Sing with You and Only 17*, *It's Me, Margaret*), or None.

    >>> from incoherent.corpora.probes.text import analyse
    >>> _in_title(analyse("She released I'll Sing with You in 2009."), 3)
    'in_title'
    >>> _in_title(analyse("The Corrs also perform it."), 3) is None
    True
    """
    if in_quotation(tokens, i) and any(t.text in ('"', "”", "''") for t in tokens[i + 1 :]):
        return "in_quotation"  # (a fragment that opens with the end of a title, *Song)" is a song*, is not)
    token = tokens[i]
    if i > 0 and token.text[:1].isupper() and tokens[i - 1].text not in _OPENERS:
        return "in_title"
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is not None and nxt.text[:1].isupper() and nxt.text != "I" and nxt.tag in _TITLE_TAGS:
        if not nxt.tag.startswith("VB") or lemma(nxt.text.lower()) is not None:  # not a name read as a verb
            return "in_title"
    return None


_OPENERS = frozenset({'"', "“", "(", ":", ";", "--", "—"})
_SUBJECT_TAGS = frozenset({"DT", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "PRP$", "POS", "CD"})


def _present_read_as_plural(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the word at ``i``, tagged as a plural noun, is the present verb of the clause's subject: a
    third-person form right after a singular noun that opens the clause (nothing but its noun phrase before it,
    after the sentence's start or a comma), followed by a determiner, a possessive, a gerund or *to* (*the term
    refers to*, *Istanbul straddles the Bosphorus*, *Smith refuses to*)."""
    token = tokens[i]
    if token.tag != "NNS" or i == 0 or i + 1 >= len(tokens) or tokens[i - 1].tag not in ("NN", "NNP"):
        return False
    word = token.text.lower()
    after = tokens[i + 1]
    moving = after.tag == "IN" and after.text.lower() in (
        "with",
        "into",
        "through",
        "from",
        "across",
        "between",
    )
    if after.tag not in ("DT", "PRP$", "VBG", "TO") and not moving and is_noun(word):
        return False  # the population figures of 2010 (but: the term refers, the skin form presents with)
    base = lemma(word)
    if base in (None, "be", word) or inflect(base, "VBZ") != word:
        return False
    k = i - 1
    while k >= 0 and tokens[k].tag in _SUBJECT_TAGS:
        k -= 1
    return k < 0 or tokens[k].text == ","


def _adjectival_participle(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the participle after *have* at ``i`` is an adjective joined to another one before a noun
    (*knives have fixed or folding blades*)."""
    return (
        i + 3 < len(tokens)
        and tokens[i + 1].tag == "VBN"
        and tokens[i + 2].tag == "CC"
        and tokens[i + 3].tag in ("JJ", "VBG", "VBN")
    )


def _after_conjunction(tokens: tuple[Token, ...], i: int) -> bool:
    j = i - 1
    while j >= 0 and tokens[j].tag in ("RB", "RBR"):
        j -= 1
    return j >= 0 and tokens[j].tag == "CC"


def _noun_before_verb(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the word at ``i``, tagged as a present verb, is a plural noun followed by the clause's verb in its
    base form (*Gymnosperm seeds develop either on*)."""
    if i + 1 >= len(tokens) or not is_noun(tokens[i].text):
        return False
    nxt = tokens[i + 1]
    word = nxt.text.lower()
    return (
        nxt.tag in ("NN", "VBP", "VB") and lemma(word) == word and tokens[i - 1].tag.startswith(("NN", "JJ"))
    )


def _verb_read_as_noun(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether a present-tense verb the tagger read as a noun stands before the verb at ``i``, right after its
    subject (*The exact extent varies depending on*, *the melting point of the iron increases,*, *Religious
    Jews regard Judaism as*): the verb at ``i`` is then a later clause's, and negating it would miss the main
    clause."""
    start = 0
    if tokens and tokens[0].text.lower() in _SUBORDINATORS:
        start = next((k + 1 for k, t in enumerate(tokens) if t.text == ","), 0)
    for k in range(max(start, 1), i):
        token, after = tokens[k], tokens[k + 1]
        word = token.text.lower()
        if token.tag not in ("NN", "NNS") or not tokens[k - 1].tag.startswith("NN"):
            continue
        base = lemma(word)
        if base is None or base == "be":
            continue
        third = token.tag == "NNS" and word == inflect(base, "VBZ") and word != base
        if third and after.tag in ("DT", "PRP$", "VBG", "TO"):
            return True  # The exact extent varies depending on
        if token.tag == "NN" and word == base and _plural_noun(tokens[k - 1]) and after.tag == "NNP":
            return True  # Religious Jews regard Judaism as
    return False


def _do_form(tokens: tuple[Token, ...], i: int, base: str) -> str | None:
    """The form of *do* that carries the verb's tense and agreement: a past form -> ``did`` (``played`` ->
    ``did not play``), a third-person form -> ``does``, a present base form -> ``do`` whatever the subject
    looks like (the verb's own form shows its agreement: *Lookalikes include* -> *do not include*), a form that
    is both past and base (``put``, ``cut``) -> ``did`` after a singular subject or where the tagger says past."""
    word, tag = tokens[i].text.lower(), tokens[i].tag
    past, third = word in past_forms(base), word == inflect(base, "VBZ")
    if third:
        return "does"
    if past and (word != base or tag == "VBD"):
        return "did"
    if word == base or word == inflect(base, "VBP"):
        if not past:  # a present base form agrees with a plural (or I, you): The pots sell -> do not sell
            return "do"
        plural = subject_is_plural(tokens, i)
        if plural is False and tokens[i - 1].text.lower() not in ("i", "you"):
            return "did"  # it cost: a singular subject's present is "costs", so this is the past
        return "do"
    return None


def _span(sentence: str, first: Token, last: Token, after: str) -> Edit:
    """The edit replacing the characters from ``first`` to ``last`` (tokens) by ``after``."""
    return Edit(first.start, last.end, sentence[first.start : last.end], after)


def _plural_noun(token: Token) -> bool:
    return token.tag in ("NNS", "NNPS") or (token.tag == "NNP" and token.text.endswith("s"))
