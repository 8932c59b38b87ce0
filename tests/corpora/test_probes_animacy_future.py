"""Issue #50's precision gates for ``animacy-down`` and ``past-to-future``, on real sentences of INSteD's Wikipedia
test documents (ntunlp/coherence-paradigm's ``INSteD_intrusion_test_wikipedia.pkl``, the first 3,000 records;
``file_id`` given with each): each failed on the rules before these gates."""

from __future__ import annotations

import pytest

from incoherent.corpora.probes.edits import apply_edits
from incoherent.corpora.probes.pronouns import animacy_down
from incoherent.corpora.probes.rows import probe_document
from incoherent.corpora.probes.verbs import past_to_future

# file_id 2423: a text about a goddess the context calls "she"; the intruder's "He" already clashes with it
EZILI = [
    "Ezili Dantor or Erzulie D'en Tort (also spelled Erzulie with Danto or Danthor) is the Petro nation aspect of "
    "the Erzulie family of lwa, or spirits in Haitian Vodou.",
    "He worked to end civil wars in Africa and promoted a new image of Haiti as an International leader for peace.",
    "Ezili Dantor is considered to be the lwa of motherhood, single motherhood in particular.",
    "She is most commonly represented by the image of Black Madonna of Częstochowa.",
]
# file_id 3649: the sentence before the intruder names a party as its subject; "It left the Council" reads as it
GARDNER = [
    "Sydney Lane Gardner (9 June 1884 &ndash; 23 June 1965) was an Australian politician.",
    "Born in Aberdeen, New South Wales, he was educated at Scone Grammar School and then the University of Sydney.",
    "In 1931, the Nationalist Party became the United Australia Party (UAP), which Gardner joined.",
    "He left the Council in 1934 to contest the Australian Senate as a UAP candidate for New South Wales, in which "
    "he was successful.",
    "He returned to farming, settling at Rose Vale.",
    "Gardner died in 1965.",
]


def _doc(sentences: list[str], index: int) -> dict:
    return {"id": "t", "source": "insted", "split": "test", "sentences": sentences, "label": 1,
            "intruder_index": index}  # fmt: skip


def test_animacy_down_never_repairs_a_pronoun_that_already_clashes():
    context = [s for k, s in enumerate(EZILI) if k != 1]
    assert animacy_down(EZILI[1], context=context).reason == "would_repair"
    counts: list[str] = []
    assert not [r for r in probe_document(_doc(EZILI, 1), ["animacy-down"], 0, count=counts.append)]
    assert "no_site/animacy-down/would_repair" in counts


def test_animacy_down_skips_an_it_that_finds_a_thing_before_it():
    counts: list[str] = []
    assert not [r for r in probe_document(_doc(GARDNER, 3), ["animacy-down"], 0, count=counts.append)]
    assert "no_site/animacy-down/thing_antecedent" in counts
    # the same sentence after a sentence about the man himself is probed
    moved = GARDNER[:2] + [GARDNER[3], GARDNER[2]] + GARDNER[4:]
    (row,) = [r for r in probe_document(_doc(moved, 2), ["animacy-down"], 0) if isinstance(r, dict)]
    assert row["probed_sentence"].startswith("It left the Council in 1934")


def test_animacy_down_a_thing_inside_a_prepositional_phrase_is_no_referent():
    # INSteD's own hand site (animacy_pronoun_downgrade): the institution is governed by "At"
    sentence = "At the former institution she served as tutor in mathematics (1886–88), and thenceforth as president."
    edits = animacy_down(sentence, context=["She was an American mathematician.", "She taught at Wellesley."],
                         preceding="She was an American mathematician.")  # fmt: skip
    assert apply_edits(sentence, edits).startswith("At the former institution it served")


@pytest.mark.parametrize(
    "sentence, expected",
    [
        # file_id 2792: a participle after the subject, its verb present (was "The liberties will explicitly define")
        ("The liberties explicitly defined, make up the Bill of Rights, including freedom of speech, the right to "
         "bear arms, and the right to privacy.", "participle_only"),
        # file_id 559: the same without a comma (was "Small additions will add in the 19th and 20th centuries expand")
        ("Small additions added in the 19th and 20th centuries expand the building to three sides.", "participle_only"),
        # file_id 3942: "intended for" is a participle (was "will intend for heavy goods train duties")
        ("It was an eight-coupled engine, intended for heavy goods train duties, and was based on the Prussian G 7.",
         "mixed_tense_left"),
        # file_id 7667: "played" (tagged VBN) joined to present verbs; it would stay past beside the future, which
        # the gate refuses (was "and primarily played first base, but will be capable")
        ("He throws right-handed, bats left-handed, and primarily played first base, but was capable of playing "
         "third base and the outfield.", "mixed_tense_left"),
        # file_id 8372: no future after "since" (was "since it will start in 2001")
        ("She is the third representative of Jamaica to compete in the international pageant, Miss Earth, since it "
         "started in 2001.", "since_clause"),
    ],
)  # fmt: skip
def test_past_to_future_skips(sentence, expected):
    assert past_to_future(sentence).reason == expected


@pytest.mark.parametrize(
    "sentence, probed",
    [
        # file_id 3286: "was" says the company is one (was "are built")
        ("When the Elgin and Belvidere Electric Company was built only a few blocks away, Elgin developed the "
         "southern portion of the property to a golf course.",
         "When the Elgin and Belvidere Electric Company is built only a few blocks away, Elgin will develop the "
         "southern portion of the property to a golf course."),
        # file_id 2472: "After the war" is a preposition's phrase, the clause the main one (was "he retires")
        ("After the war he retired to Brest where he died in 1780.",
         "After the war he will retire to Brest where he will die in 1780."),
        # file_id 6802: World War I is one war (was "before World War I begin")
        ("Donegal was reduced to reserve before World War I began in August 1914 as part of the Third Fleet",
         "Donegal will be reduced to reserve before World War I begins in August 1914 as part of the Third Fleet"),
    ],
)  # fmt: skip
def test_past_to_future_probes(sentence, probed):
    assert apply_edits(sentence, past_to_future(sentence)) == probed


@pytest.mark.parametrize(
    "sentence, probed",
    [
        # file_id 6230 and 1960: a participle joined to a passive shares its "will be" (was "will sentence to")
        ("After the Cuban Revolution, He was tried by the revolutionary tribunals and sentenced to 15 years in "
         "prison.",
         "After the Cuban Revolution, He will be tried by the revolutionary tribunals and sentenced to 15 years in "
         "prison."),
        ("In 2010, Steven Hayes was convicted of the murders and sentenced to death.",
         "In 2010, Steven Hayes will be convicted of the murders and sentenced to death."),
        # an active verb joined to a passive stays a verb of its own
        ("The bridge was built in 1890 and led to the town.",
         "The bridge will be built in 1890 and will lead to the town."),
        # file_id 1420: "since then" is no since-clause (was "no exact date was given" left in the past)
        ("The PlayStation Vita version was announced on 27 February 2014, but since then no exact date was given.",
         "The PlayStation Vita version will be announced on 27 February 2014, but since then no exact date will be "
         "given."),
        # file_id 7544: a second verb after "then" takes the first one's will (was "... State will then become")
        ("He completed his undergraduate degree at Northwestern State then became head coach at Texarkana.",
         "He will complete his undergraduate degree at Northwestern State then become head coach at Texarkana."),
        # file_id 8032: "spun" after "and", tagged as a base form, is the second past verb (was "and spun them" left)
        ("Power was transmitted to the rotors by a drive belt that linked both rotors and spun them in opposite "
         "directions.",
         "Power will be transmitted to the rotors by a drive belt that will link both rotors and will spin them in "
         "opposite directions."),
        # file_id 3181: "played" after "and also", tagged VBZ (was left in the past beside "will sign")
        ("He signed with the NFL's Cincinnati Bengals as an undrafted free agent, and also played for the NFL's "
         "Atlanta Falcons.",
         "He will sign with the NFL's Cincinnati Bengals as an undrafted free agent, and will also play for the NFL's "
         "Atlanta Falcons."),
        # file_id 7641: "played" after its subject pronoun, tagged otherwise, is the finite verb (was no site)
        ("He played for Archbishop Riordan High School.", "He will play for Archbishop Riordan High School."),
        # file_id 7985: a prefixed past verb (was left in the past beside a future)
        ("The initial impetus for the creation of the Territorial Force came from Joseph Lyons, who also co-founded "
         "the eponymous chain of cafes known as the Lyons Corner Houses.",
         "The initial impetus for the creation of the Territorial Force will come from Joseph Lyons, who will also "
         "co-found the eponymous chain of cafes known as the Lyons Corner Houses."),
    ],
)  # fmt: skip
def test_past_to_future_joined_and_misread_verbs(sentence, probed):
    assert apply_edits(sentence, past_to_future(sentence)) == probed


# file_id 4179: a planned dam; its context speaks of the future, so a future intruder would fit it
DAM = [
    "Middle Vaitarna Dam will be the second tallest dam in Maharashtra, India, planned to be built on the Vaitarna "
    "river in Thane's Kochale village by 2012.",
    "Turkey's Ozaltin Company constructed 60 per cent of the dam, while the remaining 40 per cent were carried out "
    "by Marwan Alkurdi Company and the National Company for Roads and Bridges.",
    "The dam will stand at a height of 102 metres when completed and will hold up 455 million litres of water vital "
    "for Mumbai's growing water demand.",
    "The city receives only 3400 million litres per day (Mld) compared to the 4000 Mld of demand.",
]


def test_past_to_future_skips_a_document_already_in_the_future():
    counts: list[str] = []
    assert not [r for r in probe_document(_doc(DAM, 1), ["past-to-future"], 0, count=counts.append)]
    assert "no_site/past-to-future/future_context" in counts
    # file_id 7308: an upcoming film; "The film will be produced by ..." would fit it
    chips = [
        "CHiPs is an upcoming American action comedy film written and directed by Dax Shepard, based on the 1970s "
        "television series of the same name created by Rick Rosner.",
        "Principal photography began on October 21, 2015 in Los Angeles.",
        "The film was produced by Stephen J. Cannell, Ridley Scott and Tony Scott.",
    ]
    assert past_to_future(chips[2], context=chips[:2]).reason == "future_context"
    # a title's "He'll Win" is no future (INSteD's hand site, Fiona Apple's When the Pawn...)
    title = (
        "The whole title is When the Pawn Hits the Conflicts He Thinks like a King What He Knows Throws the Blows "
        "When He Goes to the Fight and He'll Win the Whole Thing 'fore He Enters the Ring."
    )
    sentence = "The album was released by Epic Records in the United States on November 9, 1999."
    (row,) = [
        r for r in probe_document(_doc([title, sentence], 1), ["past-to-future"], 0) if isinstance(r, dict)
    ]
    assert row["probed_sentence"].startswith("The album will be released by Epic Records")


def test_animacy_down_skips_an_animal_and_a_thing_called_it():
    # file_id 7526: a racehorse; "it won 10 of its 13 starts" fits a horse
    horse = [
        "Good Lord was a New Zealand thoroughbred racehorse owned by Las Vegas lawyer Michael L. Hines (1920-1985).",
        "Prior to his first visit to Australia, for the Cox Plate, he won 10 of his 13 starts in New Zealand.",
        "He was a good staying racehorse winning two Wellington Cups and the Sydney Cup in 1978.",
    ]
    assert animacy_down(horse[1], context=[horse[0], horse[2]]).reason == "animal"
    # file_id 997: an asteroid the context calls "it", named after a man the intruder was about
    asteroid = [
        "6726 Suthers, provisional designation 1991 PS, is a main-belt asteroid discovered by American astronomer "
        "Henry E. Holt at the Palomar Observatory on August 5, 1991.",
        "In 2012, it was officially named after Paul Graham Sutherland, author and journalist.",
        "He is author of Where Did Pluto Go?",
        "He appears in an episode of the documentary series Naked Science.",
    ]
    assert animacy_down(asteroid[3], context=asteroid[:3], preceding=asteroid[2]).reason == "it_in_context"
    # file_id 7665: the sentence before has "its": the policy is in view, and "Its case" reads as the policy's
    preceding = (
        "In early 2004 MTV aired a special where Paul (then out of the military) revealed his face for the first "
        "time and the policy and its effects were discussed."
    )
    sentence = (
        "His case attracted attention in such major U.S. media outlets as Newsweek and the New York Times."
    )
    context = ["Danny Roberts (born July 19, 1977) is best known for appearing on The Real World.", preceding]
    assert animacy_down(sentence, context=context, preceding=preceding).reason == "thing_antecedent"
