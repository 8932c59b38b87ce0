"""The GPU suite: the scorer, the adversarial filter and training, each against its peer, in one run, one JSON.

    python bench/gpu_suite.py --out gpu_suite.json            # a GPU machine: real sizes, about 5 minutes
    python bench/gpu_suite.py --smoke --out smoke.json         # a CPU: tiny models, a minute or two

No Beam, no pipeline run, no download: the inputs are built from the bundled samples (``samples/wsj``) with the
package's functions (sentence splitting, :func:`corpora.shuffle.shuffle_document`), the models are random at
real sizes from their configs, the tokenizers are trained on the samples. It needs torch, transformers,
tokenizers, pyarrow, accelerate (for ``Trainer``), nltk, the package's source, and ``lm-eval`` for the scorer's
second peer (skipped, with a line in the JSON saying why, where it is not installed).

- **scorer** (GPT-2 small sizes; smoke: a tiny GPT-2): :class:`filters.lm.LanguageModelScorer` on the
  originals and k-block shuffles of the WSJ documents (pools of one document's texts, as ``score-shuffle``
  makes them) against (1) lm-evaluation-harness's ``HFLM.loglikelihood_rolling`` on the same texts, the same
  model folder, the same dtype and batch size, and (2) the authors' loop (``run_gpt2_zeroshot.py``'s structure:
  one text, one window, batch of one, ``model(input_ids, labels=...)``) on a subset of the texts. Ratios are of
  tokens scored per second; agreement is checked on texts that fit one window (where all three read the same
  context).
- **filter** (XLNet-Large sizes; smoke: a tiny XLNet): :class:`filters.model.ScoringModel` (bf16 on a GPU,
  length-bucketed) against a plain transformers loop (fp32, padded to 512, arrival order), and on a GPU also
  with ``compile=True`` (``torch.compile``, bucketed widths; its compile time reported apart).
- **training** (GPT-2 small sizes; smoke: a tiny GPT-2): ``finetune-lm`` and ``train-shuffle``
  (:func:`filters.finetune_lm.finetune`, :func:`filters.shuffle_classifier.train_shuffle`) against
  ``transformers.Trainer`` on the same examples with its best flags: ``bf16=True`` (on a GPU) and
  ``train_sampling_strategy="group_by_length"`` (transformers 5's name for ``group_by_length=True``); one epoch each, tokens per second of the training loop.

Model FLOP utilisation (MFU) counts the useful FLOPs of each job (``2 x non-embedding parameters`` per token
read, plus ``2 x width x vocabulary`` per predicted token for LMs, ``x 3`` when training) against the chip's
nominal dense peak (GPU, by name; None when unknown) and against a matmul measured here in the same dtype.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded: every model is a local folder
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Nominal dense peaks (FLOP/s) by GPU name: bf16/fp16 tensor cores, and TF32 for float32 matmuls.
NOMINAL_PEAKS = {
    "H200": {"bfloat16": 989e12, "float32": 494e12},
    "H100": {"bfloat16": 989e12, "float32": 494e12},  # SXM; the PCIe card is lower (756 / 378)
    "A100": {"bfloat16": 312e12, "float32": 156e12},
    "L40S": {"bfloat16": 362e12, "float32": 183e12},
    "A10": {"bfloat16": 125e12, "float32": 62.5e12},
    "L4": {"bfloat16": 121e12, "float32": 60e12},
}
POOL_TEXTS = 64  # as score-shuffle's --pool-size
SIZES = {  # (scorer / training GPT-2, filter XLNet) per mode
    "smoke": {
        "gpt2": dict(n_positions=1024, n_embd=32, n_layer=2, n_head=2),
        "xlnet": "tiny",
        "documents": 10,
        "block_sizes": (1, 2),
        "permutations": 2,
        "authors_texts": 12,
        "filter_documents": 24,
        "filter_max_length": 256,
        "train_documents": 16,
        "batch_size": 16,
    },
    "gpu": {
        "gpt2": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12),
        "xlnet": "large",
        "documents": 199,
        "block_sizes": (1, 2, 3, 4, 5),
        "permutations": 4,
        "authors_texts": 400,
        "filter_documents": 2048,
        "filter_max_length": 512,
        "train_documents": 199,
        "batch_size": 64,
    },
}


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "tokenizers", "accelerate", "pyarrow", "nltk", "lm_eval"):
        try:
            out[name] = md.version(name.replace("_", "-"))
        except md.PackageNotFoundError:
            out[name] = None
    return out


def device_info(device: str) -> dict:
    import torch

    info = {"device": device, "torch_threads": torch.get_num_threads(), "cpus": os.cpu_count()}
    info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        info |= {
            "name": props.name,
            "memory_gib": round(props.total_memory / 2**30, 1),
            "capability": f"{props.major}.{props.minor}",
            "bf16": torch.cuda.is_bf16_supported(),
        }
    else:
        info["name"] = f"CPU ({platform.processor() or platform.machine()})"
    return info


def nominal_peak(info: dict, dtype: str) -> float | None:
    for key, peaks in NOMINAL_PEAKS.items():
        if key in info.get("name", ""):
            return peaks["float32" if dtype == "float32" else "bfloat16"]
    return None


def measured_peak(device: str, dtype: str) -> float:
    """FLOP/s of a square matmul in ``dtype`` on ``device``, best of a few (the practical ceiling here)."""
    import torch

    n = 4096 if device.startswith("cuda") else 512
    a = torch.randn(n, n, device=device, dtype=getattr(torch, dtype))
    b = torch.randn(n, n, device=device, dtype=getattr(torch, dtype))
    best = float("inf")
    for _ in range(5):
        sync(device)
        started = time.perf_counter()
        for _ in range(4):
            a @ b
        sync(device)
        best = min(best, (time.perf_counter() - started) / 4)
    return 2 * n**3 / best


def peak_of(peaks: dict, precision: str) -> dict:
    """The peaks of a precision name (fp16 runs on the same tensor cores as bf16)."""
    return peaks["float32" if precision == "float32" else "bfloat16"]


def mfu(flops: float, seconds: float, peaks: dict) -> dict:
    rate = flops / seconds if seconds else 0.0
    out = {"tflops_per_second": round(rate / 1e12, 4)}
    for name, peak in peaks.items():
        out[f"mfu_vs_{name}"] = round(rate / peak, 4) if peak else None
    return out


def non_embedding_parameters(model) -> int:
    return sum(
        p.numel()
        for n, p in model.named_parameters()
        if "wte" not in n
        and "wpe" not in n
        and "embed" not in n
        and "lm_head" not in n
        and "word_embedding" not in n
    )


# --------------------------------------------------------------------------------------------- inputs


def documents(n: int) -> list[tuple[str, list[str]]]:
    """``(id, sentences)`` of the first ``n`` WSJ sample documents (3 to 20 sentences)."""
    from tests.tiny_model import sample_documents

    return sample_documents(min_sentences=3, max_sentences=20)[:n]


def shuffle_groups(docs, block_sizes, permutations: int) -> list[list[str]]:
    """Per document, its original text then its distinct shuffled texts (the texts of one pool)."""
    from incoherent.corpora.shuffle import shuffle_document
    from incoherent.filters.lm_windows import join_sentences

    groups = []
    for doc_id, sentences in docs:
        texts = [join_sentences(sentences)]
        for k in block_sizes:
            for row in shuffle_document(
                {"id": doc_id, "source": "wsj", "sentences": sentences}, k, seed=0, permutations=permutations
            ):
                if isinstance(row, dict):
                    texts.append(join_sentences(row["shuffled"]))
        groups.append(list(dict.fromkeys(texts)))
    return groups


def pools(groups: list[list[str]]) -> list[list[str]]:
    """Whole documents' texts, about :data:`POOL_TEXTS` per pool, as ``score-shuffle`` pools them."""
    out: list[list[str]] = [[]]
    for group in groups:
        if out[-1] and len(out[-1]) + len(group) > POOL_TEXTS:
            out.append([])
        out[-1].extend(group)
    return out


def build_gpt2(out: str, sizes: dict) -> str:
    """A random GPT-2 of ``sizes`` with a 4,000-token byte-level BPE trained on the samples (built once)."""
    from tests.tiny_lm import build_gpt2 as build
    from tests.tiny_lm import build_gpt2_tokenizer

    if os.path.exists(os.path.join(out, "config.json")):
        return out
    return build(out, build_gpt2_tokenizer(vocab_size=4000), **sizes)


# --------------------------------------------------------------------------------------------- scorer


def authors_loop(model, tokenizer, texts, device: str) -> tuple[list[tuple[float, int]], float, float]:
    """``run_gpt2_zeroshot.py``'s structure over our exact windows: one text, one window per forward pass
    (batch of one), the loss from ``model(input_ids, labels=...)`` with context positions labelled -100."""
    import torch

    from incoherent.filters.lm_windows import causal_windows

    window = model.config.n_positions
    out = []
    sync(device)
    started, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        seq = [tokenizer.bos_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([seq])
        total = torch.zeros((), device=device)
        for begin, end, first in causal_windows(len(seq), window, window // 2):
            input_ids = ids[:, begin:end].to(device)
            labels = input_ids.clone()
            labels[:, : first - begin] = -100
            with torch.no_grad():
                total = total + model(input_ids, labels=labels).loss.float() * (end - first)
        out.append((float(total) / (len(seq) - 1), len(seq) - 1))
    sync(device)
    return out, time.perf_counter() - started, time.process_time() - cpu


def lm_eval_rolling(model_dir: str, texts, device: str, dtype: str, batch_size: int, positions: int):
    """``HFLM.loglikelihood_rolling`` of every text: ``(log-likelihoods, seconds, CPU seconds)``, or ``(None,
    reason, None)``."""
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except ImportError as exc:
        return None, f"lm-eval is not installed ({exc}); pip install lm-eval==0.4.13 to run this peer", None
    lm = HFLM(
        pretrained=model_dir, device=device, dtype=dtype, batch_size=batch_size, max_length=positions,
        trust_remote_code=False,
    )  # fmt: skip
    requests = [
        Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i)
        for i, t in enumerate(texts)
    ]
    lm.loglikelihood_rolling(requests[:2], disable_tqdm=True)  # warm-up
    sync(device)
    started, cpu = time.perf_counter(), time.process_time()
    lls = lm.loglikelihood_rolling(requests, disable_tqdm=True)
    sync(device)
    return [float(x) for x in lls], time.perf_counter() - started, time.process_time() - cpu


def scorer_suite(work: str, device: str, mode: dict, peaks: dict) -> dict:
    import torch

    from incoherent.filters.lm import LanguageModelScorer
    from incoherent.filters.lm_load import load_language_model

    model_dir = build_gpt2(os.path.join(work, "gpt2"), mode["gpt2"])
    dtype = "bfloat16" if device.startswith("cuda") else "float32"
    groups = shuffle_groups(documents(mode["documents"]), mode["block_sizes"], mode["permutations"])
    texts = [t for g in groups for t in g]
    batch = mode["batch_size"]
    scorer = LanguageModelScorer.load(model_dir, device=device, dtype=dtype, batch_size=batch)
    positions = scorer.positions
    scorer.score_texts(groups[0])  # warm-up
    sync(device)
    started, cpu = time.perf_counter(), time.process_time()
    ours, counters = [], {}
    for pool in pools(groups):
        got, c = scorer.score_texts(pool)
        ours += got
        for k, v in c.items():
            counters[k] = counters.get(k, 0) + v
    sync(device)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    tokens = sum(n for _, n in ours)
    flops_per_token = (
        2 * non_embedding_parameters(scorer.model)
        + 2 * scorer.model.config.n_embd * scorer.model.config.vocab_size
    )
    result = {
        "model": f"GPT-2, random init ({mode['gpt2']})",
        "dtype": dtype,
        "texts": len(texts),
        "tokens": tokens,
        "attention": getattr(scorer.model.config, "_attn_implementation", None),
        "ours": {
            "seconds": round(seconds, 3),
            "cpu_seconds": round(cpu, 3),
            "tokens_per_second": round(tokens / seconds),
            "batch_size": batch,
            "pool_texts": POOL_TEXTS,
            "head_rows": scorer.head_rows,
            "max_tokens": scorer.max_tokens,
            "counters": counters,
            **mfu(flops_per_token * tokens, seconds, peaks[dtype]),
        },
    }
    del scorer
    lls, lm_seconds, lm_cpu = lm_eval_rolling(model_dir, texts, device, dtype, batch, positions)
    if lls is None:
        result["lm_eval"] = {"skipped": lm_seconds}
    else:
        one_window = [
            abs(-ll / n - s) for ll, (s, n) in zip(lls, ours, strict=True) if n + 1 <= positions and n
        ]
        result["lm_eval"] = {
            "seconds": round(lm_seconds, 3),
            "cpu_seconds": round(lm_cpu, 3),
            "tokens_per_second": round(tokens / lm_seconds),
            "batch_size": batch,
            "code": "HFLM(pretrained=MODEL_DIR, dtype, batch_size, max_length).loglikelihood_rolling(texts)",
            "max_score_difference_one_window": max(one_window) if one_window else None,
            "one_window_texts": len(one_window),
            **mfu(flops_per_token * tokens, lm_seconds, peaks[dtype]),
        }
        result["ratio_vs_lm_eval"] = round(lm_seconds / seconds, 2)
        result["ratio_vs_lm_eval_cpu_seconds"] = round(lm_cpu / cpu, 2) if cpu else None
    model, tokenizer, _ = load_language_model(model_dir, device=device)  # the authors' loop: fp32
    subset = texts[:: max(1, len(texts) // mode["authors_texts"])][: mode["authors_texts"]]
    base, base_seconds, base_cpu = authors_loop(model, tokenizer, subset, device)
    base_tokens = sum(n for _, n in base)
    index = {t: i for i, t in enumerate(texts)}
    diff = max(abs(s - ours[index[t]][0]) for t, (s, _) in zip(subset, base, strict=True))
    result["authors_loop"] = {
        "texts": len(subset),
        "seconds": round(base_seconds, 3),
        "cpu_seconds": round(base_cpu, 3),
        "tokens_per_second": round(base_tokens / base_seconds),
        "dtype": "float32",
        "max_score_difference": diff,
        **mfu(flops_per_token * base_tokens, base_seconds, peaks["float32"]),
    }
    result["ratio_vs_authors_loop"] = round(
        result["ours"]["tokens_per_second"] / result["authors_loop"]["tokens_per_second"], 2
    )
    result["ratio_vs_authors_loop_cpu_seconds"] = (
        round((base_cpu / base_tokens) / (cpu / tokens), 2) if cpu and base_tokens else None
    )
    del model
    torch.cuda.empty_cache() if device.startswith("cuda") else None
    return result


# --------------------------------------------------------------------------------------------- filter


def filter_suite(device: str, mode: dict, peaks: dict, compile_too: bool) -> dict:
    import bench_filter_gpu as fb
    import torch

    from incoherent.filters.model import ScoringModel

    smoke = mode["xlnet"] == "tiny"
    max_length = mode["filter_max_length"]
    tokenizer = fb.build_tokenizer(None, 8000)
    items = fb.candidate_documents(mode["filter_documents"] + 16, 0, None)
    warm, items = items[:16], items[16:]
    model, config = fb.build_model(smoke, len(tokenizer), 0)
    fast_dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    lengths = [len(e.input_ids) for e in ScoringModel(model, tokenizer, "cpu", 1, max_length).encode(items)]
    params = non_embedding_parameters(model)
    flops = 2 * params * sum(lengths)
    plain_items = items[: max(16, len(items) // 2)]  # the plain loop is slow: half the documents
    model.to(device, dtype=torch.float32)
    fb.plain_transformers_run(model, tokenizer, warm, 16, max_length, device)
    plain, plain_scores = fb.plain_transformers_run(model, tokenizer, plain_items, 16, max_length, device)
    plain_flops = flops * len(plain_items) / len(items)
    plain |= mfu(plain_flops, plain["seconds"], peaks["float32"])
    model.to(device, dtype=fast_dtype)
    fast = ScoringModel(model, tokenizer, device, 16, max_length)
    fast.score(warm)
    fast_result, fast_scores = fb.timed_run(fast, items, 16 * fb.POOL_FACTOR, device)
    dtype_name = str(fast_dtype).replace("torch.", "")
    fast_result |= mfu(flops, fast_result["seconds"], peaks[dtype_name])
    result = {
        "model": "XLNet tiny (smoke)"
        if smoke
        else "XLNet-Large sizes, random init (d_model 1024, 24 layers)",
        "documents": len(items),
        "plain_documents": len(plain_items),
        "mean_tokens": round(sum(lengths) / len(lengths), 1),
        "plain_transformers": {"dtype": "float32", "padding": f"to {max_length}", **plain},
        "ours": {"dtype": dtype_name, "padding": "length-bucketed", **fast_result},
        "ratio_vs_plain": round(fast_result["documents_per_second"] / plain["documents_per_second"], 2),
    }
    if compile_too and device.startswith("cuda"):
        try:
            result |= compiled_filter(
                model,
                tokenizer,
                items,
                warm,
                fast_result,
                fast_scores,
                flops,
                peaks[dtype_name],
                device,
                max_length,
            )
        except Exception as exc:  # noqa: BLE001 - a compile failure must not lose the other figures
            result["ours_compiled"] = {
                "failed": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            }
    elif compile_too:
        result["ours_compiled"] = {"skipped": "torch.compile of the filter is GPU only"}
    return result


def compiled_filter(
    model, tokenizer, items, warm, fast_result, fast_scores, flops, peaks, device, max_length
) -> dict:
    """The optimised filter run again with ``compile=True``: its figures and its ratio to the uncompiled run."""
    import bench_filter_gpu as fb

    from incoherent.filters.model import ScoringModel

    started = time.perf_counter()
    compiled = ScoringModel(model, tokenizer, device, 16, max_length, compile=True)
    compiled.score(items[: 16 * fb.POOL_FACTOR])  # compiles the bucketed shapes
    compiled.score(warm)
    sync(device)
    compile_seconds = time.perf_counter() - started
    c_result, c_scores = fb.timed_run(compiled, items, 16 * fb.POOL_FACTOR, device)
    c_result |= mfu(flops, c_result["seconds"], peaks)
    c_result["compile_and_warm_up_seconds"] = round(compile_seconds, 1)
    c_result["max_score_difference_vs_uncompiled"] = max(
        abs(a - b) for a, b in zip(c_scores, fast_scores, strict=True)
    )
    return {
        "ours_compiled": c_result,
        "ratio_compiled_vs_uncompiled": round(
            c_result["documents_per_second"] / fast_result["documents_per_second"], 2
        ),
    }


# --------------------------------------------------------------------------------------------- training


def write_training_data(work: str, docs) -> tuple[str, str]:
    """Documents as ingest output and their k = 1 shuffles, every document in train (plus a validation
    tenth), written with pyarrow: the inputs of finetune-lm and train-shuffle."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from incoherent.corpora.seeding import stable_hash
    from incoherent.corpora.shuffle import shuffle_document
    from incoherent.schemas import SHUFFLE_SCHEMA
    from tests.shuffle_fixtures import write_documents

    docs_dir = write_documents(os.path.join(work, "docs"), docs)
    rows = {"train": [], "validation": []}
    for doc_id, sentences in docs:
        split = "validation" if stable_hash("suite", doc_id) % 10 == 0 else "train"
        for row in shuffle_document({"id": doc_id, "source": "wsj", "sentences": sentences}, 1, seed=0):
            if isinstance(row, dict):
                rows[split].append({**row, "split": split})
    shuffle_dir = os.path.join(work, "shuffle")
    os.makedirs(os.path.join(shuffle_dir, "shuffle-wsj"))
    for split, split_rows in rows.items():
        path = os.path.join(shuffle_dir, "shuffle-wsj", f"{split}-00000-of-00001.parquet")
        pq.write_table(pa.Table.from_pylist(split_rows, schema=SHUFFLE_SCHEMA), path)
    return docs_dir, shuffle_dir


def trainer_seconds(
    model, items, collator, batch_size: int, learning_rate: float, device: str, out: str
) -> float:
    """One epoch of ``Trainer`` with its best flags: bf16 on a GPU, length-grouped batches
    (``train_sampling_strategy="group_by_length"``, transformers 5's ``group_by_length=True``)."""
    from bench_train import ListDataset, trainer_run

    cuda = device.startswith("cuda")
    sync(device)
    return trainer_run(
        model, ListDataset(items), collator, batch_size, learning_rate, "cuda" if cuda else "cpu", out,
        bf16=cuda, train_sampling_strategy="group_by_length",
    )  # fmt: skip


TRAINER_FLAGS = "bf16=True (on a GPU), train_sampling_strategy=group_by_length"


def training_figures(tokens: int, seconds: float, flops_per_token: float, peaks: dict, **extra) -> dict:
    return {
        **extra,
        "tokens": tokens,
        "seconds": round(seconds, 3),
        "tokens_per_second": round(tokens / seconds, 1),
        **mfu(flops_per_token * tokens, seconds, peaks),
    }


def training_suite(work: str, device: str, mode: dict, peaks: dict) -> dict:
    import importlib.util

    if importlib.util.find_spec("accelerate") is None:  # transformers' Trainer, the peer, needs it
        raise RuntimeError(
            "the Trainer peer needs accelerate: pip install -e '.[bench]' (or accelerate==1.15.0)"
        )
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        DataCollatorForLanguageModeling,
        DataCollatorWithPadding,
    )

    from incoherent.filters.finetune_lm import (
        FinetuneConfig,
        finetune,
        heldout_split,
        read_documents,
        token_blocks,
    )
    from incoherent.filters.model import open_tokenizer
    from incoherent.filters.shuffle_classifier import (
        ID2LABEL,
        LABEL2ID,
        ShuffleTrainConfig,
        encode,
        examples_of,
        read_pairs,
        shuffle_split_files,
        train_shuffle,
    )

    base = build_gpt2(os.path.join(work, "gpt2"), mode["gpt2"])
    docs_dir, shuffle_dir = write_training_data(work, documents(mode["train_documents"]))
    tokenizer = open_tokenizer(base)
    positions = mode["gpt2"]["n_positions"]
    block = 512 if device.startswith("cuda") else 256
    train_docs, _ = heldout_split(read_documents([docs_dir]), 0.05)
    blocks = [b for _, s in train_docs for b in token_blocks(tokenizer, "causal", s, block)]
    pairs = read_pairs(shuffle_split_files(shuffle_dir)["train"], (1,))
    tokenizer.pad_token = tokenizer.eos_token
    items = [{"input_ids": encode(tokenizer, s, positions), "labels": y} for _, s, y in examples_of(pairs)]
    result = {
        "model": f"GPT-2, random init ({mode['gpt2']})",
        "lm_blocks": len(blocks),
        "classifier_examples": len(items),
    }

    ft = finetune(FinetuneConfig(
        data_dirs=(docs_dir,), base_model=base, out=os.path.join(work, "ft"), epochs=1, learning_rate=5e-5,
        batch_size=8, max_length=block, heldout_fraction=0.05, device=device,
    ))  # fmt: skip
    model = AutoModelForCausalLM.from_pretrained(base, use_safetensors=True, trust_remote_code=False)
    params = non_embedding_parameters(model)
    lm_flops = 3 * (2 * params + 2 * model.config.n_embd * model.config.vocab_size)
    t_lm = trainer_seconds(
        model, [{"input_ids": b} for b in blocks], DataCollatorForLanguageModeling(tokenizer, mlm=False), 8, 5e-5,
        device, os.path.join(work, "t1"),
    )  # fmt: skip
    lm_tokens = sum(len(b) for b in blocks)
    trainer_peaks = peak_of(peaks, "bfloat16" if device.startswith("cuda") else "float32")
    result["finetune_lm"] = training_figures(
        ft["tokens"],
        ft["train_seconds"],
        lm_flops,
        peak_of(peaks, ft["precision"]),
        precision=ft["precision"],
    )
    result["trainer_lm"] = training_figures(lm_tokens, t_lm, lm_flops, trainer_peaks, flags=TRAINER_FLAGS)
    result["ratio_finetune_lm_vs_trainer"] = round(
        result["finetune_lm"]["tokens_per_second"] / result["trainer_lm"]["tokens_per_second"], 2
    )
    ts = train_shuffle(ShuffleTrainConfig(
        data_dir=shuffle_dir, base_model=base, out=os.path.join(work, "cls"), epochs=1, learning_rate=1e-5,
        batch_size=16, max_length=positions, device=device,
    ))  # fmt: skip
    model = AutoModelForSequenceClassification.from_pretrained(
        base, use_safetensors=True, trust_remote_code=False, num_labels=2, id2label=ID2LABEL, label2id=LABEL2ID,
    )  # fmt: skip
    model.config.pad_token_id = tokenizer.pad_token_id
    t_cls = trainer_seconds(
        model, items, DataCollatorWithPadding(tokenizer), 16, 1e-5, device, os.path.join(work, "t2")
    )
    cls_tokens = sum(len(i["input_ids"]) for i in items)
    cls_flops = 3 * 2 * params
    result["train_shuffle"] = training_figures(
        ts["tokens"],
        ts["train_seconds"],
        cls_flops,
        peak_of(peaks, ts["precision"]),
        precision=ts["precision"],
    )
    result["trainer_classifier"] = training_figures(
        cls_tokens, t_cls, cls_flops, trainer_peaks, flags=TRAINER_FLAGS
    )
    result["ratio_train_shuffle_vs_trainer"] = round(
        result["train_shuffle"]["tokens_per_second"] / result["trainer_classifier"]["tokens_per_second"], 2
    )
    return result


# --------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="write the JSON report here")
    parser.add_argument("--smoke", action="store_true", help="tiny models on the CPU (a minute or two)")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    parser.add_argument(
        "--only",
        nargs="+",
        choices=("scorer", "filter", "training"),
        default=None,
        help="run these parts only",
    )
    parser.add_argument("--no-compile", action="store_true", help="skip the filter's torch.compile run")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads for every side on a CPU (1 with --smoke)"
    )
    parser.add_argument("--work", default=None, help="working folder (default: a temporary one)")
    args = parser.parse_args(argv)
    if os.path.exists(args.out) and os.path.isdir(args.out):
        parser.error(f"--out {args.out}: is a directory")

    import torch

    from incoherent.filters.model import resolve_device

    device = resolve_device("cpu" if args.smoke and args.device == "auto" else args.device)
    if args.threads or not device.startswith("cuda"):
        torch.set_num_threads(args.threads or 1)  # the same threads for ours and every peer
    mode = SIZES["smoke" if args.smoke or not device.startswith("cuda") else "gpu"]
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True  # float32 peers use TF32 too: the fair comparison
    info = device_info(device)
    peaks = {}
    for dtype in ("float32", "bfloat16"):
        peaks[dtype] = {"nominal": nominal_peak(info, dtype), "measured_matmul": measured_peak(device, dtype)}
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "mode": "smoke" if mode is SIZES["smoke"] else "gpu",
        "device": info,
        "versions": versions(),
        "peaks_flops": peaks,
    }
    started = time.perf_counter()
    parts = args.only or ["scorer", "filter", "training"]
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gpu-suite-", dir=args.work) as work:
        for part in parts:
            part_started = time.perf_counter()
            try:
                if part == "scorer":
                    report["scorer"] = scorer_suite(work, device, mode, peaks)
                elif part == "filter":
                    report["filter"] = filter_suite(device, mode, peaks, not args.no_compile)
                else:
                    report["training"] = training_suite(work, device, mode, peaks)
            except Exception as exc:  # noqa: BLE001 - one failed part must not lose the others' figures
                import traceback

                traceback.print_exc()
                report[part] = {"error": f"{type(exc).__name__}: {exc}"}
                failed.append(part)
            report[part]["suite_seconds"] = round(time.perf_counter() - part_started, 1)
            print(
                f"{part}: {json.dumps({k: v for k, v in report[part].items() if k.startswith('ratio')})}",
                flush=True,
            )
    report["seconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(report, indent=2, default=str)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"wrote {args.out} ({report['seconds']} s)" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
