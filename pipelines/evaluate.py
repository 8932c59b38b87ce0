"""``incoherent evaluate MODEL_DIR DATA_DIR [--split test]``: the paper's metrics of an intruder classifier.

Document accuracy (a document is predicted incoherent when any sentence is predicted an intruder), sentence
F1 over non-opening sentences and the majority-class baseline, printed as a table and written as JSON
(``MODEL_DIR/eval-<split>.json`` unless ``--out FILE``).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from schemas.records import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model_dir", metavar="MODEL_DIR", help="a classifier from `incoherent train-filter`")
    parser.add_argument("data_dir", metavar="DATA_DIR", help="an intruder build")
    parser.add_argument("--split", default="test", help="split to evaluate (test)")
    parser.add_argument(
        "--out", default=None, metavar="FILE", help="JSON output (MODEL_DIR/eval-<split>.json)"
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help="(auto)")
    parser.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument("--batch-size", type=int, default=16, help="examples per batch (16)")
    parser.add_argument(
        "--max-length", type=int, default=None, help="input tokens (default: the training value, else 512)"
    )
    parser.add_argument("--threshold", type=float, default=0.5, help="intruder probability threshold (0.5)")
    parser.add_argument(
        "--predictions",
        metavar="FILE",
        help="also write each document's predicted intruder position (JSONL: id, intruder_index, predicted_index)",
    )


def _training_max_length(model_dir: str) -> int | None:
    try:
        with open(os.path.join(model_dir, "metrics.json"), encoding="utf-8") as f:
            return int(json.load(f)["config"]["max_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_predictions(path: str, rows: list[dict], scores: list[list[float]], threshold: float) -> None:
    """One JSON line per document: ``{"id", "intruder_index" (gold), "predicted_index"}`` (-1: coherent)."""
    from filters.metrics import predicted_index

    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row, doc_scores in zip(rows, scores, strict=True):
            record = {
                "id": row["id"],
                "intruder_index": row["intruder_index"],
                "predicted_index": predicted_index(doc_scores, threshold),
            }
            f.write(json.dumps(record) + "\n")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from filters import data, metrics
    from filters.model import ScoringModel

    if beam_args:
        raise InputError(f"evaluate: unrecognized arguments: {' '.join(beam_args)}")
    if not 0.0 < args.threshold < 1.0:
        raise InputError(f"--threshold: must be in (0, 1), got {args.threshold}")
    max_length = args.max_length or _training_max_length(args.model_dir) or 512
    rows = data.read_split(args.data_dir, args.split)
    started = time.time()
    scorer = ScoringModel.load(args.model_dir, args.device, args.dtype, args.batch_size, max_length)
    scores = scorer.score_documents([list(r["sentences"]) for r in rows])
    result = metrics.evaluate_scores([r["intruder_index"] for r in rows], scores, args.threshold)
    report = {
        "model_dir": args.model_dir,
        "data_dir": args.data_dir,
        "split": args.split,
        "device": scorer.device,
        "max_length": max_length,
        "truncated_inputs": scorer.last_counters.get("truncated", 0),
        "seconds": round(time.time() - started, 2),
        **result,
    }
    out = args.out or os.path.join(args.model_dir, f"eval-{args.split}.json")
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    if args.predictions:
        write_predictions(args.predictions, rows, scores, args.threshold)
    print(metrics.format_table(result, title=f"{args.model_dir} on {args.data_dir} [{args.split}]"))
    print(f"wrote {out}")
    return 0
