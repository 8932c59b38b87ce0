"""filters/training.py and filters/hardware.py: length-grouped batches, gradients of a batch cut into parts,
out-of-memory errors forced on every training path (the weights come out the same, the retries counted), and
the precision each device trains in."""

from __future__ import annotations

import pytest
import torch

from incoherent.filters.hardware import free_memory, training_precision
from incoherent.filters.training import backward_in_parts, fit, length_grouped
from incoherent.schemas.records import InputError
from tests.tiny_model import tiny_base_dir, tiny_data_dir  # noqa: F401


def test_length_grouped_batches_cover_every_example_once_with_little_padding():
    import random

    rng = random.Random(0)
    lengths = [rng.randint(1, 500) for _ in range(1003)]
    order = list(range(1003))
    rng.shuffle(order)
    batches = length_grouped(order, lengths, 8)
    assert sorted(i for b in batches for i in b) == list(range(1003))
    assert all(len(b) <= 8 for b in batches)
    assert max(lengths[i] for i in batches[0]) == max(lengths)  # the longest batch first
    padded = sum(len(b) * max(lengths[i] for i in b) for b in batches)
    plain = sum(len(order[s : s + 8]) * max(lengths[i] for i in order[s : s + 8]) for s in range(0, 1003, 8))
    assert padded < 0.7 * plain
    assert length_grouped(order, lengths, 8) == batches  # deterministic


def tiny_lm(seed: int = 0):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=50, n_positions=16, n_embd=16, n_layer=1, n_head=2)
    config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0  # the same draws whatever the cut
    return GPT2LMHeadModel(config)


def lm_batches(n: int = 12, seed: int = 1) -> list[list[int]]:
    gen = torch.Generator().manual_seed(seed)
    return [
        torch.randint(0, 50, (int(torch.randint(3, 16, (1,), generator=gen)),), generator=gen).tolist()
        for _ in range(n)
    ]


def test_backward_in_parts_gives_the_whole_batch_gradients():
    from incoherent.filters.finetune_lm import Collator, loss_terms

    class Tok:
        pad_token_id, eos_token_id = 0, 0

    batch = Collator(Tok(), "causal")(lm_batches(7))
    grads = []
    for parts in (1, 2, 3, 7):
        model = tiny_lm()
        loss = backward_in_parts(model, batch, parts, terms=loss_terms("causal"))
        grads.append(([p.grad.clone() for p in model.parameters()], loss))
    for got, loss in grads[1:]:
        assert abs(loss - grads[0][1]) < 1e-5
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, grads[0][0], strict=True))


class OutOfMemoryAbove(torch.nn.Module):
    """A model whose forward raises CUDA out-of-memory on batches of more than ``rows`` rows."""

    def __init__(self, model, rows: int):
        super().__init__()
        self.inner, self.rows, self.calls = model, rows, []
        self.config = model.config

    def forward(self, **batch):
        self.calls.append(len(batch["input_ids"]))
        if len(batch["input_ids"]) > self.rows:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return self.inner(**batch)


def test_out_of_memory_in_fit_keeps_the_weights_and_counts():
    from incoherent.filters.finetune_lm import Collator, loss_terms

    class Tok:
        pad_token_id, eos_token_id = 0, 0

    examples = lm_batches(24)
    kwargs = dict(
        collate=Collator(Tok(), "causal"), evaluate=lambda m: {"x": 0.0}, key=lambda r: r["epoch"], name="t",
        epochs=1, batch_size=8, learning_rate=1e-2, seed=0, device="cpu", lengths=[len(e) for e in examples],
        terms=loss_terms("causal"),
    )  # fmt: skip
    plain = tiny_lm()
    want = fit(plain, examples, **kwargs)
    small = OutOfMemoryAbove(tiny_lm(), 3)
    got = fit(small, examples, **kwargs)
    assert want["oom_retries"] == 0 and got["oom_retries"] == 2  # 8 rows -> 2 parts of 4 -> 4 parts of 2
    assert got["precision"] == "float32" and max(small.calls) == 8
    # Adam divides by the gradient's own scale: a rounding difference in a near-zero gradient moves its
    # weight by up to the learning rate, so compare against the learning rate
    worst = max(
        float((a - b).abs().max())
        for a, b in zip(plain.state_dict().values(), small.inner.state_dict().values(), strict=True)
    )
    assert worst < 1e-2 * 1e-2
    with pytest.raises(InputError, match="out of memory training on a single example"):
        fit(OutOfMemoryAbove(tiny_lm(), 0), examples, **kwargs)


def test_out_of_memory_in_train_filter(tiny_base_dir, tiny_data_dir, tmp_path, monkeypatch):  # noqa: F811
    import incoherent.filters.train as train_module

    load = train_module.load_base_model
    wrapped = {}

    def load_small(name):
        model, tokenizer = load(name)
        wrapped["model"] = OutOfMemoryAbove(model, 2)
        wrapped["model"].save_pretrained = model.save_pretrained
        return wrapped["model"], tokenizer

    monkeypatch.setattr(train_module, "load_base_model", load_small)
    config = train_module.TrainConfig(
        data_dir=tiny_data_dir, out=str(tmp_path / "m"), base_model=tiny_base_dir, epochs=1, batch_size=8,
        max_length=64, max_steps=2, device="cpu",
    )  # fmt: skip
    summary = train_module.train(config)
    assert summary["oom_retries"] == 2 and summary["precision"] == "float32"
    assert 8 in wrapped["model"].calls and max(c for c in wrapped["model"].calls if c <= 2) == 2


def test_precision_per_device():
    assert training_precision("cpu") == ("float32", None, None)
    assert training_precision("cpu", "float32")[0] == "float32"
    with pytest.raises(InputError, match="--precision bfloat16: mixed precision needs a GPU"):
        training_precision("cpu", "bfloat16")
    with pytest.raises(InputError, match="--precision: unknown precision"):
        training_precision("cpu", "fp8")
    assert free_memory("cpu") > 0


@pytest.mark.filterwarnings("ignore:torch.cuda.amp.GradScaler is enabled")
def test_precision_on_a_gpu_without_bf16_is_fp16_with_loss_scaling(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    name, dtype, scaler = training_precision("cuda")
    assert (name, dtype) == ("float16", torch.float16) and isinstance(scaler, torch.amp.GradScaler)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert training_precision("cuda")[:2] == ("bfloat16", torch.bfloat16)
    assert training_precision("cuda", "float32") == ("float32", None, None)
