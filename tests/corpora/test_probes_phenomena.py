"""The eight probe phenomena on hand-written sentences: for each, the probed sentence and the exact edits
(``(before, after)`` in sentence order), including the tricky cases the phenomena must get right ("her" as
object or possessive, questions, passives, sentences negated already, numbers in dates and units) and
sentences without a site (an empty list of edits)."""

from __future__ import annotations

import pytest

from incoherent.corpora.probes import PHENOMENA
from incoherent.corpora.probes.edits import Edit, apply_edits

CASES = {
    "gender": [
        ('He was born in Paris.', 'She was born in Paris.', [('He', 'She')]),
        ('She married him in 1990.', 'He married him in 1990.', [('She', 'He')]),
        ('His father was a carpenter.', 'Her father was a carpenter.', [('His', 'Her')]),
        ('He gave her the book.', 'She gave her the book.', [('He', 'She')]),
        ('She gave her book to the library.', 'He gave his book to the library.', [('She', 'He'), ('her', 'his')]),
        ('She said the house was hers.', 'He said the house was his.', [('She', 'He'), ('hers', 'his')]),
        ('He described himself as a socialist.', 'She described herself as a socialist.', [('He', 'She'), ('himself', 'herself')]),
        ('The award was given to her by the committee.', 'The award was given to him by the committee.', [('her', 'him')]),
        ('Did he ever meet her?', 'Did she ever meet her?', [('he', 'she')]),
        ('Her first album sold well, and she toured Europe.', 'His first album sold well, and he toured Europe.', [('Her', 'His'), ('she', 'he')]),
        ('They thanked him for his help.', 'They thanked her for her help.', [('him', 'her'), ('his', 'her')]),
        ('The company said it would hire her.', 'The company said it would hire him.', [('her', 'him')]),
        ('The book is his.', 'The book is hers.', [('his', 'hers')]),
        ('HE LEFT.', 'SHE LEFT.', [('HE', 'SHE')]),
        ('Her own son succeeded her.', 'His own son succeeded him.', [('Her', 'His'), ('her', 'him')]),
        ('Was she elected by the party?', 'Was he elected by the party?', [('she', 'he')]),
        ('The critics praised her performance.', 'The critics praised his performance.', [('her', 'his')]),
        ('It rained all day.', None, []),
        ('They moved to London in 1990.', None, []),
    ],
    "animacy-down": [
        ('He was born in Paris.', 'It was born in Paris.', [('He', 'It')]),
        ('She married a painter in 1990.', 'It married a painter in 1990.', [('She', 'It')]),
        ('His father was a carpenter.', 'Its father was a carpenter.', [('His', 'Its')]),
        ('The committee gave her the award.', 'The committee gave it the award.', [('her', 'it')]),
        ('Her first album sold well.', 'Its first album sold well.', [('Her', 'Its')]),
        ('She said the house was hers.', 'It said the house was its own.', [('She', 'It'), ('hers', 'its own')]),
        ('He described himself as a socialist.', 'It described itself as a socialist.', [('He', 'It'), ('himself', 'itself')]),
        ('The award was given to him by the committee.', 'The award was given to it by the committee.', [('him', 'it')]),
        ('Did he ever visit Rome?', 'Did it ever visit Rome?', [('he', 'it')]),
        ('They thanked him for his help.', 'They thanked it for its help.', [('him', 'it'), ('his', 'its')]),
        ('He has two brothers.', 'It has two brothers.', [('He', 'It')]),
        ('She is a member of the council.', 'It is a member of the council.', [('She', 'It')]),
        ('He does not drink.', 'It does not drink.', [('He', 'It')]),
        ('Her own son succeeded her.', 'Its own son succeeded it.', [('Her', 'Its'), ('her', 'it')]),
        ('Is she the oldest member?', 'Is it the oldest member?', [('she', 'it')]),
        ('The city was founded in 1200.', None, []),
        ('They moved to London.', None, []),
    ],
    "animacy-up": [
        ('It was founded in 1850.', 'She was founded in 1850.', [('It', 'She')]),
        ('It is a town in Italy.', 'She is a town in Italy.', [('It', 'She')]),
        ('The company sold its shares.', 'The company sold her shares.', [('its', 'her')]),
        ('The river flows into the sea, and it floods every spring.', 'The river flows into the sea, and she floods every spring.', [('it', 'she')]),
        ('They rebuilt it after the war.', 'They rebuilt her after the war.', [('it', 'her')]),
        ('The museum describes itself as the largest in Europe.', 'The museum describes herself as the largest in Europe.', [('itself', 'herself')]),
        ('Its population was 5,000 in 2010.', 'Her population was 5,000 in 2010.', [('Its', 'Her')]),
        ("It's the oldest bridge in the city.", "She's the oldest bridge in the city.", [('It', 'She')]),
        ('Is it the largest lake in Europe?', 'Is she the largest lake in Europe?', [('it', 'she')]),
        ('The band released an album before it split up.', 'The band released an album before she split up.', [('it', 'she')]),
        ('The council voted to close it.', 'The council voted to close her.', [('it', 'her')]),
        ('The town has a church; it was built in 1200.', 'The town has a church; she was built in 1200.', [('it', 'she')]),
        ('It has been rebuilt twice.', 'She has been rebuilt twice.', [('It', 'She')]),
        ('The ship and its crew were lost.', 'The ship and her crew were lost.', [('its', 'her')]),
        ('Nobody knew what it meant.', 'Nobody knew what she meant.', [('it', 'she')]),
        ('He was born in Paris.', None, []),
        ('The houses were sold.', None, []),
    ],
    "demonstrative": [
        # issue #50: a copula's singular noun predicate cannot follow a plural subject (singular_predicate); the
        # first from INSteD's Wikipedia test documents, the second the reading's *These schools are residence
        # school* (its sentence not kept, so written again), the third keeps its site (*part of* agrees with both)
        ('This conflict was one of the major influences the internal politics of Rome during the first two centuries of the Roman Republic.', None, []),
        ('This school is residence school for girls.', None, []),
        ('These beliefs may cause the subject to discriminate against Black people and to justify this discrimination as a concern for justice.', None, []),  # INSteD wiki 7764: never *these discriminations*
        ('This area is part of Kent.', 'These areas are part of Kent.', [('This', 'These'), ('area', 'areas'), ('is', 'are')]),
        ('This album was released in 1990.', 'These albums were released in 1990.', [('This', 'These'), ('album', 'albums'), ('was', 'were')]),
        ('In that year the city was renamed.', 'In those years the city was renamed.', [('that', 'those'), ('year', 'years')]),
        ('The company opened this new factory in 2001.', 'The company opened these new factories in 2001.', [('this', 'these'), ('factory', 'factories')]),
        ('This small village has a church.', 'These small villages have a church.', [('This', 'These'), ('village', 'villages'), ('has', 'have')]),
        ('That decision was criticised.', 'Those decisions were criticised.', [('That', 'Those'), ('decision', 'decisions'), ('was', 'were')]),
        ('Why did this team lose?', 'Why did these teams lose?', [('this', 'these'), ('team', 'teams')]),
        ('This team plays in the first division.', 'These teams play in the first division.', [('This', 'These'), ('team', 'teams'), ('plays', 'play')]),
        ('During this period the empire grew.', 'During these periods the empire grew.', [('this', 'these'), ('period', 'periods')]),
        ('She wrote this song for her mother.', 'She wrote these songs for her mother.', [('this', 'these'), ('song', 'songs')]),
        ('That football club has won the cup.', 'Those football clubs have won the cup.', [('That', 'Those'), ('club', 'clubs'), ('has', 'have')]),
        ('This child was born in 1901.', 'These children were born in 1901.', [('This', 'These'), ('child', 'children'), ('was', 'were')]),
        ('This album was later released in Europe.', 'These albums were later released in Europe.', [('This', 'These'), ('album', 'albums'), ('was', 'were')]),
        ('This village church is old.', 'These village churches are old.', [('This', 'These'), ('church', 'churches'), ('is', 'are')]),
        ('Was this bridge built by the Romans?', 'Were these bridges built by the Romans?', [('Was', 'Were'), ('this', 'these'), ('bridge', 'bridges')]),
        ('The critics disliked that film.', 'The critics disliked those films.', [('that', 'those'), ('film', 'films')]),
        ('This is the largest city in the region.', None, []),
        ('He said that the war was over.', None, []),
        ('That was the last time they met.', None, []),
        ('The house that Jack built is old.', None, []),
        ('This book, which was written in 1850, is famous.', None, []),
    ],
    "conjunction": [
        # issue #50, INSteD's own hand sites (their edit): a clause after *but* whose past verb ends it, and a
        # left conjunct whose *that* is a determiner (*at that time*), not a complementiser
        ('The Auberge was heavily damaged during World War II but the inner rooms survived.', 'The Auberge was heavily damaged during World War II and therefore the inner rooms survived.', [('but', 'and therefore')]),
        ('It was big enough at that time but the population increased so they built the advanced department in 1902.', 'It was big enough at that time and therefore the population increased so they built the advanced department in 1902.', [('but', 'and therefore')]),
        ('He was injured, but he won the race.', 'He was injured, and therefore he won the race.', [('but', 'and therefore')]),
        ('Although it rained, the match went ahead.', 'Because it rained, the match went ahead.', [('Although', 'Because')]),
        ('The team won, although two players were injured.', 'The team won, and therefore two players were injured.', [('although', 'and therefore')]),
        ('However, the plan was abandoned.', 'Therefore, the plan was abandoned.', [('However', 'Therefore')]),
        ('The bridge was therefore closed.', 'The bridge was nevertheless closed.', [('therefore', 'nevertheless')]),
        ('Therefore, the council rejected the proposal.', 'However, the council rejected the proposal.', [('Therefore', 'However')]),
        ('The plan was abandoned because it was too expensive.', 'The plan was abandoned although it was too expensive.', [('because', 'although')]),
        ('The film was a success, and it won three awards.', 'The film was a success, but it won three awards.', [('and', 'but')]),
        ('He sang and danced.', None, []),  # verbs of a list, not clauses
        ('She won the race, and her team celebrated.', 'She won the race, but her team celebrated.', [('and', 'but')]),
        ('It rained, so the match was cancelled.', 'It rained, but the match was cancelled.', [('so', 'but')]),
        ('The project was expensive; nevertheless, it was completed.', 'The project was expensive; therefore, it was completed.', [('nevertheless', 'therefore')]),
        ('The album sold well, yet critics disliked it.', 'The album sold well, and therefore critics disliked it.', [('yet', 'and therefore')]),
        ('The station was thus closed in 1960.', 'The station was nevertheless closed in 1960.', [('thus', 'nevertheless')]),
        ('Did the team win, but lose the cup?', 'Did the team win, and therefore lose the cup?', [('but', 'and therefore')]),
        ('The town grew, though it never became a city.', 'The town grew, and therefore it never became a city.', [('though', 'and therefore')]),
        ('Tom and Jerry are friends.', None, []),
        ('Not only the city but also the region suffered.', None, []),
        ('He had nothing but praise for the team.', None, []),
        ('The road was closed because of the flood.', None, []),
        ('The budget is funded by fees, dues, and other sources.', None, []),
        # issue #50's reading: *and* -> *but* reads as a plausible contrast, so a clearer connective later in the
        # sentence is the site (INSteD wiki, line 1440 of the first 3,000 test documents; before: *, but he was
        # consequently succeeded*)
        ('Michael Benn, had been killed in the Second World War, and he was consequently succeeded by his younger son, the second Viscount, better known as the Labour politician Tony Benn.', 'Michael Benn, had been killed in the Second World War, and he was nevertheless succeeded by his younger son, the second Viscount, better known as the Labour politician Tony Benn.', [('consequently', 'nevertheless')]),
        ('The film was a success, and it won three awards, but the critics disliked it.', 'The film was a success, and it won three awards, and therefore the critics disliked it.', [('but', 'and therefore')]),
    ],
    "past-to-future": [
        ('He was born in Paris.', 'He will be born in Paris.', [('was', 'will be')]),
        ('The army led the attack.', 'The army will lead the attack.', [('led', 'will lead')]),
        ('The bridge was built in 1890 and led to the town.', 'The bridge will be built in 1890 and will lead to the town.', [('was', 'will be'), ('led', 'will lead')]),
        ('She had finished the book before the war.', 'She will have finished the book before the war.', [('had', 'will have')]),
        ('He did not win the race.', 'He will not win the race.', [('did', 'will')]),
        ("She didn't attend the meeting.", "She won't attend the meeting.", [("didn't", "won't")]),
        ('They were not invited.', 'They will not be invited.', [('were not', 'will not be')]),
        ("It wasn't finished until 1900.", "It won't be finished until 1900.", [("wasn't", "won't be")]),
        ('Did he win the race?', 'Will he win the race?', [('Did', 'Will')]),
        ('Was he elected in 1990?', 'Will he be elected in 1990?', [('Was', 'Will'), ('he', 'he be')]),
        ('Who led the army?', 'Who will lead the army?', [('led', 'will lead')]),
        ('The town had a population of 500.', 'The town will have a population of 500.', [('had', 'will have')]),
        ('The film received good reviews and earned 5 million dollars.', 'The film will receive good reviews and will earn 5 million dollars.', [('received', 'will receive'), ('earned', 'will earn')]),
        ('She put the book on the table.', 'She will put the book on the table.', [('put', 'will put')]),
        ('The company was sold to a rival, which closed it.', 'The company will be sold to a rival, which will close it.', [('was', 'will be'), ('closed', 'will close')]),
        ('They were playing in the park.', 'They will be playing in the park.', [('were', 'will be')]),
        ('When did the war end?', 'When will the war end?', [('did', 'will')]),
        ('The band split up in 1990.', 'The band will split up in 1990.', [('split', 'will split')]),
        ('He used to live in Paris.', None, []),
        ('The city is the capital.', None, []),
        ('He will return next year.', None, []),
    ],
    "negation": [
        ('The town received its charter in 1201.', 'The town did not receive its charter in 1201.', [('received', 'did not receive')]),
        ('It has a population of 500.', 'It does not have a population of 500.', [('has', 'does not have')]),
        ('He was the first mayor of the town.', 'He was not the first mayor of the town.', [('was', 'was not')]),
        ('She can speak French.', 'She cannot speak French.', [('can', 'cannot')]),
        ('The bridge was built in 1890.', 'The bridge was not built in 1890.', [('was', 'was not')]),
        ('He did not win the race.', None, []),  # already negated: no site
        ("She didn't attend the meeting.", None, []),  # already negated: no site
        ('It is not known when he died.', None, []),  # already negated: no site
        ('Did he win the race?', "Didn't he win the race?", [('Did', "Didn't")]),
        ('Is it the largest lake in Europe?', "Isn't it the largest lake in Europe?", [('Is', "Isn't")]),
        ('Although it rained, the match went ahead.', 'Although it rained, the match did not go ahead.', [('went', 'did not go')]),
        ('The man who founded the company died in 1950.', 'The man who founded the company did not die in 1950.', [('died', 'did not die')]),
        ('They play football every week.', 'They do not play football every week.', [('play', 'do not play')]),
        ('She had written three books by 1900.', 'She had not written three books by 1900.', [('had', 'had not')]),
        ('The company, which was founded in 1900, makes cars.', 'The company, which was founded in 1900, does not make cars.', [('makes', 'does not make')]),
        ('He will return next year.', 'He will not return next year.', [('will', 'will not')]),
        ('He cannot swim.', None, []),  # already negated: no site
        ("They won't come.", None, []),  # already negated: no site
        ('When did the war end?', "When didn't the war end?", [('did', "didn't")]),
        ('Who won the race?', 'Who did not win the race?', [('won', 'did not win')]),
        ('He has never lost a match.', None, []),
        ('No one came.', None, []),
        # issue #50, INSteD's Wikipedia test documents: a present base form agrees with a plural subject
        # whatever the tagger makes of it (never *The pots does not sell*), no edit inside a title or a
        # quoted headline
        ('Lookalikes include Boletus flammans, a lighter-colored species that grows with conifers.', 'Lookalikes do not include Boletus flammans, a lighter-colored species that grows with conifers.', [('include', 'do not include')]),
        ('The pots sell at 40 US cents a pair.', 'The pots do not sell at 40 US cents a pair.', [('sell', 'do not sell')]),
        ('The main cargoes include aluminum ingots and bars, pig iron, general, dry and liquid bulk cargoes, soybean and copper.', 'The main cargoes do not include aluminum ingots and bars, pig iron, general, dry and liquid bulk cargoes, soybean and copper.', [('include', 'do not include')]),
        ('The Corrs also perform Jimi Hendrix\'s "Little Wing", featuring a guitar solo by Ronnie Wood.', 'The Corrs do not perform Jimi Hendrix\'s "Little Wing", featuring a guitar solo by Ronnie Wood.', [('also perform', 'do not perform')]),
        ("Following the release of three independent albums, Meghan Trainor (2009), I'll Sing with You and Only 17 (2011), Trainor signed a record deal with Epic Records in February 2014.", None, []),
        ('The typeface\'s name referred to a tabloid headline claiming "Alien heads found in Georgia."', None, []),
        ('Current editors are Kersti Börjars (University of Manchester) and S.J.', 'Current editors are not Kersti Börjars (University of Manchester) and S.J.', [('are', 'are not')]),
    ],
    "number": [
        ('The river is 51.7 km long.', 'The river is 151.7 km long.', [('51.7', '151.7')]),
        ('He was born on 14 March 1901.', 'He was born on 14 March 1801.', [('1901', '1801')]),
        ('He was born on March 14, 1901.', 'He was born on March 14, 1801.', [('1901', '1801')]),
        ('The club has 18 members.', 'The club has 118 members.', [('18', '118')]),
        ('The population grew by 12% in 2010.', 'The population grew by 52% in 2010.', [('12', '52')]),
        ('The temperature fell to -3 degrees.', 'The temperature fell to -13 degrees.', [('3', '13')]),
        ('The company employs 1,200 people.', 'The company employs 2,400 people.', [('1,200', '2,400')]),
        ('The Boeing 747 first flew in 1969.', 'The Boeing 747 first flew in 1869.', [('1969', '1869')]),
        ('The tower is 300 m tall.', None, []),
        ('The album sold 2.5 million copies.', 'The album sold 12.5 million copies.', [('2.5', '12.5')]),
        ('The mountain is 8,848 metres high.', 'The mountain is 17,696 metres high.', [('8,848', '17,696')]),
        ('The journey took 3 hours.', 'The journey took 13 hours.', [('3', '13')]),
        ('In 1500 soldiers attacked the town.', 'In 3000 soldiers attacked the town.', [('1500', '3000')]),
        ('Route 66 opened in 1926.', 'Route 66 opened in 1826.', [('1926', '1826')]),
        ('The city covers 105 square kilometres.', 'The city covers 210 square kilometres.', [('105', '210')]),
        ('Unemployment fell by 3 per cent.', 'Unemployment fell by 43 per cent.', [('3', '43')]),
        ('The meeting started at 10:30.', None, []),
        ('The war lasted three years.', 'The war lasted thirteen years.', [('three', 'thirteen')]),
        ('It won by five eighths of a second.', None, []),
        ('It grew during the 1990s.', None, []),
        ('Was the bridge 2 km long?', 'Was the bridge 12 km long?', [('2', '12')]),
        ('Is the population 120,000?', 'Is the population 240,000?', [('120,000', '240,000')]),
    ],
}  # fmt: skip


def probe(phenomenon: str, sentence: str) -> list[Edit]:
    function = PHENOMENA[phenomenon]
    if phenomenon == "demonstrative":  # these cases are the agreeing variant's (--demonstrative agree)
        return function(sentence, agree=True)
    return function(sentence, "f") if phenomenon == "animacy-up" else function(sentence)


@pytest.mark.parametrize(
    ("phenomenon", "sentence", "probed", "edits"),
    [(p, *case) for p, cases in CASES.items() for case in cases],
    ids=[f"{p}:{case[0][:40]}" for p, cases in CASES.items() for case in cases],
)
def test_phenomenon(phenomenon, sentence, probed, edits):
    found = probe(phenomenon, sentence)
    assert [(e.before, e.after) for e in found] == edits
    for edit in found:  # spans point at the replaced characters of the original sentence
        assert sentence[edit.start : edit.end] == edit.before
    assert (apply_edits(sentence, found) if found else None) == probed


@pytest.mark.parametrize("phenomenon", list(CASES))
def test_each_phenomenon_has_fifteen_sentences_with_a_site(phenomenon):
    assert sum(probed is not None for _, probed, _ in CASES[phenomenon]) >= 15
    assert any(probed is None for _, probed, _ in CASES[phenomenon])  # and no-site cases


def test_the_registry_names_the_papers_eight_phenomena():
    assert list(PHENOMENA) == [
        "gender", "animacy-down", "animacy-up", "demonstrative", "conjunction", "past-to-future", "negation",
        "number",
    ]  # fmt: skip


def test_animacy_up_takes_the_gender_it_is_given():
    assert [e.after for e in probe("animacy-up", "It sold its shares.")] == ["She", "her"]
    assert [e.after for e in PHENOMENA["animacy-up"]("It sold its shares.", "m")] == ["He", "his"]
    with pytest.raises(ValueError):
        PHENOMENA["animacy-up"]("It sold its shares.", "x")


def test_phenomena_are_pure_functions_of_the_sentence():
    sentence = "This album was released in 1990, but it sold 18 copies."
    for phenomenon in PHENOMENA:
        assert probe(phenomenon, sentence) == probe(phenomenon, sentence)


def test_apply_edits_refuses_overlapping_or_foreign_edits():
    with pytest.raises(ValueError):
        apply_edits("He left.", [Edit(0, 2, "He", "She"), Edit(1, 3, "e ", "x")])
    with pytest.raises(ValueError):
        apply_edits("He left.", [Edit(0, 2, "It", "She")])


def test_no_pickled_model_is_loaded(monkeypatch):
    """lemminflect's neural models for unknown words are pickles: the phenomena never load them."""
    import pickle

    def refuse(*args, **kwargs):
        raise AssertionError("pickle.load called")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    from incoherent.corpora.probes import verbs, words

    verbs.lemma.cache_clear()
    words.plural.cache_clear()
    assert verbs.lemma("blorfed") is None and words.plural("xqzzy") is None
    assert [e.after for e in probe("past-to-future", "The zorbs glimmered.")] in ([], ["will glimmer"])


def test_a_phenomenon_whose_edits_overlap_is_a_counted_dead_letter(monkeypatch):
    from incoherent.corpora.probes import rows

    def broken(sentence, tokens=None, context=None):
        return [Edit(0, 2, "He", "She"), Edit(1, 3, "e ", "x")]

    monkeypatch.setitem(rows.PHENOMENA, "gender", broken)
    doc = {
        "id": "w:1",
        "source": "w",
        "split": "test",
        "sentences": ["A.", "He left.", "C."],
        "intruder_index": 1,
    }
    counted = []
    out = list(rows.probe_document(doc, ["gender", "negation"], 0, counted.append))
    assert [o.reason for o in out if not isinstance(o, dict)] == ["edit_failed/gender"]
    assert [o["phenomenon"] for o in out if isinstance(o, dict)] == ["negation"]
    assert counted == ["incoherent", "probed/negation"]
