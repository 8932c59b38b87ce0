import pytest
from apache_beam.ml.inference.base import PredictionResult

from incoherent.filters.handler import FixedScoreHandler, IntruderModelHandler
from incoherent.schemas.records import InputError
from tests.tiny_model import sample_documents, tiny_base_dir  # noqa: F401


def _candidates(n: int) -> list[dict]:
    docs = sample_documents()[:n]
    out = []
    for k, (doc_id, sentences) in enumerate(docs):
        donor = docs[(k + 1) % n][1]
        document = list(sentences)
        document[1] = donor[1]
        out.append({"id": doc_id, "replaced_index": 1, "candidate_sentence": donor[1], "document": document})
    return out


def test_handler_batches_and_scores_in_order(tiny_base_dir):  # noqa: F811
    handler = IntruderModelHandler(tiny_base_dir, device="cpu", batch_size=2, max_length=64)
    assert handler.batch_elements_kwargs() == {"min_batch_size": 2, "max_batch_size": 16}
    assert handler.share_model_across_processes() is False
    assert IntruderModelHandler(tiny_base_dir, share_across_processes=True).share_model_across_processes()
    model = handler.load_model()
    batch = _candidates(5)
    results = list(handler.run_inference(batch, model))
    assert [r.example["id"] for r in results] == [c["id"] for c in batch]
    alone = [model.score([(c["document"], 1)])[0][0] for c in batch]
    assert [r.inference for r in results] == pytest.approx(alone, abs=1e-5)
    assert all(0.0 < r.inference < 1.0 for r in results)
    assert handler.get_metrics_namespace() == "filter" and handler.get_num_bytes(batch) > 0


def test_handler_refuses_cuda_without_gpu(tiny_base_dir, monkeypatch):  # noqa: F811
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match="--device cuda"):
        IntruderModelHandler(tiny_base_dir, device="cuda")


def _by_rank(candidate: dict) -> float:
    return candidate["replaced_index"] / 10


def test_fixed_score_handler_answers_what_it_is_told():
    handler = FixedScoreHandler(_by_rank)
    results = handler.run_inference([{"replaced_index": 3}, {"replaced_index": 7}], handler.load_model())
    assert results == [
        PredictionResult({"replaced_index": 3}, 0.3, "fixed"),
        PredictionResult({"replaced_index": 7}, 0.7, "fixed"),
    ]


def test_localize_copies_a_model_once(tiny_base_dir):  # noqa: F811
    import os

    from incoherent.filters.handler import check_model_dir, localize

    assert localize(tiny_base_dir) == tiny_base_dir
    copy = localize(tiny_base_dir, force_copy=True)
    assert copy != tiny_base_dir and localize(tiny_base_dir, force_copy=True) == copy
    assert sorted(os.listdir(copy)) == sorted(os.listdir(tiny_base_dir))
    check_model_dir(copy)
    scorer = IntruderModelHandler(copy, device="cpu", max_length=32).load_model()
    assert scorer.score([(["A b.", "C d.", "E f."], 2)])[1]["scored"] == 1
