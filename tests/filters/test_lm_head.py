"""filters/lm.py on the paths a GPU takes: the chunked LM head (:func:`filters.lm_head.token_nll`) against the
plain log-softmax, a Llama-style model (rotary positions, large vocabulary, one window per document) against
a direct forward pass, and out-of-memory errors forced on each path (scores unchanged, counted)."""

from __future__ import annotations

import pytest
import torch

from incoherent.filters.lm import LanguageModelScorer, load_language_model, token_nll
from tests.tiny_lm import LLAMA_POSITIONS, LLAMA_VOCAB, tiny_gpt2_dir, tiny_llama_dir  # noqa: F401
from tests.tiny_model import sample_documents


def documents(n: int = 4) -> list[str]:
    """WSJ sample documents and shuffles of them that keep their first sentences (shared leading tokens)."""
    from incoherent.corpora.shuffle import shuffle_document

    out = []
    for doc_id, sentences in sample_documents(min_sentences=6, max_sentences=10)[:n]:
        out.append(" ".join(sentences))
        rows = shuffle_document(
            {"id": doc_id, "source": "wsj", "sentences": sentences}, 3, seed=0, permutations=3
        )
        out.extend(" ".join(r["shuffled"]) for r in rows)
    return out


def direct(model, tokenizer, text: str) -> tuple[float, int]:
    """Mean NLL of every token after BOS from one plain forward pass and a full log-softmax."""
    seq = [tokenizer.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([seq])).logits[0, :-1].float()
    nll = -torch.log_softmax(logits, -1).gather(1, torch.tensor(seq[1:])[:, None])[:, 0]
    return float(nll.mean()), len(seq) - 1


@pytest.mark.parametrize("rows,vocab_chunk", [(1, None), (5, None), (64, 7), (3, 1000)])
def test_token_nll_equals_cross_entropy(rows, vocab_chunk):
    """Within 1e-5 per token (losses near 15, where float32's step is 1e-6), even over 358 vocabulary chunks."""
    gen = torch.Generator().manual_seed(0)
    head = torch.nn.Linear(16, 2500)
    torch.nn.init.normal_(head.weight, std=0.5, generator=gen)
    torch.nn.init.normal_(head.bias, std=0.5, generator=gen)
    hidden = torch.randn(37, 16, generator=gen)
    gold = torch.randint(0, 2500, (37,), generator=gen)
    want = torch.nn.functional.cross_entropy(head(hidden), gold, reduction="none")
    with torch.no_grad():
        got = token_nll(hidden, head, gold, rows, vocab_chunk)
    assert got.dtype == torch.float32 and torch.allclose(got, want, atol=1e-5, rtol=0)


def test_token_nll_in_bf16_agrees_with_the_float32_logits_path():
    """bf16 weights: the chunked path against today's path (bf16 logits read as float32, cross-entropy), per
    text of 200 tokens within 1e-3; and both within bf16's rounding of the float32 model."""
    gen = torch.Generator().manual_seed(1)
    head = torch.nn.Linear(64, 5000, bias=False)
    torch.nn.init.normal_(head.weight, std=0.3, generator=gen)
    hidden = torch.randn(8 * 200, 64, generator=gen)
    gold = torch.randint(0, 5000, (8 * 200,), generator=gen)
    head16, hidden16 = head.to(torch.bfloat16), hidden.to(torch.bfloat16)
    with torch.no_grad():
        today = torch.nn.functional.cross_entropy(head16(hidden16).float(), gold, reduction="none")
        for vocab_chunk in (None, 999):
            got = token_nll(hidden16, head16, gold, 128, vocab_chunk)
            per_text = (got - today).reshape(8, 200).mean(1).abs().max()
            assert float(per_text) < 1e-3


@pytest.mark.e2e
def test_llama_scores_equal_a_direct_forward(tiny_llama_dir):  # noqa: F811
    model, tokenizer, kind = load_language_model(tiny_llama_dir)
    assert kind == "causal" and model.config.model_type == "llama" and model.config.vocab_size == LLAMA_VOCAB
    s = LanguageModelScorer(model, tokenizer, kind, batch_size=4)
    assert s.positions == LLAMA_POSITIONS and s.share_bodies
    cases = documents()
    got, counters = s.score_texts(cases)
    assert counters["forward_rows"] + counters["shared_rows"] == len(cases)  # one window per document
    assert counters["shared_positions"] > 0 or counters["shared_targets"] > 0  # shuffles reuse leading tokens
    for text, (score, tokens) in zip(cases, got, strict=True):
        want, n = direct(model, tokenizer, text)
        assert tokens == n and abs(score - want) < 1e-5
    s.head_rows, s.vocab_chunk = 7, 1000  # a vocabulary cut into 33 chunks: the same scores
    again, _ = s.score_texts(cases)
    assert all(abs(a[0] - b[0]) < 1e-5 for a, b in zip(got, again, strict=True))


def test_llama_in_bf16_within_1e3_of_float32(tiny_llama_dir):  # noqa: F811
    model, tokenizer, kind = load_language_model(tiny_llama_dir, dtype=torch.bfloat16)
    s = LanguageModelScorer(model, tokenizer, kind, batch_size=4)
    got, _ = s.score_texts(documents(2))
    model32, _, _ = load_language_model(tiny_llama_dir)
    for text, (score, _) in zip(documents(2), got, strict=True):
        want, _ = direct(model32, tokenizer, text)
        assert abs(score - want) < 2e-2  # bf16 weights and activations against float32: rounding only
    s.vocab_chunk = 1000
    again, _ = s.score_texts(documents(2))
    assert all(abs(a[0] - b[0]) < 1e-3 for a, b in zip(got, again, strict=True))


class _OutOfMemoryAbove:
    """Wraps a base model's forward: raises CUDA out-of-memory on batches of more than ``rows`` rows, and on
    every batch that reuses keys and values when ``past`` is False."""

    def __init__(self, forward, rows: int, past: bool = True):
        self.forward, self.rows, self.past, self.calls = forward, rows, past, []

    def __call__(self, *args, **kwargs):
        ids = kwargs["input_ids"]
        self.calls.append(len(ids))
        if len(ids) > self.rows or (not self.past and kwargs.get("past_key_values") is not None):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return self.forward(*args, **kwargs)


@pytest.mark.parametrize("fixture", ["tiny_gpt2_dir", "tiny_llama_dir"])
def test_out_of_memory_on_every_scorer_path_keeps_the_scores(fixture, request):
    model_dir = request.getfixturevalue(fixture)
    cases = documents(3)
    model, tokenizer, kind = load_language_model(model_dir)
    want, plain = LanguageModelScorer(model, tokenizer, kind, batch_size=8).score_texts(cases)
    assert plain["oom_retries"] == 0 and plain["shared_positions"] > 0  # the shared-prefix path runs
    for rows, past in ((2, True), (1, False)):  # plain and shared-prefix batches; then every reused past
        s = LanguageModelScorer(model, tokenizer, kind, batch_size=8)
        fake = _OutOfMemoryAbove(model.base_model.forward, rows, past)
        s.model.base_model.forward = fake
        try:
            got, counters = s.score_texts(cases)
        finally:
            del s.model.base_model.forward
        assert counters["oom_retries"] > 0 and max(fake.calls) > rows
        if not past:
            assert counters["oom_past_dropped"] > 0
        assert s.batch_size < 8  # later batches start smaller
        assert all(abs(a[0] - b[0]) < 1e-5 and a[1] == b[1] for a, b in zip(want, got, strict=True))


def test_out_of_memory_in_the_head_halves_its_chunks(tiny_gpt2_dir):  # noqa: F811
    model, tokenizer, kind = load_language_model(tiny_gpt2_dir)
    cases = documents(1)[:1]
    want, _ = LanguageModelScorer(model, tokenizer, kind).score_texts(cases)
    s = LanguageModelScorer(model, tokenizer, kind, batch_size=1)
    s.head_rows = 64
    head = s._head

    def small_head(hidden):
        if hidden.shape[0] > 16:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return head(hidden)

    s._head = small_head
    got, counters = s.score_texts(cases)
    assert counters["oom_head_halved"] == 2 and s.head_rows == 16
    assert abs(got[0][0] - want[0][0]) < 1e-5


def test_out_of_memory_that_nothing_fixes_is_one_line(tiny_gpt2_dir):  # noqa: F811
    from incoherent.schemas.records import InputError

    model, tokenizer, kind = load_language_model(tiny_gpt2_dir)
    s = LanguageModelScorer(model, tokenizer, kind, batch_size=2)
    s.model.base_model.forward = _OutOfMemoryAbove(model.base_model.forward, 0)
    try:
        with pytest.raises(InputError, match="out of memory on a single input"):
            s.score_texts(documents(1))
    finally:
        del s.model.base_model.forward


def test_head_chunks_follow_the_free_memory():
    """On a GPU the LM head's rows per call come from the free memory; a vocabulary too large for the
    smallest chunk of rows is cut into chunks (no GPU needed: the free memory is given)."""
    from types import SimpleNamespace

    from incoherent.filters.lm_head import HEAD_ROWS_GPU_MAX, HEAD_ROWS_GPU_MIN, head_rows

    gpt2 = SimpleNamespace(config=SimpleNamespace(vocab_size=50257))
    rows, chunk = head_rows(gpt2, "cuda", free_bytes=40 << 30)
    assert chunk is None and rows == min(HEAD_ROWS_GPU_MAX, (5 << 30) // (10 * 50257))
    assert head_rows(gpt2, "cuda", free_bytes=80 << 30)[0] >= rows  # more memory, no fewer rows
    llama3 = SimpleNamespace(config=SimpleNamespace(vocab_size=128256))
    rows, chunk = head_rows(llama3, "cuda", free_bytes=1 << 30)  # a nearly full GPU
    assert rows == HEAD_ROWS_GPU_MIN and chunk is not None and chunk < 128256
    assert rows * chunk * 10 <= (1 << 30) // 8
    assert head_rows(llama3, "cpu")[1] is None  # a CPU: cache-sized rows, the whole vocabulary


def test_token_nll_over_chunks_whose_logits_are_all_minus_infinity():
    """A vocabulary chunk masked to -inf (a model that bans tokens through its bias) adds nothing."""
    head = torch.nn.Linear(4, 12)
    with torch.no_grad():
        head.bias[:6] = float("-inf")
    hidden, gold = torch.randn(3, 4), torch.tensor([7, 9, 11])
    want = torch.nn.functional.cross_entropy(head(hidden), gold, reduction="none")
    with torch.no_grad():
        got = token_nll(hidden, head, gold, rows=2, vocab_chunk=3)
    assert torch.isfinite(got).all() and torch.allclose(got, want, atol=1e-5, rtol=0)
