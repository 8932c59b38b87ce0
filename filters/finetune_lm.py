"""In-domain language-model fine-tuning (``incoherent finetune-lm``; Laban et al.'s "GPT2-med-ID").

A causal or masked LM is trained with its own loss on documents in their natural order (``ingest`` output,
``documents-<source>/`` tables, or a build's ``work/documents/``). The zero-shot guard:

* shuffled text is refused: a folder holding ``shuffle-*/`` tables, or rows with a ``shuffled`` or
  ``block_order`` column, stop the run with one line;
* the documents whose shuffles will be scored are left out: the ids of the ``test`` split of every
  ``shuffle-*/`` table given with ``--exclude-shuffle-test`` (or found in a build's ``dataset/``), counted.

A deterministic share of the rest (smallest stable hash of the id) is held out; its perplexity,
``exp(mean token NLL)`` (masked LMs: of a fixed 15% of tokens masked), is measured before training and after
every epoch, and the best epoch is saved (safetensors) with the tokenizer and ``provenance.json``.
"""

from __future__ import annotations

import glob
import math
import os
from dataclasses import asdict, dataclass

from incoherent.corpora.seeding import stable_hash
from incoherent.fileio.outputs import files_written
from incoherent.filters.lm import special_tokens_around
from incoherent.filters.lm_load import CAUSAL, load_language_model, model_positions
from incoherent.filters.lm_windows import join_sentences
from incoherent.filters.model_source import resolve_model
from incoherent.filters.provenance import (
    PROVENANCE,
    data_fingerprint,
    read_provenance,
    saw_shuffled_text,
    write_provenance,
)
from incoherent.filters.training import check_out, fit, prepare_out
from incoherent.schemas.records import InputError
from incoherent.sources import parquet

SHUFFLED_COLUMNS = ("shuffled", "block_order")
MASK_SHARE = 0.15


@dataclass(frozen=True)
class FinetuneConfig:
    """Parameters of ``incoherent finetune-lm`` (recorded in ``provenance.json``)."""

    data_dirs: tuple[str, ...]
    base_model: str
    out: str
    exclude_shuffle_test: tuple[str, ...] = ()
    scorer: str = "auto"
    epochs: int = 3
    learning_rate: float = 5e-5
    batch_size: int = 8
    max_length: int = 512
    heldout_fraction: float = 0.1
    seed: int = 0
    device: str = "auto"
    max_steps: int | None = None
    overwrite: bool = False
    precision: str = (
        "auto"  # auto: bf16 autocast on a GPU (fp16 + loss scaling without bf16), float32 on a CPU
    )


def _parquet(path: str):

    return parquet.read_table(path)


def _tables(root: str, prefix: str) -> list[str]:
    return sorted(glob.glob(os.path.join(root, f"{prefix}*", "*.parquet")))


def document_tables(data_dir: str) -> list[str]:
    """The ``documents-*`` tables of ``data_dir`` (ingest output, or a build's ``work/documents/<source>/``);
    a folder of shuffled text is refused."""
    if not os.path.isdir(data_dir):
        raise InputError(f"{data_dir}: no such directory")
    if _tables(data_dir, "shuffle-"):
        raise InputError(
            f"{data_dir}: holds shuffle-*/ tables (shuffled text); finetune-lm trains on documents in their "
            "natural order only: give `incoherent ingest` output (documents-*/) and pass the shuffle folder "
            "as --exclude-shuffle-test"
        )
    files = _tables(data_dir, "documents-")
    for nested in sorted(glob.glob(os.path.join(data_dir, "work", "documents", "*"))):
        files += _tables(nested, "documents-")
    if not files:
        raise InputError(f"{data_dir}: no documents-*/ tables (write them with `incoherent ingest ...`)")
    return files


def read_documents(data_dirs) -> list[tuple[str, list[str]]]:
    """``(id, sentences)`` of every document, sorted by id; rows marked shuffled are refused."""
    docs: dict[str, list[str]] = {}
    for data_dir in data_dirs:
        for path in document_tables(data_dir):
            table = _parquet(path)
            marked = [c for c in SHUFFLED_COLUMNS if c in table.column_names]
            if marked:
                raise InputError(
                    f"{path}: rows marked shuffled (column {marked[0]!r}); finetune-lm trains on text in its "
                    "natural order only"
                )
            if not {"id", "sentences"} <= set(table.column_names):
                raise InputError(f"{path}: not a documents table (needs columns id, sentences)")
            for row in table.select(["id", "sentences"]).to_pylist():
                docs.setdefault(row["id"], [s for s in row["sentences"] or [] if s])
    return sorted((k, v) for k, v in docs.items() if v)


def shuffle_test_ids(dirs) -> tuple[set[str], list[str]]:
    """Ids of the ``test`` split of every ``shuffle-*/`` table under each folder (or its ``dataset/``), and the
    files read."""
    ids: set[str] = set()
    files: list[str] = []
    for root in dirs:
        if not os.path.isdir(root):
            raise InputError(f"--exclude-shuffle-test {root}: no such directory")
        found = _tables(root, "shuffle-") or _tables(os.path.join(root, "dataset"), "shuffle-")
        if not found:
            raise InputError(f"--exclude-shuffle-test {root}: no shuffle-*/ tables")
        for path in found:
            if os.path.basename(path).startswith("test-"):
                ids.update(_parquet(path).column("id").to_pylist())
                files.append(path)
    return ids, files


def heldout_split(docs, fraction: float):
    """``(train, held out)``: the ``fraction`` of documents with the smallest stable hash of their id.

    >>> train, held = heldout_split([(str(i), ["s"]) for i in range(20)], 0.1)
    >>> len(train), len(held)
    (18, 2)
    """
    if not 0 < fraction < 1:
        raise InputError(f"--heldout-fraction: must be in (0, 1), got {fraction}")
    ranked = sorted(docs, key=lambda d: (stable_hash("finetune-heldout", d[0]), d[0]))
    n = max(1, round(len(docs) * fraction))
    held = {d[0] for d in ranked[:n]}
    return [d for d in docs if d[0] not in held], [d for d in docs if d[0] in held]


def token_blocks(tokenizer, kind: str, sentences: list[str], block: int) -> list[list[int]]:
    """A document's ids cut into blocks of at most ``block`` tokens. Causal: BOS (when the tokenizer has one),
    the text, EOS; masked: every block between the tokenizer's own special tokens."""
    body = tokenizer(join_sentences(sentences), add_special_tokens=False)["input_ids"]
    if kind == CAUSAL:
        ids = ([tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []) + body
        ids += [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        return [ids[i : i + block] for i in range(0, len(ids), block) if len(ids[i : i + block]) > 1]
    prefix, suffix = special_tokens_around(tokenizer)
    inner = block - len(prefix) - len(suffix)
    return [prefix + body[i : i + inner] + suffix for i in range(0, len(body), inner)]


def mask_tokens(ids, tokenizer, generator):
    """BERT's masking of a padded batch: 15% of the non-special tokens are predicted; of those, 80% become the
    mask token, 10% a random token, 10% stay. Returns ``(input ids, labels)`` (-100: not predicted)."""
    import torch

    labels = ids.clone()
    special = torch.isin(ids, torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=ids.dtype))
    chosen = (torch.rand(ids.shape, generator=generator) < MASK_SHARE) & ~special
    labels[~chosen] = -100
    ids = ids.clone()
    replace = chosen & (torch.rand(ids.shape, generator=generator) < 0.8)
    ids[replace] = tokenizer.mask_token_id
    randomize = chosen & ~replace & (torch.rand(ids.shape, generator=generator) < 0.5)
    ids[randomize] = torch.randint(len(tokenizer), ids.shape, generator=generator)[randomize]
    return ids, labels


class Collator:
    """Blocks -> a padded batch with ``labels`` (causal: the ids; masked: :func:`mask_tokens`, drawn from the
    global torch generator, which :func:`filters.training.fit` seeds per epoch)."""

    def __init__(self, tokenizer, kind: str, generator=None):
        self.tokenizer, self.kind, self.generator = tokenizer, kind, generator
        pad = tokenizer.pad_token_id
        self.pad = pad if pad is not None else (tokenizer.eos_token_id or 0)

    def __call__(self, blocks: list[list[int]]) -> dict:
        import torch

        width = max(len(b) for b in blocks)
        ids = torch.full((len(blocks), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(blocks), width), dtype=torch.long)
        for r, block in enumerate(blocks):
            ids[r, : len(block)] = torch.tensor(block)
            mask[r, : len(block)] = 1
        if self.kind == CAUSAL:
            labels = ids.masked_fill(mask == 0, -100)
        else:
            ids, labels = mask_tokens(ids, self.tokenizer, self.generator)
            labels = labels.masked_fill(mask == 0, -100)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def loss_terms(kind: str):
    """The predicted tokens of a batch (the terms its mean loss averages): causal LMs predict token ``t + 1``
    at position ``t``, so the first label of each row is never a term."""

    def count(batch: dict) -> int:
        labels = batch["labels"][:, 1:] if kind == CAUSAL else batch["labels"]
        return int((labels != -100).sum())

    return count


def perplexity(model, batches: list[dict], device: str, kind: str) -> tuple[float, int]:
    """``(exp(mean NLL of the predicted tokens), tokens)`` over fixed batches."""
    import torch

    total, count = 0.0, 0
    with torch.inference_mode():
        for batch in batches:
            batch = {k: v.to(device) for k, v in batch.items()}
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
            labels = batch["labels"]
            if kind == CAUSAL:  # position t predicts token t + 1
                logits, labels = logits[:, :-1], labels[:, 1:]
            nll = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), reduction="sum"
            )
            total += float(nll)
            count += int((labels != -100).sum())
    return (math.exp(total / count) if count else float("nan")), count


def finetune(config: FinetuneConfig) -> dict:
    """Fine-tune, keep the epoch with the lowest held-out perplexity, save model + tokenizer + provenance."""
    import torch

    from incoherent.filters.model import resolve_device

    docs = read_documents(config.data_dirs)
    excluded_ids, shuffle_files = shuffle_test_ids(config.exclude_shuffle_test)
    auto = [
        d
        for d in config.data_dirs
        if os.path.isdir(os.path.join(d, "work", "documents"))
        and _tables(os.path.join(d, "dataset"), "shuffle-")
    ]
    if auto:
        more, more_files = shuffle_test_ids(auto)
        excluded_ids |= more
        shuffle_files += more_files
    kept = [d for d in docs if d[0] not in excluded_ids]
    excluded = len(docs) - len(kept)
    if len(kept) < 2:
        raise InputError(
            f"{', '.join(config.data_dirs)}: {len(kept)} documents left to train on "
            f"({excluded} excluded as shuffle test documents)"
        )
    train_docs, held_docs = heldout_split(kept, config.heldout_fraction)
    base_dir = resolve_model(config.base_model, "--base-model")  # a directory, or a Hub name in the cache
    check_out(config.out, config.overwrite, [*config.data_dirs, base_dir], command="finetune-lm")
    device = resolve_device(config.device)
    torch.manual_seed(config.seed)
    model, tokenizer, kind = load_language_model(base_dir, config.scorer, device)
    base_provenance = read_provenance(base_dir)
    block = min(config.max_length, model_positions(model.config, config.base_model))
    if block < 4:
        raise InputError(f"--max-length: must be at least 4, got {config.max_length}")
    train_blocks = [b for _, s in train_docs for b in token_blocks(tokenizer, kind, s, block)]
    held_blocks = [b for _, s in held_docs for b in token_blocks(tokenizer, kind, s, block)]
    collate = Collator(tokenizer, kind)
    held_collate = Collator(tokenizer, kind, torch.Generator().manual_seed(config.seed))
    held_batches = [
        held_collate(held_blocks[i : i + config.batch_size])
        for i in range(0, len(held_blocks), config.batch_size)
    ]

    def evaluate(m) -> dict:
        value, tokens = perplexity(m, held_batches, device, kind)
        return {"heldout_perplexity": round(value, 4), "heldout_tokens": tokens}

    result = fit(
        model,
        train_blocks,
        collate,
        evaluate,
        key=lambda r: -r["heldout_perplexity"],
        name="finetune-lm",
        epochs=config.epochs,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        seed=config.seed,
        device=device,
        max_steps=config.max_steps,
        precision=config.precision,
        lengths=[len(b) for b in train_blocks],
        terms=loss_terms(kind),
    )
    kept = prepare_out(config.out)
    model.save_pretrained(config.out, safe_serialization=True)
    tokenizer.save_pretrained(config.out)
    provenance = {
        "command": "finetune-lm",
        "objective": f"{kind} language modelling",
        "base_model": config.base_model,
        "base_model_provenance": base_provenance,
        "data_dirs": list(config.data_dirs),
        "data_fingerprint": data_fingerprint(train_docs),
        "saw_shuffled_text": saw_shuffled_text(base_provenance),
        "train_documents": len(train_docs),
        "heldout_documents": len(held_docs),
        "excluded_shuffle_test_documents": excluded,
        "shuffle_test_files": shuffle_files,
        "epochs": config.epochs,
        "seed": config.seed,
        "config": asdict(config),
        "device": device,
        "block_tokens": block,
        **result,
        "files": files_written(config.out, kept, PROVENANCE),  # what a later --overwrite deletes
    }
    write_provenance(config.out, provenance)
    return provenance
