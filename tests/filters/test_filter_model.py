import os
import shutil

import pytest
import torch

from incoherent.filters import model as fm
from incoherent.filters.task import Encoded
from incoherent.schemas.records import InputError
from tests.tiny_model import build_model, sample_documents, tiny_base_dir  # noqa: F401


@pytest.fixture(scope="module")
def tokenizer(tiny_base_dir):  # noqa: F811
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_base_dir)


def _copy(src: str, dst) -> str:
    shutil.copytree(src, dst)
    return str(dst)


def test_loads_a_valid_classifier(tiny_base_dir):  # noqa: F811
    model, tokenizer = fm.load_classifier(tiny_base_dir)
    assert model.config.num_labels == 2 and not model.training
    assert tokenizer.padding_side == "left"
    assert model.config.use_mems_eval is False


def test_missing_directory_and_config(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        fm.load_classifier(str(tmp_path / "nope"))
    with pytest.raises(InputError, match="no config.json"):
        fm.load_classifier(str(tmp_path))


def test_refuses_pickled_weights(tiny_base_dir, tmp_path):  # noqa: F811
    path = _copy(tiny_base_dir, tmp_path / "pickled")
    os.remove(os.path.join(path, "model.safetensors"))
    torch.save({"x": torch.zeros(1)}, os.path.join(path, "pytorch_model.bin"))
    with pytest.raises(InputError, match=r"pickled\.? .*pytorch_model\.bin.*refusing") as info:
        fm.load_classifier(path)
    assert path in str(info.value) and "\n" not in str(info.value)


def test_refuses_a_model_without_classification_head(tokenizer, tmp_path):
    path = build_model(str(tmp_path), tokenizer, head=False)
    with pytest.raises(InputError, match="no sequence-classification head.*XLNetModel") as info:
        fm.load_classifier(path)
    assert str(info.value).startswith(path)


def test_refuses_wrong_number_of_labels(tokenizer, tmp_path):
    path = build_model(str(tmp_path), tokenizer, num_labels=3)
    with pytest.raises(InputError, match="has 3 labels, the intruder task needs exactly 2"):
        fm.load_classifier(path)


def test_refuses_a_tokenizer_that_does_not_match(tiny_base_dir, tmp_path):  # noqa: F811
    import json

    path = _copy(tiny_base_dir, tmp_path / "small-vocab")
    config_file = os.path.join(path, "config.json")
    with open(config_file) as f:
        config = json.load(f)
    config["vocab_size"] = 500
    with open(config_file, "w") as f:
        json.dump(config, f)
    # the config no longer describes the weights (1000 x 32 embeddings): refused before the tokenizer is read
    with pytest.raises(
        InputError, match=r"makes word_embedding.weight \[500, 32\] but the weights hold \[1000, 32\]"
    ):
        fm.load_classifier(path)


def test_device_resolution(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert fm.resolve_device("auto") == "cpu"
    assert fm.resolve_device("cpu") == "cpu"
    with pytest.raises(InputError, match="--device cuda: CUDA was requested but no GPU"):
        fm.resolve_device("cuda")
    with pytest.raises(InputError, match="unknown device"):
        fm.resolve_device("tpu")
    assert fm.resolve_dtype("auto", "cpu") is torch.float32
    assert fm.resolve_dtype("bfloat16", "cpu") is torch.bfloat16


def test_length_batches_respects_batch_size_and_token_budget():
    lengths = [10, 300, 12, 290, 11, 500]
    assert fm.length_batches(lengths, 2, None) == [[5, 1], [3, 2], [4, 0]]
    # 1000 padded tokens: 500 + 300 pair up; the 290-wide group takes 3; short ones in bigger groups.
    assert fm.length_batches(lengths, 2, 1000) == [[5, 1], [3, 2, 4], [0]]
    assert fm.length_batches([10] * 7, 2, 40) == [[0, 1, 2, 3], [4, 5, 6]]


def test_pad_batch_left_padding_and_types(tokenizer):
    encoded = [Encoded([5, 6, 7], [0, 1, 2], False), Encoded([8], [2], False)]
    batch = fm.pad_batch(tokenizer, encoded, types=(True, 3))
    pad = tokenizer.pad_token_id
    assert batch["input_ids"].tolist() == [[5, 6, 7], [pad, pad, 8]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [0, 0, 1]]
    assert batch["token_type_ids"].tolist() == [[0, 1, 2], [3, 3, 2]]
    assert "token_type_ids" not in fm.pad_batch(tokenizer, encoded, pad_to=5, types=(False, 0))
    assert fm.pad_batch(tokenizer, encoded, pad_to=5)["input_ids"].shape == (2, 5)


def test_bucketing_changes_no_score(tiny_base_dir):  # noqa: F811
    items = [(s, i) for _, s in sample_documents()[:8] for i in range(1, len(s))]
    bucketed = fm.ScoringModel.load(tiny_base_dir, "cpu", batch_size=4, max_length=256)
    naive = fm.ScoringModel.load(
        tiny_base_dir, "cpu", batch_size=4, max_length=256, bucket=False, pad_to_max=True
    )
    scores, counters = bucketed.score(items)
    reference, naive_counters = naive.score(items)
    assert len(scores) == len(items)
    assert scores == pytest.approx(reference, abs=1e-5)
    assert counters["scored"] == len(items) and counters["truncated"] == naive_counters["truncated"]
    assert counters["padded_tokens"] < naive_counters["padded_tokens"] == 256 * len(items)


def test_compiled_shapes_change_no_score(tiny_base_dir):  # noqa: F811
    """``compile=True`` rounds widths up to multiples of 64 (few shapes for torch.compile): the same scores.
    (torch.compile itself is GPU only: refused on a CPU.)"""
    items = [(s, i) for _, s in sample_documents()[:6] for i in range(1, len(s))]
    plain = fm.ScoringModel.load(tiny_base_dir, "cpu", batch_size=4, max_length=256)
    bucketed = fm.ScoringModel.load(tiny_base_dir, "cpu", batch_size=4, max_length=256)
    bucketed.compiled = True  # the shapes a compiled model gets, run eagerly
    widths = []
    bucketed.model.register_forward_pre_hook(
        lambda m, a, kw: widths.append(kw["input_ids"].shape[1]), with_kwargs=True
    )
    scores, _ = bucketed.score(items)
    want, _ = plain.score(items)
    assert scores == pytest.approx(want, abs=1e-5)
    assert widths and all(w % fm.COMPILE_BUCKET == 0 for w in widths)
    with pytest.raises(InputError, match="--compile: needs a GPU"):
        fm.ScoringModel.load(tiny_base_dir, "cpu", compile=True)


class _OomModel(torch.nn.Module):
    """Raises CUDA out-of-memory on batches larger than 2; otherwise answers 0.25 / 0.75 by parity."""

    def __init__(self):
        super().__init__()
        self.config = type("C", (), {"model_type": "toy"})()
        self.calls = []

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        self.calls.append(len(input_ids))
        if len(input_ids) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        last = input_ids[:, -1].float()
        logits = torch.stack([torch.zeros_like(last), torch.where(last % 2 == 0, -1.0986, 1.0986)], dim=1)
        return type("Out", (), {"logits": logits})()


def test_out_of_memory_halves_the_batch_and_counts(tokenizer, monkeypatch):
    import incoherent.filters.task as task

    monkeypatch.setattr(
        task, "encode", lambda tok, sentences, position, max_length: Encoded([position], [0], False)
    )
    scorer = fm.ScoringModel(_OomModel(), tokenizer, "cpu", batch_size=8, max_length=16, max_tokens=None)
    items = [(["a", "b", "c", "d", "e", "f", "g", "h", "i"], p) for p in range(1, 9)]
    scores, counters = scorer.score(items)
    assert scores == pytest.approx([0.75 if p % 2 else 0.25 for p in range(1, 9)], abs=1e-4)
    assert counters["oom_retries"] == 3  # 8 -> 4 + 4 -> 2 + 2 + 2 + 2
    assert scorer.model.calls == [8, 4, 2, 2, 4, 2, 2]
    assert scorer.batch_size == 1  # later pools start smaller
