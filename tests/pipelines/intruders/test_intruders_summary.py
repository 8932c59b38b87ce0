"""The run summary of ``incoherent intruders`` (``pipelines/intruders/summary.py``) from literal counters."""

from __future__ import annotations

from incoherent.corpora import intruders as logic
from incoherent.corpora.sampling import parse_sample
from incoherent.pipelines.intruders.summary import NO_PROTECTION, print_table, source_block, summary_fields

COUNTERS = {
    "read": 10,
    "not_sampled": 4,
    logic.KEPT_IN_RANGE: 5,
    logic.TOO_FEW: 1,
    "incoherent_attempted": 3,
    "produced": 2,
    "fallback_all_too_similar": 1,
    "not_in_neighbors_table": 1,
    logic.NEIGHBOR_IS_SELF: 2,
    "candidates": 7,
    "candidates_below_threshold": 4,
    "history_candidates": 4,
    "history_matched": 2,
    "drift_eligible": 1,
}


def test_source_block_regroups_the_counters():
    block = source_block("wikipedia", COUNTERS, {"train": 5}, [], total=4, positives=1, history=False)
    assert block["documents_read"] == 10 and block["length_rule"] == "filter"
    assert block["kept"] == {logic.KEPT_IN_RANGE: 5, logic.KEPT_TRUNCATED: 0, logic.KEPT_WHOLE: 0}
    assert block["dropped"] == {logic.TOO_FEW: 1, logic.TOO_MANY: 0, logic.IDENTICAL: 0}
    assert block["fallen_back_to_coherent"] == {"all_too_similar": 1}
    assert (
        block["neighbors"]["not_in_neighbors_table"] == 1 and block["neighbors"][logic.NEIGHBOR_IS_SELF] == 2
    )
    assert (block["candidates"], block["candidates_below_threshold"]) == (7, 4)
    assert block["splits"] == {"train": 5} and block["positive_rate"] == 0.25
    assert block["artefact_check"]["method"] == "skipped"
    assert block["test_split"] == NO_PROTECTION and "history" not in block
    assert source_block("cnn", {}, {}, [], total=0, positives=0, history=False)["positive_rate"] is None


def test_source_block_with_history_reports_its_coverage():
    block = source_block("wikipedia", COUNTERS, {}, [], total=0, positives=0, history=True)
    assert block["test_split"].startswith("drift")
    assert block["history"]["articles"] == 4 and block["history"]["coverage"] == 0.5
    assert block["history"]["eligible"] == 1 and block["history"]["drifted"] == 0
    assert source_block("wikipedia", {}, {}, [], 0, 0, history=True)["history"]["coverage"] == 0.0


def test_summary_fields_per_source_with_the_sample_and_the_retrieval(tmp_path, capsys):
    summary = {"counters": {"intruders/wikipedia": COUNTERS}, "outputs": {}}
    retrieval = {"index": {"wikipedia": "I"}, "neighbors": {"wikipedia": "N"}}
    samples = {"wikipedia": parse_sample("6", "--sample")}
    kinds = {"cnn": "cnn", "wikipedia": "wikipedia"}
    fields = summary_fields(summary, str(tmp_path), ["cnn", "wikipedia"], [], samples, retrieval, kinds)
    assert list(fields) == ["sources", "retrieval", "wikipedia_test_split"]
    assert fields["sources"]["cnn"]["kind"] == "cnn" and fields["sources"]["cnn"]["length_rule"] == "truncate"
    assert fields["sources"]["wikipedia"]["sample"] == {"requested": "6", "documents": 6, "pool": 10}
    assert fields["sources"]["cnn"]["documents_read"] == 0 and "sample" not in fields["sources"]["cnn"]
    assert fields["retrieval"] == retrieval and fields["wikipedia_test_split"] == NO_PROTECTION
    print_table(fields)
    assert capsys.readouterr().out.splitlines()[1].startswith("wikipedia: read 10, produced 2 of 3")


def test_summary_fields_follow_the_kind_of_each_source(tmp_path):
    """A Wikipedia source called ``enwiki`` and CNN called ``news``: the blocks say the kinds' policies."""
    summary = {"counters": {"intruders/enwiki": COUNTERS}, "outputs": {}}
    kinds = {"enwiki": "wikipedia", "news": "cnn"}
    fields = summary_fields(summary, str(tmp_path), ["enwiki", "news"], [], {}, {}, kinds)
    enwiki, news = fields["sources"]["enwiki"], fields["sources"]["news"]
    assert (enwiki["kind"], enwiki["length_rule"], enwiki["test_fraction"]) == ("wikipedia", "filter", 0.08)
    assert (news["kind"], news["length_rule"], news["test_fraction"]) == ("cnn", "truncate", 0.2)
    assert fields["wikipedia_test_split"] == NO_PROTECTION
