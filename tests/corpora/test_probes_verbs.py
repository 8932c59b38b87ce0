"""``past-to-future`` and ``negation`` (corpora/probes/verbs.py, clauses.py) on real sentences.

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

PAST_TO_FUTURE = [
    ('They also may be created synthetically in laboratories for industrial or decorative purposes in large crystal boules.', None, 'no_past_verb'),  # wiki
    ('It is one of the two major codes of rugby football, the other being rugby league.', None, 'no_past_verb'),  # wiki
    ('Generally regarded as one of the greatest conductors of the 20th century, he was a controversial but dominant figure in European classical music from the mid-1950s until his death.', 'Generally regarded as one of the greatest conductors of the 20th century, he will be a controversial but dominant figure in European classical music from the mid-1950s until his death.', None),  # wiki
    ('He figures prominently in the Chinese legend titled "Great Yu Controls the Waters".', None, 'participle_only'),  # wiki
    ('And the Iranian Diplomacy website says he was born in in 1961', 'And the Iranian Diplomacy website says he will be born in in 1961', None),  # cnn
    ("Quanzhou was China's 12th-largest extended metropolitan area in 2010.", "Quanzhou will be China's 12th-largest extended metropolitan area in 2010.", None),  # wiki
    ('The son of a minor daimyo, Ieyasu once lived as a hostage under daimyo Imagawa Yoshimoto on behalf of his father.', 'The son of a minor daimyo, Ieyasu will once live as a hostage under daimyo Imagawa Yoshimoto on behalf of his father.', None),  # wiki
    ('Significant changes occurred with the colonization of the Americas and the consequent introduction of potatoes, tomatoes, capsicums, and maize, as well as sugar beet—the latter introduced in quantity in the 18th century.', None, 'mixed_tense_left'),  # wiki
    ('Lutherans hold themselves to be in continuity with the apostolic church and affirm the writings of the Church Fathers and the first four ecumenical councils.', None, 'participle_only'),  # wiki
    ('In the 14th century, Guillaume Tirel, a court chef known as "Taillevent", wrote Le Viandier, one of the earliest recipe collections of medieval France.', 'In the 14th century, Guillaume Tirel, a court chef known as "Taillevent", will write Le Viandier, one of the earliest recipe collections of medieval France.', None),  # wiki
    ('"I\'m also putting on weight again," he said after returning from a 10-day vacation.', '"I\'m also putting on weight again," he will say after returning from a 10-day vacation.', None),  # cnn
    ('He was the god of the Sun, order, kings and the sky.', 'He will be the god of the Sun, order, kings and the sky.', None),  # wiki
    ('It consists of the part of the Oral Torah compiled in the Mishnah and its commentaries, the Gemara.', None, 'participle_only'),  # wiki
    ("His supporters tried to secure the throne for him after his uncle, Kaloyan, was murdered in 1207, but Kaloyan's other nephew, Boril, overcame them.", "His supporters will try to secure the throne for him after his uncle, Kaloyan, will be murdered in 1207, but Kaloyan's other nephew, Boril, will overcome them.", None),  # wiki
    ('"We are the premier leader on personal development in the world," he told me.', '"We are the premier leader on personal development in the world," he will tell me.', None),  # cnn
    ('As a result, styles and movements formed and dissolved much more quickly than the relatively enduring modes in earlier history.', 'As a result, styles and movements will form and will dissolve much more quickly than the relatively enduring modes in earlier history.', None),  # wiki
    ('In atomic physics, the Bohr model or Rutherford–Bohr model is an obsolete model of the atom that incorporated some early quantum concepts.', 'In atomic physics, the Bohr model or Rutherford–Bohr model is an obsolete model of the atom that will incorporate some early quantum concepts.', None),  # wiki
    ('It was the first capital of British East Africa, before Nairobi was elevated to capital status in 1907.', 'It will be the first capital of British East Africa, before Nairobi is elevated to capital status in 1907.', None),  # wiki
    ('The term originates from the ancient Greek διασπορά and was first used this way in reference to the Jewish exile following the Babylonian captivity.', 'The term originates from the ancient Greek διασπορά and will first be used this way in reference to the Jewish exile following the Babylonian captivity.', None),  # wiki
    ('Pope John XXIII was head of the Catholic Church and sovereign of Vatican City from 28 October 1958 until his death on 3 June 1963.', 'Pope John XXIII will be head of the Catholic Church and sovereign of Vatican City from 28 October 1958 until his death on 3 June 1963.', None),  # wiki
    ('"We basically told the families that at this point in time we\'ve run out of options," Stickler said at a news conference late Friday.', '"We will basically tell the families that at this point in time we\'ve run out of options," Stickler will say at a news conference late Friday.', None),  # cnn
    ('According to Russian state news agency Tass, six attempts to make contact were to be made Wednesday.', None, 'was_to'),  # cnn
    ('From its dedication in 360 until 1453, Hagia Sophia served as the cathedral of Constantinople in the Byzantine liturgical tradition, except for the period 1204–1261 when the Latin Crusaders installed their own hierarchy.', 'From its dedication in 360 until 1453, Hagia Sophia will serve as the cathedral of Constantinople in the Byzantine liturgical tradition, except for the period 1204–1261 when the Latin Crusaders install their own hierarchy.', None),  # wiki
    ('"They all say we have lost our way, but they never ask why we had to take this path."', '"They all say we have lost our way, but they never ask why we will have to take this path."', None),  # cnn
    ('Enlil rose to prominence during the twenty-fourth century BC with the rise of Nippur.', 'Enlil will rise to prominence during the twenty-fourth century BC with the rise of Nippur.', None),  # wiki
    ('Students and faculty members marched Wednesday afternoon chanting "We are not afraid.', 'Students and faculty members will march Wednesday afternoon chanting "We are not afraid.', None),  # cnn
    ('He was one of the first to rigorously state and prove the key theorems of calculus, pioneered the field of complex analysis, and the study of permutation groups in abstract algebra.', 'He will be one of the first to rigorously state and prove the key theorems of calculus, will pioneer the field of complex analysis, and the study of permutation groups in abstract algebra.', None),  # wiki
    ('The war between Israel and Hamas militants in Gaza last summer left more than 2,000 people dead.', 'The war between Israel and Hamas militants in Gaza last summer will leave more than 2,000 people dead.', None),  # cnn
    ('From the 13th century until the first half of the 20th century, Tallinn was known in most of the world by variants of its other historical name, Reval.', 'From the 13th century until the first half of the 20th century, Tallinn will be known in most of the world by variants of its other historical name, Reval.', None),  # wiki
    ('A member of the Bernoulli family, he, along with his brother Johann, was one of the founders of the calculus of variations.', 'A member of the Bernoulli family, he, along with his brother Johann, will be one of the founders of the calculus of variations.', None),  # wiki
    ('His interest in Eastern religious, spiritual, and philosophical traditions, combined with his involvement with Jungian analysis, helped shape his literary work.', None, 'uncertain_finite'),  # wiki
    ('While heterogeneous, the Legalists generally shared a view of most people - or at least elite - as fundamentally self-interested, emphasizing equality under the law, administrative methods and regulations.', 'While heterogeneous, the Legalists will generally share a view of most people - or at least elite - as fundamentally self-interested, emphasizing equality under the law, administrative methods and regulations.', None),  # wiki
    ("They concluded that it's unlikely the sisters survived until March, because witnesses at the camp said the sisters both had symptoms before February 7.", None, 'uncertain_finite'),  # cnn
    ('Wright believed in designing in harmony with humanity and the environment, a philosophy he called organic architecture.', 'Wright will believe in designing in harmony with humanity and the environment, a philosophy he will call organic architecture.', None),  # wiki
    ("But he didn't want to; his mother says he's shy outside of their home.", "But he won't want to; his mother says he's shy outside of their home.", None),  # cnn
    ("Fuzuli's work was widely known and admired throughout the Turkic cultural landscape from the 16th to the 19th centuries, with his fame reaching as far as Central Asia and India.", None, 'mixed_tense_left'),  # wiki
    ('After two attempts failed to bring fertilized embryos to term, they created two more embryos using her eggs and his sperm.', 'After two attempts fail to bring fertilized embryos to term, they will create two more embryos using her eggs and his sperm.', None),  # cnn
    ("With the concurrent establishment of the Republic of Afghanistan, headed by Mohammad Daoud Khan, the country's relatively peaceful and stable period in modern history came to an end.", "With the concurrent establishment of the Republic of Afghanistan, headed by Mohammad Daoud Khan, the country's relatively peaceful and stable period in modern history will come to an end.", None),  # wiki
    ('It succeeded the Rashidun Caliphate, of which the third caliph, Uthman ibn Affan, was also a member of the Umayyad clan.', 'It will succeed the Rashidun Caliphate, of which the third caliph, Uthman ibn Affan, will also be a member of the Umayyad clan.', None),  # wiki
    ('Sher Shah is renowned as one of the most skillful Afghan generals in history, and by the end of his reign, his empire covered nearly all of Northern India.', 'Sher Shah is renowned as one of the most skillful Afghan generals in history, and by the end of his reign, his empire will cover nearly all of Northern India.', None),  # wiki
    ('Officials are still trying to determine if other people were involved.', 'Officials are still trying to determine if other people will be involved.', None),  # cnn
    ('Leeds expanded in the 17th and 18th centuries by becoming a major production and trading centre.', 'Leeds will expand in the 17th and 18th centuries by becoming a major production and trading centre.', None),  # wiki
    ('He filed it in August in Santa Monica, California, where they apparently lived while they dated.', 'He will file it in August in Santa Monica, California, where they will apparently live while they date.', None),  # cnn
    ("Rooted in skiffle, beat and 1950s rock 'n' roll, their sound incorporated elements of classical music and traditional pop in innovative ways.", "Rooted in skiffle, beat and 1950s rock 'n' roll, their sound will incorporate elements of classical music and traditional pop in innovative ways.", None),  # wiki
    ('It taught an elaborate dualistic cosmology describing the struggle between a good spiritual world of light, and an evil material world of darkness.', 'It will teach an elaborate dualistic cosmology describing the struggle between a good spiritual world of light, and an evil material world of darkness.', None),  # wiki
    ('"I will do anything for Youssif," his father said, pulling his son closer to him.', '"I will do anything for Youssif," his father will say, pulling his son closer to him.', None),  # cnn
    # the cases: participles, adjectives and reduced relatives are not verbs of a clause
    ('The game came with added features.', 'The game will come with added features.', None),  # own
    ('Go, also known as Weiqi, is played on a grid.', None, 'participle_only'),  # own
    ('Go, also known as Weiqi, spread to Japan.', None, 'uncertain_finite'),  # own
    ('She did a short telefilm in 1990.', 'She will do a short telefilm in 1990.', None),  # own
    ('She had a house in Paris.', 'She will have a house in Paris.', None),  # own
    ('After a video surfaced, he resigned.', 'After a video surfaces, he will resign.', None),  # own
    ('If the team won, the coach stayed.', 'If the team wins, the coach will stay.', None),  # own
    ('When the players arrived, the match started.', 'When the players arrive, the match will start.', None),  # own
    ('In papers filed Friday, prosecutors said he lied.', None, 'mixed_tense_left'),  # own
    ('The men killed in the attack were soldiers.', None, 'mixed_tense_left'),  # own
    ('He was born in Leeds and raised in York.', None, 'mixed_tense_left'),  # own
    ('He was born in Leeds and died in York.', 'He will be born in Leeds and will die in York.', None),  # own
    ('Founded in 1900, the club grew fast.', 'Founded in 1900, the club will grow fast.', None),  # own
    ('When did the war end?', 'When will the war end?', None),  # own
    ('He had not seen it.', 'He will not have seen it.', None),  # own
    ('He used to live in Paris.', None, 'used_to'),  # own
    # read in the final checks (40 random probes each) and fixed
    ('Murray said last week that the search effort would stop if no signs of life were found at the sixth hole.', 'Murray will say last week that the search effort would stop if no signs of life were found at the sixth hole.', None),  # cnn
    ('The Mississippian period is itself subdivided into the Early, Middle and Late Mississippian periods.', None, 'participle_only'),  # wiki
    ('This difficulty leads to phenomena such as Lazarus taxa, where a species presumed extinct abruptly reappears after a period of apparent absence.', None, 'no_past_verb'),  # wiki
    ('In a nation that largely feels abandoned by the rest of the world, it was a refreshing realization.', 'In a nation that largely feels abandoned by the rest of the world, it will be a refreshing realization.', None),  # cnn
    ('Impatiens is a genus of more than 1,000 species of flowering plants, widely distributed throughout the Northern Hemisphere and the tropics.', None, 'participle_only'),  # wiki
    ('Rapid transit, mass rapid transit (MRT) or rail rapid transit (RRT) and commonly referred to as metro, is a type of high-capacity public transport that is generally built in urban areas.', None, 'participle_only'),  # wiki
    ('Leather is a strong, flexible and durable material obtained from the tanning, or chemical treatment, of animal skins and hides to prevent decay.', None, 'participle_only'),  # wiki
    ('He signed for the club and scored twice.', 'He will sign for the club and will score twice.', None),  # own
    ('Prince Henry the Navigator, was a Portuguese prince, a central figure in the early days of the Portuguese Empire and often credited as one of the main initiators of the Age of Discovery.', None, 'mixed_tense_left'),  # wiki
    ('Pragmatism is a philosophical tradition that views language and thought as tools for prediction, problem solving, and action, rather than describing, representing, or mirroring reality.', None, 'participle_only'),  # wiki
    ('He was an innovator of Russian music in the Romantic period and strove to achieve a uniquely Russian musical identity, often in deliberate defiance of the established conventions of Western music.', 'He will be an innovator of Russian music in the Romantic period and will strive to achieve a uniquely Russian musical identity, often in deliberate defiance of the established conventions of Western music.', None),  # wiki
    ('In geology, hotspots are volcanic locales thought to be fed by underlying mantle that is anomalously hot compared with the surrounding mantle.', None, 'participle_only'),  # wiki
    ('Hermann Wilhelm Göring was a German politician, aviator, military commander, and convicted war criminal.', None, 'mixed_tense_left'),  # wiki
    ('Some 33,000 species have been identified, grouped into 7 valid orders.', None, 'participle_only'),  # wiki
    ('Hundreds of trained disaster relief troops landed in Kathmandu and quickly got to work.', 'Hundreds of trained disaster relief troops will land in Kathmandu and will quickly get to work.', None),  # cnn
    ('The regime he created lasted until 1974, making it one of the longest-lived dictatorships in modern Europe.', 'The regime he will create will last until 1974, making it one of the longest-lived dictatorships in modern Europe.', None),  # wiki
    ('Once the game ended, they left.', 'Once the game ends, they will leave.', None),  # own
    ('The city is the capital.', None, 'no_past_verb'),  # own
    # read on development samples of bench/probe_sample.py (seeds 1-20) and fixed: reduced relatives after an
    # object, participles of a passive's list, adverbs joined by and, emphatic did, was ... not
    ('In modern engineering, the term aqueduct is used for any system of pipes, ditches, canals, tunnels, and other structures used for this purpose.', None, 'participle_only'),  # wiki
    ('Most convert tension or torsion energy that was more slowly and manually built up within the device before release, via springs, bows, twisted rope, elastic, or any of numerous other materials.', None, 'mixed_tense_left'),  # wiki
    ('The separated straw is then either chopped onto the field and ploughed back in, or laid out in rows, ready to be baled and used for bedding and cattle feed.', None, 'participle_only'),  # wiki
    ('Parker was a highly influential soloist and leading figure in the development of bebop, a form of jazz characterized by fast tempos, virtuosic technique, and advanced harmonies.', None, 'mixed_tense_left'),  # wiki
    ('Taste is the perception stimulated when a substance in the mouth reacts chemically with taste receptor cells located on taste buds in the oral cavity, mostly on the tongue.', None, 'participle_only'),  # wiki
    ('The earliest inscriptions found which are identifiably Maya date to the 3rd century BCE in late Preclassic sites like Chakjobon (Mexico) and San Bartolo (Guatemala).', None, 'participle_only'),  # wiki
    ('Steps are very typically rectangular, but may instead be straight, curved, or may consist of two or more straight pieces connected at angles.', None, 'participle_only'),  # wiki
    ('The idea of a universal library in Alexandria may have been proposed by Demetrius of Phalerum, an exiled Athenian statesman living in Alexandria, to Ptolemy I Soter, who may have established plans for the library, but the library itself was probably not built until the reign of his son Ptolemy II Philadelphus.', 'The idea of a universal library in Alexandria may have been proposed by Demetrius of Phalerum, an exiled Athenian statesman living in Alexandria, to Ptolemy I Soter, who may have established plans for the library, but the library itself will probably not be built until the reign of his son Ptolemy II Philadelphus.', None),  # wiki
    ('Research has continually proven a relationship between disgust and anxiety disorders such as arachnophobia, blood-injection-injury type phobias, and contamination fear related obsessive–compulsive disorder.', None, 'participle_only'),  # wiki
    ("The white or pink flowered marsh St. John's worts of North America and eastern Asia are generally accepted as belonging to the separate genus Triadenum Raf.", None, 'participle_only'),  # wiki
    ('Covering an area of 1,221,037 square kilometres, the country has a population of over 63 million people, making it the sixth-most populated country in Africa, and 24th-most in the world.', None, 'participle_only'),  # wiki
    ('The building was designed in the Art Deco style by Shreve, Lamb & Harmon and constructed between 1930 and 1931.', None, 'mixed_tense_left'),  # wiki
    ('Falcons are widely distributed on all continents of the world except Antarctica, though closely related raptors did occur there in the Eocene.', 'Falcons are widely distributed on all continents of the world except Antarctica, though closely related raptors will occur there in the Eocene.', None),  # wiki
    ('West Australian Senator Andrew Murray said yesterday unless the Democrats left wing gave ground the party would split.', None, 'mixed_tense_left'),  # lee
    ('The man who founded the company died in 1990.', None, 'uncertain_finite'),  # own
    ('He bought cars, and the workers went home.', 'He will buy cars, and the workers will go home.', None),  # own
    ('The most common type of harmonica is a diatonic Richter-tuned instrument with ten air passages and twenty reeds, often called a blues harp.', None, 'participle_only'),  # wiki
    ('Nineteen plays attributed to Euripides have survived more or less complete, although one of these (Rhesus) is often considered not to be genuinely his work.', None, 'participle_only'),  # wiki
    ('Written when Achebe was working at the Nigerian Broadcasting Corporation, it was first published in London by Heinemann on 17 June 1958.', 'Written when Achebe is working at the Nigerian Broadcasting Corporation, it will first be published in London by Heinemann on 17 June 1958.', None),  # wiki
    ('Other notable instruments include xylophones, bamboo flutes, a bowed string instrument called a rebab, and a zither-like instrument called a siter, used in Javanese gamelan.', None, 'participle_only'),  # wiki
    ('The four Afghan factions have approved a plan for a 29-member ruling council composed of a chairman, five deputy chairmen and 23 other members.', None, 'participle_only'),  # lee
    ('This existed after the East India Company had been granted the diwani, or the right to collect revenue, in Bengal by the Mughal emperor in Delhi, but before it had wrested the nizamat, or control of civil administration, which continued to lie with the Mughal governor.', 'This will exist after the East India Company has been granted the diwani, or the right to collect revenue, in Bengal by the Mughal emperor in Delhi, but before it has wrested the nizamat, or control of civil administration, which will continue to lie with the Mughal governor.', None),  # wiki
    ('Ideologically, he initially adhered to Marxism–Leninism, but moved towards social democracy by the early 1990s.', 'Ideologically, he will initially adhere to Marxism–Leninism, but will move towards social democracy by the early 1990s.', None),  # wiki
    # *directed films* after a noun, like *controlled irrigation*: an adjective in a list, or a verb (skipped)
    ('She appeared in films, performed in musicals, and recorded two albums.', 'She will appear in films, will perform in musicals, and will record two albums.', None),  # own
    ('In the late 1960s, farmers began incorporating new technologies, including high-yielding varieties of cereals, particularly dwarf wheat and rice, and the widespread use of chemical fertilizers, pesticides, and controlled irrigation.', None, 'uncertain_finite'),  # wiki
    ('He was arrested, charged and released.', 'He will be arrested, charged and released.', None),  # own
    ('The man, who lived in Paris, founded a company.', 'The man, who will live in Paris, will found a company.', None),  # own
    ('Just as a linear force is a push or a pull applied to a body, a torque can be thought of as a twist applied to an object with respect to a chosen axis.', None, 'participle_only'),  # wiki
    ('In physics, Huygens made seminal contributions to optics and mechanics, while as an astronomer he studied the rings of Saturn and discovered its largest moon, Titan.', 'In physics, Huygens will make seminal contributions to optics and mechanics, while as an astronomer he studies the rings of Saturn and discovers its largest moon, Titan.', None),  # wiki
    ("Best known for the novels Le Rouge et le Noir and La Chartreuse de Parme, he is highly regarded for the acute analysis of his characters' psychology and considered one of the early and foremost practitioners of realism.", None, 'participle_only'),  # wiki
    ('The United States, the European Union and the Group of eight industrialised nations among others, have all called on India and Pakistan to exercise restraint and resolve the stand-off through dialogue.', None, 'participle_only'),  # lee
    ('Thrillers are characterized and defined by the moods they elicit, giving their audiences heightened feelings of suspense, excitement, surprise, anticipation and anxiety.', None, 'participle_only'),  # wiki
    ('A basin is separated from adjacent basins by a perimeter, the drainage divide, made up of a succession of elevated features, such as ridges and hills.', None, 'participle_only'),  # wiki
    ('In the context of African American culture, vernacular dance encompasses styles that developed organically within African American communities, influenced by African traditions, European dance forms, and the unique experiences of African Americans in the United States.', None, 'mixed_tense_left'),  # wiki
    ('The concept of social stratification was introduced by a Russian-American sociologist Pitirim Sorokin in his book "Social Mobility" published in 1927.', None, 'mixed_tense_left'),  # wiki
    ('As the family searched the house and tussled with the dog, the police arrived.', 'As the family searches the house and tussles with the dog, the police will arrive.', None),  # own
    ('It settles legal disputes submitted to it by states and provides advisory opinions on legal questions referred to it by other UN organs and specialized agencies.', None, 'participle_only'),  # wiki
    ('Gdańsk lies at the mouth of the Motława River and is situated at the southern edge of Gdańsk Bay, close to the city of Gdynia and the resort town of Sopot; these form a metropolitan area called the Tricity (Trójmiasto), with a population of approximately 1.5 million.', None, 'participle_only'),  # wiki
    ('In contrast with tropical cyclones, extratropical cyclones produce rapid changes in temperature and dew point along broad lines called weather fronts, which are present about the center of the cyclone.', None, 'participle_only'),  # wiki
    ('He managed policy in regard to the attacks of barbarian federates settled throughout the West.', None, 'uncertain_finite'),  # wiki
    ('The Palestinian leadership underscored the "importance of the role played by the American administration in the peace process, with the support of Russia and the European Union."', None, 'mixed_tense_left'),  # lee
    ('The man called the police.', 'The man will call the police.', None),  # own
    ('Some forms of organized crime exist simply to meet demand for illegal goods or to facilitate trade in products and services banned by the state, such as illegal drugs or firearms.', None, 'participle_only'),  # wiki
    ('Located on the western highland of Java island, it has one of the coolest climates compared to other provincial capitals in Indonesia, situated 708 meters above sea level, approximately 145 kilometres southeast of Jakarta.', None, 'participle_only'),  # wiki
    ('Japan also has many simmered dishes, such as fish products in broth called oden, or beef in sukiyaki and nikujaga.', None, 'participle_only'),  # wiki
    ('John called the police.', 'John will call the police.', None),  # own
    # read in the held-out reading of seed 3001 (bench/probe-readings/past-to-future-3001.md) and fixed
    ('Albanians form a significant minority at around 25%, followed by Turks, Roma, Serbs, Bosniaks, Aromanians and a few other minorities.', None, 'participle_only'),  # wiki
    ('Taxonomically, members of the chimpanzee/bonobo subtribe Panina—composed entirely by the genus Pan—are collectively termed panins.', None, 'participle_only'),  # wiki
    ('The river, also called the Krishnaveni, is 1,400 kilometres (870 mi) long and flows for 282 kilometres in Maharashtra.', None, 'participle_only'),  # wiki
    ('He governed Tanganyika as prime minister from 1961 to 1962 and then as president from 1962 to 1964, after which he led its successor state, Tanzania, as president from 1964 to 1985.', 'He will govern Tanganyika as prime minister from 1961 to 1962 and then as president from 1962 to 1964, after which he will lead its successor state, Tanzania, as president from 1964 to 1985.', None),  # wiki
    ('There are between six and nine recognised subspecies split between two groups, the Chinese-derived and the Indian-derived.', None, 'participle_only'),  # wiki
    ('Widely regarded by peers and critics as the greatest actress of her generation, and by many as the greatest of all time, she is recognized as one of the most versatile performers in cinema, noted for her technical precision, nuanced emotional depth, command of dialects, and professional longevity.', None, 'participle_only'),  # wiki
    ('He was also an influential practitioner of wood engraving and woodcuts as art forms.', 'He will also be an influential practitioner of wood engraving and woodcuts as art forms.', None),  # wiki
    # read in the held-out reading of seed 3002 (bench/probe-readings/past-to-future-3002.md) and fixed
    ('Within such a system, individuals are expected to marry exclusively within the same caste (endogamy), follow lifestyles often linked to a particular occupation, hold a ritual status observed within a hierarchy, and interact with others based on cultural notions of exclusion, with certain castes considered as either more pure or more polluted than others.', None, 'participle_only'),  # wiki
    ('Alternatively, it is catalogued as Messier 16, M16, or NGC 6611, and sometimes referred to as the Star Queen Nebula.', None, 'participle_only'),  # wiki
    ('While the conflict between the two civilizations did involve direct military engagements, a significant role was played by a plethora of vassal kingdoms and allied nomadic tribes, which served as buffer states or proxies for either side.', None, 'mixed_tense_left'),  # wiki
    ("War between Japan and the Republic of China had begun in 1937, with hostilities dating back to Japan's invasion of Manchuria in 1931, but the Pacific War is more widely accepted to have begun in 1941, when the United States and United Kingdom were brought into the war.", "War between Japan and the Republic of China will have begun in 1937, with hostilities dating back to Japan's invasion of Manchuria in 1931, but the Pacific War is more widely accepted to have begun in 1941, when the United States and United Kingdom were brought into the war.", None),  # wiki
    ('He wrote novels and directed films.', None, 'uncertain_finite'),  # own
    # read in the held-out reading of seed 3003 (bench/probe-readings/past-to-future.md) and fixed after it
    ('Each team plays 162 games per season, with Opening Day held during the last week of March or the first week of April.', None, 'participle_only'),  # wiki
    ('Models built to the same scale as the prototype are called mockups.', None, 'participle_only'),  # wiki
    # the precision gate (corpora/probes/tense_gate.py): an edit on a weak signal, or a past verb left beside a
    # future one, skips the sentence; the first eight were misread by earlier rules in the held-out readings
    # (bench/probe-readings/past-to-future-3003.md and -3004.md)
    ('Examples of psychotic symptoms are delusions, hallucinations, and disorganized or incoherent thoughts or speech.', None, 'uncertain_finite'),  # wiki
    ('This difficulty leads to phenomena such as Lazarus taxa, where a species presumed extinct abruptly "reappears" after a period of apparent absence.', None, 'uncertain_finite'),  # wiki
    ('Of the 58 members of the UN at the time, 48 voted in favour, none against, eight abstained, and two did not vote.', None, 'mixed_tense_left'),  # wiki
    ('Rules are formal, typically written expectations that outline required behavior, while norms are informal, often unwritten guidelines about appropriate behavior that are shaped by custom and social practice.', None, 'uncertain_finite'),  # wiki
    ('The Roman Republic then unified Italy forming a confederation of the Italic peoples and rose to dominate Western Europe, Northern Africa, and the Near East.', None, 'mixed_tense_left'),  # wiki
    ('The terms Western Roman Empire and Eastern Roman Empire were coined in modern times to describe political entities that were de facto independent; contemporary Romans did not consider the Empire to have been split into two empires but viewed it as a single polity governed by two imperial courts for administrative purposes.', None, 'mixed_tense_left'),  # wiki
    ('Models built to the same scale as the prototype are called mockups.', None, 'participle_only'),  # wiki
    ('A teenage prodigy, he was born in Delft and studied at Leiden University.', None, 'mixed_tense_left'),  # wiki
    ('This argument holds that if human beings such as infants, senile people, and the cognitively disabled are granted moral status and negative rights, then nonhuman animals must be granted the same moral consideration.', None, 'uncertain_finite'),  # wiki
    ('He was involved in criminal behavior and had multiple encounters with law enforcement authorities.', None, 'mixed_tense_left'),  # wiki
    ('The tools he used in the shop are now in a museum.', None, 'uncertain_finite'),  # own: a finite verb follows
    ('The club played in red and lost every match.', None, 'uncertain_finite'),  # own: played tagged as a noun
    ('Each team plays 162 games per season, with Opening Day held during the last week of March or the first week of April.', None, 'participle_only'),  # wiki
    ('He was a key figure of the Independent Radicals, advocating for the separation of church and state, as well as the amnesty of the Communards exiled to New Caledonia.', None, 'uncertain_finite'),  # wiki
    ('He was fascinated with railways and pioneered their military use.', None, 'mixed_tense_left'),  # wiki
    # strong finite contexts still probe: a subject pronoun, a clause-opening noun phrase, a verb joined to one
    ('As the family searched the house and tussled with the dog, the police arrived.', 'As the family searches the house and tussles with the dog, the police will arrive.', None),  # own
    ('The Bering Strait, the Bering Sea, Bering Island, the Bering Glacier, and Vitus Lake were all named in his honor.', 'The Bering Strait, the Bering Sea, Bering Island, the Bering Glacier, and Vitus Lake will all be named in his honor.', None),  # wiki
    ('This existed after the East India Company had been granted the diwani in Bengal.', 'This will exist after the East India Company has been granted the diwani in Bengal.', None),  # own
    ('He said the plan failed.', 'He will say the plan will fail.', None),  # own
    ('In 1990, the committee approved the plan.', 'In 1990, the committee will approve the plan.', None),  # own
]  # fmt: skip

NEGATION = [
    ('It lies in the southeastern part of the East European Plain on the Don River, 32 kilometers (20 mi) from the Sea of Azov, directly north of the North Caucasus.', 'It does not lie in the southeastern part of the East European Plain on the Don River, 32 kilometers (20 mi) from the Sea of Azov, directly north of the North Caucasus.', None),  # wiki
    ('The alcid family includes the murres, guillemots, auklets, puffins, and murrelets.', 'The alcid family does not include the murres, guillemots, auklets, puffins, and murrelets.', None),  # wiki
    ('Stocks consist of all the shares by which ownership of a corporation or company is divided.', 'Stocks do not consist of all the shares by which ownership of a corporation or company is divided.', None),  # wiki
    ('Whales are a widely distributed and diverse group of fully aquatic placental marine mammals.', 'Whales are not a widely distributed and diverse group of fully aquatic placental marine mammals.', None),  # wiki
    ('When "American Pie" suddenly is played on a jukebox or radio', None, 'no_main_verb'),  # cnn
    ('Gilbert Newton Lewis was an American physical chemist and a dean of the college of chemistry at University of California, Berkeley.', 'Gilbert Newton Lewis was not an American physical chemist and a dean of the college of chemistry at University of California, Berkeley.', None),  # wiki
    ('Magadha played an important role in the development of Jainism and Buddhism and formed the core of the Haryankan Empire, Nanda Empire, Mauryan Empire, Shunga Empire and Gupta Empire.', 'Magadha did not play an important role in the development of Jainism and Buddhism and formed the core of the Haryankan Empire, Nanda Empire, Mauryan Empire, Shunga Empire and Gupta Empire.', None),  # wiki
    ('Most modern video games are audiovisual, with audio complement delivered through speakers or headphones, and sometimes also with other types of sensory feedback.', 'Most modern video games are not audiovisual, with audio complement delivered through speakers or headphones, and sometimes also with other types of sensory feedback.', None),  # wiki
    ('Officials are still trying to determine if other people were involved.', 'Officials are not still trying to determine if other people were involved.', None),  # cnn
    ('It is the 20th-most populous city in the United States and fourth-most populous city in the Southeast, with a population of 689,447 at the 2020 census.', 'It is not the 20th-most populous city in the United States and fourth-most populous city in the Southeast, with a population of 689,447 at the 2020 census.', None),  # wiki
    ('During his leadership, the country had close ties to the Soviet Union, which maintained a large army in the country.', 'During his leadership, the country did not have close ties to the Soviet Union, which maintained a large army in the country.', None),  # wiki
    ('This substitution of terminology often confuses the reality and meaning of medical diagnoses.', 'This substitution of terminology often does not confuse the reality and meaning of medical diagnoses.', None),  # wiki
    ('Sonography using ultrasound reflection is called echography.', 'Sonography using ultrasound reflection is not called echography.', None),  # wiki
    ('The ocean is conventionally divided into large bodies of water, which are also referred to as oceans, and are themselves mostly divided into seas, gulfs and subsequent bodies of water.', 'The ocean is not conventionally divided into large bodies of water, which are also referred to as oceans, and are themselves mostly divided into seas, gulfs and subsequent bodies of water.', None),  # wiki
    ('By extension, the term historiography is any body of historical work on a particular subject.', 'By extension, the term historiography is not any body of historical work on a particular subject.', None),  # wiki
    ('Its metropolitan area is home to 534,842 inhabitants at the 2022 census.', 'Its metropolitan area is not home to 534,842 inhabitants at the 2022 census.', None),  # wiki
    ("CNN's Frederik Pleitgen, Pamela Boykoff, Antonia Mortensen, Sandrine Amiel and Anna-Maja Rappard contributed to this report.", "CNN's Frederik Pleitgen, Pamela Boykoff, Antonia Mortensen, Sandrine Amiel and Anna-Maja Rappard did not contribute to this report.", None),  # cnn
    ('Like the Iliad, the Odyssey is divided into 24 books.', 'Like the Iliad, the Odyssey is not divided into 24 books.', None),  # wiki
    ('The metropolis stands on the river Vistula in east-central Poland.', 'The metropolis does not stand on the river Vistula in east-central Poland.', None),  # wiki
    ('A galley is a type of ship optimised for propulsion by oars.', 'A galley is not a type of ship optimised for propulsion by oars.', None),  # wiki
    ('It is the period during which ancient Greece and Rome flourished and had major influence throughout much of Europe, North Africa, and West Asia.', 'It is not the period during which ancient Greece and Rome flourished and had major influence throughout much of Europe, North Africa, and West Asia.', None),  # wiki
    ('It is also produced by electric arcs, Cherenkov radiation, and specialized lights, such as mercury-vapor lamps, tanning lamps, and black lights.', 'It is not produced by electric arcs, Cherenkov radiation, and specialized lights, such as mercury-vapor lamps, tanning lamps, and black lights.', None),  # wiki
    ('The title "rabbi" was first used in the first century CE.', 'The title "rabbi" was not first used in the first century CE.', None),  # wiki
    ('on the April 1 edition of "The Price Is Right" encountered not host Drew Carey but another familiar face in charge of the proceedings.', None, 'negated_otherwise'),  # cnn
    ('It is located on the Coromandel Coast of the Bay of Bengal.', 'It is not located on the Coromandel Coast of the Bay of Bengal.', None),  # wiki
    ('The toner is then fused onto the paper using heat, pressure, or a combination of both.', 'The toner is not then fused onto the paper using heat, pressure, or a combination of both.', None),  # wiki
    ('Considered the "father of geometry", he is chiefly known for the Elements treatise, which established the foundations of geometry that largely dominated the field until the early 19th century.', 'Considered the "father of geometry", he is not chiefly known for the Elements treatise, which established the foundations of geometry that largely dominated the field until the early 19th century.', None),  # wiki
    ('Nuclides are a class of atoms characterized by their number of protons, Z, their number of neutrons, N, and their nuclear energy state.', 'Nuclides are not a class of atoms characterized by their number of protons, Z, their number of neutrons, N, and their nuclear energy state.', None),  # wiki
    ('This group includes many kingfishers that actually dive for fish.', 'This group does not include many kingfishers that actually dive for fish.', None),  # wiki
    ('Over millions or tens or hundreds of millions of years the deposition of sediment, primarily gravity-driven transportation of water-borne eroded material, acts to fill the depression.', 'Over millions or tens or hundreds of millions of years the deposition of sediment, primarily gravity-driven transportation of water-borne eroded material, does not act to fill the depression.', None),  # wiki: *eroded material* is no main verb (was *did not erode material*)
    ('There are many different factors that influence mood, and these can lead to positive or negative effects on mood.', 'There are not many different factors that influence mood, and these can lead to positive or negative effects on mood.', None),  # wiki
    ('Snow said on Friday that Bush had polyps removed during colonoscopies before becoming president.', 'Snow did not say on Friday that Bush had polyps removed during colonoscopies before becoming president.', None),  # cnn
    ('Sexual acts range from activities done alone to acts with another person or multiple persons in varying patterns of frequency, for a wide variety of reasons.', 'Sexual acts do not range from activities done alone to acts with another person or multiple persons in varying patterns of frequency, for a wide variety of reasons.', None),  # wiki
    ('Incorporated in 1867 and opened in 1876 based on the European research institution model, Johns Hopkins is considered to be the first research university in the U.S.', 'Incorporated in 1867 and opened in 1876 based on the European research institution model, Johns Hopkins is not considered to be the first research university in the U.S.', None),  # wiki
    ('Prussia formed the German Empire when it united the German states in 1871.', 'Prussia did not form the German Empire when it united the German states in 1871.', None),  # wiki
    ('He said several vehicles slid past him into the water.', 'He did not say several vehicles slid past him into the water.', None),  # cnn
    ('It may consist of thousands of ommatidia, which are tiny independent photoreception units that consist of a cornea, lens, and photoreceptor cells which distinguish brightness and color.', 'It may not consist of thousands of ommatidia, which are tiny independent photoreception units that consist of a cornea, lens, and photoreceptor cells which distinguish brightness and color.', None),  # wiki
    ('Vick, 27, is scheduled to appear Monday in court, where he is expected to plead guilty before a judge.', 'Vick, 27, is not scheduled to appear Monday in court, where he is expected to plead guilty before a judge.', None),  # cnn
    ('Because they are used for a variety of purposes, there are many different types of ovens.', 'Because they are used for a variety of purposes, there are not many different types of ovens.', None),  # wiki
    ('It is a tender plant and is used in cuisines worldwide.', 'It is not a tender plant and is used in cuisines worldwide.', None),  # wiki
    ('Therefore, landmasses such as Greenland and Antarctica appear far larger than they actually are relative to landmasses near the equator.', 'Therefore, landmasses such as Greenland and Antarctica do not appear far larger than they actually are relative to landmasses near the equator.', None),  # wiki
    ('As an academic discipline within the humanities, rhetoric aims to study the techniques that speakers or writers use to inform, persuade, and motivate their audiences.', None, 'no_main_verb'),  # wiki
    ('But none of the cell phones found so far have been sent to the institute, Menichini said.', None, 'negated_otherwise'),  # cnn
    ('The first reliable repeating rifles, the 1860 Henry rifle and its 1866 descendant the Winchester rifle, superseded muskets entirely.', None, 'unknown_verb'),  # wiki
    # the cases: tense and agreement kept, reduced relatives never negated
    ('He played for the club.', 'He did not play for the club.', None),  # own
    ('In papers filed Friday, prosecutors said he lied.', 'In papers filed Friday, prosecutors did not say he lied.', None),  # own
    ('She did a short telefilm in 1990.', 'She did not do a short telefilm in 1990.', None),  # own
    ('They play in the park.', 'They do not play in the park.', None),  # own
    ('The river flows into the sea.', 'The river does not flow into the sea.', None),  # own
    ('He put the book down.', 'He did not put the book down.', None),  # own
    ('The men killed in the attack were soldiers.', 'The men killed in the attack were not soldiers.', None),  # own
    ('The band split up in 1990.', 'The band did not split up in 1990.', None),  # own
    ('He has never lost a match.', None, 'negated_otherwise'),  # own
    ('So what will it take?', "So what won't it take?", None),  # cnn
    ('You know, the paperwork patients are asked to fill out before they see the doctor.', None, 'discourse_marker'),  # cnn
    ('The regime he created lasted until 1974, making it one of the longest-lived dictatorships in modern Europe.', 'The regime he created did not last until 1974, making it one of the longest-lived dictatorships in modern Europe.', None),  # wiki
    # read on development samples (seeds 1-20) and fixed: a present verb read as a noun, the relative clause's
    # verbs joined by and, a comparative clause, adjectival participles after have
    ('The exact geographical extent varies depending on the definition: in the narrow sense, the area constituted by the three Chinese provinces of Heilongjiang, Jilin, and Liaoning as well as the eastern Inner Mongolian prefectures of Hulunbuir, Hinggan, Tongliao, and Chifeng.', 'The exact geographical extent does not vary depending on the definition: in the narrow sense, the area constituted by the three Chinese provinces of Heilongjiang, Jilin, and Liaoning as well as the eastern Inner Mongolian prefectures of Hulunbuir, Hinggan, Tongliao, and Chifeng.', None),  # wiki
    ('As the carbon content reduces, the melting point of the iron increases, ultimately to a level which is higher than can be achieved by the hearth, hence the wrought iron is never fully molten and many impurities remain.', None, 'unknown_verb'),  # wiki
    ('Religious Jews regard Judaism as their means of observing the Mosaic covenant, which they believe was established between God and the Jewish people.', None, 'verb_read_as_noun'),  # wiki
    ('This radio frequency link connects to the switching systems of a mobile phone operator, providing access to the public switched telephone network (PSTN).', 'This radio frequency link does not connect to the switching systems of a mobile phone operator, providing access to the public switched telephone network (PSTN).', None),  # wiki
    ('In the narrow sense, the term refers to an act of supplication or intercession directed towards a deity or a deified ancestor.', 'In the narrow sense, the term does not refer to an act of supplication or intercession directed towards a deity or a deified ancestor.', None),  # wiki
    ("Istanbul straddles the Bosphorus – one of the world's busiest waterways – in northwestern Turkey, between the Sea of Marmara and the Black Sea.", "Istanbul does not straddle the Bosphorus – one of the world's busiest waterways – in northwestern Turkey, between the Sea of Marmara and the Black Sea.", None),  # wiki
    ('The skin form presents with a small blister with surrounding swelling that often turns into a painless ulcer with a black center.', 'The skin form does not present with a small blister with surrounding swelling that often turns into a painless ulcer with a black center.', None),  # wiki
    ('Most modern knives have fixed or folding blades, with styles varying by maker and country.', 'Most modern knives do not have fixed or folding blades, with styles varying by maker and country.', None),  # wiki
    ('Animals and phagotrophs eat and digest food internally, as opposed to decomposers such as fungi and microbes, who secrete enzymes to digest organic matters externally before absorbing the nutrients and thus do not "eat" food.', None, 'no_main_verb'),  # wiki
    ('Gymnosperm seeds develop either on the surface of scales or leaves, which are often modified to form cones, or on their own as in yew, Torreya, and Ginkgo.', None, 'no_main_verb'),  # wiki
    ('Unlike political philosophy, which is primarily normative and evaluates politics through value judgments, political science emphasizes descriptive and explanatory means of articulating what is and favors empirical evidence over ethical judgements.', 'Unlike political philosophy, which is primarily normative and evaluates politics through value judgments, political science does not emphasize descriptive and explanatory means of articulating what is and favors empirical evidence over ethical judgements.', None),  # wiki
    ('The population figures of 2010 show a rise.', 'The population figures of 2010 do not show a rise.', None),  # own
    ('They have fixed the problem.', 'They have not fixed the problem.', None),  # own
    # issue #50, INSteD's Wikipedia test documents (file_id 3406, 1187, 7636): two finite verbs sharing their
    # complement are no site (*He currently does not live and works in Los Angeles*)
    ('He currently lives and works in Los Angeles.', None, 'coordinated_verb'),  # insted
    ('He bats and throws right-handed.', None, 'coordinated_verb'),  # insted
    ('He created and starred in the TNT comedy-drama Men of a Certain Age (2009–11).', None, 'coordinated_verb'),  # insted
    # issue #50, INSteD's Wikipedia test documents (file_id 1714, 3821, 4239, 6142, 709, 5057, 3781): a clause
    # already negated is no site: INSteD's probe takes a sentence to its negation, and made affirmative a
    # negated intruder was repaired (*They are part of the Apple Macintosh line*, seed-9292 reading) or left
    # ungrammatical (*It was until he became King James I*, *includes ... any portion of*)
    ('It was not until he became King James I of England that he commissioned a group of English clergy and scholars to complete this task.', None, 'already_negative'),  # insted
    ('Baltimore would not have a team in the playoffs again until the Baltimore Ravens advanced to Super Bowl XXXV, just over 23 years later.', None, 'already_negative'),  # insted
    ('Residents from mainland China do not have the right of abode in Hong Kong, nor can they enter the territory freely, both before and after 1997.', None, 'already_negative'),  # insted
    ('The FT-ONE was not only Yaesu’s first fully synthesized, computer-controlled amateur band transceiver but it was also the first transceiver with a general coverage receiver.', None, 'already_negative'),  # insted
    ('It is not known if it (the ell) was built in place or moved to that location and attached to the house.', None, 'already_negative'),  # insted
    ('(The CSRA does not include the city of Savannah, Georgia or any portion of the Savannah metropolitan area.)', None, 'already_negative'),  # insted
    ('They are not a part of the Apple Macintosh line of computers; they were designed to run IBM\'s OS/2.', None, 'already_negative'),  # insted
    # issue #50, INSteD's Wikipedia test documents (seed-9292 reading, file_id 1639, 2587; and the 3,000
    # documents' probes): *has yet to* is a negation already; an adverb of how soon or how fast cannot go with a
    # negated event; a past participle modifying a noun before the clause's own verb is no main verb (a reduced
    # relative; the clause's verb is negated, or the sentence is no site); *had also become* is a perfect though the tagger reads *become* as present
    ('São Tomé and Princípe, however, has yet to win its first Olympic medal.', None, 'negated_otherwise'),  # insted
    ('It soon branched out into other genres, publishing its first science fiction (sf) title in 1953.', None, 'sequence_adverb'),  # insted
    ('European influence gradually brought an end to this regional power.', None, 'sequence_adverb'),  # insted
    ('They subsequently moved to Woodstock in Oxfordshire, where they re-established the Press in 1937.', None, 'sequence_adverb'),  # insted hand site (*later did not move*: read n)
    ('She then became a writer, composing both fiction such as The Marriage of Don Quixote and non-fiction.', None, 'sequence_adverb'),  # insted
    # issue #50, seed-9501 reading and the hand-site reading (file_id 881, 2063): a noun the tagger reads as a
    # present verb before *were*; the verb of an *if* clause inside the sentence; *too* under a negation; *has*
    # before an adverb and a participle the tagger reads as a past verb or a present
    ("The chapel's stained glass windows were designed by John LaFarge, the Connick Studios, and Tiffany & Co.", "The chapel's stained glass windows were not designed by John LaFarge, the Connick Studios, and Tiffany & Co.", None),  # insted hand site
    ('Those who participate in rebellions, especially if they are armed, are known as "rebels".', 'Those who participate in rebellions, especially if they are armed, are not known as "rebels".', None),  # insted hand site
    ('It is occasionally found at lakes too.', None, 'negative_polarity'),  # insted
    ('The Group has also expanded its business into digital media.', 'The Group has not expanded its business into digital media.', None),  # insted
    ('It has since been released on numerous Stewart compilation and live albums.', 'It has not since been released on numerous Stewart compilation and live albums.', None),  # insted
    # issue #50, seed-9603 reading (file_id 3256, 3404, 2473 and its item 34): *only* before the verb; an adverb of
    # likelihood goes before the negation; *has since gone*, *had earlier designed* are perfects
    ('However, he only had 69 RBI.', None, 'negative_polarity'),  # insted
    ('He was probably born in Moscow in 1950.', 'He was probably not born in Moscow in 1950.', None),  # insted
    ('He has since gone on to coach the national team.', 'He has not since gone on to coach the national team.', None),  # insted
    ('He had earlier designed the bridge at Wellsville.', 'He had not earlier designed the bridge at Wellsville.', None),  # insted
    ('However, if the testes are lost after 14 weeks, the baby will have partial male genitalia.', 'However, if the testes are lost after 14 weeks, the baby will not have partial male genitalia.', None),  # insted
    ('The liberties explicitly defined, make up the Bill of Rights, including freedom of speech, the right to bear arms, and the right to privacy.', None, 'no_main_verb'),  # insted
    ('His identification of the birds now nicknamed "Darwin\'s finches" played a role in the inception of Darwin\'s theory of evolution by natural selection.', None, 'no_main_verb'),  # insted
    ('His lifetime earned run average of 4.50 was good for an adjusted ERA+ of 90.', 'His lifetime earned run average of 4.50 was not good for an adjusted ERA+ of 90.', None),  # insted
    ('The tools he used in the shop are now in a museum.', 'The tools he used in the shop are not now in a museum.', None),  # own
    ('Their territorial area covered approximately 4,900km2 from the western bank of the Murray River near the present city of Mildura, centred on the present town of Ouyen.', 'Their territorial area did not cover approximately 4,900km2 from the western bank of the Murray River near the present city of Mildura, centred on the present town of Ouyen.', None),  # insted hand site
    ('By 1968 land speculation had also become a significant factor, with individuals and companies profiting by buying and selling released but undeveloped land.', 'By 1968 land speculation had not become a significant factor, with individuals and companies profiting by buying and selling released but undeveloped land.', None),  # insted
    ('Later in the war he skippered armed trawlers and minesweepers.', 'Later in the war he did not skipper armed trawlers and minesweepers.', None),  # insted hand site
    # issue #50, INSteD's Wikipedia test documents (file_id 733, 3940, 8289, 4415): the main verb is never inside
    # a parenthesis (unless the whole sentence is one), nor a past participle used as an adjective before its noun
    ('After three days of fighting, the vastly outnumbered South Vietnamese forces, though well supported by American air power, were forced to abandon their positions in Lộc Ninh.', 'After three days of fighting, the vastly outnumbered South Vietnamese forces, though well supported by American air power, were not forced to abandon their positions in Lộc Ninh.', None),  # insted
    ('The cooking technique originally referred to dishes cooked in a siru (시루, earthenware steamer mainly used for making tteok) by steaming.', None, 'no_main_verb'),  # insted
    ("Under Theodosius I (r. 379–395), Christianity became the Empire's official state religion and others such as Roman polytheism were proscribed.", "Under Theodosius I (r. 379–395), Christianity did not become the Empire's official state religion and others such as Roman polytheism were proscribed.", None),  # insted
    ('(This is a streakline.)', '(This is not a streakline.)', None),  # insted
    # issue #50, INSteD's Wikipedia test documents (file_id 7886, 3508; the first read at development seed 7001):
    # *first* before the verb goes after the negation, as *also* does
    ('His writing first gained popularity when Nerve.com published a series of essays that were later collected in Oedipus Wrecked.', 'His writing did not first gain popularity when Nerve.com published a series of essays that were later collected in Oedipus Wrecked.', None),  # insted
    ('Futurist and writer Riane Eisler first popularized this term in her book The Chalice and the Blade (Harper Collins San Francisco, 1987).', 'Futurist and writer Riane Eisler did not first popularize this term in her book The Chalice and the Blade (Harper Collins San Francisco, 1987).', None),  # insted
]  # fmt: skip


@pytest.mark.parametrize(
    ("phenomenon", "sentence", "probed", "reason"),
    [("past-to-future", *c) for c in PAST_TO_FUTURE] + [("negation", *c) for c in NEGATION],
    ids=[f"past:{c[0][:40]}" for c in PAST_TO_FUTURE] + [f"neg:{c[0][:40]}" for c in NEGATION],
)
def test_real_sentence(phenomenon, sentence, probed, reason):
    found = PHENOMENA[phenomenon](sentence)
    for edit in found:  # spans point at the replaced characters of the original sentence
        assert sentence[edit.start : edit.end] == edit.before
    assert (apply_edits(sentence, found) if found else None) == probed
    assert getattr(found, "reason", None) == reason


@pytest.mark.parametrize("cases", [PAST_TO_FUTURE, NEGATION], ids=["past-to-future", "negation"])
def test_at_least_forty_real_sentences(cases):
    assert len([c for c in cases if c]) >= 40 and sum(p is not None for _, p, _ in cases) >= 30


# Issue #50: never "not also" (79 of 2,734 negation probes of INSteD's Wikipedia test documents had it): the
# "also" of the clause goes with the negation. Real sentences of those documents.
@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("It was also screened in the Contemporary World Cinema section at the 2014 Toronto International Film "
         "Festival.", "It was not screened in the Contemporary World Cinema section at the 2014 Toronto "
         "International Film Festival."),
        ("It may also be used in the case of slow-growing tumors to shift tumor cells from phase of cell cycle to "
         "replicative pool.", "It may not be used in the case of slow-growing tumors to shift tumor cells from "
         "phase of cell cycle to replicative pool."),
        ("Both seasons are also available on-demand on Netflix.", "Both seasons are not available on-demand on "
         "Netflix."),
        ("He also served as the mayor of the town.", "He did not serve as the mayor of the town."),
    ],
)  # fmt: skip
def test_negation_never_not_also(sentence, expected):
    assert apply_edits(sentence, PHENOMENA["negation"](sentence)) == expected


# Issue #50: "May" in a date is the month, not the modal (the tagger's MD had made "started" a reduced relative
# before a main verb "May"); INSteD's hand site and a sentence of its Wikipedia test documents.
@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("DMC started on 9 May 2002.", "DMC will start on 9 May 2002."),
        ("The series premiered on August 20, 1989 and ended on May 22, 1993 with 86 episodes produced spanning "
         "four seasons.", "The series will premiere on August 20, 1989 and will end on May 22, 1993 with 86 "
         "episodes produced spanning four seasons."),
    ],
)  # fmt: skip
def test_may_in_a_date_is_the_month(sentence, expected):
    assert apply_edits(sentence, PHENOMENA["past-to-future"](sentence)) == expected


# Issue #50: a verb whose past is its base after a singular subject is the past (a present would take -s): the
# fresh reading's "it cost -> it does not cost"; a sentence of INSteD's Wikipedia test documents.
def test_negation_keeps_the_past_of_cost():
    sentence = "Located at 501 Old Choa Chu Kang Road, it cost about S$266 million to build."
    assert apply_edits(sentence, PHENOMENA["negation"](sentence)) == (
        "Located at 501 Old Choa Chu Kang Road, it did not cost about S$266 million to build."
    )
    present = "The company puts out a magazine."
    assert apply_edits(present, PHENOMENA["negation"](present)) == "The company does not put out a magazine."


# Issue #50: negating an intruder dated by a year its context does not name (the context naming others) repairs
# it: the date was the intruder's own fact, often one that clashed with the context's. Real documents: lines
# 1001, 1575, 181 and 2817 of the first 3,000 INSteD Wikipedia test documents (file_id 3702, 5958, 8484, 8125), the
# intruder at its place; the fourth keeps its site, its year being the context's, and so does the first cut short
# (own) beside a context without years.
KISHTWAR = [
    "The Kishtwar Himalaya is a small subrange of the Himalayan mountain range, in the Indian states of Jammu and "
    "Kashmir and Himachal Pradesh.",
    "However it is not as well known as other parts of the Himalaya since its highest peak, Bharanzar, or Sickle "
    "Moon, is only 6,574 m (21,568 ft) in elevation.",
    "One of its best-known peaks is Brammah I, 6,416 m (21,050 ft), climbed by Chris Bonington and Nick Estcourt "
    "in 1973.",
]
CRISTIANI = [
    "Giovanni di Bartolomeo Cristiani, who lived at Pistoia in the 14th century, is thought by Ciampi to have been "
    "employed at the Campo Santo of Pisa in 1382.",
    "He is known to have painted a 'Virgin and Child between SS.",
    "His last work, which is now lost, was the decoration of a church in Pistoia, which was begun in 1396 and "
    "finished in 1398.",
]
JACKFIELD = [
    "Jackfield Halt was an unstaffed request stop on the Severn Valley line in Shropshire, England.",
    "Although thought by some people to have been closed as part of the Beeching axe in 1963 its planned closure "
    "pre-dated his report along with other stations along the line.",
]
BARTER = [
    "Barter Theatre, located in Abingdon, Virginia, opened on June 10, 1933.",
    "In 1933, when the country was in the middle of the Great Depression, most patrons were not able to pay the "
    "full ticket price.",
    "In 1946, Barter Theatre was designated as the State Theatre of Virginia.",
]


@pytest.mark.parametrize(
    ("sentence", "context", "probed", "reason"),
    [
        ("It was first climbed in 1960 by a British/Indian/Nepalese team led by J. O. M. Roberts via the West "
         "Ridge, approached from the north.", KISHTWAR, None, "foreign_year"),
        ("At the 1883 Exposition of Fine Arts in Rome, he exhibited a painting titled: Virginibus puerisque canto.",
         CRISTIANI, None, "foreign_year"),
        # the comma of a date does not end the clause
        ("The station was closed on March 16, 1998 along with Penny Bridge, Fresh Pond, Glendale and Richmond Hill "
         "Stations.", JACKFIELD, None, "foreign_year"),
        ("The theatre was founded in 1933 during the Great Depression.", BARTER,
         "The theatre was not founded in 1933 during the Great Depression.", None),
        # no year in the context: nothing to clash with, the site stays
        ("It was first climbed in 1960 by a British/Indian/Nepalese team.", KISHTWAR[:2],
         "It was not first climbed in 1960 by a British/Indian/Nepalese team.", None),
    ],
)  # fmt: skip
def test_negation_skips_a_year_foreign_to_the_context(sentence, context, probed, reason):
    found = PHENOMENA["negation"](sentence, context=context)
    assert (apply_edits(sentence, found) if found else None) == probed
    assert getattr(found, "reason", None) == reason
    assert PHENOMENA["negation"](sentence)  # without a context: the site (the year gate reads the context)
