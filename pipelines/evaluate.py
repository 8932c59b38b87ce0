"""``incoherent evaluate MODEL_DIR [MODEL_DIR ...] DATA_DIR [--split test]``: the paper's metrics of intruder
classifiers.

Document accuracy (a document is predicted incoherent when any sentence is predicted an intruder), sentence
F1 over non-opening sentences and the majority-class baseline, printed as a table and written as JSON
(``MODEL_DIR/eval-<split>.json`` unless ``--out FILE``).

With several models, or a dataset holding several sources, every train -> test pair is evaluated and printed
as INSteD's Table 3 (Shen et al., 2021): one row per pair (Wiki -> Wiki, CNN -> Wiki, ...), document accuracy
and sentence F1, the majority baseline beside them; the JSON gets the same rows under ``matrix``. A model's
name is ``NAME=`` before its directory, else the sources it was trained on (``metrics.json`` of
``train-filter``), else the directory's name. Several models need ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from incoherent.filters.model_source import cached_snapshot, resolve_model
from incoherent.pipelines.commands import DEVICE_HELP, DTYPE_HELP, add_overwrite
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)
OUT_IS_FILE = True  # --out names a JSON file: no folder lock (pipelines.cli)
OUTPUTS = ("predictions",)  # written too: apart from every input, like --out (pipelines.runtime.safety)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model_dirs",
        nargs="+",
        metavar="MODEL_DIR",
        help="classifiers from `incoherent train-filter` ([NAME=]DIR, DIR a directory or a Hub name in the "
        "local Hugging Face cache; several: a train -> test matrix)",
    )
    parser.add_argument(
        "data_dir",
        metavar="DATA_DIR",
        help="an intruder build, or the output of `incoherent probes` (INSteD's Table 7: F1 and ΔF1 per phenomenon)",
    )
    parser.add_argument("--split", default="test", help="split to evaluate (test)")
    parser.add_argument(
        "--out", default=None, metavar="FILE", help="JSON output (MODEL_DIR/eval-<split>.json)"
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help=DEVICE_HELP)
    parser.add_argument(
        "--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"), help=DTYPE_HELP
    )
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
    add_overwrite(parser, "--out and --predictions (the files)")


def _training_metrics(model_dir: str) -> dict:
    try:
        with open(os.path.join(model_dir, "metrics.json"), encoding="utf-8") as f:
            value = json.load(f)
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def model_names(specs: list[str]) -> list[tuple[str, str]]:
    """``[NAME=]DIR`` -> ``(name, dir)``: the given name, else the sources it was trained on, else the folder's
    name; names must differ."""
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or os.path.isdir(spec):
            path = resolve_model(spec, "MODEL_DIR")  # a directory, or a Hub name in the local cache
            sources = _training_metrics(path).get("train_sources") or []
            name = "+".join(sources) if sources else os.path.basename(spec.rstrip("/"))
        else:
            path = resolve_model(path, "MODEL_DIR")
        out.append((name, path))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise InputError(
            f"MODEL_DIR: two models are named {sorted({n for n in names if names.count(n) > 1})}; "
            "name them NAME=DIR"
        )
    return out


def cross_domain(
    names_and_scores: list[tuple[str, list[list[float]]]], rows: list[dict], threshold: float
) -> list[dict]:
    """The rows of INSteD's Table 3: every (train model, test source) pair's document accuracy and sentence F1,
    the majority baseline beside them.

    >>> rows = [{"source": "cnn", "intruder_index": 1}, {"source": "wiki", "intruder_index": -1}]
    >>> [(m["train"], m["test"], m["document_accuracy"]) for m in cross_domain([("wiki", [[0.9], [0.8]])], rows, 0.5)]
    [('wiki', 'cnn', 1.0), ('wiki', 'wiki', 0.0)]
    """
    from incoherent.filters import metrics

    sources = sorted({r["source"] for r in rows})
    matrix = []
    for name, scores in names_and_scores:
        for source in sources:
            picked = [i for i, r in enumerate(rows) if r["source"] == source]
            result = metrics.evaluate_scores(
                [rows[i]["intruder_index"] for i in picked], [scores[i] for i in picked], threshold
            )
            matrix.append(
                {
                    "train": name,
                    "test": source,
                    "documents": result["documents"],
                    "document_accuracy": result["document_accuracy"],
                    "sentence_f1": result["sentence"]["f1"],
                    "majority_document_accuracy": result["majority"]["document_accuracy"],
                    "majority_sentence_f1": result["majority"]["sentence_f1"],
                }
            )
    return matrix


def format_matrix(matrix: list[dict], title: str = "") -> str:
    """INSteD's Table 3 layout: one line per train -> test pair."""
    width = max([len("train -> test")] + [len(f"{m['train']} -> {m['test']}") for m in matrix]) + 2
    lines = [title] if title else []
    lines.append(
        "train -> test".ljust(width)
        + f"{'doc acc':>9}{'sent F1':>9}   | majority: {'doc acc':>9}{'sent F1':>9}{'docs':>7}"
    )
    for m in matrix:
        lines.append(
            f"{m['train']} -> {m['test']}".ljust(width)
            + f"{m['document_accuracy']:>9.4f}{m['sentence_f1']:>9.4f}   |           "
            + f"{m['majority_document_accuracy']:>9.4f}{m['majority_sentence_f1']:>9.4f}{m['documents']:>7}"
        )
    return "\n".join(lines)


def _training_max_length(model_dir: str) -> int | None:
    try:
        with open(os.path.join(model_dir, "metrics.json"), encoding="utf-8") as f:
            return int(json.load(f)["config"]["max_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_predictions(path: str, rows: list[dict], scores: list[list[float]], threshold: float) -> None:
    """One JSON line per document: ``{"id", "intruder_index" (gold), "predicted_index"}`` (-1: coherent)."""
    from incoherent.filters.metrics import predicted_index

    lines = []
    for row, doc_scores in zip(rows, scores, strict=True):
        record = {
            "id": row["id"],
            "intruder_index": row["intruder_index"],
            "predicted_index": predicted_index(doc_scores, threshold),
        }
        lines.append(json.dumps(record) + "\n")
    write_output(path, "".join(lines))


def check_output_file(path: str, option: str, overwrite: bool) -> None:
    """A file to write (:func:`incoherent.fileio.outputs.check_output_file`): one line before any work; an existing file
    only with ``--overwrite`` and only an earlier output of ``evaluate``."""
    from incoherent.fileio.outputs import check_output_file as check

    check(path, option, "evaluate", overwrite)


def write_output(path: str, text: str) -> None:
    """Write one of evaluate's files with its marker (:func:`incoherent.fileio.outputs.write_output_file`): a link there is
    replaced, never written through."""
    from incoherent.fileio.outputs import write_output_file

    write_output_file(path, text.encode("utf-8"), "evaluate")


def run_probes(args: argparse.Namespace, models: list[tuple[str, str]]) -> int:
    """INSteD's Table 7 on a probes folder: per phenomenon and model, sentence F1 unprobed and ΔF1 probed."""
    from incoherent.filters import probe_metrics
    from incoherent.filters.model import ScoringModel

    if args.predictions:
        raise InputError("--predictions: not with a probes folder (its JSON holds every figure)")
    if len(models) > 1 and not args.out:
        raise InputError("--out: several models write one table; name its JSON file with --out FILE")
    tables = probe_metrics.read_probes(args.data_dir, args.split)
    docs = probe_metrics.documents(tables)
    started = time.time()
    results = {}
    for name, model_dir in models:
        max_length = args.max_length or _training_max_length(model_dir) or 512
        scorer = ScoringModel.load(model_dir, args.device, args.dtype, args.batch_size, max_length)
        scores = dict(zip(map(tuple, docs), scorer.score_documents(docs), strict=True))
        results[name] = probe_metrics.table7(tables, scores, args.threshold)
    report = {
        "data_dir": args.data_dir,
        "split": args.split,
        "threshold": args.threshold,
        "seconds": round(time.time() - started, 2),
        "models": {name: {"model_dir": d, "phenomena": results[name]} for name, d in models},
        "missing_phenomena": probe_metrics.missing_phenomena(tables),
    }
    out = args.out or os.path.join(models[0][1], f"probes-{args.split}.json")
    check_output_file(out, "--out", args.overwrite)
    write_output(out, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    title = f"probes {args.data_dir} [{args.split}]: sentence F1 unprobed, ΔF1 probed (INSteD Table 7 layout)"
    print(probe_metrics.format_table7(results, title))
    missing = probe_metrics.missing_line(report["missing_phenomena"], args.data_dir, args.split)
    if missing:
        print(missing)
    print(f"wrote {out}")
    return 0


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    require_model_stack("evaluate")  # before any work: one line when the extra is missing
    from incoherent.pipelines.runtime.numbers import AT_LEAST_ONE, Rule, check_numbers

    if not 0.0 < args.threshold < 1.0:  # nan fails this too
        raise InputError(f"--threshold: must be in (0, 1), got {args.threshold}")
    # the same floor as train-filter's: a sentence and its document need room
    check_numbers(vars(args), {"batch_size": AT_LEAST_ONE, "max_length": Rule(16, 1 << 24, whole=True)})
    for option, path in (("--out", args.out), ("--predictions", args.predictions)):
        if path is not None:  # '' too: one line, not the default file or no file at all
            check_output_file(path, option, args.overwrite)
    models = model_names(args.model_dirs)  # a missing model is refused before torch loads
    from incoherent.filters import data, metrics, probe_metrics
    from incoherent.filters.model import ScoringModel

    if probe_metrics.is_probes_dir(args.data_dir):
        return run_probes(args, models)
    out = args.out or os.path.join(models[0][1], f"eval-{args.split}.json")
    check_output_file(out, "--out", args.overwrite)
    rows = data.read_split(args.data_dir, args.split)
    sources = sorted({r.get("source") or "" for r in rows})
    if len(models) > 1 and not args.out:
        raise InputError("--out: several models write one matrix; name its JSON file with --out FILE")
    if not args.out and cached_snapshot(args.model_dirs[0]) == models[0][1]:
        raise InputError("--out: a model from the Hugging Face cache is never written to; name the JSON file")
    if len(models) > 1 and args.predictions:
        raise InputError("--predictions: only with one model")
    started = time.time()
    scored, reports = [], {}
    for name, model_dir in models:
        max_length = args.max_length or _training_max_length(model_dir) or 512
        scorer = ScoringModel.load(model_dir, args.device, args.dtype, args.batch_size, max_length)
        scores = scorer.score_documents([list(r["sentences"]) for r in rows])
        result = metrics.evaluate_scores([r["intruder_index"] for r in rows], scores, args.threshold)
        scored.append((name, scores))
        reports[name] = {
            "model_dir": model_dir,
            "device": scorer.device,
            "max_length": max_length,
            "truncated_inputs": scorer.last_counters.get("truncated", 0),
            **result,
        }
    model_dir = models[0][1]
    if len(models) == 1:
        report = {
            "model_dir": model_dir,
            "data_dir": args.data_dir,
            "split": args.split,
            "seconds": round(time.time() - started, 2),
            **{k: v for k, v in reports[models[0][0]].items() if k != "model_dir"},
        }
        report = {k: report[k] for k in ("model_dir", "data_dir", "split", "device", "max_length",
                                          "truncated_inputs", "seconds")} | report  # fmt: skip
    else:
        report = {
            "data_dir": args.data_dir,
            "split": args.split,
            "seconds": round(time.time() - started, 2),
            "models": reports,
        }
    matrix = cross_domain(scored, rows, args.threshold) if len(models) > 1 or len(sources) > 1 else None
    if matrix is not None:
        report["matrix"] = matrix
    write_output(out, json.dumps(report, indent=2) + "\n")
    if args.predictions:
        write_predictions(args.predictions, rows, scored[0][1], args.threshold)
    for name, model_dir in models:
        print(metrics.format_table(reports[name], title=f"{model_dir} on {args.data_dir} [{args.split}]"))
    if matrix is not None:
        print(
            format_matrix(
                matrix, title=f"train -> test on {args.data_dir} [{args.split}] (INSteD Table 3 layout)"
            )
        )
    print(f"wrote {out}")
    return 0
