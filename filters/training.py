"""The training loop shared by ``finetune-lm`` and ``train-shuffle``: seeded, epoch by epoch, best epoch kept.

``fit`` runs ``epochs`` passes over ``examples`` in an order drawn from ``(seed, name, epoch)``, one optimizer step
per batch of ``batch_size`` (``collate(examples) -> dict of tensors`` with the loss's inputs), evaluates after
each epoch (``evaluate(model) -> dict``) and keeps the state of the epoch that ``key(record)`` ranks best (the
earlier epoch on ties). On a CPU the same seed gives the same weights.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Sequence

from corpora.seeding import rng_for
from filters.provenance import PROVENANCE
from schemas.records import InputError
from sources.outputs import clear_folder, entries

LOG = logging.getLogger("incoherent.filters")


def check_out(out: str, overwrite: bool, inputs: Sequence[str] = (), command: str | None = None) -> None:
    """``--out`` must be a new or empty directory (or ``--overwrite``), and no input may lie in it or hold it.

    ``--overwrite`` replaces only a model that ``command`` wrote: its provenance file names the command
    (docs/safety.md); any other folder is never deleted."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"--out {out}: exists and is not a directory")
    if entries(out) and not overwrite:
        raise InputError(f"--out {out}: not empty (pass --overwrite to replace it)")
    if command and entries(out) and written_by(out) != command:
        raise InputError(
            f"--out {out}: not a model written by `incoherent {command}` (no {PROVENANCE} naming it); refusing "
            "to replace it (choose another --out)"
        )
    real_out = os.path.realpath(out)
    for path in inputs:
        real = os.path.realpath(path)
        if real == real_out or real.startswith(real_out + os.sep) or real_out.startswith(real + os.sep):
            raise InputError(f"--out {out}: overlaps the input {path}")


def written_by(model_dir: str) -> str | None:
    """The command named by a model folder's provenance file, or None."""
    try:
        with open(os.path.join(model_dir, PROVENANCE), encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value.get("command") if isinstance(value, dict) else None


def prepare_out(out: str) -> None:
    clear_folder(out)  # --overwrite: no stale files of an earlier model (the --out lock stays)
    os.makedirs(out, exist_ok=True)


def fit(
    model,
    examples: Sequence,
    collate: Callable[[list], dict],
    evaluate: Callable[[object], dict],
    key: Callable[[dict], float],
    *,
    name: str,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    device: str,
    optimizer: str = "adamw",
    max_steps: int | None = None,
) -> dict:
    """Train ``model`` in place, load the best epoch's weights back; returns ``{history, chosen_epoch, steps,
    tokens, train_seconds}`` (``tokens``: the non-padding input tokens of the batches run, for throughput).
    ``history[0]`` is the model before training (epoch 0); it is kept when no epoch beats it."""
    import torch
    from tqdm.auto import tqdm

    if epochs < 1 or batch_size < 1:
        raise InputError("--epochs and --batch-size must be at least 1")
    if not examples:
        raise InputError(f"{name}: no training examples")
    torch.manual_seed(seed)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=learning_rate)
    else:
        opt = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(examples) / batch_size)
    total = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    model.eval()
    baseline = {"epoch": 0, "steps": 0, **evaluate(model)}
    history = [baseline]
    best, chosen = baseline, 0
    best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    step = tokens = 0
    started = time.time()
    train_seconds = 0.0
    bar = tqdm(total=total, desc=name, unit="step", disable=None)
    for epoch in range(1, epochs + 1):
        if step >= total:
            break
        model.train()
        order = list(range(len(examples)))
        rng_for(seed, name, f"epoch-{epoch}").shuffle(order)
        torch.manual_seed((seed * 1_000_003 + epoch) % 2**63)  # dropout and masking of this epoch
        losses = []
        epoch_started = time.time()
        for start in range(0, len(order), batch_size):
            if step >= total:
                break
            batch = collate([examples[i] for i in order[start : start + batch_size]])
            tokens += int(batch["attention_mask"].sum())
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
            step += 1
            bar.update(1)
        train_seconds += time.time() - epoch_started
        model.eval()
        record = {
            "epoch": epoch,
            "steps": step,
            "train_loss": round(sum(losses) / max(1, len(losses)), 5),
            **evaluate(model),
        }
        history.append(record)
        LOG.info("%s epoch %d: %s", name, epoch, record)
        if key(record) > key(best):
            best, chosen = record, epoch
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    bar.close()
    model.load_state_dict(best_state)
    return {
        "history": history,
        "chosen_epoch": chosen,
        "steps": step,
        "tokens": tokens,
        "train_seconds": round(train_seconds, 3),
        "seconds": round(time.time() - started, 2),
    }
