"""Scoring texts with a causal or masked language model, for the zero-shot k-block shuffle test (Laban et al.,
2021): a model should give the original document a lower score than its block-shuffled versions.

A text's score is its mean negative log-likelihood per scored token, in nats (lower = more likely):

- ``causal``, ``window="exact"``: ``-1/n * sum_t log p(x_t | x_<t)``. The tokenizer's BOS token (when it has
  one) is prepended so the first token is scored. Texts longer than the model's positions are cut into
  strided windows (:func:`causal_windows`); each token is scored exactly once, by the window that first
  reaches it, so it sees at least ``window - stride`` tokens of context.
- ``masked``, ``window="exact"``: the pseudo-log-likelihood of Salazar et al. (2020),
  ``-1/n * sum_t log p(x_t | x_\\t)``: every token is masked once (one copy of the window per token) and
  predicted from the rest; the model's special tokens (``[CLS]``/``[SEP]``) are kept around every window.
  Long texts are cut into overlapping windows and each token is scored in the window where it sits most
  centrally (:func:`masked_windows`).
- ``window="laban"``: the released code of ``tingofurro/shuffle_test``, reproduced exactly for comparison with
  published numbers. Causal (``run_gpt2_zeroshot.py``): tokens of ``tokenizer(text)``, windows
  :func:`laban_causal_windows`, each window's mean loss over all its positions times ``end - i``, summed and
  divided by the token count (the log of their perplexity). Masked (``run_bidir_zeroshot.py``): ids
  ``tokenizer.encode(text)[1:-1]`` fed without special tokens, windows :func:`laban_masked_windows` of
  ``min(512, positions)`` tokens, every token of every window masked once, score the unweighted mean of the
  window means.

Every forward request is a :class:`Piece` (a window of ids, at most one masked position, the positions whose
predictions count). :meth:`LanguageModelScorer.score_texts` tokenizes all its texts in one call, pools
their pieces, runs identical pieces once (the shuffles of a document share the windows over blocks that stay
in place; a causal window that begins with another's tokens reuses its keys and values there,
:func:`shared_bodies`), sorts them by length into micro-batches (:func:`filters.model.length_batches`), runs them (a GPU
out-of-memory error halves the batch, :func:`filters.model.forward_with_halving`) and adds the losses up per
text. The LM head and the log-softmax run only on the predicted positions, as a chunked matmul + logsumexp +
gold pick (:func:`token_nll`; cache-sized chunks on a CPU, memory-sized on a GPU), never as full-vocabulary
logits of a whole batch; micro-batches and the keys and values kept for reuse are bounded by the free memory.
A text's score depends only on the pool it is scored with, which the pipeline makes deterministic.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

from filters.model import (
    ScoreStats,
    check_tokenizer_matches,
    check_weights,
    forward_with_halving,
    length_batches,
    load_config,
    load_pretrained,
    open_tokenizer,
    resolve_device,
    resolve_dtype,
)
from filters.sentence_tokens import joined_token_ids, tokenizes_by_parts
from schemas.records import InputError

LOG = logging.getLogger("incoherent.filters")

CAUSAL, MASKED = "causal", "masked"
SCORERS = ("auto", CAUSAL, MASKED)
WINDOWS = ("exact", "laban")
JOINS = {"space": " ", "newline": "\n"}
LABAN_MASKED_MAX = 512  # run_bidir_zeroshot.py's max_length
HEAD_ROWS_PER_THREAD = 128  # predicted positions per LM-head call on a CPU, per torch thread
HEAD_BYTES_CPU = 64 << 20  # at most this much of logits per LM-head call on a CPU
HEAD_MEMORY_SHARE = 0.125  # on a GPU, one LM-head call's logits take at most this share of the free memory
HEAD_ROWS_GPU_MIN, HEAD_ROWS_GPU_MAX = 256, 32768  # predicted positions per LM-head call on a GPU
MIN_SHARED_POSITIONS = 16  # a window reuses another's keys and values for at least this many leading tokens
KV_BUDGET = 2  # keys and values kept for sharing: at most this many micro-batches' worth of positions
KV_MEMORY_SHARE = 0.25  # ... and at most this share of the free memory (GPU) or available RAM (CPU)
BATCH_MEMORY_SHARE = 0.5  # a micro-batch's activations: at most this share of the free memory or RAM
# Causal models whose base model takes position ids, a padding mask and past keys/values (a DynamicCache).
PAST_CAUSAL = {"gpt2", "llama", "mistral", "qwen2"}
# Models whose logits are their one head module applied to the base model's last hidden state.
HEAD_ON_HIDDEN = {"gpt2", "llama", "mistral", "qwen2", "bert", "roberta", "xlm-roberta", "camembert"}
# Models whose position ids start after the padding index: usable positions = max_position_embeddings - pad - 1.
OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text", "xmod"}


def join_sentences(sentences: Sequence[str], join: str = "space") -> str:
    """The text a model reads: ``join_sentences(["A b.", "C."]) == "A b. C."`` (``newline``: ``"A b.\\nC."``)."""
    return JOINS[join].join(sentences)


# --------------------------------------------------------------------------------------------- windows


def causal_windows(length: int, window: int, stride: int) -> list[tuple[int, int, int]]:
    """``(begin, end, first)`` windows over ``length`` tokens: positions ``first..end-1`` are predicted from
    ``begin..position-1``; every position ``1..length-1`` is scored exactly once.

    >>> causal_windows(10, 4, 2)
    [(0, 4, 1), (2, 6, 4), (4, 8, 6), (6, 10, 8)]
    >>> causal_windows(3, 4, 2)
    [(0, 3, 1)]
    """
    if length < 2:
        return []
    end = min(window, length)
    out = [(0, end, 1)]
    while end < length:
        new_end = min(end + stride, length)
        out.append((max(0, new_end - window), new_end, end))
        end = new_end
    return out


def masked_windows(length: int, window: int, stride: int) -> list[tuple[int, int, int, int]]:
    """``(begin, end, lo, hi)`` windows over ``length`` tokens: tokens ``lo..hi-1`` are scored with context
    ``begin..end-1``; every token is scored exactly once, in the window where it is most central (the
    overlap of two windows is split at its middle).

    >>> masked_windows(10, 6, 2)
    [(0, 6, 0, 4), (2, 8, 4, 6), (4, 10, 6, 10)]
    >>> masked_windows(3, 6, 2)
    [(0, 3, 0, 3)]
    """
    if length <= window:
        return [(0, length, 0, length)] if length else []
    begins = list(range(0, length - window, stride)) + [length - window]
    cuts = [0] + [(begins[j + 1] + begins[j] + window) // 2 for j in range(len(begins) - 1)] + [length]
    return [(b, b + window, cuts[j], cuts[j + 1]) for j, b in enumerate(begins)]


def laban_causal_windows(length: int, max_length: int) -> list[tuple[int, int, int]]:
    """``(begin, end, weight)`` of ``run_gpt2_zeroshot.py``: ``stride = max_length // 2``, for ``i = 0, stride,
    ...``: ``begin = max(i + stride - max_length, 0)``, ``end = min(i + stride, length)``, ``weight = end - i``.

    >>> laban_causal_windows(5, 4)
    [(0, 2, 2), (0, 4, 2), (2, 5, 1)]
    """
    stride = max_length // 2
    return [
        (max(i + stride - max_length, 0), min(i + stride, length), min(i + stride, length) - i)
        for i in range(0, length, stride)
    ]


def laban_masked_windows(length: int, max_length: int) -> list[tuple[int, int]]:
    """``(begin, end)`` of ``run_bidir_zeroshot.py``'s ``compute_pseudologprob`` (same loop as the causal one).

    >>> laban_masked_windows(5, 4)
    [(0, 2), (0, 4), (2, 5)]
    """
    return [(b, e) for b, e, _ in laban_causal_windows(length, max_length)]


# --------------------------------------------------------------------------------------------- pieces


class Piece(NamedTuple):
    """One row of a forward pass: ``ids`` (shared between the masked copies of a window), the position to
    replace by the mask token (``-1``: none), and the targets: the predictions at positions ``start``,
    ``start + 1``, ... of the token ids ``gold`` count (their log-probabilities), all added to ``group`` of
    text ``text``. Every scorer's targets are such a run of consecutive positions. (A named tuple: a pool
    makes about a hundred thousand of them.)"""

    ids: tuple[int, ...]
    mask_at: int
    start: int
    gold: tuple[int, ...]
    text: int
    group: int


@dataclass(frozen=True)
class Plan:
    """How a text's losses become its score: ``mode`` exact (sum / tokens), laban-causal (per-group means
    weighted by ``weights``, / tokens) or laban-masked (mean of the group means)."""

    mode: str
    tokens: int
    weights: tuple[int, ...] = ()


def special_tokens_around(tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text (``[CLS]`` / ``[SEP]`` for BERT, none for GPT-2)."""
    text = "a b c"
    plain = tokenizer(text, add_special_tokens=False)["input_ids"]
    full = tokenizer(text)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    return [], []


def output_head(model):
    """The LM head of model types whose logits are exactly ``head(base_model(...).last_hidden_state)`` (so it
    can run on the scored positions only), else None (the whole forward pass is used)."""
    if getattr(model.config, "model_type", None) not in HEAD_ON_HIDDEN:
        return None
    heads = [m for _, m in model.named_children() if m is not model.base_model]
    return heads[0] if len(heads) == 1 else None


def head_rows(model, device, free_bytes: int | None = None) -> tuple[int, int | None]:
    """``(rows, vocabulary chunk)`` of one LM-head call: predicted positions per call, and the vocabulary
    entries per matmul (None: the whole vocabulary at once).

    On a CPU, :data:`HEAD_ROWS_PER_THREAD` per torch thread, fewer when their logits would pass
    :data:`HEAD_BYTES_CPU`. Measured with one and two threads on vocabularies of 4,000 (width 32), 30,522 (128)
    and 50,257 (768): 128-256 rows are within 10% of the best for all three. Fewer rows re-read a large head's
    weights too often (GPT-2 small: 16 rows ran at 40% of 256 rows' speed); more leave the logits out of cache.

    On a GPU, from the free memory (``free_bytes``, read when not given): as many rows as let their logits
    (float32, plus the model-dtype product) fill :data:`HEAD_MEMORY_SHARE` of it, between
    :data:`HEAD_ROWS_GPU_MIN` and :data:`HEAD_ROWS_GPU_MAX`; when even the minimum would not fit (a huge
    vocabulary on a full GPU), the vocabulary is cut into chunks instead (:func:`token_nll`)."""
    import torch

    from filters.hardware import free_memory, is_cuda

    vocab = int(getattr(model.config, "vocab_size", 0) or 1)
    if not is_cuda(device):
        return max(
            16, min(HEAD_ROWS_PER_THREAD * torch.get_num_threads(), HEAD_BYTES_CPU // (4 * vocab))
        ), None
    budget = int((free_memory(device) if free_bytes is None else free_bytes) * HEAD_MEMORY_SHARE)
    per_logit = 4 + 2 + 4  # float32 logits, the bf16/fp16 product, the exponentials of the logsumexp
    rows = budget // (per_logit * vocab)
    if rows >= HEAD_ROWS_GPU_MIN:
        return int(min(rows, HEAD_ROWS_GPU_MAX)), None
    return HEAD_ROWS_GPU_MIN, max(1024, budget // (per_logit * HEAD_ROWS_GPU_MIN))


def token_nll(hidden, head, gold, rows: int, vocab_chunk: int | None = None):
    """``-log softmax(head(hidden))[gold]`` of every row, float32, without materialising more than ``rows x
    vocab_chunk`` logits at once (the technique of Liger-Kernel's fused linear cross-entropy and of Cut
    Cross-Entropy, Wijmans et al. 2024, for inference: no gradient is kept).

    For each chunk of ``rows`` hidden states and (when ``head`` is a ``torch.nn.Linear``) each chunk of
    ``vocab_chunk`` rows of its weight: the logits ``h @ W_c^T + b_c`` in the model's dtype (bf16/fp16 matmuls
    accumulate in float32), read as float32, folded into a running ``logsumexp`` and, where the gold token
    falls in the chunk, its logit picked. The loss is ``logsumexp - gold logit``: what
    ``cross_entropy(head(hidden).float(), gold)`` computes, up to float32 rounding. A ``head`` that is not a
    plain linear layer (BERT's transform + decoder) runs whole on each chunk of rows.

    >>> import torch
    >>> head = torch.nn.Linear(4, 10)
    >>> h, g = torch.randn(6, 4), torch.tensor([0, 3, 9, 2, 2, 7])
    >>> want = torch.nn.functional.cross_entropy(head(h), g, reduction="none")
    >>> bool(torch.allclose(token_nll(h, head, g, rows=4, vocab_chunk=3), want, atol=1e-5))
    True
    """
    import torch

    n = hidden.shape[0]
    out = torch.empty(n, dtype=torch.float32, device=hidden.device)
    linear = isinstance(head, torch.nn.Linear)
    vocab = head.weight.shape[0] if linear else None
    step_v = vocab if not linear or vocab_chunk is None or vocab_chunk >= vocab else vocab_chunk
    for r in range(0, n, rows):
        h, g = hidden[r : r + rows], gold[r : r + rows]
        if not linear or step_v == vocab:
            logits = (head(h) if not linear else _logits(h, head.weight, head.bias)).float()
            lse = torch.logsumexp(logits, dim=-1)
            out[r : r + rows] = lse - logits.gather(1, g[:, None])[:, 0]
            continue
        # A running maximum and a running sum of exp(logit - maximum): the sum's relative error, not each
        # chunk's logaddexp rounding, sets the result's, so many small chunks stay as exact as one.
        top = torch.full((h.shape[0],), float("-inf"), dtype=torch.float32, device=h.device)
        total = torch.zeros(h.shape[0], dtype=torch.float32, device=h.device)
        picked = torch.zeros(h.shape[0], dtype=torch.float32, device=h.device)
        for v in range(0, vocab, step_v):
            bias = head.bias[v : v + step_v] if head.bias is not None else None
            logits = _logits(h, head.weight[v : v + step_v], bias).float()
            new_top = torch.maximum(top, logits.max(dim=-1).values)
            # a row whose logits are all -inf so far shifts by 0
            shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
            total = total * torch.exp(top - shift) + torch.exp(logits - shift[:, None]).sum(dim=-1)
            top = new_top
            inside = (g >= v) & (g < v + logits.shape[1])
            at = (g - v).clamp(0, logits.shape[1] - 1)
            picked = torch.where(inside, logits.gather(1, at[:, None])[:, 0], picked)
        out[r : r + rows] = torch.where(torch.isfinite(top), top, 0.0) + torch.log(total) - picked
    return out


_OUT_DTYPE_MM = [True]  # whether torch.mm(..., out_dtype=float32) works here (CUDA builds with bf16/fp16)


def _logits(h, weight, bias):
    """``h @ weight^T + bias``; on a GPU with bf16/fp16 weights, the float32 accumulator is kept (``torch.mm``
    with ``out_dtype``) instead of being rounded to the model's dtype, where this torch build allows it."""
    import torch

    if _OUT_DTYPE_MM[0] and h.is_cuda and h.dtype in (torch.bfloat16, torch.float16):
        try:
            out = torch.mm(h, weight.t(), out_dtype=torch.float32)
            return out + bias.float() if bias is not None else out
        except (RuntimeError, TypeError, NotImplementedError):
            _OUT_DTYPE_MM[0] = False
    return torch.nn.functional.linear(h, weight, bias)


def kv_bytes_per_position(config, dtype_bytes: int) -> int:
    """Bytes of keys and values one position takes over all layers (grouped-query attention: the KV heads)."""
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None) or 1
    hidden = getattr(config, "hidden_size", None) or getattr(config, "n_embd", None) or 1
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None) or 1
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    return int(2 * layers * kv_heads * head_dim * dtype_bytes)


def activation_bytes_per_token(config, dtype_bytes: int) -> int:
    """A rough upper bound of the memory one token of a micro-batch takes during an inference forward pass:
    its keys and values in every layer (kept when a window's are reused), a few hidden-width buffers and
    one MLP-width buffer of the layer running (SDPA attention needs no length-squared buffer)."""
    hidden = getattr(config, "hidden_size", None) or getattr(config, "n_embd", None) or 1
    inner = getattr(config, "intermediate_size", None) or getattr(config, "n_inner", None) or 4 * hidden
    return kv_bytes_per_position(config, dtype_bytes) + (8 * hidden + 2 * inner) * dtype_bytes


def fuse_activations(model) -> int:
    """Replace transformers' ``NewGELUActivation`` (``gelu_new``, GPT-2's tanh-approximated GELU written as
    five tensor operations) by its fused equivalent ``GELUTanh`` (``gelu_pytorch_tanh``: one kernel, the same
    formula; transformers documents them as equivalent up to rounding, scores move by about 1e-8). In a
    profile of the benchmark's tiny GPT-2 on a CPU it was 43% of the transformer body's time. Returns the
    number of modules replaced."""
    from transformers.activations import GELUTanh, NewGELUActivation

    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if type(child) is NewGELUActivation:
                setattr(module, name, GELUTanh())
                replaced += 1
    return replaced


def model_positions(config, model_dir: str) -> int:
    """Positions a model can attend over (RoBERTa-like models lose ``pad_token_id + 1`` of them)."""
    n = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    if not n:
        raise InputError(f"{model_dir}: the model config names no maximum length (n_positions)")
    if getattr(config, "model_type", None) in OFFSET_POSITIONS:
        n -= (getattr(config, "pad_token_id", None) or 0) + 1
    return int(n)


def scorer_kind(config, model_dir: str, requested: str = "auto") -> str:
    """``causal`` or ``masked`` from the model's recorded architectures (``--scorer auto``), checked."""
    if requested not in SCORERS:
        raise InputError(f"--scorer: unknown scorer {requested!r} (choose from {', '.join(SCORERS)})")
    architectures = getattr(config, "architectures", None) or []
    found = set()
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures):
        found.add(CAUSAL)
    if any(a.endswith("ForMaskedLM") for a in architectures):
        found.add(MASKED)
    names = ", ".join(architectures) or "none recorded"
    if not found:
        raise InputError(
            f"{model_dir}: no causal or masked language-model head (architectures: {names}); "
            "save a *ForCausalLM / *LMHeadModel or *ForMaskedLM model"
        )
    if requested == "auto":
        if len(found) > 1:
            raise InputError(f"{model_dir}: both causal and masked heads ({names}); pass --scorer")
        return found.pop()
    if requested not in found:
        raise InputError(
            f"--scorer {requested}: {model_dir} has no {requested} LM head (architectures: {names})"
        )
    return requested


def checked_language_model(model_dir: str, requested: str = "auto"):
    """``(config, tokenizer, kind)`` after the cheap checks (weights, LM head, tokenizer; no weights loaded)."""
    check_weights(model_dir)
    config = load_config(model_dir)
    kind = scorer_kind(config, model_dir, requested)
    tokenizer = open_tokenizer(model_dir)
    check_tokenizer_matches(tokenizer, config, model_dir)
    if kind == MASKED and tokenizer.mask_token_id is None:
        raise InputError(f"{model_dir}: the tokenizer has no mask token, the masked scorer needs one")
    return config, tokenizer, kind


def check_language_model(model_dir: str, requested: str = "auto") -> str:
    """The scorer kind of a model directory, checked before a pipeline starts."""
    return checked_language_model(model_dir, requested)[2]


def load_language_model(model_dir: str, requested: str = "auto", device: str = "cpu", dtype=None):
    """``(model, tokenizer, kind)`` of a causal or masked LM directory, validated, in eval mode on ``device``."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    _, tokenizer, kind = checked_language_model(model_dir, requested)
    auto = AutoModelForCausalLM if kind == CAUSAL else AutoModelForMaskedLM
    model = load_pretrained(auto, model_dir, f"the {kind} LM", dtype, tolerated=("embed", "lm_head"))
    model.to(device)
    model.eval()
    return model, tokenizer, kind


class LanguageModelScorer:
    """``score_texts([text, ...]) -> ([(score, tokens), ...], counters)`` with a causal or masked LM.

    ``stride`` (exact windows only) defaults to half the window. ``max_tokens`` bounds the padded tokens of a
    micro-batch (default ``batch_size * window``).
    """

    def __init__(
        self,
        model,
        tokenizer,
        kind: str,
        window: str = "exact",
        device: str = "cpu",
        batch_size: int = 16,
        stride: int | None = None,
        max_tokens: int | None = None,
        positions: int | None = None,
    ):
        if window not in WINDOWS:
            raise InputError(f"--window: unknown window mode {window!r} (choose from {', '.join(WINDOWS)})")
        self.model, self.tokenizer, self.kind, self.window = model, tokenizer, kind, window
        self.device, self.batch_size = device, batch_size
        self.positions = positions or model_positions(model.config, "model")
        if kind == MASKED:
            self._prefix, self._suffix = special_tokens_around(tokenizer)
            self.span = self.positions - len(self._prefix) - len(self._suffix)
            if window == "laban":
                self.span = min(LABAN_MASKED_MAX, self.positions)
        else:
            self._prefix, self._suffix = [], []
            self.span = self.positions
        if self.span < 2:
            raise InputError(f"model: only {self.positions} positions, too few to score text")
        self.stride = stride or max(1, self.span // 2)
        if not 0 < self.stride < self.span:
            raise InputError(f"--stride: must be between 1 and {self.span - 1}, got {self.stride}")
        from filters.hardware import free_memory

        free = free_memory(device)
        dtype_bytes = next(model.parameters()).element_size()
        if max_tokens is None:  # batch_size windows, fewer when their activations would not fit in memory
            fits = int(free * BATCH_MEMORY_SHARE) // activation_bytes_per_token(model.config, dtype_bytes)
            max_tokens = max(self.positions, min(batch_size * self.positions, fits))
        self.max_tokens = max_tokens
        # keys and values kept for reuse (positions): at most KV_MEMORY_SHARE of the memory free now
        self.kv_positions = max(
            self.positions, int(free * KV_MEMORY_SHARE) // kv_bytes_per_position(model.config, dtype_bytes)
        )
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.mask_id = tokenizer.mask_token_id
        self._head = output_head(model)
        self.head_rows, self.vocab_chunk = head_rows(model, device)
        self.share_bodies = (
            kind == CAUSAL
            and self._head is not None
            and getattr(model.config, "model_type", None) in PAST_CAUSAL
        )
        self.min_shared = MIN_SHARED_POSITIONS
        # exact windows read the ids of the text alone, which the sentences' ids make up for most tokenizers
        self.by_parts = window == "exact" and tokenizes_by_parts(tokenizer)

    @classmethod
    def load(
        cls,
        model_dir: str,
        scorer: str = "auto",
        window: str = "exact",
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 16,
        stride: int | None = None,
    ) -> LanguageModelScorer:
        resolved = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, resolved)
        model, tokenizer, kind = load_language_model(model_dir, scorer, resolved, torch_dtype)
        fuse_activations(model)
        LOG.info("loaded %s (%s LM) on %s (%s)", model_dir, kind, resolved, torch_dtype)
        positions = model_positions(model.config, model_dir)
        return cls(model, tokenizer, kind, window, resolved, batch_size, stride, positions=positions)

    # ----------------------------------------------------------------------------------------- plans

    def token_ids(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        """The ids each text is scored on, tokenized in one call: exact windows ``tokenizer(text,
        add_special_tokens=False)``; laban causal ``tokenizer(text)``; laban masked ``tokenizer.encode(text)
        [1:-1]`` (their ``[CLS]``/``[SEP]`` stripped)."""
        if not texts:
            return []
        if self.window == "exact":
            return [tuple(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]
        encoded = self.tokenizer(list(texts))["input_ids"]
        if self.kind == CAUSAL:
            return [tuple(ids) for ids in encoded]
        return [tuple(ids[1:-1]) for ids in encoded]

    def plan(self, text: str, index: int = 0, ids: tuple[int, ...] | None = None) -> tuple[list[Piece], Plan]:
        """The forward requests of one text and how to combine their losses (``ids``: the text's
        :meth:`token_ids`, when already known)."""
        if ids is None:
            (ids,) = self.token_ids([text])
        if self.window == "laban":
            if self.kind == CAUSAL:
                windows = laban_causal_windows(len(ids), self.span)
                pieces = [
                    Piece(ids[b:e], -1, 0, ids[b + 1 : e], index, g) for g, (b, e, _) in enumerate(windows)
                ]
                return pieces, Plan("laban-causal", len(ids), tuple(w for _, _, w in windows))
            pieces = [
                Piece(ids[b:e], t - b, t - b, (ids[t],), index, g)
                for g, (b, e) in enumerate(laban_masked_windows(len(ids), self.span))
                for t in range(b, e)
            ]
            return pieces, Plan("laban-masked", len(ids))
        if self.kind == CAUSAL:
            bos = self.tokenizer.bos_token_id
            seq = ((bos,) if bos is not None else ()) + ids
            pieces = [
                Piece(seq[b:e], -1, first - 1 - b, seq[first:e], index, 0)
                for b, e, first in causal_windows(len(seq), self.span, self.stride)
            ]
            return pieces, Plan("exact", max(len(seq) - 1, 0))
        pre, post, pieces = tuple(self._prefix), tuple(self._suffix), []
        for b, e, lo, hi in masked_windows(len(ids), self.span, self.stride):
            wrapped = pre + ids[b:e] + post
            for t in range(lo, hi):
                at = len(pre) + t - b
                pieces.append(Piece(wrapped, at, at, (ids[t],), index, 0))
        return pieces, Plan("exact", len(ids))

    # ----------------------------------------------------------------------------------------- forward

    def forward(self, pieces: Sequence[Piece]) -> list:
        """Negative log-likelihoods of every piece's targets (one forward pass over the padded pieces), one
        float64 array per piece."""
        return [nll for nll, _ in self._run([(p, 0, None, 0) for p in pieces])]

    def _run(self, items: Sequence[tuple]) -> list[tuple]:
        """One forward pass over ``(piece, skip, past, keep)`` items: the piece's first ``skip`` positions are
        not run, their keys and values are ``past`` (per layer ``(keys, values)`` of shape ``[heads, >= skip,
        head dim]``, from a piece with the same leading tokens); ``keep``: how many leading positions' keys
        and values to return. Returns ``(nll, kept)`` per item (``kept`` None when ``keep`` is 0).

        Pieces with a past are left-padded to the longest past and masked, so one batch mixes pasts of any
        length. The LM head (where it can run apart, :func:`output_head`) and the log-softmax run only on the
        predicted positions, :attr:`head_rows` of them at a time (:func:`head_rows`: on a CPU a whole batch of
        logits does not fit in the cache; the result is the same)."""
        import numpy as np
        import torch

        pieces = [item[0] for item in items]
        skips = np.fromiter((item[1] for item in items), np.int64, len(items))
        lengths = np.fromiter((len(p.ids) for p in pieces), np.int64, len(pieces)) - skips
        width = int(lengths.max())
        valid = np.arange(width)[None, :] < lengths[:, None]
        ids = np.full((len(pieces), width), self.pad_id, dtype=np.int64)
        run_ids = (p.ids[s:] if s else p.ids for p, s in zip(pieces, skips.tolist(), strict=True))
        ids[valid] = np.fromiter(chain.from_iterable(run_ids), np.int64, int(lengths.sum()))
        masked = [(r, p.mask_at) for r, p in enumerate(pieces) if p.mask_at >= 0]  # masked LMs: no skips
        if masked:
            ids[tuple(np.array(masked).T)] = self.mask_id
        counts = np.fromiter((len(p.gold) for p in pieces), np.int64, len(pieces))
        rows = np.repeat(np.arange(len(pieces)), counts)
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        starts = np.fromiter((p.start for p in pieces), np.int64, len(pieces)) - skips
        cols = np.repeat(starts, counts) + offsets
        gold = np.fromiter(chain.from_iterable(p.gold for p in pieces), np.int64, int(counts.sum()))
        inputs = {"input_ids": torch.from_numpy(ids).to(self.device)}
        past = int(skips.max())
        if past:
            inputs.update(self._past_inputs(items, skips, lengths, width, past))
        elif self.kind != CAUSAL and (lengths < width).any():
            # A causal model needs no padding mask: the padding sits after every real token (right padding),
            # where causal attention never looks, and its outputs are never read. Without a mask the model
            # runs its causal attention kernel (SDPA's is_causal path) instead of a masked one.
            inputs["attention_mask"] = torch.from_numpy(valid.astype(np.int64)).to(self.device)
        keep = [item[3] for item in items]
        if self.share_bodies:
            inputs["use_cache"] = any(keep)
        rows_t, cols_t = torch.from_numpy(rows).to(self.device), torch.from_numpy(cols).to(self.device)
        gold_t = torch.from_numpy(gold).to(self.device)
        kept: list = [None] * len(items)
        with torch.inference_mode():
            if self._head is not None:  # the LM head only where a prediction counts
                out = self.model.base_model(**inputs)
                picked = out.last_hidden_state[rows_t, cols_t]
                if any(keep):  # pieces run whole (no past): their positions start at 0
                    layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
                    kept = [
                        [(k[r, :, :n].clone(), v[r, :, :n].clone()) for k, v in layers] if n else None
                        for r, n in enumerate(keep)
                    ]
                del out
            else:
                picked = self.model(**inputs).logits[rows_t, cols_t]
            if self._head is not None:
                nll = token_nll(picked, self._head, gold_t, self.head_rows, self.vocab_chunk)
            else:  # the model's own logits, already whole: log-softmax in chunks of rows
                nll = token_nll(picked, torch.nn.Identity(), gold_t, self.head_rows)
        flat = nll.cpu().numpy().astype(np.float64)
        return list(zip(np.split(flat, np.cumsum(counts)[:-1]), kept, strict=True))

    def _past_inputs(self, items, skips, lengths, width: int, past: int) -> dict:
        """Position ids, padding mask and a ``DynamicCache`` for a batch whose pieces continue pasts of
        ``skips`` positions, left-padded to ``past``."""
        import numpy as np
        import torch
        from transformers import DynamicCache

        positions = np.minimum(skips[:, None] + np.arange(width)[None, :], self.positions - 1)
        column = np.arange(past + width)[None, :]
        attention = (column >= past - skips[:, None]) & (column < past + lengths[:, None])
        layers = []
        for layer in range(len(next(item[2] for item in items if item[1]))):
            some = next(item[2][layer][0] for item in items if item[1])
            keys = some.new_zeros((len(items), some.shape[0], past, some.shape[2]))
            values = torch.zeros_like(keys)
            for r, (_, skip, kv, _) in enumerate(items):
                if skip:
                    keys[r, :, past - skip :] = kv[layer][0][:, :skip]
                    values[r, :, past - skip :] = kv[layer][1][:, :skip]
            layers.append((keys, values))
        return {
            "position_ids": torch.from_numpy(positions).to(self.device),
            "attention_mask": torch.from_numpy(attention.astype(np.int64)).to(self.device),
            "past_key_values": DynamicCache(layers),
        }

    def _shrink(self) -> None:
        self.max_tokens = max(self.max_tokens // 2, self.positions)
        self.batch_size = max(1, self.batch_size // 2)

    def _alone(self, items: list, stats: ScoreStats) -> list:
        """One item that ran out of memory even alone: run it without the keys and values it reuses (its
        whole window; counter ``oom_past_dropped``), then with ever smaller LM-head chunks (at least 16 rows;
        ``oom_head_halved``). The scores are the same; an out-of-memory error that survives it all is raised."""
        from filters.hardware import oom_errors, release_cached

        piece, skip, _, keep = items[0]
        whole = [(piece, 0, None, keep)]
        if skip:
            stats.extra["oom_past_dropped"] = stats.extra.get("oom_past_dropped", 0) + 1
            try:
                return self._run(whole)
            except oom_errors():
                pass
            release_cached(self.device)
        while self.head_rows > 16:
            self.head_rows //= 2
            stats.extra["oom_head_halved"] = stats.extra.get("oom_head_halved", 0) + 1
            try:
                return self._run(whole)
            except oom_errors():
                pass
            release_cached(self.device)
        return self._run(whole)

    def score_texts(self, texts: Sequence[str]) -> tuple[list[tuple[float, int]], dict[str, int]]:
        """``(score, tokens)`` of every text, in input order, and counters (``texts``, ``forward_rows``: rows
        run, ``shared_rows``: rows of a text that an identical row of the pool served, ``shared_targets``:
        predictions a row took from another row with the same leading tokens (causal models), ``batches``,
        ``padded_tokens``, ``oom_retries``). A text with nothing to score gets ``(nan, 0)``."""
        return self._score(texts, self.token_ids(texts))

    def score_documents(
        self, documents: Sequence[Sequence[str]], join: str = "space"
    ) -> tuple[list[tuple[float, int]], dict[str, int]]:
        """:meth:`score_texts` of ``join_sentences(document, join)`` for every document (a list of sentences),
        the same scores. With exact windows and a tokenizer that :func:`filters.sentence_tokens.
        tokenizes_by_parts`, each distinct sentence of the pool is tokenized once (counter
        ``tokenized_by_parts``: texts); otherwise, or when the guard disagrees, every text is tokenized whole
        (``tokenized_whole``)."""
        texts = [join_sentences(d, join) for d in documents]
        if not self.by_parts:
            scores, counters = self.score_texts(texts)
            counters["tokenized_whole"] = len(texts)
            return scores, counters
        ids, by_parts = joined_token_ids(self.tokenizer, documents, JOINS[join])
        scores, counters = self._score(texts, ids)
        counters["tokenized_by_parts" if by_parts else "tokenized_whole"] = len(texts)
        if not by_parts:
            LOG.warning("the tokenizer's ids of a text differ from its sentences' ids: texts tokenized whole")
        return scores, counters

    def _score(
        self, texts: Sequence[str], token_ids: Sequence[tuple[int, ...]]
    ) -> tuple[list[tuple[float, int]], dict[str, int]]:
        stats = ScoreStats()
        pieces: list[Piece] = []
        plans: list[Plan] = []
        for i, (text, ids) in enumerate(zip(texts, token_ids, strict=True)):
            text_pieces, plan = self.plan(text, i, ids)
            pieces.extend(text_pieces)
            plans.append(plan)
        # Identical rows are run once: the shuffles of a document that keep a block at the same place (and
        # its original) share the windows over it.
        rows: dict[tuple, int] = {}
        slots = [rows.setdefault((p.ids, p.mask_at, p.start, p.gold), len(rows)) for p in pieces]
        distinct = [None] * len(rows)
        for piece, slot in zip(pieces, slots, strict=True):
            distinct[slot] = distinct[slot] or piece
        # A causal model's prediction at a position depends only on the tokens up to it: rows that begin
        # with the same tokens (a shuffle that keeps the first blocks in place, and its original) predict
        # those positions once; the LM head runs only on the rest.
        sources = shared_prefixes(distinct) if self.kind == CAUSAL else [None] * len(distinct)
        runs = [
            p if src is None else Piece(p.ids, p.mask_at, p.start + src[1], p.gold[src[1] :], p.text, p.group)
            for p, src in zip(distinct, sources, strict=True)
        ]
        todo = [i for i, p in enumerate(runs) if p.gold]
        pending = [runs[i] for i in todo]
        # Windows that begin with the same tokens have the same keys and values there: a window whose
        # leading tokens another one runs in full reuses them and runs only the rest.
        bodies = shared_bodies(pending, self.min_shared) if self.share_bodies else [None] * len(pending)
        keep = [0] * len(pending)
        dependents: dict[int, list[int]] = {}
        for j, body in enumerate(bodies):
            if body is not None:
                keep[body[0]] = max(keep[body[0]], body[1])
                dependents.setdefault(body[0], []).append(j)
        results: list = [None] * len(pending)
        kept: dict[int, list] = {}

        def run(indices: list[int]) -> None:
            items = [
                (pending[j], *((bodies[j][1], kept[bodies[j][0]]) if bodies[j] else (0, None)), keep[j])
                for j in indices
            ]
            lengths = [len(item[0].ids) - item[1] for item in items]
            for group in length_batches(lengths, self.batch_size, self.max_tokens):
                stats.padded_tokens += max(lengths[i] for i in group) * len(group)
                batch = [items[i] for i in group]
                done = forward_with_halving(
                    self._run, batch, stats, self._shrink, lambda one: self._alone(one, stats), self.device
                )
                for i, (nll, kv) in zip(group, done, strict=True):
                    results[indices[i]] = nll
                    if kv is not None:
                        kept[indices[i]] = kv

        run([j for j in range(len(pending)) if bodies[j] is None and not keep[j]])
        roots = [j for j in range(len(pending)) if keep[j]]
        at = 0
        while at < len(roots):  # a few micro-batches' worth of shared keys and values at a time
            chunk, budget = [], min(KV_BUDGET * self.max_tokens, self.kv_positions)
            while at < len(roots) and (not chunk or budget >= keep[roots[at]]):
                budget -= keep[roots[at]]
                chunk.append(roots[at])
                at += 1
            run(chunk)
            run([d for r in chunk for d in dependents[r]])
            kept.clear()
        own: list = [None] * len(distinct)
        for i, nll in zip(todo, results, strict=True):
            own[i] = nll
        losses = assemble_losses(distinct, sources, own)
        sums: list[dict[int, list[float]]] = [{} for _ in texts]
        for piece, slot in zip(pieces, slots, strict=True):
            nll = losses[slot]
            acc = sums[piece.text].setdefault(piece.group, [0.0, 0])
            acc[0] += float(nll.sum())
            acc[1] += len(nll)
        scores = [combine(plan, groups_of) for plan, groups_of in zip(plans, sums, strict=True)]
        stats.scored = len(texts)
        counters = stats.as_counters()
        counters["forward_rows"] = len(todo)
        counters["shared_rows"] = len(pieces) - len(todo)
        counters["shared_targets"] = sum(src[1] for src in sources if src is not None)
        counters["shared_positions"] = sum(body[1] for body in bodies if body is not None)
        counters.update(stats.extra)
        return scores, counters


def shared_prefixes(pieces: Sequence[Piece]) -> list[tuple[int, int] | None]:
    """For each causal piece, ``(j, n)``: its first ``n`` targets equal targets of piece ``j`` (an earlier
    piece in sorted order, whose own leading targets may come from another), or None.

    A causal piece predicts, at window position ``c``, its token ``c + 1`` from tokens ``0..c``; two pieces
    whose ids agree on their first ``L`` tokens make the same predictions at positions ``c < L - 1``. Pieces
    are sorted by their ids, so each one's longest common prefix with any earlier piece is the one with its
    predecessor; a piece takes the shared targets from it when the predecessor's targets start no later.

    >>> a = Piece((1, 2, 3, 4), -1, 0, (2, 3, 4), 0, 0)
    >>> b = Piece((1, 2, 3, 9, 9), -1, 0, (2, 3, 9, 9), 1, 0)
    >>> shared_prefixes([a, b])
    [None, (0, 2)]
    >>> shared_prefixes([a, Piece((1, 2, 3), -1, 0, (2, 3), 2, 0)])  # all of a prefix's targets
    [(1, 2), None]
    """
    order = sorted(range(len(pieces)), key=lambda i: pieces[i].ids)
    sources: list[tuple[int, int] | None] = [None] * len(pieces)
    for prev, cur in zip(order, order[1:], strict=False):
        p, q = pieces[prev], pieces[cur]
        if p.start > q.start or p.mask_at >= 0 or q.mask_at >= 0:
            continue
        common = common_prefix(p.ids, q.ids)
        # q's positions start .. common - 2 are predicted the same way by p, where p has targets there
        n = min(common - 1, p.start + len(p.gold)) - q.start
        n = min(n, len(q.gold))
        offset = q.start - p.start
        if n > 0 and q.gold[:n] == p.gold[offset : offset + n]:
            sources[cur] = (prev, n)
    return sources


def shared_bodies(
    pieces: Sequence[Piece], minimum: int = MIN_SHARED_POSITIONS
) -> list[tuple[int, int] | None]:
    """For each causal piece, ``(j, n)``: piece ``j``, run in full, begins with the same ``n`` tokens, so its
    keys and values serve the piece's first ``n`` positions; or None (run in full). ``n`` is at least
    ``minimum`` and stops before the piece's first target (whose hidden state is needed) and its last token.

    Pieces are sorted by their ids; a piece's common prefix with its predecessor bounds the one with the
    predecessor's own source, so every shared piece points at a piece run in full.

    >>> a = Piece((1, 2, 3, 4, 5), -1, 0, (2, 3, 4, 5), 0, 0)
    >>> b = Piece((1, 2, 3, 4, 9, 9), -1, 3, (9, 9), 1, 0)
    >>> c = Piece((1, 2, 3, 7), -1, 2, (7,), 2, 0)
    >>> shared_bodies([a, b, c], minimum=2)
    [None, (0, 3), (0, 2)]
    """
    order = sorted(range(len(pieces)), key=lambda i: pieces[i].ids)
    out: list[tuple[int, int] | None] = [None] * len(pieces)
    reach = [len(p.ids) for p in pieces]  # common prefix with the piece's source (its length for a source)
    for prev, cur in zip(order, order[1:], strict=False):
        p, q = pieces[prev], pieces[cur]
        if p.mask_at >= 0 or q.mask_at >= 0:
            continue
        common = min(common_prefix(p.ids, q.ids), reach[prev])
        n = min(common, q.start, len(q.ids) - 1)
        if n >= minimum:
            out[cur], reach[cur] = (prev if out[prev] is None else out[prev][0], n), common
    return out


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading ids ``a`` and ``b`` share: ``common_prefix((1, 2, 3), (1, 2, 9)) == 2``."""
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common


def assemble_losses(pieces: Sequence[Piece], sources: Sequence, own: Sequence) -> list:
    """Every piece's target losses: the shared leading ones from its source piece, then its own."""
    import numpy as np

    empty = np.empty(0)
    losses: list = [None] * len(pieces)
    for first in range(len(pieces)):
        chain, i = [], first  # the piece, its source, its source's source ... down to one already known
        while losses[i] is None and sources[i] is not None:
            chain.append(i)
            i = sources[i][0]
        if losses[i] is None:
            losses[i] = own[i] if own[i] is not None else empty
        for k in reversed(chain):
            j, n = sources[k]
            offset = pieces[k].start - pieces[j].start
            shared = losses[j][offset : offset + n]
            losses[k] = np.concatenate([shared, own[k]]) if own[k] is not None else shared
    return losses


def combine(plan: Plan, groups: dict[int, list[float]]) -> tuple[float, int]:
    """A text's ``(score, tokens)`` from the ``[loss sum, count]`` of each group of its pieces."""
    nan = float("nan")
    if plan.mode == "exact":
        total, count = (sum(v[0] for v in groups.values()), sum(v[1] for v in groups.values()))
        return (total / count, count) if count else (nan, 0)
    if plan.mode == "laban-causal":
        if not groups or any(groups.get(g, [0, 0])[1] == 0 for g in range(len(plan.weights))):
            return nan, 0  # a one-token text: their loss is a mean over no positions
        weighted = sum(groups[g][0] / groups[g][1] * w for g, w in enumerate(plan.weights))
        return weighted / plan.tokens, plan.tokens
    means = [groups[g][0] / groups[g][1] for g in sorted(groups)]
    return (sum(means) / len(means), plan.tokens) if means else (nan, 0)
