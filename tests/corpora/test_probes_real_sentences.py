"""The five phenomena gender, animacy-down, animacy-up, demonstrative and conjunction on real Wikipedia and CNN
sentences put into real documents (``tests/data/probes/``): the expected probe or the expected skip reason of
each, every skip reason covered, demonstrative's site finding, and the cases issue #39 quotes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from incoherent.corpora.probes import PHENOMENA
from incoherent.corpora.probes.edits import NoSite, apply_edits
from incoherent.corpora.probes.rows import probe_document
from incoherent.corpora.probes.text import tokenize

DATA = Path(__file__).resolve().parents[1] / "data" / "probes"
CASES = [
    json.loads(line)
    for path in sorted(
        DATA.glob("real_sentences*.jsonl")
    )  # real_sentences_pronouns.jsonl: the pronoun readings
    for line in path.read_text(encoding="utf-8").splitlines()
]
CONTEXTUAL = ("gender", "animacy-down", "animacy-up")


def run(phenomenon: str, sentence: str, context=None, **kwargs):
    function = PHENOMENA[phenomenon]
    if phenomenon == "animacy-up":
        return function(sentence, kwargs.pop("gender", "f"), context=context)
    if phenomenon in CONTEXTUAL:
        return function(sentence, context=context)
    return function(sentence, **kwargs)


def outcome(edits, sentence: str) -> str:
    return apply_edits(sentence, edits) if edits else f"skip:{edits.reason}"


@pytest.mark.parametrize("case", CASES, ids=[f"{c['phenomenon']}:{c['sentence'][:40]}" for c in CASES])
def test_real_sentence(case):
    edits = run(case["phenomenon"], case["sentence"], case.get("context"))
    expected = case["probed"] if "probed" in case else f"skip:{case['skip']}"
    assert outcome(edits, case["sentence"]) == expected
    if "agree" in case:
        agreeing = run("demonstrative", case["sentence"], agree=True)
        assert (apply_edits(case["sentence"], agreeing) if agreeing else agreeing.reason) == case["agree"]


SKIP_REASONS = {
    "gender": {"no_context_gender", "mixed_context_gender", "would_repair", "referent_in_intruder",
               "gendered_word_in_intruder", "no_pronoun", "in_quotation"},
    "animacy-down": {"referent_in_intruder", "she_country", "no_context_person", "mixed_context_gender", "no_pronoun",
                     "context_about_thing", "speech_attribution", "it_in_intruder", "in_quotation", "would_repair",
                     "it_in_context", "animal"},
    "animacy-up": {"country", "vessel", "expletive_it", "referent_in_intruder", "person_in_intruder", "no_pronoun"},
    "demonstrative": {"pronoun", "plural_head", "that_complementiser", "that_relative", "proper_noun"},
    "conjunction": {"list_and", "not_x_but_y", "not_a_clause", "no_connective", "sentence_final"},
}  # fmt: skip


@pytest.mark.parametrize("phenomenon", list(SKIP_REASONS))
def test_forty_real_sentences_per_phenomenon_cover_every_skip_reason(phenomenon):
    cases = [c for c in CASES if c["phenomenon"] == phenomenon]
    assert len(cases) >= 40
    assert sum("probed" in c for c in cases) >= 25
    assert {c["skip"] for c in cases if "skip" in c} >= SKIP_REASONS[phenomenon]


def test_the_agreeing_variant_says_why_it_skips_a_determiner():
    """``--demonstrative agree`` skips what it cannot make grammatical, each for a reason, on real sentences:
    mass nouns (*these informations*), deictic times (*earlier these months*), an *it* that may stand for the
    noun phrase (*these drains may itself*), a verb it cannot reach, *much of this*."""
    reasons = {
        c["agree"] for c in CASES if c["phenomenon"] == "demonstrative" and " " not in c.get("agree", " ")
    }
    assert reasons >= {
        "mass_noun",
        "deictic_time",
        "pronoun_agreement",
        "agreement_beyond_phrase",
        "coordinated_head",
        "singular_predicate",
    }


def test_demonstrative_finds_the_sites_a_reader_marks():
    rows = [line.split("\t", 1) for line in (DATA / "demonstrative_sites.tsv").read_text().splitlines()]
    marked = [s for label, s in rows if label == "site"]
    unmarked = [s for label, s in rows if label == "none"]
    assert len(marked) >= 20 and len(unmarked) >= 40
    found = sum(bool(PHENOMENA["demonstrative"](s)) for s in marked)
    false = [s for s in unmarked if PHENOMENA["demonstrative"](s)]
    assert found / len(marked) >= 0.9
    assert len(false) <= 0.05 * len(unmarked), false


# The cases issue #39 quotes (real CNN and Wikipedia text), each with what a linguist expects.
MAN = ["He was born in Leeds in 1950.", "His father was a miner, and he left school at 15."]
WOMAN = ["She was born in Leeds in 1950.", "Her father was a miner."]
SHIP = ["HMS Ocean was an amphibious assault ship of the Royal Navy.", "She was launched in 1995."]
ISSUE_CASES = [
    # gender: reinforce, never repair
    ("gender", "She has five children.", MAN, "skip:would_repair"),
    ("gender", "He has five children.", MAN, "She has five children."),
    ("gender", "He has five children.", ["The bridge opened in 1890."], "skip:no_context_gender"),
    # the referent named in the intruder is its subject: the name becomes the pronoun too (INSteD's own edit)
    ("gender", "Prosecutor Fatou Bensouda said her office would appeal.", WOMAN, "He said his office would appeal."),
    ("gender", "They wear her clothes.", WOMAN, "They wear his clothes."),
    ("gender", "His poetically titled plays were staged.", MAN, "Her poetically titled plays were staged."),
    ("gender", "While the President continues to stay the course with his failed strategy, lives are lost.", MAN,
     "skip:referent_in_intruder"),
    ("gender", "The prize was his.", MAN, "The prize was hers."),
    ("gender", "Critics praised his failed strategy.", MAN, "Critics praised her failed strategy."),
    # animacy-up: never expletive it, never a ship
    ("animacy-up", "It is Facebook private messaging that matters.", MAN, "skip:expletive_it"),
    ("animacy-up", "It was reported that the talks failed.", MAN, "skip:expletive_it"),
    ("animacy-up", "It is hard to say.", MAN, "skip:expletive_it"),
    ("animacy-up", "It can be self-deployed.", SHIP, "He can be self-deployed."),  # he: never a ship
    ("animacy-up", "It aims to show how people differ.", MAN, "She aims to show how people differ."),
    ("animacy-up", "It was founded in 1850.", WOMAN, "He was founded in 1850."),
    ("animacy-up", "It was reported that it sank.", MAN, "It was reported that she sank."),
    # animacy-down: never a ship's she
    ("animacy-down", "She was decommissioned in 2018.", SHIP, "skip:she_vessel"),
    ("animacy-down", "He was decommissioned in 2018.", MAN, "It was decommissioned in 2018."),
]  # fmt: skip


@pytest.mark.parametrize(("phenomenon", "sentence", "context", "expected"), ISSUE_CASES)
def test_the_issues_pronoun_cases(phenomenon, sentence, context, expected):
    assert outcome(run(phenomenon, sentence, context), sentence) == expected


DEMONSTRATIVE_CASES = [
    # (sentence, INSteD's variant, the agreeing variant)
    ("Under this hybrid code, players could pass the ball forward.",
     "Under these hybrid code, players could pass the ball forward.",
     "Under these hybrid codes, players could pass the ball forward."),
    ("The band played that year's festival.", "The band played those year's festival.",
     "The band played those years' festival."),
    ("Remember that award tickets are limited.", "skip:plural_head", "skip:plural_head"),
    ("The officials said that this time was different.", "The officials said that these time was different.",
     "The officials said that these times were different."),
    ("This kind of surgery focuses on restoring a body part.",
     "These kind of surgery focuses on restoring a body part.",
     "These kinds of surgery focus on restoring a body part."),
    ("This book, which was written in 1850, is famous.", "These book, which was written in 1850, is famous.",
     "skip:agreement_beyond_phrase"),
    ("Most of this pressure results from the heart.", "Most of these pressure results from the heart.",
     "Most of these pressures result from the heart."),
    ("The problem is that people forget.", "skip:that_complementiser", "skip:that_complementiser"),
    ("If this collision occurs at low energies, it makes a pair.",
     "If these collision occurs at low energies, it makes a pair.",
     "If these collisions occur at low energies, it makes a pair."),
    ("Much of this period was marked by expansion.", "Much of these period was marked by expansion.",
     "skip:mass_partitive"),
    ("Stars that collapse into neutron stars are massive.", "skip:that_relative", "skip:that_relative"),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "insted", "agree"), DEMONSTRATIVE_CASES)
def test_the_issues_demonstrative_cases(sentence, insted, agree):
    assert outcome(run("demonstrative", sentence), sentence) == insted
    assert outcome(run("demonstrative", sentence, agree=True), sentence) == agree


CONJUNCTION_CASES = [
    ("It was designed and developed by a small team.", "skip:list_and"),
    ("He hired a federal public defender, and an attorney from Miami.", "skip:list_and"),
    ("The ruling rested not on the facts but on the law.", "skip:not_x_but_y"),
    ("He was injured, but he won the race.", "He was injured, and therefore he won the race."),
    ("He was injured, and therefore he missed the race.", "He was injured, but he missed the race."),
    ("The team lost the final, and the coach resigned.", "The team lost the final, but the coach resigned."),
    ("The team won the final, although the coach resigned.", "The team won the final, and therefore the coach resigned."),
    ("Although it rained, the match went ahead.", "Because it rained, the match went ahead."),
    # the connective inside another clause: "therefore" there would not parse
    ("The particles, although they have quanta of energy, do not have rest mass.", "skip:parenthetical"),
    ("Because it rained, the match was cancelled.", "Although it rained, the match was cancelled."),
    # because -> although before ", but": *although X, but Y* is a double concessive
    ("He left because he was tired, but not angry.", "skip:although_but"),
    ("The station was thus closed in 1960.", "The station was nevertheless closed in 1960."),
    ("Thus, the station closed.", "However, the station closed."),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "expected"), CONJUNCTION_CASES)
def test_the_issues_conjunction_cases(sentence, expected):
    assert outcome(run("conjunction", sentence), sentence) == expected


def test_a_combining_mark_stays_with_its_letter():
    """Issue #40, item 16: *He* + U+0301 is not the pronoun *he*, and no edit splits a grapheme cluster."""
    sentence = "He\u0301 left, and he said it\u0301 was his\u0301 book."
    assert [t.text for t in tokenize(sentence)][:2] == ["He\u0301", "left"]
    for phenomenon, function in PHENOMENA.items():
        edits = function(sentence, "f") if phenomenon == "animacy-up" else function(sentence)
        for edit in edits:
            assert not (edit.end < len(sentence) and sentence[edit.end] == "\u0301"), (phenomenon, edit)
    assert [e.before for e in PHENOMENA["gender"](sentence)] == ["he"]


def test_probe_document_counts_skip_reasons_and_takes_the_demonstrative_variant():
    doc = {"id": "w:1", "source": "w", "split": "test", "file_id": 1, "original_sentence": "B.",
           "sentences": ["He was a poet.", "She has five children, and this city was renamed.", "He died."],
           "intruder_index": 1}  # fmt: skip
    counted = []
    rows = list(probe_document(doc, ["gender", "demonstrative"], 0, counted.append))
    assert "no_site/gender/would_repair" in counted and "no_site/gender" in counted
    assert [r["probed_sentence"] for r in rows] == ["She has five children, and these city was renamed."]
    # agree reads the document: a plural clashes only with a city the context names in the singular (#50)
    assert list(probe_document(doc, ["demonstrative"], 0, counted.append, demonstrative="agree")) == []
    assert "no_site/demonstrative/no_singular_in_context" in counted
    doc["sentences"][0] = "He was a poet of the city."
    rows = list(probe_document(doc, ["demonstrative"], 0, counted.append, demonstrative="agree"))
    assert [r["probed_sentence"] for r in rows] == ["She has five children, and these cities were renamed."]


def test_no_site_is_an_empty_list_with_a_reason():
    skip = PHENOMENA["conjunction"]("It was designed and developed in Leeds.")
    assert isinstance(skip, NoSite) and skip == [] and skip.reason == "list_and"


# Issue #50: a person's name that is the intruder's subject becomes the pronoun of the other gender, as INSteD's
# authors edited (their hand sites: Stinson, Engle, Werdegar), and the pronouns standing for it flip with it;
# never a place, a team or an organisation, nor a name the sentence repeats. Real sentences of INSteD's Wikipedia
# test documents (the contexts shortened to the lead that decides).
ENGLE = ["Charles Engle (born 1899) was an American football player.", "He played for Brown."]
NAME_CASES = [
    ("Stinson was selected in the sixth round of the 1988 NFL Draft by the Chicago Bears, where he played until "
     "briefly joining the Atlanta Falcons in his final season, 1993.", MAN,
     "She was selected in the sixth round of the 1988 NFL Draft by the Chicago Bears, where she played until "
     "briefly joining the Atlanta Falcons in her final season, 1993."),
    ("Engle served as the head football coach at Brown University from 1944 to 1949.", ENGLE,
     "She served as the head football coach at Brown University from 1944 to 1949."),
    ("In 2005, Gattis released his critically acclaimed record Big City Blues.", WOMAN,
     "In 2005, he released his critically acclaimed record Big City Blues."),
    ("Club Brugge were appearing in their first European Cup final.", MAN, "skip:no_pronoun"),
    ("CBE was the first environmental organization to practice door-to-door canvassing.", MAN, "skip:no_pronoun"),
    ("Saudi Arabia announced that Al-Rasheed was in custody, and he was charged.", MAN,
     "skip:referent_in_intruder"),
    ("Enya continues to display her sound, though Enya does not consider her music to be new age.", WOMAN,
     "skip:referent_in_intruder"),
    # the name after an opening phrase without a verb is the referent of its pronoun (seed 5050's reading)
    ("A musical continuation of her commercially successful 2010 album Still Standing, Monica started working on "
     "the album only weeks after the release of the former.", WOMAN, "skip:referent_in_intruder"),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "context", "expected"), NAME_CASES, ids=[c[0][:30] for c in NAME_CASES])
def test_a_name_subject_becomes_the_pronoun(sentence, context, expected):
    assert outcome(run("gender", sentence, context), sentence) == expected


# Issue #50: ", and" before a verb phrase with its own finite verb (or a participle after a passive) is a site,
# as INSteD's authors edited it (their hand sites); never the last item of a list of nouns or verbs, nor after a
# "but" (real sentences of INSteD's Wikipedia test documents).
AND_CASES = [
    ("The school was founded in 1908, and has been a non-profit organization since 1956.",
     "The school was founded in 1908, but has been a non-profit organization since 1956."),
    ("It was described in 1982 by Brandon, Maruska, and Rumph, and named for Edward Harrison Taylor.",
     "It was described in 1982 by Brandon, Maruska, and Rumph, but named for Edward Harrison Taylor."),
    ("AXN is seen in 60 countries across Asia, Latin America, Europe and the Middle East, and is part of Sony.",
     "AXN is seen in 60 countries across Asia, Latin America, Europe and the Middle East, but is part of Sony."),
    ("They became a leading provider of enterprise storage in the mid-1990s but fell behind NetApp in the field.",
     "They became a leading provider of enterprise storage in the mid-1990s and therefore fell behind NetApp in "
     "the field."),
    ("In 1999, Bradford wrote, directed, and starred in the indie film Standing on Fishes.", "skip:list_and"),
    ("Besides the languages of demonstrated genealogical groups, the database includes pidgins, creoles, mixed "
     "languages, and constructed languages.", "skip:list_and"),
    ("He writes extensively on such subjects as terrorism, conflict management, peacebuilding, national security, "
     "and conflict hot spots throughout the world.", "skip:list_and"),
]  # fmt: skip


@pytest.mark.parametrize(("sentence", "expected"), AND_CASES, ids=[c[0][:30] for c in AND_CASES])
def test_and_before_a_verb_phrase(sentence, expected):
    assert outcome(run("conjunction", sentence, None), sentence) == expected


# Issue #50: "that" before a time noun is a determiner (INSteD's hand sites: later that year, that season, that same
# year), not a relative pronoun; a relative "that" before a verb phrase stays one (real sentences).
@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("She was liberated in April 1945 and returned to Plzeň later that year.",
         "She was liberated in April 1945 and returned to Plzeň later those year."),
        ("He hit benchmarks of over 200 hits and tallied more than 100 RBI that season.",
         "He hit benchmarks of over 200 hits and tallied more than 100 RBI those season."),
        ("He also hit seven sixes in another ODI against India at Toronto that same year.",
         "He also hit seven sixes in another ODI against India at Toronto those same year."),
        ("The militia that conducted last year's coup was disbanded.", "skip:that_relative"),
    ],
)  # fmt: skip
def test_that_before_a_time_noun_is_a_determiner(sentence, expected):
    assert outcome(run("demonstrative", sentence, None), sentence) == expected


# Issue #50's development seeds 7101-7102 (INSteD's Wikipedia test documents, file ids 1461, 4522, 2180, 6701;
# CC BY-SA): a later its or subject it goes on with the first (it stayed: *Much of her revenue ... while its
# clients*), and a text about an animal species is no site (*He is found in the shallow coastal waters*: English
# calls an animal he, so nothing clashes).
@pytest.mark.parametrize(
    ("sentence", "context", "expected"),
    [
        ("Much of its revenue comes from managed and cloud services while its clients are smaller hedge funds.",
         ["Slalom Consulting is an American business and technology consulting firm headquartered in Seattle.",
          "The company, which is a division of Slalom, LLC, employs over 3,700 people across 21 offices in North America and London."],
         "Much of her revenue comes from managed and cloud services while her clients are smaller hedge funds."),
        ("It opened on December 20, 1991 and was formerly known as Disney's Vacation Club Resort until January 1996 when it was renamed.",
         ["Bluegreen Corporation is a private vacation ownership (timeshare) company based in Boca Raton, Florida that employs more than 4,500."],
         "She opened on December 20, 1991 and was formerly known as Disney's Vacation Club Resort until January 1996 when she was renamed."),
        ("While it is found mainly in inland eastern Australia where it inhabits the drier open forests, it is also found in coastal swamp forests from south east Queensland to the central coast of New South Wales.",
         ["The red wattlebird (Anthochaera carunculata) is a honeyeater native to southern Australia.",
          "It is a large grey-brown honeyeater around in length that has red eyes, distinctive pinkish-red wattles either side of the neck and white streaks on the chest and belly, which reveals a bright yellow patch towards the tail.",
          "The sexes are similar in plumage."],
         "skip:animal"),
        ("It is found in the shallow coastal waters and estuaries of the Indo-West Pacific, ranging from the Red Sea and the Persian Gulf to southern Japan, Papua New Guinea and northern Australia.",
         ["The Naru Eagle Ray (Aetobatus narutobiei) is a species of cartilaginous fish of the eagle ray family, Myliobatidae.",
          "The 2013 discovery of the Naru eagle ray, splits a previously defined species, The longheaded eagle ray (Aetobatus flagellum)."],
         "skip:animal"),
        # development seed 7101 (files 8201, 1111): a dinosaur's genus; an emphatic itself after its own noun
        ("It is known from bones including neck, back, and tail vertebrae, pelvic bones, and limb bones.",
         ['"Bayosaurus" is the informal name given to an as yet undescribed genus of dinosaur.'],
         "skip:animal"),
        ("The bloc itself was headed by former Latvian president Guntis Ulmanis.",
         ["Māris Kučinskis (born November 28, 1961, Valmiera) is a Latvian politician and the current Prime Minister of Latvia."],
         "skip:referent_in_intruder"),
        # development seed 7104 (file 7028): the empty it of "when it comes to" stays
        ("According to the 2010 Census, it has a population of 2,839 inhabitants (grew from 2,589 in Census 2007), ranking 14th when it comes to population.",
         ["Matang Tubig or Matang Tubig Falls and also known as Canlubang Water Falls, is a tourist attraction in Canlubang, Laguna, Philippines."],
         "According to the 2010 Census, she has a population of 2,839 inhabitants (grew from 2,589 in Census 2007), ranking 14th when it comes to population."),
        # a plant is no animal: she still clashes (INSteD's own hand site, Juncus bufonius)
        ("It is generally a green clumping grasslike rush with many thin stems wrapped with few threadlike leaves.",
         ["Juncus bufonius, known commonly as toad rush, is a flowering plant species complex in the rush family Juncaceae.",
          "Its native range is circumpolar throughout temperate areas of the northern hemisphere, and it is widely distributed as an introduced species in suitable habitats worldwide."],
         "She is generally a green clumping grasslike rush with many thin stems wrapped with few threadlike leaves."),
        # an object it with a noun of its own before it stays
        ("It detects light and converts it into an electrical signal.", ["The sensor was made in Japan."],
         "She detects light and converts it into an electrical signal."),
    ],
)  # fmt: skip
def test_animacy_up_goes_on_with_the_first_it_and_leaves_animals(sentence, context, expected):
    assert outcome(run("animacy-up", sentence, context, gender="f"), sentence) == expected


# Issue #50's second held-out reading of animacy-up (INSteD's Wikipedia test documents, file ids 433, 1499, 4025,
# 7518; CC BY-SA): a later its of another referent stays (the road's junctions), a later it of the same
# referent goes with the first (it was reported to be: the thing itself, raised), an extraposed it is no site,
# nor an it in a title.
@pytest.mark.parametrize(
    ("sentence", "context", "expected"),
    [
        ("It is located on the west side of the road, a short way south of its junctions with Plain Woods Road, not far from the Connecticut border.",
         ["The Dr. Elizur Hale House is a historic house at 3181 Hebron Avenue in Glastonbury, Connecticut.",
          "A 1-1/2 story ell extends to the rear of the house."],
         "She is located on the west side of the road, a short way south of its junctions with Plain Woods Road, not far from the Connecticut border."),
        ("Since launching in August 2006, it grew to become the most popular pornographic website on the internet, and, in November 2007, it was reported to be the largest free pornographic website as well.",
         ["xHamster is a pornographic media and social networking site headquartered in Limassol, Cyprus.",
          "xHamster was founded anonymously in 2007."],
         "Since launching in August 2006, she grew to become the most popular pornographic website on the internet, and, in November 2007, she was reported to be the largest free pornographic website as well."),
        ('In searching literature it is well to remember that the name commonly is misspelt "Raphiolepsis".',
         ["Mesquite is the common name for several species of small trees.",
          "Mesquite is one of the most expensive types of lumber in the U.S."],
         "skip:expletive_it"),
        ("It's Me, Margaret.",
         ["Margaret's mother is Christian and her father is Jewish, and the novel explores her quest for a single religion."],
         "skip:in_title"),
        # development seed 7433 (files 771, 607, 1517): its takes the island, the Corporation between; its walls
        # with no owner between are the first's
        ("It is also the historic main settlement of the island and is on its north-western coast.",
         ["St. Paul's is a dispersed area of settlement in the central part of the island of Saint Helena, and is a district of the island.",
          "In 2008 the district had a population of 795, compared to a population of 908 in 1998."],
         "She is also the historic main settlement of the island and is on its north-western coast."),
        ("It was picked up by the Australian Broadcasting Corporation for a six episode second season to be released on its iView broadcasting platform, to begin running in November 2014.",
         ["ABC iview is a video on demand and catch up TV service run by the Australian Broadcasting Corporation.",
          'After running for several months in beta form under the name "ABC Playback", the service became available as a Flash website on 24 July 2008.'],
         "She was picked up by the Australian Broadcasting Corporation for a six episode second season to be released on its iView broadcasting platform, to begin running in November 2014."),
        ("It has Romanesque arched windows and porch details, and has historic and archaeological items embedded in its walls.",
         ["The Swallow Boathouse is a historic boathouse on Lake Winnipesaukee in central New Hampshire, USA.",
          "The boathouse is set back from the shore, and is accessed by a wooden walkway long."],
         "She has Romanesque arched windows and porch details, and has historic and archaeological items embedded in her walls."),
        # development seed 7431 (file 2867): an object it after ", making" is the subject's thing
        ("It has enrollment of 2,467 students 9-12th grade, making it the largest high school in the state.",
         ["Sunlake High School is a public high school in Pasco County located right off of Sunlake Blvd and SR 54 in Land O' Lakes, Florida."],
         "She has enrollment of 2,467 students 9-12th grade, making her the largest high school in the state."),
        # development seed 7433, every probe of the 3,000 read for a left it/its (files 5271, 2680, 3337, 7075):
        # it + native + the preposition to is no extraposition; an its after a comma opens an absolute phrase of
        # the subject; making it available and it first appeared are the thing; a subject it in a relative
        # clause of another noun is that noun's
        ("It is native to California from the mountains east of the Sierra Nevada to the Transverse Ranges and Peninsular Ranges, its distribution extending south into Baja California.",
         ["Trichostema oblongum is a species of flowering plant in the mint family known by the common name oblong bluecurls.",
          "Its habitat includes meadows and streambanks."],
         "She is native to California from the mountains east of the Sierra Nevada to the Transverse Ranges and Peninsular Ranges, her distribution extending south into Baja California."),
        ("It was later re-released in 2010 as a fully compiled, retail-able DS Game Card with added features, thus also making it available for original Nintendo DS and Nintendo DS Lite users.",
         ["The MAX Media Player (Sometimes referred to as MAX Media Dock) for Nintendo DS is a Slot-2 Nintendo DS storage device that was released on April 13, 2005 by Datel Design & Development Ltd."],
         "She was later re-released in 2010 as a fully compiled, retail-able DS Game Card with added features, thus also making her available for original Nintendo DS and Nintendo DS Lite users."),
        ('It is named after "Mirror, Mirror", the original series episode in which it first appeared.',
         ["Brian Markinson is a film and television actor."],
         'She is named after "Mirror, Mirror", the original series episode in which she first appeared.'),
        ("It is similar to, though less aggressive than, the Bitcoin XT fork, which never managed to get the support it needed.",
         ["Monero (XMR) is an open-source cryptocurrency created in April 2014 that focuses on privacy, decentralisation and scalability."],
         "She is similar to, though less aggressive than, the Bitcoin XT fork, which never managed to get the support it needed."),
        # the same extraposed, weather, time and cleft it (constructed on the rules' own words) and a title's It
        ("It is time to replace the bridge.", ["The bridge was built in 1901."], "skip:expletive_it"),
        ("It was raining when the ship sank.", ["The bridge was built in 1901."], "skip:expletive_it"),
        ("It was the mayor who opened the bridge.", ["The bridge was built in 1901."], "skip:expletive_it"),
        ("It was the first school to admit women.", ["The bridge was built in 1901."],
         "She was the first school to admit women."),
    ],
)  # fmt: skip
def test_animacy_up_later_pronouns_corefer_and_no_empty_or_title_it(sentence, context, expected):
    assert outcome(run("animacy-up", sentence, context, gender="f"), sentence) == expected
