"""Training throughput of ``finetune-lm`` and ``train-shuffle`` against a plain Hugging Face ``Trainer`` loop,
same model, same data, same run.

Data: the bundled WSJ sample (199 documents, cut to 20 sentences) written as ingest output, and its k = 1
shuffles with every document in the train split. Model: a randomly initialised GPT-2 built here, offline
(``--model tiny``: 128 positions, width 64, 2 layers, a byte-level BPE tokenizer of 400 tokens trained on the
samples; ``--model small``: GPT-2 small's sizes, 1024 positions, width 768, 12 layers, for a GPU).

- **finetune-lm** (:func:`filters.finetune_lm.finetune`) against ``Trainer`` + ``DataCollatorForLanguageModeling
  (mlm=False)`` on the very same token blocks (:func:`filters.finetune_lm.token_blocks`);
- **train-shuffle** (:func:`filters.shuffle_classifier.train_shuffle`) against ``Trainer`` with
  ``GPT2ForSequenceClassification`` on the very same encoded examples.

Each side runs ``--repeats`` times (2), alternated with the other, and its fastest run counts; on a CPU torch
uses ``--threads`` (1: tiny models on a shared machine train fastest on one thread, and two threads contend
badly with other processes). Both sides: one epoch, batch size 8 (LM) / 16 (classifier), the same learning
rate, fp32, no evaluation
inside the timed loop (ours evaluates between epochs, outside its ``train_seconds``; ``Trainer`` runs with
``eval_strategy="no"``, ``save_strategy="no"``). Tokens/s = the non-padding input tokens of the batches run
/ the seconds of the training loop. Needs the ``bench`` extra (``accelerate``, which ``Trainer`` requires).

    python bench/bench_train.py                               # CPU, tiny GPT-2
    python bench/bench_train.py --device cuda --model small   # a GPU

Prints a JSON report. On a shared machine compare the ratios, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def build_model(out: str, size: str) -> str:
    from tests.tiny_lm import build_gpt2, build_gpt2_tokenizer

    if size == "small":
        return build_gpt2(out, build_gpt2_tokenizer(), n_positions=1024, n_embd=768, n_layer=12, n_head=12)
    return build_gpt2(out, build_gpt2_tokenizer(), n_positions=128, n_embd=64, n_layer=2, n_head=4)


def build_data(work: str) -> tuple[str, str]:
    from incoherent.pipelines.cli import main
    from tests.shuffle_fixtures import write_documents
    from tests.tiny_model import sample_documents

    docs = write_documents(os.path.join(work, "docs"), sample_documents(min_sentences=3, max_sentences=20))
    shuffled = os.path.join(work, "shuffle")
    argv = ["shuffle", docs, "--out", shuffled, "--block-sizes", "1", "--test-fraction", "0"]
    assert main([*argv, "--runner", "DirectRunner"]) == 0
    return docs, shuffled


def trainer_run(
    model, dataset, collator, batch_size: int, learning_rate: float, device: str, out: str, **flags
) -> float:
    """Seconds of ``Trainer.train()`` for one epoch (``flags``: more ``TrainingArguments``)."""
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=out,
        per_device_train_batch_size=batch_size,
        num_train_epochs=1,
        learning_rate=learning_rate,
        lr_scheduler_type="constant",
        weight_decay=0.0,
        max_grad_norm=1.0,
        eval_strategy="no",
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        use_cpu=device == "cpu",
        dataloader_num_workers=0,
        seed=0,
        disable_tqdm=True,
        **flags,
    )
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=collator)
    started = time.perf_counter()
    trainer.train()
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return time.perf_counter() - started


class ListDataset:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("tiny", "small"), default="tiny")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--out", help="also write the JSON report here")
    parser.add_argument(
        "--repeats", type=int, default=2, help="runs of each side, alternated; the fastest counts"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads on a CPU (1)")
    args = parser.parse_args()
    import torch
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
        carve_validation,
        encode,
        examples_of,
        read_pairs,
        shuffle_split_files,
        train_shuffle,
    )

    if args.device == "cpu":
        torch.set_num_threads(args.threads)
    report: dict = {"model": args.model, "device": args.device, "torch_threads": torch.get_num_threads()}
    with tempfile.TemporaryDirectory() as work:
        base = build_model(os.path.join(work, "base"), args.model)
        docs, shuffled = build_data(work)
        tokenizer = open_tokenizer(base)
        positions = 128 if args.model == "tiny" else 1024

        train_docs, _ = heldout_split(read_documents([docs]), 0.05)
        blocks = [b for _, s in train_docs for b in token_blocks(tokenizer, "causal", s, positions)]
        tokenizer.pad_token = tokenizer.eos_token
        pairs, _ = carve_validation(read_pairs(shuffle_split_files(shuffled)["train"], (1,)))
        items = [
            {"input_ids": encode(tokenizer, s, positions), "labels": y} for _, s, y in examples_of(pairs)
        ]

        def ours_lm(i):
            result = finetune(
                FinetuneConfig(
                    data_dirs=(docs,), base_model=base, out=os.path.join(work, f"ft{i}"), epochs=1,
                    learning_rate=5e-5, batch_size=8, max_length=positions, heldout_fraction=0.05,
                    device=args.device,
                )
            )  # fmt: skip
            assert result["train_documents"] == len(train_docs)
            return result["tokens"], result["train_seconds"]

        def trainer_lm(i):
            model = AutoModelForCausalLM.from_pretrained(base, use_safetensors=True, trust_remote_code=False)
            seconds = trainer_run(
                model, ListDataset([{"input_ids": b} for b in blocks]),
                DataCollatorForLanguageModeling(tokenizer, mlm=False), 8, 5e-5, args.device,
                os.path.join(work, f"t1-{i}"),
            )  # fmt: skip
            return sum(len(b) for b in blocks), seconds

        def ours_classifier(i):
            result = train_shuffle(
                ShuffleTrainConfig(
                    data_dir=shuffled, base_model=base, out=os.path.join(work, f"cls{i}"), epochs=1,
                    learning_rate=1e-5, batch_size=16, max_length=positions, device=args.device,
                )
            )  # fmt: skip
            assert result["train_examples"] == len(items)
            return result["tokens"], result["train_seconds"]

        def trainer_classifier(i):
            model = AutoModelForSequenceClassification.from_pretrained(
                base, use_safetensors=True, trust_remote_code=False, num_labels=2, id2label=ID2LABEL,
                label2id=LABEL2ID,
            )  # fmt: skip
            model.config.pad_token_id = tokenizer.pad_token_id
            seconds = trainer_run(
                model, ListDataset(items), DataCollatorWithPadding(tokenizer), 16, 1e-5, args.device,
                os.path.join(work, f"t2-{i}"),
            )  # fmt: skip
            return sum(len(i["input_ids"]) for i in items), seconds

        runs = {"finetune_lm": ours_lm, "trainer_lm": trainer_lm}
        runs |= {"train_shuffle": ours_classifier, "trainer_classifier": trainer_classifier}
        for name in runs:
            report[name] = {"seconds_each": []}
        for repeat in range(args.repeats):  # alternated, so a burst of load on the machine hits both sides
            for name, run in runs.items():
                tokens, seconds = run(repeat)
                report[name]["tokens"] = tokens
                report[name]["seconds_each"].append(round(seconds, 3))
        for name in runs:
            report[name]["seconds"] = min(report[name]["seconds_each"])

    for name in ("finetune_lm", "trainer_lm", "train_shuffle", "trainer_classifier"):
        run = report[name]
        run["tokens_per_second"] = round(run["tokens"] / run["seconds"], 1) if run["seconds"] else None
    report["ratio_finetune_lm_vs_trainer"] = round(
        report["finetune_lm"]["tokens_per_second"] / report["trainer_lm"]["tokens_per_second"], 3
    )
    report["ratio_train_shuffle_vs_trainer"] = round(
        report["train_shuffle"]["tokens_per_second"] / report["trainer_classifier"]["tokens_per_second"], 3
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
