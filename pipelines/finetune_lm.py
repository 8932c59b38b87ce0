"""``incoherent finetune-lm DATA_DIR... --base-model MODEL_DIR --out MODEL_DIR``: in-domain LM fine-tuning.

Trains a causal or masked LM with its own loss on documents in their natural order (Laban et al.'s
"GPT2-med-ID"), leaving out the documents whose shuffles will be scored, and writes safetensors weights, the
tokenizer and ``provenance.json`` (:mod:`filters.finetune_lm`). No Beam here: one process, one device.
"""

from __future__ import annotations

import argparse

from incoherent.filters.hardware import add_precision_argument
from incoherent.pipelines.commands import DEVICE_HELP, add_overwrite, list_flag
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.pipelines.runtime.threads import (
    add_torch_threads_argument,
    check_torch_threads,
    torch_threads,
)

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "data_dirs",
        nargs="+",
        metavar="DATA_DIR",
        help="ingest output (documents-<source>/) or a build folder (its work/documents/)",
    )
    parser.add_argument(
        "--base-model",
        required=True,
        metavar="MODEL_DIR",
        help="a causal or masked LM: a directory, or a Hub name in the local Hugging Face cache",
    )
    parser.add_argument("--out", required=True, metavar="MODEL_DIR", help="where the fine-tuned model goes")
    list_flag(
        parser,
        "--exclude-shuffle-test",
        metavar="DIR",
        help="a shuffle dataset (shuffle-*/): its test documents are left out of training (several "
        "folders may be given; a build folder's dataset/ is found by itself; default: none)",
    )
    parser.add_argument(
        "--scorer", default="auto", choices=("auto", "causal", "masked"), help="LM head (auto)"
    )
    parser.add_argument("--epochs", type=int, default=3, help="training epochs (3)")
    parser.add_argument("--learning-rate", type=float, default=5e-5, help="AdamW learning rate (5e-5)")
    parser.add_argument("--batch-size", type=int, default=8, help="blocks per step (8)")
    parser.add_argument(
        "--max-length", type=int, default=512, help="tokens per block (512, at most the model's)"
    )
    parser.add_argument(
        "--heldout-fraction", type=float, default=0.1, help="documents held out for perplexity (0.1)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help=DEVICE_HELP)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    add_torch_threads_argument(parser, "torch threads (0: every core this process may use)")
    add_precision_argument(parser)
    add_overwrite(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    require_model_stack("finetune-lm")  # before any work: one line when the extra is missing
    from incoherent.pipelines.runtime.numbers import TRAINING, Rule, check_numbers

    check_numbers(vars(args), TRAINING | {"max_length": Rule(4, 1 << 24, whole=True)})  # before any loading
    from incoherent.filters.model_source import resolve_model

    resolve_model(args.base_model, "--base-model")  # a missing model is refused before torch loads
    from incoherent.filters.finetune_lm import FinetuneConfig, finetune

    config = FinetuneConfig(
        data_dirs=tuple(args.data_dirs),
        base_model=args.base_model,
        out=args.out,
        exclude_shuffle_test=tuple(args.exclude_shuffle_test),
        scorer=args.scorer,
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        max_length=args.max_length,
        heldout_fraction=args.heldout_fraction,
        seed=args.seed,
        device=args.device,
        max_steps=args.max_steps,
        overwrite=args.overwrite,
        precision=args.precision,
    )
    from incoherent.filters.threads import torch_threads_during

    with torch_threads_during(torch_threads(requested=check_torch_threads(args.torch_threads))):
        p = finetune(config)
    print(
        f"excluded {p['excluded_shuffle_test_documents']} shuffle test documents; trained on "
        f"{p['train_documents']} documents, {p['heldout_documents']} held out ({p['device']})"
    )
    print("epoch  held-out perplexity")
    for record in p["history"]:
        mark = "  <- kept" if record["epoch"] == p["chosen_epoch"] else ""
        print(f"{record['epoch']:>5}  {record['heldout_perplexity']:>19.3f}{mark}")
    print(f"wrote {args.out} (model.safetensors, tokenizer, provenance.json)")
    return 0
