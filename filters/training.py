"""The training loop shared by ``finetune-lm`` and ``train-shuffle``: seeded, epoch by epoch, best epoch kept.

``fit`` runs ``epochs`` passes over ``examples`` in an order drawn from ``(seed, name, epoch)``, one optimizer step
per batch of ``batch_size`` (``collate(examples) -> dict of tensors`` with the loss's inputs), evaluates after
each epoch (``evaluate(model) -> dict``) and keeps the state of the epoch that ``key(record)`` ranks best (the
earlier epoch on ties). On a CPU the same seed gives the same weights.

Speed (the same updates, cut or rounded differently): batches are grouped by length (:func:`length_grouped`,
as ``Trainer``'s ``group_by_length``: little padding); on a GPU, bf16 autocast (fp16 with loss scaling where
bf16 is unsupported; :func:`filters.hardware.training_precision`), TF32 matmuls and the fused AdamW kernel. A
CPU trains in float32. A batch that runs out of memory is cut into parts whose gradients add up to the
batch's (:func:`backward_in_parts`), counted in ``oom_retries``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Sequence

from incoherent.corpora.seeding import rng_for
from incoherent.fileio.outputs import entries, own_files, remove_entries
from incoherent.filters.hardware import adamw, enable_tf32, oom_errors, release_cached, training_precision
from incoherent.filters.provenance import PROVENANCE
from incoherent.schemas.records import InputError

LOG = logging.getLogger("incoherent.filters")
LENGTH_GROUP = 50  # batches per length-sorted group (Trainer's LengthGroupedSampler uses 50 too)


def length_grouped(order: list[int], lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Batches of ``order`` (already shuffled) with little padding: each run of ``LENGTH_GROUP * batch_size``
    examples is sorted by length (longest first) and cut into batches; the batches then run in the shuffled
    order of their groups, except that the longest batch of all runs first (an out-of-memory error shows at
    once).

    >>> length_grouped([0, 1, 2, 3], [5, 1, 9, 2], 2)
    [[2, 0], [3, 1]]
    """
    batches = []
    size = LENGTH_GROUP * batch_size
    for start in range(0, len(order), size):
        group = sorted(order[start : start + size], key=lambda i: -lengths[i])
        batches += [group[b : b + batch_size] for b in range(0, len(group), batch_size)]
    if batches:
        longest = max(range(len(batches)), key=lambda b: (max(lengths[i] for i in batches[b]), -b))
        batches.insert(0, batches.pop(longest))
    return batches


def rows_of(batch: dict) -> int:
    return len(next(iter(batch.values())))


def backward_in_parts(
    model, batch: dict, parts: int, autocast_dtype=None, scaler=None, terms: Callable[[dict], int] = rows_of
) -> float:
    """``loss.backward()`` of ``model(**batch).loss`` run as ``parts`` slices of the batch's rows, each slice's
    loss weighted by its share of the batch's loss terms (``terms(slice)``: rows for a classifier, predicted
    tokens for an LM), so the gradients add up to those of the whole batch (up to rounding; dropout draws
    differ). Returns the batch's loss."""
    import torch

    rows = rows_of(batch)
    total = terms(batch)
    cuts = [round(rows * p / parts) for p in range(parts + 1)]
    loss_value = 0.0
    device_type = next(iter(batch.values())).device.type
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        if hi <= lo:
            continue
        part = {k: v[lo:hi] for k, v in batch.items()}
        share = terms(part) / total if parts > 1 and total else 1.0
        if share == 0:
            continue
        with torch.autocast(
            device_type=device_type, dtype=autocast_dtype or torch.float32, enabled=bool(autocast_dtype)
        ):
            loss = model(**part).loss * share
        (scaler.scale(loss) if scaler is not None else loss).backward()
        loss_value += float(loss.detach())
    return loss_value


def train_step(model, batch: dict, opt, params, state: dict, autocast_dtype=None, scaler=None, terms=rows_of):
    """One optimizer step on ``batch`` (clipped to norm 1). On out-of-memory the gradients are dropped and
    the batch runs again in twice as many parts (``state["parts"]``, kept for later batches; counted in
    ``state["oom_retries"]``); a batch that does not fit one row at a time is one line."""
    from incoherent.schemas.records import InputError

    device = next(iter(batch.values())).device
    while True:
        try:
            loss = backward_in_parts(model, batch, state["parts"], autocast_dtype, scaler, terms)
            break
        except oom_errors():
            pass  # leave the handler first: its frames hold the failed step's tensors
        opt.zero_grad(set_to_none=True)
        release_cached(device)
        state["oom_retries"] = state.get("oom_retries", 0) + 1
        if state["parts"] >= rows_of(batch):
            raise InputError(
                f"{device}: out of memory training on a single example; lower --max-length or use a smaller model"
            )
        state["parts"] = min(state["parts"] * 2, rows_of(batch))
        LOG.warning("out of memory on a training batch: %d parts per batch from now on", state["parts"])
    if scaler is not None:
        scaler.unscale_(opt)
    import torch

    torch.nn.utils.clip_grad_norm_(params, 1.0)
    if scaler is not None:
        scaler.step(opt)
        scaler.update()
    else:
        opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


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
    if command and entries(out) and own_files(out, PROVENANCE) is None:
        raise InputError(
            f"--out {out}: written by an older incoherent whose {PROVENANCE} does not list the files it wrote, "
            "so your own files there cannot be told from them; delete the folder yourself or choose another --out"
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


def prepare_out(out: str) -> set[str]:
    """Delete the earlier model's files (``--overwrite``: what its provenance lists, never a user's file beside
    them, nor the --out lock); what is left (kept), for :func:`incoherent.fileio.outputs.files_written`."""
    remove_entries(out, own_files(out, PROVENANCE) or [])
    os.makedirs(out, exist_ok=True)
    return set(entries(out))


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
    precision: str = "auto",
    lengths: Sequence[int] | None = None,
    terms: Callable[[dict], int] = rows_of,
) -> dict:
    """Train ``model`` in place, load the best epoch's weights back; returns ``{history, chosen_epoch, steps,
    tokens, train_seconds, precision, oom_retries}`` (``tokens``: the non-padding input tokens of the batches
    run, for throughput). ``history[0]`` is the model before training (epoch 0); it is kept when no epoch
    beats it. ``lengths``: each example's length, to group batches by length (None: batches in the shuffled
    order). ``terms(batch)``: the batch's loss terms (:func:`backward_in_parts`)."""
    import torch
    from tqdm.auto import tqdm

    if epochs < 1 or batch_size < 1:
        raise InputError("--epochs and --batch-size must be at least 1")
    if not examples:
        raise InputError(f"{name}: no training examples")
    precision_name, autocast_dtype, scaler = training_precision(device, precision)
    enable_tf32(device)
    torch.manual_seed(seed)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = adamw(params, learning_rate, device, adam=optimizer == "adam")
    state = {"parts": 1, "oom_retries": 0}
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
        if lengths is not None:
            batches = length_grouped(order, lengths, batch_size)
        else:
            batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        losses = []
        epoch_started = time.time()
        for chosen_rows in batches:
            if step >= total:
                break
            batch = collate([examples[i] for i in chosen_rows])
            tokens += int(batch["attention_mask"].sum())
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            losses.append(train_step(model, batch, opt, params, state, autocast_dtype, scaler, terms))
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
        "precision": precision_name,
        "oom_retries": state["oom_retries"],
    }
