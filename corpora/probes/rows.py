"""Probe rows of documents, and INSteD's released JSONL format in and out.

A document is an intruder row (:data:`schemas.INTRUDER_SCHEMA`, or one read from INSteD's JSONL by
:func:`insted_document`); a probe edits its intruder sentence only, everything else is kept byte for byte.
Coherent documents have no intruder to probe (counted ``coherent``); a phenomenon without a site in the
intruder sentence skips the document for that phenomenon (counted ``no_site/<phenomenon>``, and
``no_site/<phenomenon>/<reason>`` when the phenomenon says why: :class:`corpora.probes.edits.NoSite`).

>>> doc = {"id": "w:1", "source": "w", "split": "test", "sentences": ["He came.", "He left.", "C."],
...        "intruder_index": 1, "original_sentence": "B.", "file_id": 0}
>>> [(r["phenomenon"], r["probed_sentence"]) for r in probe_document(doc, ["gender", "number"], 0, print)]
incoherent
probed/gender
no_site/number
no_site/number/no_number
[('gender', 'She left.')]
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence

from incoherent.corpora.probes import PHENOMENA
from incoherent.corpora.probes.edits import apply_edits
from incoherent.corpora.probes.text import MAX_SENTENCE_CHARS, analyse
from incoherent.corpora.seeding import rng_for
from incoherent.schemas.records import Rejected

Count = Callable[[str], None]
INSTED_FIELDS = ("file_id", "ctx", "to_be_replaced", "replace_with", "sen_position", "train")
SEPARATOR = " "
# read the document's other sentences (number: the years its moved year must clash with; negation: the years;
# past-to-future: a document already in the future)
CONTEXTUAL = frozenset({"gender", "animacy-down", "animacy-up", "number", "negation", "past-to-future"})
DEMONSTRATIVE_VARIANTS = ("insted", "agree")


def _no_count(name: str) -> None:
    return None


def probe_document(
    doc: dict,
    phenomena: Sequence[str],
    seed: int,
    count: Count = _no_count,
    demonstrative: str = "insted",
    number: str = "insted",
) -> Iterator[dict | Rejected]:
    """The probe rows (``PROBE_SCHEMA``) of one document, one per phenomenon with a site. The pronoun
    phenomena read the document's other sentences (:data:`CONTEXTUAL`); a phenomenon that says why it found no
    site is also counted ``no_site/<phenomenon>/<reason>``; ``demonstrative`` is ``"insted"`` (the determiner
    alone) or ``"agree"`` (noun and verb too, where the plural clashes with the other sentences); ``number`` is
    ``"insted"`` (every quantity INSteD's authors took, a count the other sentences do not give moved too) or
    ``"clash"`` (only a value that contradicts the other sentences)."""
    index = doc.get("intruder_index")
    sentences = doc.get("sentences")
    if index is None or index < 0:
        count("coherent")
        return
    if not isinstance(sentences, list | tuple) or not 1 <= index < len(sentences):
        yield Rejected("bad_intruder_index", id=doc.get("id"), source=doc.get("source"),
                       detail=f"intruder_index {index} of {len(sentences or [])} sentences", record=doc)  # fmt: skip
        return
    intruder = sentences[index]
    if not isinstance(intruder, str) or not intruder.strip():
        yield Rejected("empty_intruder", id=doc.get("id"), source=doc.get("source"), record=doc)
        return
    if len(intruder) > MAX_SENTENCE_CHARS:
        yield Rejected("sentence_too_long", id=doc.get("id"), source=doc.get("source"),
                       detail=f"{len(intruder)} characters > {MAX_SENTENCE_CHARS}", record=doc)  # fmt: skip
        return
    count("incoherent")
    tokens = analyse(intruder)  # once, for every phenomenon
    context = [s for i, s in enumerate(sentences) if i != index and isinstance(s, str)]
    for phenomenon in phenomena:
        function = PHENOMENA[phenomenon]
        kwargs = {"tokens": tokens}
        if phenomenon in CONTEXTUAL:
            kwargs["context"] = context
        if phenomenon == "animacy-down":
            kwargs["preceding"] = sentences[index - 1]  # the sentence its new "it" looks back to
        if phenomenon == "demonstrative":
            kwargs["agree"] = demonstrative == "agree"
            kwargs["context"] = context  # agree: a plural referent in the document makes no site
            kwargs["preceding"] = sentences[index - 1]  # two things coordinated there: a plural referent
        if phenomenon == "number":
            kwargs["clash"] = number == "clash"
        if phenomenon == "animacy-up":
            edits = function(intruder, rng_for(seed, "animacy-up", doc["id"]).choice("fm"), **kwargs)
        else:
            edits = function(intruder, **kwargs)
        if not edits:
            count(f"no_site/{phenomenon}")
            reason = getattr(edits, "reason", None)  # a NoSite says why
            if reason:
                count(f"no_site/{phenomenon}/{reason}")
            continue
        try:
            probed = apply_edits(intruder, edits)
        except ValueError as exc:  # overlapping edits: a fault of the phenomenon on this sentence, counted
            yield Rejected(f"edit_failed/{phenomenon}", id=doc.get("id"), source=doc.get("source"),
                           detail=str(exc)[:300], record=doc)  # fmt: skip
            continue
        count(f"probed/{phenomenon}")
        if getattr(edits, "move", None):  # number's move: the mix goes to the summary and the card
            count(f"move/{phenomenon}/{edits.move}")
        document = list(sentences)
        document[index] = probed
        yield {
            "id": doc["id"],
            "source": doc["source"],
            "split": doc["split"],
            "phenomenon": phenomenon,
            "sentences": document,
            "label": 1,
            "intruder_index": index,
            "original_sentence": doc.get("original_sentence"),
            "intruder_sentence": intruder,
            "probed_sentence": probed,
            "edits": [e.to_row() for e in sorted(edits)],
            "source_id": doc.get("source_id", doc["id"]),
            "file_id": doc.get("file_id"),
            "ctx": doc.get("ctx"),
        }


# --------------------------------------------------------------------------------------------- INSteD JSONL

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def insted_name(path: str) -> str:
    """The source name of an INSteD JSONL file: its file name without extension, as a safe name.

    >>> insted_name("gs://b/official wikipedia.jsonl")
    'official_wikipedia'
    """
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    name = _UNSAFE.sub("_", stem).strip("._-")[:64]
    return name if name[:1].isalnum() else "insted"


def _split_around(ctx: str, original: str, position: int) -> list[str] | None:
    """The sentences of ``ctx`` with ``original`` as sentence ``position``, or None if it is not there.

    ``original`` is placed by its text: where our splitter agrees, its sentences; where it does not (INSteD split
    after *ca.* or *etc.*, or before a sentence without its full stop), the text before ``original`` is cut into
    exactly ``position`` sentences (:func:`_sentences_before`) and the text after it split as ours. Only a text
    that is not in ``ctx``, or in it more than once, is no placement.
    """
    from incoherent.sources.sentences import split_sentences

    sentences = split_sentences(ctx)
    if 0 <= position < len(sentences) and sentences[position] == original:
        return sentences
    start = ctx.find(original)
    if start < 0 or ctx.find(original, start + 1) >= 0:
        return None
    before = _sentences_before(ctx[:start], position)
    return None if before is None else before + [original] + split_sentences(ctx[start + len(original) :])


_BOUNDARY = re.compile(r"(?<=[.!?;:])[\"'”’)\]]*\s+")  # every place a sentence may end, for _sentences_before
_ABBREVIATION_END = re.compile(r"(?:\b\w{1,4}|\.\w+)\.$")  # ca. etc. e.g. Jr.: where INSteD did not split


def _sentences_before(text: str, count: int) -> list[str] | None:
    """``text`` (what comes before the replaced sentence) as exactly ``count`` sentences: our splitter's, with
    the boundaries after an abbreviation (*ca.*, *etc.*) dropped first and then the shortest pieces joined where
    we found too many; with more boundaries (every full stop, question mark, semicolon or colon before a space,
    those before a capital first) where we found too few. None: fewer places to cut than sentences.

    >>> _sentences_before("It was built ca. 1900. It fell.", 2)
    ['It was built ca. 1900.', 'It fell.']
    >>> _sentences_before("Its use is prevalent today; others say not. B.", 3)
    ['Its use is prevalent today;', 'others say not.', 'B.']
    """
    from incoherent.sources.sentences import split_sentences

    pieces = split_sentences(text)
    if count <= 0:
        return None if text.strip() else []
    while len(pieces) > count:  # we split where INSteD did not
        joins = [(not _ABBREVIATION_END.search(pieces[i].rstrip()), len(pieces[i]) + len(pieces[i + 1]), i)
                 for i in range(len(pieces) - 1)]  # fmt: skip
        i = min(joins)[2]
        pieces[i : i + 2] = [f"{pieces[i]} {pieces[i + 1]}"]
    if len(pieces) < count:  # INSteD split where we did not
        ends, at = set(), 0
        for (
            piece
        ) in pieces:  # the splitter changes spaces (folds runs, joins fragments): find each piece by the rest
            found = re.compile(r"\s*".join(re.escape(c) for c in piece if not c.isspace())).search(text, at)
            if found is None:
                return None
            at = found.end()
            ends.add(at)
        extra = sorted(
            (not text[m.end() : m.end() + 1].isupper(), m.end())  # a capital after it first
            for m in _BOUNDARY.finditer(text)
            if text[m.end() :].strip() and not any(m.start() <= end <= m.end() for end in ends)
        )[: count - len(pieces)]
        if len(extra) < count - len(pieces):
            return None
        cuts = sorted(ends | {cut for _, cut in extra})
        pieces = [text[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        pieces = [piece for piece in pieces if piece]
    return pieces


def insted_problem(record: dict) -> str:
    """What is wrong with the fields of an INSteD record, as the format says (``""``: nothing): ``file_id`` an
    integer a Parquet ``int64`` holds, ``sen_position`` -1 (coherent) or a position >= 1 (the opening sentence
    is never replaced), ``train`` the integer 0 or 1 (not ``true``, not ``1.0``), the texts strings.

    >>> insted_problem({"file_id": 1, "ctx": "", "to_be_replaced": "", "replace_with": "", "sen_position": 0, "train": 1})
    'sen_position 0 (the format: -1 for a coherent document, else a position >= 1)'
    >>> insted_problem({"file_id": 1, "ctx": "", "to_be_replaced": "", "replace_with": "", "sen_position": -1, "train": True})
    'train True (the format: the integer 0 or 1)'
    """
    from incoherent.sources.jsonline import is_int64

    file_id, position, train = record["file_id"], record["sen_position"], record["train"]
    if not is_int64(file_id):
        return f"file_id {str(file_id)[:40]} (the format: an integer below 2^63)"
    if type(position) is not int or not (position == -1 or position >= 1):
        return f"sen_position {str(position)[:40]} (the format: -1 for a coherent document, else a position >= 1)"
    if type(train) is not int or train not in (0, 1):
        return f"train {str(train)[:40]} (the format: the integer 0 or 1)"
    if not all(isinstance(record[k], str) for k in ("ctx", "to_be_replaced", "replace_with")):
        return "field types (ctx, to_be_replaced, replace_with must be strings)"
    return ""


def insted_document(line: str, origin: str, source: str) -> dict | Rejected:
    """A document row from one line of INSteD's released JSONL (what ``incoherent export insted`` writes).

    ``ctx`` is the original document; it is split into sentences (``to_be_replaced`` must be sentence
    ``sen_position``) and the intruder ``replace_with`` put in its place. ``train`` 1 is the train split, 0 test.

    >>> line = '{"file_id": 3, "ctx": "A b. C d. E f.", "to_be_replaced": "C d.", "replace_with": "X y.", "sen_position": 1, "train": 0}'
    >>> doc = insted_document(line, "f.jsonl:1", "f")
    >>> doc["id"], doc["sentences"], doc["split"]
    ('f:3', ['A b.', 'X y.', 'E f.'], 'test')
    """
    from incoherent.sources.jsonline import is_int64, load_line

    record, reason, why = load_line(line)
    if reason:
        return Rejected(reason, source=source, detail=f"{origin}: {why}", record=line)
    if not isinstance(record, dict) or any(k not in record for k in INSTED_FIELDS):
        missing = [k for k in INSTED_FIELDS if not isinstance(record, dict) or k not in record]
        return Rejected(
            "not_insted_format", source=source, detail=f"{origin}: missing {missing}", record=line
        )
    file_id, position, train = record["file_id"], record["sen_position"], record["train"]
    problem = insted_problem(record)
    doc_id = f"{source}:{file_id}" if is_int64(file_id) else source
    if problem:
        return Rejected(
            "not_insted_format", id=doc_id, source=source, detail=f"{origin}: {problem}", record=line
        )
    split = "train" if train == 1 else "test"
    base = {"id": doc_id, "source": source, "split": split, "source_id": str(file_id), "file_id": file_id}
    base["ctx"] = record["ctx"]  # written back unchanged (newlines and all) by insted_record
    if position < 1:
        from incoherent.sources.sentences import split_sentences

        return base | {
            "sentences": split_sentences(record["ctx"]),
            "intruder_index": -1,
            "original_sentence": None,
        }
    sentences = _split_around(record["ctx"], record["to_be_replaced"], position)
    if sentences is None:
        return Rejected("sentence_mismatch", id=doc_id, source=source,
                        detail=f"{origin}: to_be_replaced is not sentence {position} of ctx", record=line)  # fmt: skip
    document = list(sentences)
    document[position] = record["replace_with"]
    return base | {
        "sentences": document,
        "intruder_index": position,
        "original_sentence": record["to_be_replaced"],
    }


def insted_record(row: dict, validation_train: int = 1) -> dict:
    """A probe row in INSteD's released format: ``replace_with`` is the probed sentence, plus ``phenomenon``
    and ``original_replace_with`` (the intruder before the probe) and ``id``.

    >>> row = {"id": "w:1", "file_id": 4, "sentences": ["A.", "She left.", "C."], "intruder_index": 1,
    ...        "original_sentence": "B.", "intruder_sentence": "He left.", "probed_sentence": "She left.",
    ...        "split": "test", "phenomenon": "gender"}
    >>> insted_record(row)["ctx"], insted_record(row)["replace_with"]
    ('A. B. C.', 'She left.')
    """
    sentences = list(row["sentences"])
    sentences[row["intruder_index"]] = row["original_sentence"] or ""
    ctx = row.get(
        "ctx"
    )  # an INSteD record's own ctx, unchanged; a build's documents are joined as export does
    return {
        "file_id": row["file_id"],
        "ctx": ctx if ctx is not None else SEPARATOR.join(sentences),
        "to_be_replaced": row["original_sentence"] or "",
        "replace_with": row["probed_sentence"],
        "sen_position": int(row["intruder_index"]),
        "train": {"train": 1, "test": 0}.get(row["split"], validation_train),
        "phenomenon": row["phenomenon"],
        "original_replace_with": row["intruder_sentence"],
        "id": row["id"],
    }
