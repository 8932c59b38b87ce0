import apache_beam as beam
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.util import assert_that, equal_to

from incoherent.corpora.intruders import intruder_row
from incoherent.filters.handler import FixedScoreHandler
from incoherent.pipelines.intruders.filter_stage import ScoreCandidates
from incoherent.schemas import CANDIDATE_SCHEMA
from incoherent.schemas.records import InputError
from tests.tiny_model import build_model, sample_documents, tiny_base_dir, tiny_data_dir, tiny_trained_dir  # noqa: F401


def _candidate(doc_id: str, sentences: list[str], donor: list[str], rank: int, score: float = 0.0) -> dict:
    document = list(sentences)
    document[2] = donor[1]
    return {
        "id": doc_id,
        "source": "wsj",
        "split": "train",
        "replaced_index": 2,
        "original_sentence": sentences[2],
        "candidate_sentence": donor[1],
        "candidate_source_id": f"wsj:donor{rank}",
        "candidate_index": 1,
        "neighbor_rank": rank,
        "neighbor_score": score,
        "similarity": 0.1,
        "filter_score": None,
        "difficulty": None,
        "document": document,
    }


def _sample_candidates(n_docs: int, per_doc: int) -> list[dict]:
    docs = sample_documents()
    out = []
    for k, (doc_id, sentences) in enumerate(docs[:n_docs]):
        for r in range(per_doc):
            out.append(_candidate(doc_id, sentences, docs[(k + r + 1) % len(docs)][1], r))
    return out


def _run(candidates: list[dict], transform, check) -> dict:
    pipeline = beam.Pipeline(runner=FnApiRunner())
    scored = pipeline | beam.Create(candidates) | transform
    check(scored)
    result = pipeline.run()
    result.wait_until_finish()
    counters = result.metrics().query(MetricsFilter().with_namespace("filter"))["counters"]
    return {c.key.metric.name: c.committed for c in counters}


def test_trained_model_scores_candidates(tiny_trained_dir):  # noqa: F811
    candidates = _sample_candidates(6, 3)

    def check(scored):
        def valid(rows):
            rows = list(rows)
            assert len(rows) == len(candidates)
            for row in rows:
                assert set(row) == set(CANDIDATE_SCHEMA.names)
                assert 0.0 < row["filter_score"] < 1.0
                assert row["difficulty"] == ("easy" if row["filter_score"] >= 0.5 else "hard")
            assert sorted((r["id"], r["neighbor_rank"]) for r in rows) == sorted(
                (c["id"], c["neighbor_rank"]) for c in candidates
            )

        assert_that(scored, valid)

    counters = _run(
        candidates, ScoreCandidates(tiny_trained_dir, device="cpu", batch_size=4, max_length=48), check
    )
    assert counters["scored"] == len(candidates)
    assert counters["truncated"] == len(candidates)  # every sample document is longer than 48 tokens


def test_threshold_decides_difficulty(tiny_trained_dir):  # noqa: F811
    candidates = _sample_candidates(2, 2)

    def check(scored):
        assert_that(scored | beam.Map(lambda r: r["difficulty"]), equal_to(["easy"] * 4))

    _run(
        candidates, ScoreCandidates(tiny_trained_dir, device="cpu", max_length=512, easy_threshold=0.0), check
    )


def _score_from_neighbor_score(candidate: dict) -> float:
    return candidate["neighbor_score"]


SEEDS = range(40)


def _production_draws(element, sentences: dict[str, list[str]]) -> tuple[str, list[int]]:
    """The neighbour ranks the intruder stage's own selection (``corpora.intruders.intruder_row``) picks for a
    document's scored candidates, over many seeds."""
    doc_id, candidates = element
    candidates = list(candidates)
    doc = {"id": doc_id, "source": "wsj", "sentences": sentences[doc_id]}
    ranks = set()
    for seed in SEEDS:
        row = intruder_row(doc, "train", candidates, attempted=True, seed=seed)
        assert row["label"] == 1
        ranks.add(
            next(
                c["neighbor_rank"]
                for c in candidates
                if c["candidate_source_id"] == row["intruder_source_id"]
            )
        )
    return doc_id, sorted(ranks)


def test_selection_with_a_controlled_handler():
    docs = sample_documents()
    mixed_scores = [0.9, 0.2, 0.8, 0.1, 0.95]  # hard: ranks 1 and 3
    easy_scores = [0.7, 0.6, 0.99]  # all easy: any rank may be drawn
    candidates = [
        _candidate("wsj:mixed", docs[0][1], docs[r + 1][1], r, s) for r, s in enumerate(mixed_scores)
    ]
    candidates += [
        _candidate("wsj:easy", docs[1][1], docs[r + 2][1], r, s) for r, s in enumerate(easy_scores)
    ]

    def check(scored):
        # the filter's difficulties, then the intruder stage's selection: only hard ones where there are
        # hard and easy candidates, every one where all are easy
        selected = (
            scored
            | beam.Map(lambda r: (r["id"], r))
            | beam.GroupByKey()
            | beam.Map(_production_draws, {"wsj:mixed": docs[0][1], "wsj:easy": docs[1][1]})
        )
        assert_that(selected, equal_to([("wsj:mixed", [1, 3]), ("wsj:easy", [0, 1, 2])]))

    counters = _run(
        candidates, ScoreCandidates(None, handler=FixedScoreHandler(_score_from_neighbor_score)), check
    )
    assert counters["scored"] == len(candidates)


def test_bad_model_dirs_fail_before_the_pipeline(tiny_base_dir, tmp_path):  # noqa: F811
    from transformers import AutoTokenizer

    with pytest.raises(InputError, match="does not exist"):
        ScoreCandidates(str(tmp_path / "missing"))
    path = build_model(str(tmp_path / "three"), AutoTokenizer.from_pretrained(tiny_base_dir), num_labels=3)
    with pytest.raises(InputError, match="exactly 2"):
        ScoreCandidates(path)
