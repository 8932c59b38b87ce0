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
from itertools import chain

from incoherent.filters.lm_head import (
    activation_bytes_per_token,
    fuse_activations,
    head_rows,
    kv_bytes_per_position,
    output_head,
    token_nll,
)
from incoherent.filters.lm_load import CAUSAL, MASKED, load_language_model, model_positions
from incoherent.filters.lm_pieces import (
    MIN_SHARED_POSITIONS,
    Piece,
    Plan,
    assemble_losses,
    combine,
    shared_bodies,
    shared_prefixes,
)
from incoherent.filters.lm_windows import (
    JOINS,
    causal_windows,
    join_sentences,
    laban_causal_windows,
    laban_masked_windows,
    masked_windows,
)
from incoherent.filters.model import (
    ScoreStats,
    forward_with_halving,
    length_batches,
    resolve_device,
    resolve_dtype,
)
from incoherent.filters.sentence_tokens import joined_token_ids, tokenizes_by_parts
from incoherent.schemas.records import InputError

LOG = logging.getLogger("incoherent.filters")

WINDOWS = ("exact", "laban")
LABAN_MASKED_MAX = 512  # run_bidir_zeroshot.py's max_length
KV_BUDGET = 2  # keys and values kept for sharing: at most this many micro-batches' worth of positions
KV_MEMORY_SHARE = 0.25  # ... and at most this share of the free memory (GPU) or available RAM (CPU)
BATCH_MEMORY_SHARE = 0.5  # a micro-batch's activations: at most this share of the free memory or RAM
# Causal models whose base model takes position ids, a padding mask and past keys/values (a DynamicCache).
PAST_CAUSAL = {"gpt2", "llama", "mistral", "qwen2"}


def special_tokens_around(tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text (``[CLS]`` / ``[SEP]`` for BERT, none for GPT-2)."""
    text = "a b c"
    plain = tokenizer(text, add_special_tokens=False)["input_ids"]
    full = tokenizer(text)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    return [], []


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
        from incoherent.filters.hardware import free_memory

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
        from incoherent.filters.hardware import oom_errors, release_cached

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
