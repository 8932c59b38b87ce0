"""Fine-tuning the intruder classifier (``incoherent train-filter``).

Any ``AutoModelForSequenceClassification`` checkpoint (XLNet, RoBERTa, ALBERT, BERT; a name in the local
Hugging Face cache or a directory) gets a fresh 2-label head and is trained on every non-opening sentence of
the train split (:mod:`filters.task`), AdamW with linear warm-up (10%) and decay. After each epoch the model
is scored on the validation split (or, when the build has none, on a deterministic 10% of train, chosen by a
stable hash of the document id); the epoch with the best validation sentence F1 (ties: document accuracy,
then the earlier epoch) is saved with ``save_pretrained(safe_serialization=True)``, with its tokenizer and
``metrics.json``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass

from incoherent.corpora.seeding import rng_for
from incoherent.fileio.outputs import (
    entries,
    files_written,
    finite,
    own_files,
    remove_entries,
    replace_text,
)
from incoherent.filters import data, metrics, task
from incoherent.filters.hardware import adamw, enable_tf32, training_precision
from incoherent.filters.model import ScoringModel, load_base_model, pad_batch, resolve_device, token_types
from incoherent.filters.training import length_grouped, train_step
from incoherent.schemas.records import InputError

LOG = logging.getLogger("incoherent.filters")
WARMUP_SHARE = 0.1


METRICS = "metrics.json"  # written last; its "files" are what a later --overwrite deletes


@dataclass(frozen=True)
class TrainConfig:
    """Parameters of ``incoherent train-filter`` (recorded in ``metrics.json``)."""

    data_dir: str
    out: str
    base_model: str = "xlnet-large-cased"
    epochs: int = 2
    learning_rate: float = 1e-5
    batch_size: int = 16
    max_length: int = 512
    bf16: bool = False  # the same as precision="bfloat16"
    seed: int = 0
    device: str = "auto"
    weight_decay: float = 0.01
    max_steps: int | None = None  # stop early (smoke runs)
    overwrite: bool = False
    precision: str = (
        "auto"  # auto: bf16 autocast on a GPU (fp16 + loss scaling without bf16), float32 on a CPU
    )


def training_examples(rows: list[dict]) -> list[tuple[list[str], int, int]]:
    """``(sentences, position, label)`` for every non-opening sentence of every row.

    >>> training_examples([{"sentences": ["a", "b", "c"], "intruder_index": 2}])
    [(['a', 'b', 'c'], 1, 0), (['a', 'b', 'c'], 2, 1)]
    """
    out = []
    for row in rows:
        sentences = list(row["sentences"])
        for (position, _, _), label in zip(
            task.examples(sentences), task.labels(sentences, row["intruder_index"]), strict=True
        ):
            out.append((sentences, position, label))
    return out


def linear_schedule(step: int, total: int, warmup: int) -> float:
    """Learning-rate multiplier: linear warm-up to 1, then linear decay to 0.

    >>> [round(linear_schedule(s, 10, 2), 3) for s in (0, 1, 2, 6, 10)]
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def evaluate_rows(scorer: ScoringModel, rows: list[dict]) -> dict:
    """Paper metrics of a model on intruder rows (shared with ``incoherent evaluate``)."""
    scores = scorer.score_documents([list(r["sentences"]) for r in rows])
    return metrics.evaluate_scores([r["intruder_index"] for r in rows], scores)


def _check_out(out: str, overwrite: bool) -> None:
    """``--overwrite`` replaces only a model this command wrote (its ``metrics.json`` names the task)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"{out}: exists and is not a directory")
    if entries(out):
        if not overwrite:
            raise InputError(f"{out}: output directory is not empty (pass --overwrite to replace it)")
        try:
            with open(os.path.join(out, METRICS), encoding="utf-8") as f:
                ours = "intruder sentence detection" in str(json.load(f).get("task"))
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise InputError(
                f"{out}: not a model written by `incoherent train-filter` (no metrics.json); refusing to "
                "replace it (choose another --out)"
            )
        if own_files(out, METRICS) is None:
            raise InputError(
                f"{out}: written by an older incoherent whose {METRICS} does not list the files it wrote, so "
                "your own files there cannot be told from them; delete the folder yourself or choose another --out"
            )


def _better(candidate: dict, best: dict | None) -> bool:
    if best is None:
        return True
    key = (candidate["sentence"]["f1"], candidate["document_accuracy"])
    return key > (best["sentence"]["f1"], best["document_accuracy"])


def _training_splits(config: TrainConfig) -> tuple[list[dict], list[dict], str]:
    """The train and validation rows, and where validation came from (its own split, or carved from train)."""
    train_rows = data.read_split(config.data_dir, "train")
    if "validation" in data.available_splits(config.data_dir):
        validation_rows = data.read_split(config.data_dir, "validation")
        validation_source = "validation split"
    else:
        train_rows, validation_rows = data.carve_validation(train_rows)
        validation_source = (
            f"no validation split: {data.VALIDATION_SHARE:.0%} of train held out by stable hash of id"
        )
        LOG.warning("%s: %s", config.data_dir, validation_source)
    if not train_rows:
        raise InputError(f"{config.data_dir}: the train split is empty")
    return train_rows, validation_rows, validation_source


def _optimizer(model, config: TrainConfig, device: str, total: int):
    """AdamW (no weight decay on biases and norms) and the linear schedule with warm-up over ``total`` steps."""
    import torch

    decay = [
        p for n, p in model.named_parameters() if not any(k in n for k in ("bias", "LayerNorm", "layer_norm"))
    ]
    no_decay = [
        p for n, p in model.named_parameters() if any(k in n for k in ("bias", "LayerNorm", "layer_norm"))
    ]
    optimizer = adamw(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        config.learning_rate,
        device,
    )
    warmup = max(1, int(total * WARMUP_SHARE))
    return optimizer, torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: linear_schedule(s, total, warmup)
    )


def _save_model(model, best_state: dict, tokenizer, out: str) -> None:
    """The chosen epoch's weights and the tokenizer (``metrics.json``, which marks the folder ours, comes last)."""
    model.load_state_dict(best_state)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


def _write_metrics(out: str, summary: dict) -> None:
    text = json.dumps(finite(summary), indent=2, allow_nan=False)  # a NaN metric: null, never bare NaN
    replace_text(os.path.join(out, METRICS), text + "\n")


def train(config: TrainConfig) -> dict:
    """Fine-tune, choose the best epoch on validation, save model + tokenizer + ``metrics.json``."""
    import torch
    from tqdm.auto import tqdm

    started = time.time()
    if config.epochs < 1 or config.batch_size < 1:
        raise InputError("--epochs and --batch-size must be at least 1")
    train_rows, validation_rows, validation_source = _training_splits(config)
    _check_out(config.out, config.overwrite)
    device = resolve_device(config.device)
    precision, autocast_dtype, scaler = training_precision(
        device, "bfloat16" if config.bf16 and config.precision == "auto" else config.precision
    )
    enable_tf32(device)
    torch.manual_seed(config.seed)
    model, tokenizer = load_base_model(config.base_model)
    # --overwrite: the earlier model's files (as its metrics.json lists them), never a user's file beside them
    remove_entries(config.out, own_files(config.out, METRICS) or [])
    os.makedirs(config.out, exist_ok=True)
    kept = set(entries(config.out))
    model.to(device)
    types = token_types(model.config, tokenizer)
    examples = training_examples(train_rows)
    encoded = [task.encode(tokenizer, s, p, config.max_length) for s, p, _ in examples]
    targets = [label for _, _, label in examples]
    steps_per_epoch = math.ceil(len(examples) / config.batch_size)
    total = steps_per_epoch * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    optimizer, scheduler = _optimizer(model, config, device, total)
    lengths = [len(e.input_ids) for e in encoded]
    params = list(model.parameters())
    state = {"parts": 1, "oom_retries": 0}
    scorer = ScoringModel(model, tokenizer, device, config.batch_size, config.max_length)
    history, best, best_state, step = [], None, None, 0
    LOG.info(
        "training %s on %d examples (%d documents), %d steps",
        config.base_model,
        len(examples),
        len(train_rows),
        total,
    )
    progress = tqdm(total=total, desc="train-filter", unit="step", disable=None)
    for epoch in range(1, config.epochs + 1):
        if step >= total:
            break
        model.train()
        order = list(range(len(examples)))
        rng_for(config.seed, "train-filter", f"epoch-{epoch}").shuffle(order)
        losses = []
        for chunk in length_grouped(order, lengths, config.batch_size):
            if step >= total:
                break
            batch = {
                k: v.to(device, non_blocking=True)
                for k, v in pad_batch(tokenizer, [encoded[i] for i in chunk], types=types).items()
            }
            batch["labels"] = torch.tensor([targets[i] for i in chunk], device=device)
            loss = train_step(model, batch, optimizer, params, state, autocast_dtype, scaler)
            scheduler.step()
            losses.append(loss)
            step += 1
            progress.update(1)
        model.eval()
        scores = evaluate_rows(scorer, validation_rows) if validation_rows else None
        record = {"epoch": epoch, "steps": step, "train_loss": round(sum(losses) / max(1, len(losses)), 5)}
        record["validation"] = scores
        history.append(record)
        LOG.info(
            "epoch %d: loss %.4f, validation %s", epoch, record["train_loss"], scores and scores["sentence"]
        )
        if scores is None or _better(scores, best):
            best = scores
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            chosen = epoch
    progress.close()
    _save_model(model, best_state, tokenizer, config.out)
    summary = {
        "task": "intruder sentence detection (Shen et al., 2021, section 5)",
        "config": asdict(config),
        "device": device,
        "precision": precision,
        "oom_retries": state["oom_retries"],
        "train_documents": len(train_rows),
        "train_sources": sorted({r.get("source") or "" for r in train_rows} - {""}),
        "train_examples": len(examples),
        "positive_examples": sum(targets),
        "validation_documents": len(validation_rows),
        "validation_source": validation_source,
        "truncated_train_examples": sum(e.truncated for e in encoded),
        "chosen_epoch": chosen,
        "validation": best,
        "history": history,
        "seconds": round(time.time() - started, 2),
        "files": files_written(config.out, kept, METRICS),  # what a later --overwrite deletes
    }
    _write_metrics(config.out, summary)
    return summary
