"""filters/lm.py: window plans, exact scores against one-token-at-a-time loops, and the laban mode against a
line-by-line transcription of the authors' scripts (tingofurro/shuffle_test), on tiny random GPT-2 and BERT."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch

from incoherent.filters.lm import (
    LanguageModelScorer,
    causal_windows,
    fuse_activations,
    laban_causal_windows,
    load_language_model,
    masked_windows,
)
from incoherent.schemas.records import InputError
from tests.tiny_lm import BERT_POSITIONS, GPT2_POSITIONS, tiny_bert_dir, tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import sample_documents

TOL = 1e-5


def texts() -> list[str]:
    """Sample text of a few words (one window), about twenty (two windows) and documents (many windows)."""
    docs = [sentences for _, sentences in sample_documents(min_sentences=3, max_sentences=6)]
    words = " ".join(docs[0]).split()
    return [" ".join(words[:5]), " ".join(words[:9]), docs[1][0], " ".join(docs[2][:2])]


def scorer(model_dir: str, window: str = "exact", stride: int | None = None, batch_size: int = 4):
    model, tokenizer, kind = load_language_model(model_dir)
    return LanguageModelScorer(model, tokenizer, kind, window, batch_size=batch_size, stride=stride)


# --------------------------------------------------------------------------------------------- windows


@pytest.mark.parametrize("window,stride", [(4, 1), (4, 2), (8, 3), (32, 16)])
def test_causal_windows_score_every_position_once(window, stride):
    for length in range(0, 80):
        scored = []
        for begin, end, first in causal_windows(length, window, stride):
            assert 0 <= begin < first <= end <= length and end - begin <= window
            assert first - begin >= min(window - stride, first)  # context of the first scored token
            scored.extend(range(first, end))
        assert scored == list(range(1, length))


@pytest.mark.parametrize("window,stride", [(4, 1), (6, 2), (22, 11), (9, 4)])
def test_masked_windows_score_every_token_once_inside_its_window(window, stride):
    for length in range(0, 80):
        scored = []
        for begin, end, lo, hi in masked_windows(length, window, stride):
            assert 0 <= begin <= lo <= hi <= end <= length and end - begin <= window
            scored.extend(range(lo, hi))
        assert scored == list(range(length))


def test_laban_windows_are_their_loop():
    # run_gpt2_zeroshot.py with n_positions 1024, stride 512, on 1300 tokens
    assert laban_causal_windows(1300, 1024) == [(0, 512, 512), (0, 1024, 512), (512, 1300, 276)]


# --------------------------------------------------------------------------------------------- causal exact


def one_token_at_a_time(model, tokenizer, text: str, context_start) -> tuple[float, int]:
    """Mean NLL of every token after BOS, each from its own forward pass over ``seq[context_start(p):p]``."""
    seq = [tokenizer.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
    total = 0.0
    for p in range(1, len(seq)):
        with torch.no_grad():
            logits = model(torch.tensor([seq[context_start(p) : p]])).logits[0, -1]
        total -= torch.log_softmax(logits.float(), -1)[seq[p]].item()
    return total / (len(seq) - 1), len(seq) - 1


@pytest.mark.e2e
def test_exact_causal_equals_one_token_at_a_time_with_full_context(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir, stride=1)  # stride 1: every token sees window - 1 tokens of context
    got, _ = s.score_texts(texts())
    for text, (score, tokens) in zip(texts(), got, strict=True):
        want, n = one_token_at_a_time(s.model, s.tokenizer, text, lambda p: max(0, p - GPT2_POSITIONS + 1))
        assert tokens == n and abs(score - want) < TOL
    assert max(n for _, n in got) > 3 * GPT2_POSITIONS  # documents much longer than the window


@pytest.mark.e2e
def test_exact_causal_equals_one_token_at_a_time_with_default_stride(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir)
    w, stride = GPT2_POSITIONS, GPT2_POSITIONS // 2
    got, _ = s.score_texts(texts())
    for text, (score, tokens) in zip(texts(), got, strict=True):
        # token p is scored by the first window ending after it: W, W + S, W + 2S ... (at most the length)
        def start(p, length=tokens + 1):
            end = w if p < w else min(length, w + stride * math.ceil((p + 1 - w) / stride))
            return max(0, end - w)

        want, n = one_token_at_a_time(s.model, s.tokenizer, text, start)
        assert tokens == n and abs(score - want) < TOL


# --------------------------------------------------------------------------------------------- laban


def authors_gpt2(model, tokenizer, text: str) -> float:
    """run_gpt2_zeroshot.py's perplexity loop, line by line (log of their perplexity; stride = max_length // 2,
    which is their hard-coded 512 for GPT-2's 1024 positions)."""
    max_length = model.config.n_positions
    stride = max_length // 2
    inputs = tokenizer(text, return_tensors="pt")
    lls = []
    for i in range(0, inputs["input_ids"].size(1), stride):
        begin_loc = max(i + stride - max_length, 0)
        end_loc = min(i + stride, inputs["input_ids"].size(1))
        target_len = end_loc - i
        input_ids = inputs["input_ids"][:, begin_loc:end_loc]
        target_ids = input_ids.clone()
        with torch.no_grad():
            outputs = model(input_ids, labels=target_ids)
            log_likelihood = outputs.loss * target_len
        lls.append(log_likelihood)
    return (torch.stack(lls).sum() / end_loc).item()


def authors_bidir(model, tokenizer, text: str, stride: int, max_length: int) -> float:
    """run_bidir_zeroshot.py's create_all_masks / compute_logprob / compute_pseudologprob, line by line."""
    mask_id = tokenizer.mask_token_id
    vocab_size = tokenizer.vocab_size
    cross_ent = torch.nn.CrossEntropyLoss(ignore_index=-1, reduction="none")

    def create_all_masks(tokens):
        all_masks = []
        for i in range(len(tokens)):
            mask_i = tokens[:i] + [mask_id] + tokens[(i + 1) :]
            all_masks.append(mask_i)
        return all_masks

    def compute_logprob(maskeds, unmaskeds, batch_size):
        N = len(maskeds)
        masked = torch.LongTensor(maskeds)
        full_unmasked = torch.LongTensor(unmaskeds)
        masked_binary = (masked == mask_id).long()
        unmasked_wminus1 = (1 - masked_binary) * (-1) + masked_binary * (full_unmasked)
        loss = 0
        for i in range(0, N, batch_size):
            batch = masked[i : min(i + batch_size, N)]
            unmasked_wminus1_batch = unmasked_wminus1[i : i + batch_size]
            with torch.no_grad():
                model_outs = model(batch)
                loss_batch = cross_ent(
                    model_outs["logits"].view(-1, vocab_size), unmasked_wminus1_batch.view(-1)
                ).view(len(batch), -1)
                loss += torch.sum(loss_batch, dim=0)
        loss_per = loss / torch.sum(masked_binary.float(), dim=1)
        return loss_per

    input_ids = tokenizer.encode(text)[1:-1]
    all_masks = create_all_masks(input_ids)
    N = len(input_ids)
    losses = []
    for i in range(0, N, stride):
        begin_loc = max(i + stride - max_length, 0)
        end_loc = min(i + stride, N)
        input_ids_window = input_ids[begin_loc:end_loc]
        all_masks_window = np.array(all_masks)[begin_loc:end_loc, begin_loc:end_loc]
        loss_per = compute_logprob(
            all_masks_window, [input_ids_window] * len(all_masks_window), batch_size=32
        )
        losses.append(loss_per.mean().item())
    return np.mean(losses)


def test_laban_causal_equals_the_authors_loop(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir, window="laban")
    half = GPT2_POSITIONS // 2
    cases = texts()
    lengths = [len(s.tokenizer(t)["input_ids"]) for t in cases]
    assert min(lengths) <= half < sorted(lengths)[1] <= 2 * half < max(lengths)  # 1, 2 and many windows
    got, _ = s.score_texts(cases)
    for text, length, (score, tokens) in zip(cases, lengths, got, strict=True):
        assert tokens == length
        assert abs(score - authors_gpt2(s.model, s.tokenizer, text)) < TOL


def test_laban_masked_equals_the_authors_loop(tiny_bert_dir):  # noqa: F811
    s = scorer(tiny_bert_dir, window="laban")
    assert s.span == BERT_POSITIONS  # min(512, positions)
    cases = texts()
    got, _ = s.score_texts(cases)
    lengths = [len(s.tokenizer.encode(t)) - 2 for t in cases]
    assert min(lengths) <= BERT_POSITIONS // 2 < max(lengths) // 3
    for text, (score, _) in zip(cases, got, strict=True):
        want = authors_bidir(s.model, s.tokenizer, text, BERT_POSITIONS // 2, BERT_POSITIONS)
        assert abs(score - want) < TOL


# --------------------------------------------------------------------------------------------- masked exact


def pll_one_forward_per_token(model, tokenizer, text: str, windows) -> tuple[float, int]:
    """Every token masked in turn, one forward pass each, ``[CLS] window [SEP]`` around it; mean NLL."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    total, n = 0.0, 0
    for begin, end, lo, hi in windows(len(ids)):
        for t in range(lo, hi):
            row = [tokenizer.cls_token_id] + ids[begin:end] + [tokenizer.sep_token_id]
            row[1 + t - begin] = tokenizer.mask_token_id
            with torch.no_grad():
                logits = model(torch.tensor([row])).logits[0, 1 + t - begin]
            total -= torch.log_softmax(logits.float(), -1)[ids[t]].item()
            n += 1
    return total / n, n


def test_masked_pll_equals_one_forward_pass_per_token(tiny_bert_dir):  # noqa: F811
    s = scorer(tiny_bert_dir)
    span = BERT_POSITIONS - 2
    assert s.span == span
    short = [t for t in texts() if len(s.tokenizer(t, add_special_tokens=False)["input_ids"]) <= span]
    assert short  # whole text in one window: no windowing at all in the reference
    got, _ = s.score_texts(texts())
    for text, (score, tokens) in zip(texts(), got, strict=True):
        if text in short:
            want, n = pll_one_forward_per_token(s.model, s.tokenizer, text, lambda n: [(0, n, 0, n)])
        else:
            want, n = pll_one_forward_per_token(
                s.model, s.tokenizer, text, lambda n: masked_windows(n, span, span // 2)
            )
        assert tokens == n and abs(score - want) < TOL


# --------------------------------------------------------------------------------------------- mechanics


def test_forward_passes_counted_and_batched(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir, batch_size=8)
    calls = []
    base = s.model.base_model  # runs in every forward pass, with or without the LM head on all positions
    forward = base.forward

    def counting(*args, **kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return forward(*args, **kwargs)

    base.forward = counting
    scores, counters = s.score_texts(texts())
    pieces = sum(len(s.plan(t)[0]) for t in texts())
    assert counters["forward_rows"] == sum(calls) == pieces
    assert counters["batches"] == len(calls) < pieces  # windows of several texts share forward passes
    calls.clear()
    alone = [s.score_texts([t])[0][0] for t in texts()]
    assert all(abs(a[0] - b[0]) < TOL and a[1] == b[1] for a, b in zip(alone, scores, strict=True))


def test_identical_windows_run_once(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir)
    long = texts()[3]
    first = long[: len(long) // 2]  # the same first window(s), a different rest
    cases = [long, first, long.replace(" ", "  ", 1)]
    scores, counters = s.score_texts(cases)
    pieces = [len(s.plan(t)[0]) for t in cases]
    assert counters["shared_rows"] >= 1 and counters["forward_rows"] + counters["shared_rows"] == sum(pieces)
    alone = [s.score_texts([t])[0][0] for t in cases]
    assert all(abs(a[0] - b[0]) < TOL and a[1] == b[1] for a, b in zip(alone, scores, strict=True))


def test_shared_leading_tokens_predicted_once(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir)
    long = texts()[3]
    cut = long.index(" ", len(long) // 3)
    # the same first third, then different text: a shuffle that keeps its first block(s) in place
    cases = [long, long[:cut] + " Then something else entirely happened here.", long[:cut]]
    head_rows = []
    head = s._head
    s._head = lambda hidden: head_rows.append(hidden.shape[0]) or head(hidden)
    scores, counters = s.score_texts(cases)
    s._head = head
    distinct = {(p.ids, p.start, p.gold) for t in cases for p in s.plan(t)[0]}
    targets = sum(len(gold) for _, _, gold in distinct)
    assert counters["shared_targets"] > 0
    assert sum(head_rows) == targets - counters["shared_targets"]  # the head ran on the rest only
    alone = [s.score_texts([t])[0][0] for t in cases]
    assert all(abs(a[0] - b[0]) < TOL and a[1] == b[1] for a, b in zip(alone, scores, strict=True))


@pytest.mark.parametrize("window", ["exact", "laban"])
def test_shared_leading_keys_and_values_run_once(tiny_gpt2_dir, window):  # noqa: F811
    """Shuffles of WSJ documents (blocks of two sentences) that keep their first blocks: windows beginning with
    the same tokens take those positions' keys and values from one run in full and run only the rest, in
    batches that mix pasts of different lengths; the scores are those of running every window whole."""
    from incoherent.corpora.shuffle import shuffle_document

    documents = []
    for doc_id, sentences in sample_documents(min_sentences=6, max_sentences=8)[:4]:
        doc = {"id": doc_id, "source": "wsj", "sentences": sentences}
        documents.append(sentences)
        documents.extend(row["shuffled"] for row in shuffle_document(doc, 2, seed=0, permutations=8))
    cases = [" ".join(d) for d in documents]
    whole = scorer(tiny_gpt2_dir, window, batch_size=5)
    whole.share_bodies = False
    want, plain = whole.score_texts(cases)
    for minimum in (16, 2):
        shared = scorer(tiny_gpt2_dir, window, batch_size=5)
        shared.min_shared = minimum
        # keys and values kept for one root at a time: every root its own chunk
        shared.max_tokens = 1 if minimum == 2 else shared.max_tokens
        got, counters = shared.score_texts(cases)
        assert counters["shared_positions"] > 0
        assert counters["padded_tokens"] < plain["padded_tokens"]  # fewer positions run
        assert counters["forward_rows"] == plain["forward_rows"]
        assert all(abs(a[0] - b[0]) < TOL and a[1] == b[1] for a, b in zip(want, got, strict=True))
    masked_like = scorer(tiny_gpt2_dir, window)
    assert masked_like.share_bodies  # a GPT-2: on; masked LMs and other model types: off


def test_fused_gelu_gives_the_same_scores(tiny_gpt2_dir):  # noqa: F811
    plain = scorer(tiny_gpt2_dir)
    fused = scorer(tiny_gpt2_dir)
    assert fuse_activations(fused.model) == 1  # one layer, one MLP activation
    assert fuse_activations(fused.model) == 0
    want, _ = plain.score_texts(texts())
    got, _ = fused.score_texts(texts())
    assert all(abs(a[0] - b[0]) < 1e-6 and a[1] == b[1] for a, b in zip(got, want, strict=True))
    assert fuse_activations(LanguageModelScorer.load(tiny_gpt2_dir, device="cpu").model) == 0  # load() fused


def test_order_of_texts_does_not_change_scores(tiny_bert_dir):  # noqa: F811
    s = scorer(tiny_bert_dir)
    cases = texts()
    shuffled = cases[:]
    random.Random(1).shuffle(shuffled)
    one = dict(zip(cases, s.score_texts(cases)[0], strict=True))
    two = dict(zip(shuffled, s.score_texts(shuffled)[0], strict=True))
    assert all(abs(one[t][0] - two[t][0]) < TOL for t in cases)


def test_nothing_to_score_is_nan_with_zero_tokens(tiny_gpt2_dir):  # noqa: F811
    s = scorer(tiny_gpt2_dir, window="laban")
    [(score, tokens)], _ = s.score_texts(["The"])  # one token, no BOS in their tokenization: no prediction
    assert tokens == 0 and math.isnan(score)


@pytest.mark.e2e
def test_bad_models(tiny_gpt2_dir, tiny_bert_dir, tmp_path):  # noqa: F811
    from tests.tiny_model import build_model, build_tokenizer

    xlnet = build_model(str(tmp_path / "xlnet"), build_tokenizer(str(tmp_path / "xlnet")))
    with pytest.raises(
        InputError, match="no causal or masked language-model head .*XLNetForSequenceClassification"
    ):
        load_language_model(xlnet)
    with pytest.raises(InputError, match="--scorer masked: .* has no masked LM head .*GPT2LMHeadModel"):
        load_language_model(tiny_gpt2_dir, "masked")
    with pytest.raises(InputError, match="model directory does not exist"):
        load_language_model(str(tmp_path / "missing"))
