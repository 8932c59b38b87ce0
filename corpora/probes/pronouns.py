"""Pronoun phenomena: ``gender``, ``animacy-down`` and ``animacy-up`` (INSteD, Shen et al. 2021, Table 7).

Each is a pure function ``sentence -> list of edits``; given the document's other sentences (``context``) it
edits only where the edit *reinforces* the intruder's incoherence, and says why it skipped a sentence
(:class:`corpora.probes.edits.NoSite`, counted by ``probes`` as ``no_site/<phenomenon>/<reason>``).

- ``gender``: the intruder's pronouns of the gender of the entity the context talks about (its pronouns and
  titles tell it: :func:`corpora.probes.referents.context_gender`) are flipped to the other gender (he <-> she,
  him <-> her, his <-> her/hers, himself <-> herself), so they now clash with the context; pronouns already of
  the other gender stay (flipping them would repair the intruder). Skipped: the context gives no gender or
  two (``no_context_gender``, ``mixed_context_gender``), the intruder has no pronoun of the context's gender
  (``would_repair``), a name in the intruder can be the referent (``referent_in_intruder``; also a reflexive,
  whose referent is its clause's subject, and the subject after an opening phrase: *For much of its history,
  Novgorod*), a gendered word in the intruder would give the edit away without the context
  (``gendered_word_in_intruder``), the pronouns stand inside a direct quotation (``in_quotation``). Without a context
  (a lone sentence) the pronouns of the sentence's first gendered pronoun are flipped.
- ``animacy-down``: he/she/him/her -> it, his/her -> its, hers/his (standing alone) -> its own,
  himself/herself -> itself; the context's gender's pronouns where the intruder has them. Only where the
  context talks about a person (``no_context_person``, ``mixed_context_gender``: in a text about a thing,
  *it* would make the intruder fit), and not where the referent is named in the intruder
  (``referent_in_intruder``). Never a *she* that may
  stand for a ship or a country (``she_vessel``, ``she_country``), nor where the context opens more sentences
  with *It* than with he/she (``context_about_thing``), inside a quotation (``in_quotation``) or for the speaker
  of a report (``speech_attribution``: *"...," it said* fits a news text's bureau or club). He, she and it are all third person
  singular: every verb still agrees.
- ``animacy-up``: it -> he/she (subject) or him/her (object), its -> his/her, itself -> himself/herself, in the
  gender opposite to the context's person (the given ``gender`` when the context has none): in a man's
  biography *It aims to show how people differ* -> *He aims ...* would read as about him, *She aims ...* finds
  no referent; not beside a he/she of the
  intruder (``person_in_intruder``) nor where a noun phrase before it in the intruder is its referent
  (``referent_in_intruder``); never an expletive or
  extraposed *it* (``it is ... that``, ``it was reported``: ``expletive_it`` when no other is left), never in a
  text about a ship or a country, which English may call *she* (``vessel``, ``country``), nor about an animal
  species, which English calls *he* or *she* (``animal``: :func:`context_about_animal`), nor an *it* in a title
  (``in_title``: *It's Me, Margaret.*). A later *it*, *its* or *itself* goes on with the first (*Much of her revenue ... while
  her clients*), except a later *its* or object *it* after a definite noun phrase that can own it (*of the
  road, ... south of its junctions*) or an object *it* with a noun of its own before it (*It detects light and
  converts it*): :func:`_coreferent`.

"her" is an object (-> him) or a possessive (-> his) by what follows it, "his" a determiner (-> her) or a
pronoun (-> hers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from incoherent.corpora.probes.antecedents import animal_lead, it_subject, thing_antecedent
from incoherent.corpora.probes.edits import Edit, NoSite, replace
from incoherent.corpora.probes.referents import (
    _COUNTRIES,
    _calendar,
    _unknown_name,
    context_about_thing,
    context_gender,
    expletive_it,
    in_quotation,
    named_before,
    opener_referent,
    she_referent,
    speech_attribution,
)
from incoherent.corpora.probes.text import Token, analyse, match_case
from incoherent.corpora.probes.verbs import _in_title

MASCULINE = frozenset({"he", "him", "his", "himself"})
FEMININE = frozenset({"she", "her", "hers", "herself"})
GENDERED_NOUNS = frozenset(
    """man men woman women boy girl son daughter father mother husband wife brother sister king queen prince
    princess emperor empress duke duchess lord lady actor actress widow widower nephew niece uncle aunt
    grandson granddaughter grandfather grandmother monk nun priestess heroine hero businessman businesswoman
    sportsman sportswoman chairman chairwoman spokesman spokeswoman mr mrs ms miss sir dame madam gentleman
    count countess baron baroness male female""".split()
)
_NOMINAL = ("NN", "JJ", "CD", "VBG")  # what a possessive determiner stands before


def _possessive(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``his``/``her`` at ``i`` is a determiner (``her mother``), not a pronoun (``saw her``,
    ``it is his``). The next word decides where it can; the tagger's tag otherwise."""
    k = i + 1  # a quoted title or term after it: his "theory of connectionism"
    while k < len(tokens) and tokens[k].text in ('"', "“", "``", "'", "‘"):
        k += 1
    nxt = tokens[k] if k < len(tokens) else None
    if nxt is None or not nxt.text[:1].isalnum():
        return False
    if nxt.tag.startswith(_NOMINAL) or nxt.text.lower() == "own":
        return True
    j = k  # modifiers before a noun: his poetically titled plays
    while j < len(tokens) and tokens[j].tag in (
        "RB",
        "RBR",
        "RBS",
        "JJ",
        "JJR",
        "JJS",
        "VBN",
        "VBG",
        "VBD",
        "CD",
    ):
        j += 1
    if j > k and j < len(tokens) and tokens[j].tag.startswith("NN"):
        return True
    if nxt.tag in ("DT", "IN", "TO", "RB", "PRP", "PRP$", "CC", "WDT", "WP", "MD") or nxt.tag.startswith(
        "VB"
    ):
        return False
    return tokens[i].tag == "PRP$"


def _gendered(tokens: tuple[Token, ...], group: frozenset[str] | None = None) -> list[int]:
    """Positions of the gendered pronouns of ``group`` (default: the first gendered pronoun's gender)."""
    if group is None:
        first = next((i for i, t in enumerate(tokens) if t.text.lower() in MASCULINE | FEMININE), None)
        if first is None:
            return []
        group = MASCULINE if tokens[first].text.lower() in MASCULINE else FEMININE
    return [i for i, t in enumerate(tokens) if t.text.lower() in group]


def _referent_inside(tokens: tuple[Token, ...], positions: list[int]) -> bool:
    """Whether the first of the pronouns at ``positions`` finds its referent in the sentence itself: a
    reflexive binds to its clause's subject (*a suicide bomber tried to blow himself up*), a pronoun in an
    opening phrase looks forward to the subject after its comma (*Despite his illness, the king*)."""
    first = positions[0]
    if tokens[first].text.lower() in ("himself", "herself", "itself"):
        # its referent is its clause's subject: one of our pronouns if one follows (as an artist herself, she)
        return all(tokens[i].text.lower() in ("himself", "herself", "itself") for i in positions)
    return opener_referent(tokens, first) or _appositive_opener(tokens, first)


def _appositive_opener(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the pronoun at ``i`` stands in an opening phrase without a verb whose comma a name follows as the
    subject: the name is its referent (*A musical continuation of her 2010 album Still Standing, Monica started*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> _appositive_opener(analyse("A continuation of her 2010 album, Monica started work."), 3)
    True
    """
    comma = next((j for j in range(i + 1, len(tokens)) if tokens[j].text == ","), None)
    if comma is None or comma + 2 >= len(tokens) or any(_finite_tag(t) for t in tokens[:comma]):
        return False
    k = comma + 1
    while k < len(tokens) and tokens[k].text[:1].isupper() and tokens[k].tag.startswith(("NNP", "NN", "JJ")):
        k += 1
    return k > comma + 1 and k < len(tokens) and _finite_tag(tokens[k])


def _after_opener(tokens: tuple[Token, ...], i: int) -> int:
    """Where the clause of the subject pronoun at ``i`` starts when an opening phrase without a finite verb and
    a comma come before it (*A member of the Republican Party, he*; *Initially a friend of Lenin, in 1921 he*;
    *Having resigned command of the station, he*): the phrase is said of the pronoun, its nouns are no other
    referent; else 0.

    >>> from incoherent.corpora.probes.text import analyse
    >>> _after_opener(analyse("A member of the Republican Party, he served."), 7)
    7
    >>> _after_opener(analyse("The company said he left."), 3)
    0
    """
    comma = max((j for j in range(i) if tokens[j].text == ","), default=None)
    if comma is None or any(tokens[j].tag in ("VBD", "VBZ", "VBP", "MD") for j in range(comma)):
        return 0
    between = tokens[comma + 1 : i]  # in 1921 he
    if len(between) > 3 or any(t.tag.startswith(("NN", "PRP")) and not t.text[:1].isdigit() for t in between):
        return 0
    return comma + 1


def _outside_quotations(tokens: tuple[Token, ...], positions: list[int]) -> list[int]:
    """``positions``, or none where one of them stands inside a direct quotation: the quoted pronoun may stand
    for anyone the speaker knows, and editing only those outside it would split one referent in two (*Her
    legacy ... "under his direct impact"*)."""
    return [] if any(in_quotation(tokens, i) for i in positions) else positions


_PREDICATING = frozenset({"is", "was", "are", "were", "be", "been", "being", "became", "becomes", "become",
                          "as", "remained", "remains"})  # fmt: skip
_CALLING = frozenset({"consider", "considers", "considered", "call", "calls", "called", "name", "names", "named",
                      "crowned", "declared", "proclaimed", "elected", "made", "makes"})  # fmt: skip
_IN_PREDICATE = frozenset({"DT", "JJ", "JJR", "JJS", "CD", "RB", "CC", "NN", "NNS", "NNP", "PRP$", "VBN", "VBG",
                           "IN", "``", "''", ","})  # fmt: skip


def _gendered_noun(token: Token) -> bool:
    """A lower-case gendered noun (*son*, *sons*, *female*); a capitalised one is a name or a title (*King George
    IV's Coronation Medal*, *Miss America*, *Men's Journal*, *Duke University*)."""
    word = token.text
    if not word.islower():
        return False
    return word in GENDERED_NOUNS or (word.endswith("s") and word[:-1] in GENDERED_NOUNS)


def _gender_tell(tokens: tuple[Token, ...]) -> bool:
    """Whether a gendered noun in the sentence is said of its subject, so that the sentence gives its gender away
    without the context: the noun phrase after *be* or *as* (*She was the son of*, *was last seen ... as the main
    female lead*, *born as their fourth child and only daughter*). A gendered noun of another person is no tell
    (*earned him King George IV's Coronation Medal*, *her role as Mary, the mother of Jesus*, *he and his wife*,
    *married to a daughter of the king*).

    >>> from incoherent.corpora.probes.text import analyse
    >>> _gender_tell(analyse("She was the son of a farmer.")), _gender_tell(analyse("He and his wife left."))
    (True, False)
    """
    for i, token in enumerate(tokens):
        if not _gendered_noun(token) or (i + 1 < len(tokens) and tokens[i + 1].tag == "POS"):
            continue
        j = i - 1
        while j >= 0 and tokens[j].tag in _IN_PREDICATE and tokens[j].text.lower() not in _PREDICATING:
            word = tokens[j].text.lower()
            if word in ("his", "her", "its") or (word == "," and tokens[j + 1].tag != "CC"):
                break  # his wife; Mary, the mother of Jesus: another person
            j -= 1
        if j >= 0 and tokens[j].text.lower() in _PREDICATING:
            return True
        if j > 0 and tokens[j].tag == "PRP" and tokens[j - 1].text.lower() in _CALLING:
            return True  # Many scholars consider her the unifier of Egypt ... and the first king
    return False


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


def gender(
    sentence: str, tokens: tuple[Token, ...] | None = None, context: Sequence[str] | None = None
) -> list[Edit]:
    """Flip the intruder's pronouns of the context's gender (of the sentence's first gendered pronoun when there
    is no context); where a person's name is the intruder's subject, the name becomes the pronoun of the other
    gender and the pronouns standing for it are flipped with it, as INSteD's authors edited (*Stinson was
    selected ..., where he played* -> *She was selected ..., where she played*).

    >>> [e.after for e in gender("He thanked her and gave her friend his book.", context=["He was a poet."])]
    ['She', 'her']
    >>> gender("She gave her book away.", context=["He was a poet."])
    NoSite('would_repair')
    >>> [e.after for e in gender("She gave him her book, which was hers.")]
    ['He', 'his', 'his']
    >>> [e.after for e in gender("Stinson moved to Chicago in 1988, where he played.", context=["He was a poet."])]
    ['She', 'she']
    """
    tokens = analyse(sentence) if tokens is None else tokens
    if context is None:
        if not any(t.text.lower() in MASCULINE | FEMININE for t in tokens):
            return NoSite("no_pronoun")
        positions = _gendered(tokens)
        return [replace(tokens[i], match_case(tokens[i].text, _flipped(tokens, i))) for i in positions]
    referent, reason = context_gender(context)
    name = _name_subject(tokens, context) if referent is not None else None
    if not any(t.text.lower() in MASCULINE | FEMININE for t in tokens) and name is None:
        return NoSite("no_pronoun")
    if referent is None:
        return NoSite(reason)
    positions = _gendered(tokens, MASCULINE if referent == "m" else FEMININE)
    if not positions and name is None:
        return NoSite("would_repair")
    if positions and not _outside_quotations(tokens, positions):
        return NoSite("in_quotation")  # "I told him," she said: him may be anyone the speaker knows
    if name is None and (named_before(tokens, positions[0]) or _referent_inside(tokens, positions)):
        return NoSite("referent_in_intruder")
    if name is not None and positions and named_before(tokens, positions[0], start_at=name[1]):
        return NoSite("referent_in_intruder")  # another name between the subject and the pronoun
    if _gender_tell(tokens):  # She was the son of King Edward: a tell in the sentence
        return NoSite("gendered_word_in_intruder")
    edits = [replace(tokens[i], match_case(tokens[i].text, _flipped(tokens, i))) for i in positions]
    if name is not None:
        start, end = name
        pronoun = "she" if referent == "m" else "he"
        edits.append(Edit(tokens[start].start, tokens[end - 1].end, sentence[tokens[start].start : tokens[end - 1].end],
                          pronoun.capitalize() if start == 0 else pronoun))  # fmt: skip
    return sorted(edits)


_TITLES = frozenset({"professor", "dr.", "dr", "mr.", "mr", "mrs.", "mrs", "ms.", "ms", "sir", "dame", "judge",
                     "senator", "president", "general", "captain", "coach"})  # fmt: skip


def _name_subject(tokens: tuple[Token, ...], context: Sequence[str]) -> tuple[int, int] | None:
    """The token span of a person's name that is the sentence's subject (at its start, or after an opening
    phrase and its comma), before its finite verb: a person where the context names them too (the sentence in
    its own document) or a he/she of the sentence stands for them (*Stinson was selected ..., where he
    played*); else None.

    >>> from incoherent.corpora.probes.text import analyse
    >>> _name_subject(analyse("In addition, Bassett co-wrote the song."), ["Kate Bassett (born 1970) is a singer."])
    (3, 4)
    >>> _name_subject(analyse("Microsoft released Windows."), ["He was a poet."]) is None
    True
    """
    start = 0
    comma = next((j for j, t in enumerate(tokens) if t.text == ","), None)
    if comma is not None and not any(_finite_tag(t) for t in tokens[:comma]) and tokens[0].tag != "NNP":
        start = comma + 1  # While at Boalt Hall, Werdegar served
    end = start + (start < len(tokens) and tokens[start].text.lower() in _TITLES)
    while (
        end < len(tokens)
        and tokens[end].text[:1].isupper()
        and (
            tokens[end].tag.startswith("NNP") or _unknown_name(tokens, end)  # Stinson (NN) moved
        )
    ):
        end += 1
    if not 1 <= end - start <= 3 or end >= len(tokens) or tokens[end - 1].tag == "NNPS":
        return None
    verb = end
    if tokens[verb].text == "," and verb + 2 < len(tokens) and tokens[verb + 2].text == ",":
        verb += 3  # Romero, however, failed
    while verb < len(tokens) and tokens[verb].tag in ("RB", "RBR"):
        verb += 1
    if verb >= len(tokens) or not _finite_tag(tokens[verb]) or tokens[verb].text.lower() in ("were", "are"):
        return None  # Club Brugge were: a team
    words = [t.text for t in tokens[start:end]]
    if any(
        w.lower() in GENDERED_NOUNS or w.rstrip(".") in _COUNTRIES or (len(w) > 1 and w.isupper())
        for w in words
    ):
        return None
    surname = words[-1]
    if surname in _PLACE_ENDINGS:
        return None  # Saudi Arabia announced
    if any(t.text == surname for t in tokens[end:]):
        return None  # Enya continues ..., though Enya does not: the name again would clash with the pronoun
    lead = context[0] if context else ""  # the context's person: a biography's lead names them with a year
    biography = surname in re.findall(r"[\w'-]+", lead) and bool(_LIFE_DATES.search(lead))
    pronoun_after = any(t.text.lower() in MASCULINE | FEMININE for t in tokens[verb:])
    return (start, end) if biography or pronoun_after else None


_PLACE_ENDINGS = frozenset("Arabia Africa Zealand Kingdom States Republic Emirates Lanka Leone Rica Salvador Guinea Islands "
                           "City County Province District Council Club Party Union FC".split())  # fmt: skip
_LIFE_DATES = re.compile(
    r"\([^()]*(?:\bborn\b|\bb\.|\bdied\b|\bd\.|\d{3,4}\s*[-–]\s*(?:c\.\s*)?\d{3,4})[^()]*\)"
)


def _finite_tag(token: Token) -> bool:
    return token.tag in ("VBD", "VBZ", "VBP", "MD")


def animacy_down(
    sentence: str,
    tokens: tuple[Token, ...] | None = None,
    context: Sequence[str] | None = None,
    preceding: str | None = None,
) -> list[Edit]:
    """Personal pronouns to inanimate: he/she/him/her -> it, his/her -> its, hers -> its own, himself/herself ->
    itself.

    >>> [e.after for e in animacy_down("His son said he met her.")]
    ['Its', 'it']
    >>> animacy_down("She was launched in 1912.", context=["HMS Dreadnought was a battleship.", "She sank."])
    NoSite('she_vessel')
    """
    tokens = analyse(sentence) if tokens is None else tokens
    positions = _gendered(tokens)
    if not positions:
        return NoSite("no_pronoun")
    if context is not None:
        referent, reason = context_gender(context)
        if referent is None:  # a context about a thing: "it" would make the intruder fit it
            return NoSite("no_context_person" if reason == "no_context_gender" else reason)
        if context_about_thing(context):
            return NoSite("context_about_thing")  # The theory ... It suggests: "it" would fit
        positions = _gendered(tokens, MASCULINE if referent == "m" else FEMININE)
        if not positions:  # His in a text about a woman: it would take the clash away
            return NoSite("would_repair")
        positions = _outside_quotations(tokens, positions)
        if not positions:
            return NoSite("in_quotation")
        if named_before(tokens, positions[0]) or _referent_inside(tokens, positions):
            return NoSite("referent_in_intruder")  # Wu worked ..., where it helped: no context needed
        if tokens[positions[0]].text.lower() in FEMININE:
            kind = she_referent(sentence, context, upto=tokens[positions[0]].start)
            if kind is not None:
                return NoSite(f"she_{kind}")
        if any(speech_attribution(tokens, i) for i in positions):
            return NoSite("speech_attribution")  # "...," it said: the bureau or the club of the context
        if named_before(tokens, positions[0], common=True, start_at=_after_opener(tokens, positions[0])):
            return NoSite("referent_in_intruder")  # picked up the signal and tried to find it: the signal
        if any(t.text.lower() in ("its", "itself") or (t.text.lower() == "it" and not expletive_it(tokens, i))
               for i, t in enumerate(tokens)):  # fmt: skip
            return NoSite("it_in_intruder")  # he held up his willingness to call it: which "it" is which?
        if context and animal_lead(context[0]):
            return NoSite("animal")  # Good Lord was a thoroughbred racehorse: "it" fits a horse
        if any(it_subject(s) for s in context):
            return NoSite("it_in_context")  # In 2012, it was named after ...: the new "it" is that thing
        if thing_antecedent(tokens, positions[0], preceding):
            return NoSite("thing_antecedent")  # the Labor party ... It held the seat: it reads as the party
    edits = []
    for i in positions:
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


_TAXON = re.compile(r"\b(?:species|subspecies|genus)\b|\([A-Z][a-z]+ [a-z]{3,}\)")
_ANIMAL = re.compile(
    r"\b(?:animals?|birds?|fish(?:es)?|mammals?|reptiles?|amphibians?|insects?|frogs?|snakes?|lizards?|"
    r"turtles?|tortoises?|moths?|butterfl(?:y|ies)|beetles?|spiders?|wasps?|bees?|ants|honeyeaters?|lemurs?|"
    r"monkeys?|rays?|sharks?|whales?|dolphins?|bats?|rodents?|mice|rats?|squirrels?|primates?|songbirds?|"
    r"eagles?|hawks?|owls?|parrots?|ducks?|geese|swans?|herons?|deer|antelopes?|horses?|wolf|wolves|"
    r"foxes?|crabs?|snails?|slugs?|worms?|molluscs?|mollusks?|gastropods?|crustaceans?|marsupials?|passerines?|"
    r"finch(?:es)?|sparrows?|warblers?|pigeons?|gulls?|salamanders?|newts?|geckos?|crocodiles?|catfish|"
    r"cichlids?|eels?|octop(?:us|uses|i)|squids?|predators?|prey|plumage|feathers|nests|breeds|carnivores?|"
    r"herbivores?|omnivores?|dinosaurs?)\b",
    re.IGNORECASE,
)


def context_about_animal(context: Sequence[str]) -> bool:
    """Whether the context is about an animal species: a taxon (*species*, *genus*, a binomial in brackets)
    and a word for an animal (*bird*, *fish*, *lemur*, *plumage*). English gives an animal *he* or *she*, so a
    personal pronoun for it reinforces nothing (issue #50's reading, seed 6060: *He is closely related to the
    South Island robin*, of an extinct swan).

    >>> context_about_animal(["The red wattlebird (Anthochaera carunculata) is a honeyeater native to Australia."])
    True
    >>> context_about_animal(["Ragwort (Jacobaea vulgaris) is a species of flowering plant."])
    False
    """
    text = " ".join(context)
    return bool(_TAXON.search(text) and _ANIMAL.search(text))


def _idiom(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``it`` at ``i`` is the empty *it* of *when it comes to* (development seed 7104: *ranking 14th
    when he comes to population*)."""
    words = [t.text.lower() for t in tokens[max(i - 1, 0) : i + 3]]
    return i > 0 and words[:1] == ["when"] and words[2:3] in (["comes"], ["came"]) and words[3:] == ["to"]


_EXTRAPOSING_NOUNS = frozenset(
    """time shame pity surprise wonder mistake custom tradition honour honor privilege pleasure relief
    coincidence miracle scandal disgrace""".split()
)
_WEATHER_TIME = frozenset("raining snowing pouring hailing drizzling midnight noon".split())
_COPULAS = frozenset({"is", "was", "'s", "be", "been", "were", "are", "seems", "seemed", "seem", "appears",
                      "appeared", "remains", "remained", "becomes", "became"})  # fmt: skip


def _extraposed(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``it`` at ``i`` is an empty *it* that :func:`expletive_it` lets through (issue #50's held-out
    reading, seed 9292): *it* + a copula or *seem* + an adjective or adverb (or a noun of judgement, *time*,
    *shame*) and a *to*/*that* clause (*it is well to remember that*, *it is a shame that*), weather and time
    (*it was raining*, *it is time*, *it was late*), or a cleft with *who* (*it was his brother who*: an
    inanimate *it* takes no *who*)."""
    words = [t.text.lower() for t in tokens]
    j = i + 1
    while j < len(tokens) and (
        tokens[j].tag in ("RB", "MD") or words[j] in ("not", "n't", "have", "has", "had")
    ):
        j += 1
    if j >= len(tokens) or words[j] not in _COPULAS:
        return False
    k = j + 1
    while k < len(tokens) and words[k] in ("still", "now", "already", "getting", "growing", "becoming"):
        k += 1
    if k < len(tokens) and words[k] in _WEATHER_TIME | {"time"}:
        return True  # it was raining, it is time (to), it was late
    rest = words[k : k + 6]
    if "who" in rest and "," not in rest[: rest.index("who")]:
        return True  # it was his brother who: a cleft
    span = [t for t in tokens[k : k + 4]]
    for n, t in enumerate(span):
        w = t.text.lower()
        after = tokens[k + n + 1] if k + n + 1 < len(tokens) else None
        clause = after is not None and (
            (w == "to" and after.tag in ("VB", "RB"))
            or (w == "that" and after.text.lower() not in ("of", "in"))
        )  # an infinitive or a that-clause (not: it is native to California, similar to that of)
        if w in ("to", "that") and n > 0 and not clause:
            return False
        if w in ("to", "that") and n > 0:
            head = [s for s in span[:n] if s.tag not in ("DT",)]
            return bool(head) and all(
                s.tag.startswith(("JJ", "RB")) or s.text.lower() in _EXTRAPOSING_NOUNS for s in head
            )  # it is well to, it is only natural that, it is a shame that (not: it is the first school to)
        if t.tag.startswith(("NN", "VB", "IN")) and w not in _EXTRAPOSING_NOUNS:
            return False
    return False


def _raised(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether ``it`` at ``i`` is the thing itself though :func:`expletive_it` takes it for an empty *it*:
    the raised subject of a reporting verb and *to* (*it was reported to be the largest*), an object *it* after
    *make* + an adjective with no clause after it (*making it available for*, *made it well known in the
    industry*; not *made it clear that*), or *it* + *appear*/*emerge* with no *to*, *that* or adjective after
    it (*in which it first appeared*), or *it* + *be* + an adjective + the preposition *to* (*It is native to
    California*)."""
    words = [t.text.lower() for t in tokens]
    nxt = words[i + 1 : i + 5]
    if len(nxt) >= 3 and nxt[0] in _BE_PAST and nxt[1] in _RAISING and nxt[2] == "to":
        return True
    if len(nxt) >= 4 and nxt[0] in _BE_PAST and tokens[i + 2].tag.startswith("JJ") and nxt[2] == "to":
        return not tokens[i + 4].tag.startswith(("VB", "RB"))  # it is native to California (not: hard to say)
    if i > 0 and words[i - 1] in _LIGHT_VERBS:
        return not any(w in ("to", "that", "whether", "how", "what", "why") for w in words[i + 1 : i + 5])
    j = i + 1
    while j < len(tokens) and tokens[j].tag in ("RB", "RBR"):
        j += 1
    if j < len(tokens) and words[j] in ("appeared", "appears", "appear", "emerged"):
        after = tokens[j + 1] if j + 1 < len(tokens) else None
        return after is None or (
            after.text.lower() not in ("to", "that", "as", "like") and not after.tag.startswith("JJ")
        )
    return False


_LIGHT_VERBS = frozenset({"make", "makes", "made", "making"})


_BE_PAST = frozenset({"is", "was", "are", "were", "'s"})
_RAISING = frozenset({"reported", "said", "believed", "thought", "known", "rumoured", "rumored", "alleged",
                      "expected", "estimated", "considered", "understood", "claimed"})  # fmt: skip


def _in_title_span(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the pronoun at ``i`` stands in a title, as negation tells a verb in one
    (:func:`corpora.probes.verbs._in_title`): capitalised inside the sentence (*Are You There God? It's Me*),
    its verb in a title (*It's Me, Margaret.*), or a capitalised function word after it."""
    if (i == 0 or tokens[i - 1].text not in (".", "!", "?")) and _in_title(tokens, i) == "in_title":
        return True  # (not a sentence the splitter left joined: every year.It is the nearest)
    if i + 1 >= len(tokens) or not tokens[i + 1].tag.startswith(("VB", "MD")):
        return False
    after = tokens[i + 2] if i + 2 < len(tokens) else None
    if after is not None and after.text[:1].isupper() and after.text.lower() in _TITLE_WORDS:
        return True  # It's Me, Margaret (Me tagged NNP)
    return _in_title(tokens, i + 1) is not None


_TITLE_WORDS = frozenset(
    """me you him her us them my your our their the a an not all only what who so no never to in on for of
    with""".split()
)


def _coreferent(tokens: tuple[Token, ...], sites: list[int]) -> list[int]:
    """The sites that refer to what the first does: a later subject *it* goes on with the first (*it grew ...,
    and, in November 2007, it was reported to be*; *until 1996 when it was renamed*), and so does an *itself*
    and a later *its* or object *it* (*It has ... historic items embedded in its walls*), except where a
    definite noun phrase that can own it came between it and the pronoun before it: *the X* after *of*, *on*
    or *by* (*It is located on the west side of the road, ... south of its junctions*; *the main settlement of
    the island and is on its north-western coast*; *picked up by the Australian Broadcasting Corporation ... on
    its iView platform*), and, for an object *it*, a noun phrase of its own (*It detects light and converts
    it*) except after a participle that opens a clause (*It has enrollment of 2,467 students, making it the
    largest high school*: the participle's object is the subject's thing). An *its* right after a comma opens
    an absolute phrase of the subject (*..., its distribution extending south*); a subject *it* after a
    *which* is the relative's (*the Bitcoin XT fork, which never managed to get the support it needed*) and
    stays."""
    kept = sites[:1]
    for k in sites[1:]:
        word = tokens[k].text.lower()
        start = kept[-1] + 1
        relative = any(  # a singular noun, which (subject) ... it: not in which it, nor that ...; however, it
            (tokens[w].tag == "WDT" or tokens[w].text.lower() == "which")
            and tokens[w - 1].tag not in ("IN", "TO")
            and tokens[w - 1 if tokens[w - 1].text != "," else w - 2].tag in ("NN", "NNP")
            and not any(t.text in (";", ":", ".") for t in tokens[w:k])
            for w in range(max(start, 2), k)
        )
        if word == "it" and _subject(tokens, k) and relative:
            continue  # the Bitcoin XT fork, which never managed to get the support it needed: the fork's
        if (
            word == "itself"
            or (word == "it" and _subject(tokens, k))
            or (word == "its" and tokens[k - 1].text == ",")
        ):
            kept.append(k)  # ..., its distribution extending south: an absolute phrase of the main subject
            continue
        b = k - 2
        while b > 0 and tokens[b].tag in ("RB", "RBR"):
            b -= 1  # , thus also making it
        participle = k >= 2 and tokens[k - 1].tag == "VBG" and tokens[b].text == ","
        if _owner_between(tokens, start, k) or (
            word == "it" and not participle and named_before(tokens, k, common=True, start_at=start)
        ):
            continue
        kept.append(k)
    return kept


_OWNER_GOVERNORS = frozenset({"of", "on", "by"})


def _owner_between(tokens: tuple[Token, ...], start: int, end: int) -> bool:
    """Whether a singular definite noun phrase governed by *of*, *on* or *by* (*of the road*, *on the LRT-6*,
    *by the Australian Broadcasting Corporation*) stands between ``start`` and ``end``: a later *its* more
    readily takes it than the first pronoun (development reading, seeds 7431-7433: 10 of 13 later *its* the old
    rule kept were the first's own, *its walls*, *its current name*, *of its kind*)."""
    for j in range(start, end):
        token = tokens[j]
        if token.tag not in ("NN", "NNP") or _calendar(token.text):
            continue
        if j + 1 < len(tokens) and (tokens[j + 1].tag.startswith("NN") or tokens[j + 1].tag == "POS"):
            continue  # not the head, or a possessor (the band's album)
        first = j
        while first > start and tokens[first - 1].tag.startswith(("NN", "JJ", "CD")):
            first -= 1
        if first - 1 < start or tokens[first - 1].text.lower() != "the":
            continue
        if first >= 2 and tokens[first - 2].text.lower() in _OWNER_GOVERNORS:
            return True
    return False


def animacy_up(
    sentence: str,
    gender: str = "f",
    tokens: tuple[Token, ...] | None = None,
    context: Sequence[str] | None = None,
) -> list[Edit]:
    """Inanimate pronouns to personal ones: every referential ``it``, ``its`` and ``itself`` of the sentence,
    in the gender opposite to the context's person (``gender``, ``"f"`` or ``"m"``, when the context has none
    or no context is given).

    >>> [e.after for e in animacy_up("It sold its shares and kept it.", "m")]
    ['He', 'his', 'him']
    >>> [e.after for e in animacy_up("It is a town in Italy.", "f")]
    ['She']
    >>> [e.after for e in animacy_up("It was reported that it sank.", "m", context=["He was a poet."])]
    ['she']
    """
    if gender not in ("f", "m"):
        raise ValueError(f"gender must be 'f' or 'm', got {gender!r}")
    tokens = analyse(sentence) if tokens is None else tokens
    sites = [i for i, t in enumerate(tokens) if t.text.lower() in ("it", "its", "itself")]
    if not sites:
        return NoSite("no_pronoun")
    if context is not None:
        referent = context_gender(context)[0]  # the other gender: a pronoun no person of the context can take
        gender = {"m": "f", "f": "m"}.get(referent, gender)
        kind = she_referent(sentence, context)
        if kind is not None and referent == "m":
            return NoSite(kind)  # she may stand for a ship or a country, and he for the context's man
        if kind is not None:
            gender = "m"  # a text about a ship or a country: he, which English never uses for one
    sites = [
        i
        for i in sites
        if tokens[i].text.lower() != "it"
        or _raised(tokens, i)
        or not (expletive_it(tokens, i) or _extraposed(tokens, i) or _idiom(tokens, i))
    ]
    if not sites:
        return NoSite("expletive_it")
    if context is not None and context_about_animal(context):
        return NoSite("animal")  # it is found in the coastal waters -> he is found ...: animals take he
    if context is not None:
        sites = _outside_quotations(tokens, sites)
        if not sites:
            return NoSite("in_quotation")
    if context is not None and any(t.text.lower() in MASCULINE | FEMININE for t in tokens):
        return NoSite("person_in_intruder")  # he wrote it -> he wrote him: which is the person?
    if context is not None:
        sites = [i for i in sites if not _in_title_span(tokens, i)]
        if not sites:
            return NoSite("in_title")
    if context is not None:  # the bloc itself, the bird itself: an emphatic itself after its own noun stays
        sites = [
            i for i in sites if tokens[i].text.lower() != "itself" or not tokens[i - 1].tag.startswith("NN")
        ]
    if context is not None and (
        not sites or named_before(tokens, sites[0], common=True) or opener_referent(tokens, sites[0])
    ):
        return NoSite("referent_in_intruder")  # Amnesty International releases its review: no context needed
    if context is not None:  # a later pronoun goes on with the first only where it corefers with it
        sites = _coreferent(tokens, sites)
    subject, obj, possessive, reflexive = (
        ("she", "her", "her", "herself") if gender == "f" else ("he", "him", "his", "himself")
    )
    edits = []
    for i in sites:
        word = tokens[i].text.lower()
        if word == "it":
            after = subject if _subject(tokens, i) else obj
        elif word == "its":
            after = possessive
        else:
            after = reflexive
        edits.append(replace(tokens[i], match_case(tokens[i].text, after)))
    return edits
