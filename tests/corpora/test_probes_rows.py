"""INSteD's records read whatever our sentence splitter does (issue #50): ``to_be_replaced`` is placed by its
text and ``sen_position``. The records are INSteD Wikipedia test documents our splitter disagreed with
(``tests/data/probes/insted_placement.jsonl``): INSteD split after *etc.*, *ca.*, *No.*, *i.e.* where we do not,
and once we split where INSteD did not; each was dead-lettered as ``sentence_mismatch`` before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from incoherent.corpora.probes.rows import _sentences_before, insted_document
from incoherent.schemas.records import Rejected

DATA = Path(__file__).resolve().parents[1] / "data" / "probes" / "insted_placement.jsonl"
LINES = DATA.read_text(encoding="utf-8").splitlines()


def _letters(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("line", LINES, ids=[str(json.loads(x)["file_id"]) for x in LINES])
def test_an_insted_record_our_splitter_disagrees_with_is_read(line):
    record = json.loads(line)
    doc = insted_document(line, "insted_placement.jsonl:1", "wiki")
    assert not isinstance(doc, Rejected), doc
    position = record["sen_position"]
    assert doc["intruder_index"] == position and doc["original_sentence"] == record["to_be_replaced"]
    assert doc["sentences"][position] == record["replace_with"]
    # the sentences before it are the text of ctx before it, cut into sen_position pieces, none lost or doubled
    start = record["ctx"].find(record["to_be_replaced"])
    assert _letters("".join(doc["sentences"][:position])) == _letters(record["ctx"][:start])
    assert all(s.strip() for s in doc["sentences"])


def test_insted_cut_after_an_abbreviation_where_we_did_not():
    doc = insted_document(LINES[0], "insted_placement.jsonl:1", "wiki")
    assert doc["sentences"][0].endswith("Tunvar, Malik, etc.")  # INSteD's first sentence ends at "etc."
    assert doc["sentences"][1].startswith("Chieftain or Lord of small Principality")


def test_sentences_before_joins_and_cuts_to_the_count():
    assert _sentences_before("It was built ca. 1900. It fell.", 2) == ["It was built ca. 1900.", "It fell."]
    assert _sentences_before("The album charted at No. 6 on the chart. It sold.", 3) == [
        "The album charted at No.", "6 on the chart.", "It sold."
    ]  # fmt: skip
    assert _sentences_before("A b c. D e f.", 1) == ["A b c. D e f."]
    assert _sentences_before("One sentence only", 2) is None  # nowhere to cut: still sentence_mismatch
    assert _sentences_before("", 0) == []


def test_a_text_not_in_ctx_is_still_a_mismatch():
    line = json.dumps({"file_id": 7, "ctx": "A b. C d.", "to_be_replaced": "Q r.", "replace_with": "X.",
                       "sen_position": 1, "train": 0})  # fmt: skip
    rejected = insted_document(line, "f.jsonl:1", "f")
    assert isinstance(rejected, Rejected) and rejected.reason == "sentence_mismatch"
