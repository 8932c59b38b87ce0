"""Whether an inanimate *it* would find a referent where ``animacy-down`` puts it: a singular noun phrase naming a
thing that acts or is acted on as a person is (an organisation, a work, a procedure) before the pronoun in the
intruder, as the subject or the last noun phrase of the sentence before it, or a thing that sentence has for its subject as *it*. There *It held the seat until its
defeat* reads as the party the sentence before named, and the probe no longer clashes with its document.
"""

from __future__ import annotations

import re

from incoherent.corpora.probes.lexicon import lemma
from incoherent.corpora.probes.referents import expletive_it
from incoherent.corpora.probes.text import Token, analyse

# the heads of noun phrases an "it" with a person's predicate can stand for
THINGS = frozenset(
    """party team club company corporation firm group band organisation organization association society league
    union council committee board agency ministry government department school college university academy institute
    church network station channel newspaper paper magazine journal label album single song film movie book novel
    series show programme program play episode procedure project ship vessel unit division regiment army navy squad
    franchise brand product device business restaurant hotel museum festival campaign movement ep record mixtape
    soundtrack musical opera sitcom documentary orchestra choir ensemble duo trio quartet collective foundation
    charity trust institution hospital publisher studio website service operation expedition treatment
    therapy""".split()
)
_FINITE = ("VBD", "VBZ", "VBP", "MD")


_NP = frozenset(
    {"DT", "PDT", "JJ", "JJR", "JJS", "CD", "POS", "PRP$", "NN", "NNS", "NNP", "NNPS", "HYPH", "VBN"}
)


def _thing(tokens: tuple[Token, ...], j: int) -> bool:
    """A singular head noun at ``j`` (the last noun of its run) that names a thing of :data:`THINGS`, that no
    preposition governs (*at Davidson College*, *a member of the Republican Party* are no referents of a
    subject) and that is not one of a coordination (*Newsweek and New York Times Magazine*)."""
    token = tokens[j]
    if token.tag not in ("NN", "NNP") or (j + 1 < len(tokens) and tokens[j + 1].tag.startswith("NN")):
        return False
    word = token.text.lower()
    if word not in THINGS and not (token.tag == "NN" and (lemma(word) or word) in THINGS):
        return False
    start, depth = j, 0
    while start > 0:
        before = tokens[start - 1]
        depth += (before.text == ")") - (before.text == "(")
        if depth == 0 and before.tag == "CC":
            return False  # Newsweek and New York Times Magazine: two things, no referent of "it"
        if not (depth > 0 or before.text in ("(", "–", "-") or before.tag in _NP):
            break  # the Robotnik (the Worker) paper: one noun phrase
        start -= 1
    return not (start > 0 and tokens[start - 1].tag in ("IN", "TO"))


def _subject_head(tokens: tuple[Token, ...]) -> int | None:
    """The head of the sentence's subject: the last noun before its first finite verb, with no comma between."""
    verb = next((k for k, t in enumerate(tokens) if t.tag in _FINITE), None)
    if verb is None:
        return None
    for k in range(verb - 1, -1, -1):
        if tokens[k].text in (",", ";", ":", "(", ")"):
            return None
        if tokens[k].tag.startswith("NN"):
            return k
    return None


def _subject_start(tokens: tuple[Token, ...]) -> int | None:
    """The first word of the sentence's subject: its first word, or the first after an opening phrase and its
    comma (*In 2012, it was named*)."""
    verb = next((k for k, t in enumerate(tokens) if t.tag in _FINITE), None)
    if verb is None:
        return None
    comma = max((k for k in range(verb) if tokens[k].text == ","), default=-1)
    return comma + 1 if comma + 1 < verb else None


def _cleft(tokens: tuple[Token, ...], i: int) -> bool:
    """*It was during his tenure ... that he organised*: an *it* before *be* with a *that* later is no thing."""
    return (
        i + 1 < len(tokens)
        and tokens[i + 1].text.lower() in ("is", "was")
        and any(t.text.lower() == "that" for t in tokens[i + 2 :])
    )


def _last_head(tokens: tuple[Token, ...]) -> int | None:
    """The head of the sentence's last noun phrase (before its closing punctuation and brackets)."""
    k = len(tokens) - 1
    depth = 0
    while k >= 0:
        text = tokens[k].text
        if text in (")", "]"):
            depth += 1
        elif text in ("(", "["):
            depth -= 1
        elif depth == 0 and tokens[k].tag.startswith("NN"):
            return k
        elif (
            depth == 0
            and tokens[k].tag[:2] in ("VB", "MD", "WD", "WP", "IN", "TO", "CC")
            or text in (",", ";")
        ):
            return None  # the sentence ends in a verb or a clause: no noun phrase at its end
        k -= 1
    return None


def it_subject(sentence: str) -> bool:
    """Whether the sentence's subject is a referential *it* (*In 2012, it was officially named after ...*; not
    *It was during his tenure that ...*).

    >>> it_subject("In 2012, it was officially named after Paul Graham Sutherland.")
    True
    >>> it_subject("It was during his tenure as a curator at the Louvre that he organised the meeting.")
    False
    """
    tokens = analyse(sentence)
    k = _subject_start(tokens)
    return (
        k is not None
        and tokens[k].text.lower() == "it"
        and not expletive_it(tokens, k)
        and not _cleft(tokens, k)
    )


def thing_antecedent(tokens: tuple[Token, ...], i: int, preceding: str | None) -> bool:
    """Whether *it* at ``i`` could take a thing as its referent: a singular noun of :data:`THINGS` heads a noun
    phrase before ``i`` in the sentence, or heads the subject or the last noun phrase of ``preceding``, or
    the subject of ``preceding`` is a referential *it*, or ``preceding`` has an *its* (*the policy and its effects
    were discussed*: a thing is in view).

    >>> from incoherent.corpora.probes.text import analyse
    >>> thing_antecedent(analyse("He held the seat until his defeat in 1949."), 0,
    ...                  "In 1931 he joined the Labor party.")
    True
    >>> thing_antecedent(analyse("He held the seat until his defeat in 1949."), 0, "He was born in Leeds.")
    False
    >>> thing_antecedent(analyse("At the former institution she served as tutor."), 4, None)
    False
    """
    if any(_thing(tokens, j) for j in range(i)):
        return True
    if not preceding:
        return False
    before = analyse(preceding)
    if it_subject(preceding) or any(t.text.lower() == "its" for t in before):
        return (
            True  # It describes his life ...: the new "it" continues the thing the sentence before is about
        )
    return any(k is not None and _thing(before, k) for k in (_subject_head(before), _last_head(before)))


_ANIMAL_LEAD = re.compile(
    r"\b(?:is|was)\s+(?:a|an|the)\s+(?:[\w,'-]+\s+){0,5}?(?:race\s?horse|horse|stallion|mare|colt|filly|gelding|"
    r"dog|bitch|greyhound|cat|elephant|gorilla|chimpanzee|orangutan|whale|dolphin|orca|parrot)s?\b",
    re.IGNORECASE,
)


def animal_lead(lead: str) -> bool:
    """Whether the document's first sentence says its subject is an animal (*Good Lord was a New Zealand
    thoroughbred racehorse*): English calls an animal *it* as readily as *he*, so *it* fits.

    >>> animal_lead("Good Lord was a New Zealand thoroughbred racehorse owned by Michael L. Hines.")
    True
    >>> animal_lead("Mark E. Casse is a race horse trainer.")
    False
    """
    match = _ANIMAL_LEAD.search(lead)
    if match is None:
        return False
    rest = lead[match.end() :].lstrip()
    return not re.match(r"[a-z]", rest) or rest.split()[0].lower() in (
        "owned",
        "bred",
        "trained",
        "who",
        "that",
        "which",
        "and",
        "best",
        "from",
        "born",
    )
