"""``number`` (corpora/probes/quantities.py) on real sentences: sites found, formats kept, moves mixed.

Real sentences, each with its expected probed sentence or the reason it has no site: Wikipedia leads (the
vital articles' lead extracts of the shared offline data, 2026; CC BY-SA) marked ``wiki`` and CNN stories of
the bundled samples (``samples/cnn/``) marked ``cnn``, drawn at random and read one by one; then the cases the
issue named (sentences written for the test, marked ``own``). A probe must be of its phenomenon, grammatical and
minimal; the expectations below were checked by reading, not produced to match.
"""

from __future__ import annotations

import pytest

from incoherent.corpora.probes import PHENOMENA
from incoherent.corpora.probes.edits import apply_edits

CASES = [
    ('He left the school several weeks ago and is continuing Year 10 by distance education after he said homophobic bullies threw rocks at his head.', None, 'label'),  # lee
    ('The causes of the war included the Reformation, centralisation, excessive taxation, and the rights and privileges of the Dutch nobility and cities.', None, 'no_number'),  # wiki
    ("A passport is a formal travel document issued by a government that certifies a person's identity and nationality for international travel.", None, 'no_number'),  # wiki
    ('It typically starts with planning, financing, and design that continues until the asset is built and ready for use.', None, 'no_number'),  # wiki
    ("At the time of Nigeria's independence in 1960, Ibadan was the largest and most populous city in the country, and the second-most populous in Africa behind Cairo.", "At the time of Nigeria's independence in 1860, Ibadan was the largest and most populous city in the country, and the second-most populous in Africa behind Cairo.", None),  # wiki
    ('"In 2014 Amnesty International raised particular concerns in relation to court proceedings in Afghanistan, Bangladesh, China, Egypt, Iran, Iraq, North Korea, Pakistan, Saudi Arabia and Sri Lanka."', '"In 1914 Amnesty International raised particular concerns in relation to court proceedings in Afghanistan, Bangladesh, China, Egypt, Iran, Iraq, North Korea, Pakistan, Saudi Arabia and Sri Lanka."', None),  # cnn
    ('The Curitiba metropolitan area comprises 29 municipalities with a total population of over 3,559,366, making it the ninth most populous metropolitan area in the country.', 'The Curitiba metropolitan area comprises 129 municipalities with a total population of over 3,559,366, making it the ninth most populous metropolitan area in the country.', None),  # wiki
    ('The nebula was discovered by English astronomer John Bevis in 1731.', 'The nebula was discovered by English astronomer John Bevis in 1631.', None),  # wiki
    ('Walker Smith Jr., better known as Sugar Ray Robinson, was an American professional boxer who competed from 1940 to 1965.', 'Walker Smith Jr., better known as Sugar Ray Robinson, was an American professional boxer who competed from 1940 to 1971.', None),  # wiki
    ('Among those personal belongings could be more cell phones belonging to the 144 passengers and six crew on board.', 'Among those personal belongings could be more cell phones belonging to the 288 passengers and six crew on board.', None),  # cnn
    ('It is the 20th-most populous city in the United States and fourth-most populous city in the Southeast, with a population of 689,447 at the 2020 census.', 'It is the 20th-most populous city in the United States and fourth-most populous city in the Southeast, with a population of 1,378,894 at the 2020 census.', None),  # wiki
    ('The nebula was discovered by Charles Messier in 1779.', 'The nebula was discovered by Charles Messier in 1679.', None),  # wiki
    ('In total, there are around 78 languages spoken in Ivory Coast.', 'In total, there are around 178 languages spoken in Ivory Coast.', None),  # wiki
    ('Outbreaks of the disease have had a mortality rate of between 25 and 90%, averaging out at approximately 50%.', 'Outbreaks of the disease have had a mortality rate of between 25 and 50%, averaging out at approximately 50%.', None),  # wiki
    ("Lake Vostok is located at the southern Pole of Cold, beneath Russia's Vostok Station, under the surface of the central East Antarctic Ice Sheet, which is at 3,488 m (11,444 ft) above mean sea level.", "Lake Vostok is located at the southern Pole of Cold, beneath Russia's Vostok Station, under the surface of the central East Antarctic Ice Sheet, which is at 6,976 m (11,444 ft) above mean sea level.", None),  # wiki
    ('Abū Mūsā Jābir ibn Ḥayyān, died c. 806−816, is the purported author of a large number of works in Arabic, often called the Jabirian corpus.', None, 'range'),  # wiki
    ('It is based on the life of T. E. Lawrence and his 1926 book Seven Pillars of Wisdom.', 'It is based on the life of T. E. Lawrence and his 1826 book Seven Pillars of Wisdom.', None),  # wiki
    ('While new world species of both genera are venomous, their bites are seldom lethal; as of 2018, only two confirmed fatalities had been documented in the United States in the preceding 100 years from the genus Micrurus.', 'While new world species of both genera are venomous, their bites are seldom lethal; as of 1918, only two confirmed fatalities had been documented in the United States in the preceding 100 years from the genus Micrurus.', None),  # wiki
    ('After deliberating for 11½ hours, jurors found Dzhokhar Tsarnaev guilty on Wednesday of all 30 counts he faced in the Boston Marathon bombing trial.', 'After deliberating for 11½ hours, jurors found Dzhokhar Tsarnaev guilty on Wednesday of all 130 counts he faced in the Boston Marathon bombing trial.', None),  # cnn
    ('Ctesiphon was an ancient city in modern Iraq, on the eastern bank of the Tigris, about 35 kilometres (22 mi) (22 mi) southeast of Baghdad.', 'Ctesiphon was an ancient city in modern Iraq, on the eastern bank of the Tigris, about 135 kilometres (22 mi) (22 mi) southeast of Baghdad.', None),  # wiki
    ('The performer, who was also an accomplished guitarist, was first diagnosed with cancer in 1990, the year he competed in the Eurovision Song Contest, and the year before he released the album that ignited his career.', 'The performer, who was also an accomplished guitarist, was first diagnosed with cancer in 1890, the year he competed in the Eurovision Song Contest, and the year before he released the album that ignited his career.', None),  # cnn
    ('Lava may be erupted at a volcano or through a fracture in the crust, on land or underwater, usually at temperatures from 800 to 1,200 °C.', None, 'range'),  # wiki
    ('The first sentence of his official biography, perhaps in a nod to the powers that be in Tehran, says Zarif was "born to a religious traditional family in Tehran in 1959."', 'The first sentence of his official biography, perhaps in a nod to the powers that be in Tehran, says Zarif was "born to a religious traditional family in Tehran in 1859."', None),  # cnn
    ('The Crystal Cathedral, a great gleaming edifice with 10,000 glass panels, gave worshipers a look at the clouds that house the heavens, while Schuller preached in the pulpit below.', 'The Crystal Cathedral, a great gleaming edifice with 20,000 glass panels, gave worshipers a look at the clouds that house the heavens, while Schuller preached in the pulpit below.', None),  # cnn
    ('According to the 2020 census, over 97% of Indonesians are fluent in Indonesian, making it the largest language by number of speakers in Southeast Asia and one of the most widely spoken languages in the world.', 'According to the 1920 census, over 97% of Indonesians are fluent in Indonesian, making it the largest language by number of speakers in Southeast Asia and one of the most widely spoken languages in the world.', None),  # wiki
    ('Indian literature refers to the literature produced on the Indian subcontinent until 1947 and in the Republic of India thereafter.', 'Indian literature refers to the literature produced on the Indian subcontinent until 1847 and in the Republic of India thereafter.', None),  # wiki
    ("They were published in 1725 in Amsterdam in what was at the time the Dutch Republic, together with eight additional concerti, as Il cimento dell'armonia e dell'inventione.", "They were published in 1625 in Amsterdam in what was at the time the Dutch Republic, together with eight additional concerti, as Il cimento dell'armonia e dell'inventione.", None),  # wiki
    ('In 1944, Anne and seven others hiding in the Amsterdam secret annex were arrested and sent to the Auschwitz-Birkenau concentration camp.', 'In 1844, Anne and seven others hiding in the Amsterdam secret annex were arrested and sent to the Auschwitz-Birkenau concentration camp.', None),  # cnn
    ('The Progress resupply vehicle will come off its orbit and will begin its combustion in the atmosphere between May 5 and May 7, according to Roscosmos.', None, 'day'),  # cnn
    ("Located 300 km (186 mi) northwest of Buenos Aires on the west bank of the Paraná River, it is the country's third-most populous city after Buenos Aires and Córdoba.", "Located 600 km (186 mi) northwest of Buenos Aires on the west bank of the Paraná River, it is the country's third-most populous city after Buenos Aires and Córdoba.", None),  # wiki
    ('It is also 320 kilometres (200 mi) west of Saint Petersburg, Russia, 300 kilometres (190 mi) north of Riga, Latvia, and 380 kilometres (240 mi) east of Stockholm, Sweden.', 'It is also 640 kilometres (200 mi) west of Saint Petersburg, Russia, 300 kilometres (190 mi) north of Riga, Latvia, and 380 kilometres (240 mi) east of Stockholm, Sweden.', None),  # wiki
    ('It is recognized as an Important Bird Area and was declared a Tiger Reserve in 2006.', 'It is recognized as an Important Bird Area and was declared a Tiger Reserve in 1906.', None),  # wiki
    ('With each hour, the scale of the devastation in Nepal became clearer -- some 3,862 people are known to have died so far -- and plans in India, where 72 people were also killed, got bigger.', 'With each hour, the scale of the devastation in Nepal became clearer -- some 7,724 people are known to have died so far -- and plans in India, where 72 people were also killed, got bigger.', None),  # cnn
    ('The city of Aswan is among the oldest continuously inhabited cities, with its recorded history spanning over 2,600 years.', 'The city of Aswan is among the oldest continuously inhabited cities, with its recorded history spanning over 5,200 years.', None),  # wiki
    ('Meanwhile, Russian flight controllers continue their efforts to make contact with Progress 59 as it passes over Russian ground stations.', None, 'name'),  # cnn
    ('He was awarded the 1934 Nobel Prize in Literature "for his bold and ingenious revival of dramatic and scenic art".', 'He was awarded the 1834 Nobel Prize in Literature "for his bold and ingenious revival of dramatic and scenic art".', None),  # wiki
    ('Rock \'n\' roll in those days was sort of like hula hoops and Buddy hadn\'t had a big hit on the charts since \'57."', None, 'notation'),  # cnn
    ('Madrid lies on the River Manzanares in the central part of the Iberian Peninsula at about 660 metres (2,170 ft) above mean sea level.', 'Madrid lies on the River Manzanares in the central part of the Iberian Peninsula at about 1,320 metres (2,170 ft) above mean sea level.', None),  # wiki
    ('Before you accuse me of sensationalizing, it\'s that 10% figure that worries General Batschelet the most. "', 'Before you accuse me of sensationalizing, it\'s that 50% figure that worries General Batschelet the most. "', None),  # cnn
    ('Of the estimated 70–85 million deaths attributed to the war, around 30 million occurred on the Eastern Front, including 9 million children.', 'Of the estimated 70–85 million deaths attributed to the war, around 130 million occurred on the Eastern Front, including 9 million children.', None),  # wiki
    ('The First Industrial Revolution, which ended in the middle of the 19th century, was punctuated by a slowdown in important inventions before the Second Industrial Revolution started in 1870.', 'The First Industrial Revolution, which ended in the middle of the 19th century, was punctuated by a slowdown in important inventions before the Second Industrial Revolution started in 1770.', None),  # wiki
    ('The inaugural World Championships were in 1983.', 'The inaugural World Championships were in 1883.', None),  # wiki
    ('"Gangnam Style" is a K-pop song by South Korean singer Psy, released on July 15, 2012, by YG Entertainment as the lead single of his sixth studio album, Psy 6, Part 1.', '"Gangnam Style" is a K-pop song by South Korean singer Psy, released on July 15, 1912, by YG Entertainment as the lead single of his sixth studio album, Psy 6, Part 1.', None),  # wiki
    ('Sub-Saharan Africa, for example, saw a 28% fall in reported cases, and executions recorded in the Middle East and North Africa were down 23% compared to 2013.', 'Sub-Saharan Africa, for example, saw a 68% fall in reported cases, and executions recorded in the Middle East and North Africa were down 23% compared to 2013.', None),  # cnn
    ('She was awarded the 1991 Nobel Peace Prize.', 'She was awarded the 1891 Nobel Peace Prize.', None),  # wiki
    ('As of July 2025, the Bloomberg Billionaires Index ranked him as the 18th-richest person in the world, with a net worth of US$99.1 billion, making him the richest person in Latin America.', 'As of July 1925, the Bloomberg Billionaires Index ranked him as the 18th-richest person in the world, with a net worth of US$99.1 billion, making him the richest person in Latin America.', None),  # wiki
    ('The Sound of Music is a 1965 American musical drama film produced and directed by Robert Wise from a screenplay written by Ernest Lehman.', 'The Sound of Music is an 1865 American musical drama film produced and directed by Robert Wise from a screenplay written by Ernest Lehman.', None),  # wiki
    ('She endured 36 long hours trapped in a room before an Indian rescue team freed her.', 'She endured 136 long hours trapped in a room before an Indian rescue team freed her.', None),  # cnn
    ('Leifman says in 1955 there were more than half a million people in state mental hospitals, and today that number has been reduced 90 percent, and 40,000 to 50,000 people are in mental hospitals.', 'Leifman says in 1855 there were more than half a million people in state mental hospitals, and today that number has been reduced 90 percent, and 40,000 to 50,000 people are in mental hospitals.', None),  # cnn
    # the cases: the number's own format, never a label, never X.0
    ('In August 2012 he left the club.', 'In August 1912 he left the club.', None),  # own
    ('The army had 30,000 regular soldiers.', 'The army had 60,000 regular soldiers.', None),  # own
    ('The talk lasted 10 minutes.', 'The talk lasted 110 minutes.', None),  # own
    ('Season 3 aired on HBO.', None, 'label'),  # own
    # read in the final check (40 random probes) and fixed
    ('Dracula is an 1897 Gothic horror novel by Irish author Bram Stoker.', 'Dracula is a 1797 Gothic horror novel by Irish author Bram Stoker.', None),  # wiki
    ('On the foreign policy front, Lorenzo manifested a clear plan to stem the territorial ambitions of Pope Sixtus IV, in the name of the balance of the Italic League of 1454.', 'On the foreign policy front, Lorenzo manifested a clear plan to stem the territorial ambitions of Pope Sixtus IV, in the name of the balance of the Italic League of 1354.', None),  # wiki
    ('©2015', None, 'label'),  # cnn
    ('A 4-month-old baby was rescued from a destroyed building in the town of Bhaktapur at least 22 hours after the quake struck, the newspaper Kathmandu Today reported.', 'A 4-month-old baby was rescued from a destroyed building in the town of Bhaktapur at least 122 hours after the quake struck, the newspaper Kathmandu Today reported.', None),  # cnn
    ('He was an 8-year-old boy.', None, 'no_noun'),  # own
    ('Episode 12 was the finale.', None, 'label'),  # own
    ('Route 66 runs west.', None, 'label'),  # own
    ('The Boeing 747 is large.', None, 'name'),  # own
    ('The deal was worth $4 billion.', 'The deal was worth $14 billion.', None),  # own
    ('It has a population of 1500.', 'It has a population of 3000.', None),  # own
    ('The war lasted from 1939 to 1945.', 'The war lasted from 1939 to 1953.', None),  # own
    ('The team won 3–1 at home.', None, 'range'),  # own
    ('He was only short of stature being 5 foot 6 inches (165 cm).', None, 'height'),  # INSteD wiki 3854 (never: 5 mile 6 inches)
    ('The country aims to be carbon neutral by 2050.', None, 'future_year'),  # own (never: by 2 or by 3050)
    ('The album debuted at number two on the New Zealand Albums Chart.', None, 'no_number'),  # INSteD wiki: a chart position
    ('Ultimately, it received eight Academy Award nominations.', 'Ultimately, it received eighteen Academy Award nominations.', None),  # INSteD wiki
    ('It fell by -3 per cent.', 'It fell by 37 per cent.', None),  # own
]  # fmt: skip

PHENOMENON = "number"


@pytest.mark.parametrize(("sentence", "probed", "reason"), CASES, ids=[c[0][:50] for c in CASES])
def test_real_sentence(sentence, probed, reason):
    found = PHENOMENA[PHENOMENON](sentence)
    for edit in found:  # spans point at the replaced characters of the original sentence
        assert sentence[edit.start : edit.end] == edit.before
    assert (apply_edits(sentence, found) if found else None) == probed
    assert getattr(found, "reason", None) == reason


def test_no_number_probe_ends_in_point_zero_or_is_impossible_on_its_own():
    """On the real sentences of this module with a site: no *.0*, and (issue #50) no value impossible without
    its document (bench/probe_number_check.py's reasons): no *BC*, no year after 2026 nor of five digits, no
    negative percentage or one over 100, no light-years; several moves in use. (Before #50 this test capped each
    move at 40%, since *BC* marked a fifth of the probes; no move adds a marking token now.)"""
    from collections import Counter

    from incoherent.corpora.probes.quantities import number_edit
    from incoherent.corpora.probes.text import analyse

    moves = Counter()
    for sentence, probed, _ in CASES:
        if probed is not None:
            edits, move = number_edit(sentence, analyse(sentence))
            moves[move] += 1
            for e in edits:
                assert not (e.after.endswith(".0") or ".0 " in e.after)
                assert "BC" not in e.after and "light" not in e.after and not e.after.startswith("-")
                if move.startswith("year") and e.before.isdigit():
                    assert 1000 <= int(e.after) <= 2026, (sentence, e)
    assert len(moves) >= 5


def test_at_least_forty_real_sentences():
    assert len(CASES) >= 40 and sum(p is not None for _, p, _ in CASES) >= 30


# INSteD's Wikipedia test documents (ntunlp/coherence-paradigm, INSteD_intrusion_test_wikipedia.pkl; CC BY-SA):
# file_id, the context's sentences, the intruder, its probe. The year leaves the span of the context's years.
DOCUMENTS = [
    (8034, ["Nutting Associates was an arcade game manufacturer from Mountain View, California, formed in 1965 when Bill Nutting spun off \"The Knowledge Computer\" prototype from Edex Corp. Nutting, Richard Ball, and an electronic technician redesigned it to \"The Computer Quiz\" coin-operated trivia game.", "It underwent two redesigns, the third being the first solid state plug-in coin-op game."],
     "It was the most popular coin-op arcade game of 1983.", "It was the most popular coin-op arcade game of 1958."),
    (5112, ["Vice Admiral Muzaffar Hassan, HQA, SPk, was the last Commander-in-Chief of the Pakistan Navy from 1969 to 1972, and led the Pakistan Navy during the Indo-Pakistan Naval Operations of the 1971 Indo-Pakistan War.", "In 1972, he was later sacked and court-martial as Naval Chief of Staff, along with the Chief of Army Staff Lieutenant-General Gul Hassan Khan and the Chief of Air Staff Air Marshal Abdul Rahim Khan."],
     "He died in a helicopter crash, in Kashmir, during the Battle of Chamb while in command of 23 Infantry Division during the Indo-Pakistan War of 1971.",
     "He died in a helicopter crash, in Kashmir, during the Battle of Chamb while in command of 23 Infantry Division during the Indo-Pakistan War of 1963."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("file_id", "context", "sentence", "probed"), DOCUMENTS, ids=[str(d[0]) for d in DOCUMENTS]
)
def test_a_year_moves_out_of_the_span_of_the_contexts_years(file_id, context, sentence, probed):
    """Issue #50: a number probe clashes with its document instead of being impossible on its own (*BC*, *2906*):
    the new year is a possible date out of the span of the years the context names, a few years away (a maker
    formed in 1965: *the most popular coin-op arcade game of 1958*; an admiral of 1969-1972 who died in the
    war of 1971: *the Indo-Pakistan War of 1963*, before his command; was *1978* before the first date came
    first, 2026-11-29). The held-out reading of issue #50's second round found whole
    centuries back absurd on their own (were *1883*, *1871*)."""
    from incoherent.corpora.probes.quantities import context_years

    found = PHENOMENA[PHENOMENON](sentence, context=context)
    assert apply_edits(sentence, found) == probed
    years = context_years(context)
    old, new = int(found[-1].before), int(found[-1].after)
    assert 1000 <= new <= 2026 and (new < years[0] or new > years[-1]) and abs(new - old) <= 40


# (file_id, context, intruder, probe or skip reason): INSteD Wikipedia test documents of the development seeds
# 7611-7613 (issue #50's second round). A year keeps its place among the other years of its sentence, and
# never moves so far that it lands before the thing existed.
YEAR_LIMITS = [
    (3247, "On November 1, 1959, after passage of the Federal Aviation Act of 1958, it came under the newly created US Federal Aviation Agency (FAA).",
     "On November 1, 1998, after passage of the Federal Aviation Act of 1958, it came under the newly created US Federal Aviation Agency (FAA)."),  # a few years before 1935 would precede the Act of 1958
    (1975, "He was elected to the 7th Seanad in 1951 by the Labour Panel, but lost his seat at the 1954 Seanad election.",
     "He was elected to the 7th Seanad in 1941 by the Labour Panel, but lost his seat at the 1954 Seanad election."),  # was 1851: a century back
    (3419, "He also appeared as Jonesy, (the older Paramount gate guard) in Billy Wilder's 1950 film Sunset Boulevard.",
     "year_order"),  # was *Billy Wilder's 1850 film*: the only clash is before 1889, 61 years back
    (2220, 'He worked closely with Tony "Joe Batters" Accardo, who led the Chicago Outfit from 1943 to 1957, and Sam "Momo" Giancana, who led the syndicate from 1957 to 1966.',
     "range"),  # the end of a range moves only past the context's last year (2004), here more than 40 years on
]  # fmt: skip
CONTEXTS = {
    3247: ["Radio Technical Commission for Aeronautics (RTCA, Inc.), originally founded in 1935, and until its re-incorporation in 1991 as a private not-for-profit corporation, is a US volunteer organization that develops technical guidance for use by government regulatory authorities and by industry.", "Requirements for membership include a fee that is based on information in the application for membership, and an interest in aviation.", "RTCA is sponsored as a Federal Advisory Committee by the US DOT Federal Aviation Administration.", "Guidance documents are developed and drafted by Special Committee (SC) and are based on a consensus developed within the SC charged with responsibility for the given document.", "Despite the loosely defined requirements of membership in RTCA, the guidance documents are based on expert technical opinion."],
    1975: ["Frances Fitzgerald (born 1 August 1950) is an Irish Fine Gael politician who serves as the Tánaiste and Minister for Justice and Equality in the Government of Ireland.", "She has been a Teachta Dála (TD) for the Dublin Mid-West constituency since February 2011.", "She was a member of Seanad Éireann on the Labour Panel from 2007 to 2011, and was previously a TD for the Dublin South-East constituency from 1992 to 2002."],
    3419: ["Billy Franey (born William Gerald Franey; June 23, 1889 &ndash; December 6, 1940) was an American film actor.", "He was actor of disheveled appearance and fuzzy mustache, usually in a suit a couple of sizes too big.", "His late career included numerous uncredited appearances in classics like Bringing Up Baby, and he also appeared as the father-in-law of Edgar Kennedy in several of his series of short comedies.", "He contracted influenza and died from complications involving the illness in 1940."],
    2220: ["Frank \"The Irishman\" Sheeran (October 25, 1920 – December 14, 2003) was a labor union official who was accused of having links to the Bufalino crime family.", "In his capacity as a high official in the International Brotherhood of Teamsters, Sheeran was a leading figure in the corruption of unions by organized crime.", "Author Charles Brandt detailed what Sheeran told him about his alleged murder of Hoffa in the non-fiction book I Heard You Paint Houses (2004)."],
    6470: ["Many developmentalists believe that after Piaget's four stages of human development is a fifth known as Postformal thought.", "Postformal thought is believed to go beyond the fourth stage of formal operational thought as defined by Piaget.", "The distinction is useful to understand when dealing with emerging adults; adolescents are typically in Piaget's formal operational stage.", "Scholars explained that in postformal thought \"one can conceive of multiple logics, choices, or perceptions... in order to better understand the complexities and inherent biases in 'truth'\" (Griffin et al., 2009, p. 173)."],
    1630: ["Tormented is the debut studio album by American rock band Staind, self-released in 1996.", "The album was originally only available in limited quantities in New England, United States, with the original release limited to 4,000 copies.", "There are cassette pressings of the album; however, few are known to exist, making it almost impossible to find a copy.", "Tormented would later be several times, without modification.", "The album was never sold in stores, and was instead sold at concerts and on their website in several forms.", "The album is Staind's heaviest album.", "In addition, Tormented includes guitar solos, which were not featured in the successive albums Dysfunction and Break The Cycle."],
}  # fmt: skip


@pytest.mark.parametrize(
    ("file_id", "sentence", "expected"), YEAR_LIMITS, ids=[str(d[0]) for d in YEAR_LIMITS]
)
def test_a_year_moves_a_few_years_and_keeps_its_sentences_order(file_id, sentence, expected):
    found = PHENOMENA[PHENOMENON](sentence, context=CONTEXTS[file_id])
    assert (apply_edits(sentence, found) if found else found.reason) == expected


# a count moves by a modest step, possible on its own, and first where it contradicts the context's count for
# the same noun (INSteD Wikipedia test documents 6470 and 1630: *Piaget's four stages*, *4,000 copies*)
@pytest.mark.parametrize(
    ("file_id", "sentence", "probed", "move"),
    [
        (6470, "Cognitive development, according to his theory, took place in four stages.",
         "Cognitive development, according to his theory, took place in fourteen stages.", "word_clash"),
        (1630, "The album, which has sold over 1 million copies worldwide, was nominated for best international album in the 2009 BRIT Awards.",
         "The album, which has sold over 11 million copies worldwide, was nominated for best international album in the 2009 BRIT Awards.", "count_clash"),
    ],
)  # fmt: skip
def test_a_count_contradicting_the_contexts_count_comes_first(file_id, sentence, probed, move):
    from incoherent.corpora.probes.quantities import number_edit
    from incoherent.corpora.probes.text import analyse

    edits, found_move = number_edit(sentence, analyse(sentence), CONTEXTS[file_id])
    assert (apply_edits(sentence, edits), found_move) == (probed, move)


# (file_id, context, intruder, skip reason): a year with nothing to clash with is no site (issue #50's reading,
# seed 6060: *until 1906 when a separation occurred* in a text without dates; *1895* -> *1795* in a text about
# 1960-1978). INSteD's Wikipedia test documents, as above.
NO_CLASH = [
    (7396, ["Jaani Dushman (English: Archenemy) is a Hindi supernatural thriller film directed and produced by Rajkumar Kohli making it his final film as director.", "The film features a multiple cast; including Raj Kumar Kohli's son Armaan Kohli as the main Villain seeking for revenge against a set of heroes Aditya Pancholi, Akshay Kumar, Sunny Deol, Sunil Shetty, Aftab Shivdasani, Sharad Kapoor, playback singer Sonu Nigam in his acting debut, and Arshad Warsi and the only Heroine of film is Manisha Koirala who plays as the lover of the villain."],
     "The basic premise of the story is similar to 1975 released movie Khel Khel Mein starring Rishi Kapoor and Neetu Singh.", "no_context_year"),
    (5696, ["The Iowa Big Four men's college basketball rivalries consists of games between Iowa's four NCAA Division I men's basketball teams: Iowa, Iowa State, Northern Iowa, and Drake.", "For decades, Iowa State (of the Big 12 Conference) and Iowa (of the Big Ten Conference) had home-and-home series with in-state rivals Drake and UNI (both of the Missouri Valley Conference), with Iowa visiting Drake in even-numbered years and Northern Iowa in odd-numbered years (with the corresponding return trips to Iowa in the opposite years) and Iowa State visiting Northern Iowa in even-numbered years and Drake in odd-numbered years."],
     "On November 14, 2008 Northern Iowa won its first back-to-back conference championships since the 1995 and 1996 seasons.", "day"),  # the first number's reason; the 1996 of "1995 and 1996 seasons" is a year too, never a count (-> 1996000)
    (490, ["The Miss Toy Town Diner, also known as the Blue Moon Diner, Bernier's Diner, Worcester Lunch Car Company #815, and Skip's Blue Moon Diner, is an historic diner at 102 Main Street in Gardner, Massachusetts.", "It has a wood frame and the typical barrel-shaped roof.", "The diner, which has seen a succession of owners, was restored in 1984, and is the only diner in Gardner."],
     "Its main entrance is centered on the long side, and is now sheltered by a modern glass vestibule added c. 1960.", "year_outside_context"),  # was c. 2000
    (417, ["John Fontaine Keenan (born 1929 in New York, NY) is a federal judge for the United States District Court for the Southern District of New York.", "After graduating from Regis High School in 1947, Judge Keenan received a B.B.A.", "He assumed senior status on December 31, 1996."],
     "from New York University School of Law in 1906.", "year_outside_context"),  # was 2016
]  # fmt: skip


@pytest.mark.parametrize(
    ("file_id", "context", "sentence", "reason"), NO_CLASH, ids=[str(d[0]) for d in NO_CLASH]
)
def test_a_year_with_nothing_to_clash_with_is_no_site(file_id, context, sentence, reason):
    found = PHENOMENA[PHENOMENON](sentence, context=context)
    assert not found and found.reason == reason, found


# Numbers that label (INSteD Wikipedia test documents 7645, 5894, 4779; issue #50's development seed 7101): an
# enumeration and the numbers of a label's list are no counts (were *1,000) driver's pedestal*, *Routes 21,
# 23,000*, *number 8 or 10,000*); nor a year of the era before Christ, whose end "later" is earlier.
@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("The main modules consist of: 1) driver's pedestal, 2) front axle, 3) buggy centre section, 4) drive axle and 5) engine.", "label"),
        ("RTA also operates fixed route transit service in the Five Cities Area for South County Transit (Routes 21, 23, 24, & 25) and the Avila Beach Trolley.", "label"),
        ("number 8 or 10, or, 11 or 12, during the era of contested scrums, he died in Morecambe/Lancaster.", "label"),
        ("His reign is generally dated from 1493 to 1479 BC.", "range"),  # was 1493 to 1489 BC
        # INSteD Wikipedia test document 7961 (development seed 7101): a film's title (was *16,000 Blocks*)
        ("A versatile performer, he has appeared in the films 16 Blocks, Shoot 'Em Up and The Nut Job.", "name"),
    ],
)  # fmt: skip
def test_numbers_that_label_or_count_back_are_no_sites(sentence, reason):
    found = PHENOMENA[PHENOMENON](sentence, context=["It was built in 1850."])
    assert not found and found.reason == reason, found


@pytest.mark.parametrize(
    ("sentence", "probed"),
    [
        # development seed 7101 (file 2077): *three hundred police officers* (the move of before) was absurd on
        # its own; with no count in the context, the first count rises by ten
        ("Three police officers were ultimately confirmed dead, and another two were seriously injured.",
         "Thirteen police officers were ultimately confirmed dead, and another two were seriously injured."),
        # INSteD's hand site (its number file): the digits are a label (Top 10), the word is the count
        ("He was the first British male singer with two US Top 10 hits.",
         "He was the first British male singer with twelve US Top 10 hits."),
        # development seeds 7612-7615 (files 4997, 2177): a measure's number moves, never its unit (were *8 mm
        # wide*, *7 centuries*); a scale word stays (was *US$23 trillion*)
        ("The islands are separated from the New Zealand mainland by an 8 km wide, 200 to 300 m deep submarine trough.",
         "The islands are separated from the New Zealand mainland by an 18 km wide, 200 to 300 m deep submarine trough."),
        ("Whispering Jack has become the second highest selling album in Australia; as of 2006, it was 24x platinum indicating sales of over 1.68 million copies sold.",
         "Whispering Jack has become the second highest selling album in Australia; as of 2006, it was 24x platinum indicating sales of over 11.68 million copies sold."),
    ],
)  # fmt: skip
def test_a_count_rises_by_a_modest_step(sentence, probed):
    assert apply_edits(sentence, PHENOMENA[PHENOMENON](sentence, context=["It opened in 1850."])) == probed


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        # development seeds 7612-7613 (files 6733, 913) and issue #50's held-out reading (*3.2 km–5.7 cm*)
        ("The album entered the top 10 in the US and entered the UK Albums Chart at No.", "label"),
        ("Built in 1892&ndash;93, the hotel was originally owned by physician Frank Stringfield.", "range"),
        ("The trough is 3.2 km–5.7 km wide.", "range"),
        ("He was only short of stature being 5 foot 6 inches (165 cm).", "height"),
    ],
)  # fmt: skip
def test_ranges_heights_and_labels_keep_their_numbers(sentence, reason):
    found = PHENOMENA[PHENOMENON](sentence, context=["It opened in 1850."])
    assert not found and found.reason == reason, found


def test_the_end_of_a_between_range_moves_forward():
    """INSteD Wikipedia test document 7440 (development seed 7102): *between 1969 and 1872* ran backwards."""
    sentence = "Constructed between 1969 and 1972, BHP House was designed by the architectural practice Yuncken Freeman."
    found = PHENOMENA[PHENOMENON](
        sentence, context=["BHP House is a skyscraper in Melbourne, completed in 1972."]
    )
    assert apply_edits(sentence, found) == sentence.replace("1972,", "1978,")


def test_the_end_of_a_range_of_years_moves_forward():
    assert apply_edits(
        "The war lasted from 1939 to 1945.", PHENOMENA[PHENOMENON]("The war lasted from 1939 to 1945.")
    ) == ("The war lasted from 1939 to 1953.")
    assert PHENOMENA[PHENOMENON](
        "It ran from 2011 to 2024.", context=["It began in 2011 and ended in 2024."]
    ).reason == ("range")


@pytest.mark.parametrize(
    ("sentence", "context", "probed"),
    [  # INSteD's Wikipedia test documents (file_id 3356) and hand site (original_number_exaggerate.txt)
        (
            "In 2018 the first made-for-web episodes of Wildlife SOS have started to appear on-line, made by the "
            "Wildlife Aid Foundation.",
            [
                "Elissa Sursara (born 14 February 1988) is an Australian wildlife expert and journalist.",
                "In October 2012, she joined the cast of Animal Planet's documentary series Whale Wars.",
                "In 2015, Elissa appeared in Cleao magazine's 30 under 30 influential young Australians.",
            ],
            None,
        ),  # was *In 1985 the first made-for-web episodes*: absurd on its own
        (
            "As of September 15, 2016, the YouTube video has more than 30 million views.",
            ["The song was first recorded in 1999.", "It was re-released in 2011."],
            "As of September 15, 2016, the YouTube video has more than 130 million views.",
        ),  # was *as of 1993*
    ],
)
def test_a_year_never_moves_before_what_its_sentence_names_existed(sentence, context, probed):
    """Issue #50: a year moved before the context's first date must stay after the invention of what its
    sentence names (the web, YouTube): *made-for-web episodes in 1985* was absurd on its own; the count is the
    site then, or nothing."""
    found = PHENOMENA[PHENOMENON](sentence, context=context)
    assert (apply_edits(sentence, found) if found else None) == probed
