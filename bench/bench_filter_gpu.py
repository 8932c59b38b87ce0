"""Benchmark the adversarial filter's scoring: length bucketing + bf16 versus a naive baseline.

Scores candidate documents (3-8 sentences, a candidate in place at a random non-opening position, built
from the bundled WSJ and CNN samples, or from an intruder build with ``--data``) with an XLNet classifier of
XLNet-Large sizes (``XLNetConfig()`` defaults: d_model 1024, 24 layers, 16 heads, vocab 32000), randomly
initialised (timing only; no download). Three runs, one after another on the same model and inputs:

- **plain transformers** (the baseline): a loop written here, as a user would write it without our code: the
  model's own tokenizer on (sentence, document) pairs with ``padding="max_length"`` (512) and
  ``truncation="only_second"``, batches of ``--batch-size`` (16) in arrival order, fp32,
  ``torch.inference_mode()``, softmax of the logits;
- **naive**: our :class:`filters.model.ScoringModel` and :func:`filters.task.encode` with ``bucket=False,
  pad_to_max=True``: fp32, every input padded to ``--max-length``, batches of ``--batch-size`` in arrival
  order (it isolates what bucketing and bf16 add on top of our encoding);
- **optimised**: bf16 (fp16 where bf16 is unsupported), pools of ``batch_size * 8`` candidates (what the
  Beam handler receives from ``BatchElements``) sorted by token length into micro-batches of at most
  ``batch_size * max_length`` padded tokens.

Prints documents/second of each, the ratios of the optimised run to the plain-transformers baseline (target
>= 4x on GPU) and to the naive one, peak GPU memory, the largest score differences, and writes a JSON report
with ``--out``.

    python bench/bench_filter_gpu.py --documents 4096 --out bench/filter_gpu.json     # on a CUDA machine
    python bench/bench_filter_gpu.py --smoke                                           # tiny, CPU, seconds

The tokenizer is a Unigram model trained on the samples (about as many tokens per word as XLNet's own
SentencePiece model on news text); pass ``--tokenizer DIR`` to use a real one (e.g. a local copy of
``xlnet-large-cased``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

POOL_FACTOR = 8  # as filters.handler.DEFAULT_POOL_FACTOR


def candidate_documents(n: int, seed: int, data_dir: str | None) -> list[tuple[list[str], int]]:
    """``n`` (sentences, replaced_index) pairs: documents of 3-8 sentences with a foreign sentence in place."""
    rng = random.Random(seed)
    if data_dir:
        from incoherent.filters.data import read_split

        pool = [list(r["sentences"]) for r in read_split(data_dir, "train") if len(r["sentences"]) >= 2]
    else:
        from incoherent.sources.sentences import split_sentences
        from tests.tiny_model import sample_documents, sample_texts

        pool = [s for _, s in sample_documents(3, 30)]
        pool += [split_sentences(t) for t in sample_texts()[-48:]]  # the CNN stories
        pool = [s for s in pool if len(s) >= 3]
    out = []
    for _ in range(n):
        doc = rng.choice(pool)
        length = min(len(doc), rng.randint(3, 8))
        sentences = list(doc[:length])
        donor = rng.choice(pool)
        index = rng.randrange(1, length)
        sentences[index] = donor[rng.randrange(1, len(donor))]
        out.append((sentences, index))
    return out


def build_tokenizer(path: str | None, vocab_size: int):
    from transformers import AutoTokenizer

    if path:
        return AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    import tests.tiny_model as tiny

    tiny.VOCAB_SIZE = vocab_size
    return tiny.build_tokenizer(tempfile.mkdtemp(prefix="bench-tokenizer-"))


def build_model(smoke: bool, vocab_size: int, seed: int):
    import torch
    from transformers import XLNetConfig, XLNetForSequenceClassification

    torch.manual_seed(seed)
    if smoke:
        config = XLNetConfig(vocab_size=vocab_size, d_model=32, n_layer=2, n_head=2, d_inner=64, num_labels=2)
    else:
        config = XLNetConfig(vocab_size=32000, num_labels=2)  # XLNet-Large sizes
    config.use_mems_eval = False
    model = XLNetForSequenceClassification(config)
    model.eval()
    return model, config


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def timed_run(scorer, items, pool: int, device: str) -> dict:
    """Score ``items`` in pools of ``pool`` (as the Beam handler receives them); time and peak memory."""
    import torch

    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    _sync(device)
    started = time.perf_counter()
    scores, totals = [], {}
    for start in range(0, len(items), pool):
        got, counters = scorer.score(items[start : start + pool])
        scores.extend(got)
        for k, v in counters.items():
            totals[k] = totals.get(k, 0) + v
    _sync(device)
    seconds = time.perf_counter() - started
    result = {
        "seconds": round(seconds, 3),
        "documents_per_second": round(len(items) / seconds, 2),
        "counters": totals,
        "padding_share": round(
            1 - sum(len(e.input_ids) for e in scorer.encode(items)) / max(1, totals["padded_tokens"]), 4
        ),
    }
    if device == "cuda":
        result["peak_gpu_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    return result, scores


def plain_transformers_run(model, tokenizer, items, batch_size: int, max_length: int, device: str) -> tuple:
    """The baseline: a plain transformers scoring loop (fp32, padded to ``max_length``, arrival order)."""
    import torch

    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    _sync(device)
    started = time.perf_counter()
    scores = []
    for start in range(0, len(items), batch_size):
        chunk = items[start : start + batch_size]
        batch = tokenizer(
            [sentences[i] for sentences, i in chunk],
            [" ".join(sentences) for sentences, _ in chunk],
            padding="max_length",
            truncation="only_second",
            max_length=max_length,
            return_tensors="pt",
        ).to(device)
        with torch.inference_mode():
            logits = model(**batch).logits
        scores.extend(torch.softmax(logits.float(), dim=-1)[:, 1].cpu().tolist())
    _sync(device)
    seconds = time.perf_counter() - started
    result = {"seconds": round(seconds, 3), "documents_per_second": round(len(items) / seconds, 2)}
    if device == "cuda":
        result["peak_gpu_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    return result, scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny model on the CPU, a few dozen documents")
    parser.add_argument("--documents", type=int, default=2048, help="candidate documents to score (2048)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    parser.add_argument("--dtype", default="auto", choices=("auto", "bfloat16", "float16", "float32"))
    parser.add_argument(
        "--tokenizer", default=None, help="tokenizer directory (default: trained on the samples)"
    )
    parser.add_argument("--vocab-size", type=int, default=8000, help="size of the sample-trained tokenizer")
    parser.add_argument("--data", default=None, help="take documents from this intruder build's train split")
    parser.add_argument("--warmup", type=int, default=32, help="documents scored before timing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the report as JSON here")
    args = parser.parse_args(argv)

    import torch

    from incoherent.filters.model import ScoringModel, resolve_device, resolve_dtype

    if args.smoke:
        args.documents, args.max_length, args.warmup = min(args.documents, 64), min(args.max_length, 256), 4
    device = resolve_device("cpu" if args.smoke and args.device == "auto" else args.device)
    fast_dtype = (
        resolve_dtype(args.dtype, device) if args.dtype != "auto" or device == "cuda" else torch.bfloat16
    )
    tokenizer = build_tokenizer(args.tokenizer, args.vocab_size)
    items = candidate_documents(args.documents + args.warmup, args.seed, args.data)
    warm, items = items[: args.warmup], items[args.warmup :]
    model, config = build_model(args.smoke, len(tokenizer), args.seed)
    lengths = [
        len(e.input_ids) for e in ScoringModel(model, tokenizer, "cpu", 1, args.max_length).encode(items)
    ]
    pool = args.batch_size * POOL_FACTOR

    model.to(device, dtype=torch.float32)
    plain_transformers_run(model, tokenizer, warm, args.batch_size, args.max_length, device)
    plain_result, plain_scores = plain_transformers_run(
        model, tokenizer, items, args.batch_size, args.max_length, device
    )
    naive = ScoringModel(
        model, tokenizer, device, args.batch_size, args.max_length, bucket=False, pad_to_max=True
    )
    naive.score(warm)
    naive_result, naive_scores = timed_run(naive, items, args.batch_size, device)

    model.to(device, dtype=fast_dtype)
    fast = ScoringModel(model, tokenizer, device, args.batch_size, args.max_length)
    fast.score(warm)
    fast_result, fast_scores = timed_run(fast, items, pool, device)

    report = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "device": torch.cuda.get_device_name(0)
        if device == "cuda"
        else f"CPU ({platform.processor() or 'unknown'}, {torch.get_num_threads()} threads)",
        "torch": torch.__version__,
        "model": "XLNet tiny (smoke)"
        if args.smoke
        else "XLNet-Large sizes, random init (d_model 1024, 24 layers, 16 heads)",
        "parameters_millions": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "documents": len(items),
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "tokens_per_input": {
            "mean": round(sum(lengths) / len(lengths), 1),
            "max": max(lengths),
            "min": min(lengths),
        },
        "plain_transformers": {
            "dtype": "float32",
            "padding": f"every input to {args.max_length}",
            "code": "tokenizer(pairs, padding='max_length', truncation='only_second') + model(**batch)",
            **plain_result,
        },
        "naive": {"dtype": "float32", "padding": f"every input to {args.max_length}", **naive_result},
        "optimised": {
            "dtype": str(fast_dtype).replace("torch.", ""),
            "padding": "length-bucketed pools",
            **fast_result,
        },
        "speedup": round(fast_result["documents_per_second"] / plain_result["documents_per_second"], 2),
        "speedup_over_naive": round(
            fast_result["documents_per_second"] / naive_result["documents_per_second"], 2
        ),
        "max_score_difference": round(
            max(abs(a - b) for a, b in zip(naive_scores, fast_scores, strict=True)), 4
        ),
        # the plain loop truncates with the tokenizer (the document's end), ours keeps a window around the
        # sentence: the two agree on inputs that fit
        "max_score_difference_plain_vs_naive": round(
            max(abs(a - b) for a, b in zip(plain_scores, naive_scores, strict=True)), 4
        ),
    }
    print(
        f"{report['device']}, {report['model']}, {len(items)} documents, "
        f"{report['tokens_per_input']['mean']} tokens per input on average"
    )
    for name in ("plain_transformers", "naive", "optimised"):
        r = report[name]
        memory = f", peak GPU memory {r['peak_gpu_memory_gib']} GiB" if "peak_gpu_memory_gib" in r else ""
        padding = f", {r['padding_share']:.0%} padding" if "padding_share" in r else ""
        print(
            f"  {name:18s} {r['dtype']:8s} {r['documents_per_second']:9.2f} documents/s "
            f"({r['seconds']} s{padding}{memory})"
        )
    print(
        f"  speedup over plain transformers {report['speedup']}x (target >= 4x on GPU), over naive "
        f"{report['speedup_over_naive']}x; largest score difference naive/optimised "
        f"{report['max_score_difference']}, plain/naive {report['max_score_difference_plain_vs_naive']}"
    )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
