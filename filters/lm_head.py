"""The LM head and memory sizing of :mod:`filters.lm`: the log-softmax only on predicted positions, as a chunked
matmul + logsumexp + gold pick (:func:`token_nll`), and the bytes a micro-batch, its keys and values and one head
call may take.
"""

from __future__ import annotations

HEAD_ROWS_PER_THREAD = 128  # predicted positions per LM-head call on a CPU, per torch thread
HEAD_BYTES_CPU = 64 << 20  # at most this much of logits per LM-head call on a CPU
HEAD_MEMORY_SHARE = 0.125  # on a GPU, one LM-head call's logits take at most this share of the free memory
HEAD_ROWS_GPU_MIN, HEAD_ROWS_GPU_MAX = 256, 32768  # predicted positions per LM-head call on a GPU
# Models whose logits are their one head module applied to the base model's last hidden state.
HEAD_ON_HIDDEN = {"gpt2", "llama", "mistral", "qwen2", "bert", "roberta", "xlm-roberta", "camembert"}


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

    from incoherent.filters.hardware import free_memory, is_cuda

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
