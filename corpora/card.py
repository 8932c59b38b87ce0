"""Dataset card (Hugging Face ``README.md``) for a finished build, from its files and run summaries.

The card's YAML lists every config and split with explicit ``data_files`` and the features of our explicit
schemas (``label`` as a ``ClassLabel`` with names ``coherent`` / ``intruder``), so ``load_dataset(DIR, config)``
works on the folder as it is, locally or on the Hub.
"""

from __future__ import annotations

import glob
import json
import os
from importlib.metadata import PackageNotFoundError, version

import pyarrow.parquet as pq
import yaml

from schemas import SCHEMA_VERSION, schema_for
from schemas.records import InputError

LABEL_NAMES = ["coherent", "intruder"]

COLUMN_DOCS = {
    "intruder": {
        "id": "stable document id (`wikipedia:<page id>`, `cnn:<sha1 of the story URL>`, `<source>:<id>`)",
        "sentences": "the document as a model sees it, intruder sentence in place",
        "label": "0 coherent, 1 contains an intruder sentence",
        "intruder_index": "position of the intruder sentence, -1 if none; never 0 (the opening sentence is kept)",
        "original_sentence": "the sentence that was replaced",
        "intruder_sentence": "the sentence put in its place",
        "intruder_source_id": "id of the neighbouring document the intruder comes from",
        "similarity": "TF-IDF cosine between the original and the intruder sentence (always below the threshold)",
        "filter_score": "adversarial classifier's intruder probability at that position (null without the filter)",
        "difficulty": "`hard`, `easy` or `unfiltered`",
        "num_candidates": "candidates that survived the similarity threshold",
        "fallback_reason": "why a document chosen to be incoherent stayed coherent",
        "split": "train / validation / test",
    },
    "shuffle": {
        "block_size": "k, the number of consecutive sentences per block",
        "permutation": "0..N-1: distinct block orders of the same document and k (`shuffle --permutations N`)",
        "original": "the first (up to 20) sentences of the document",
        "shuffled": "the same blocks in a different order, sentences inside a block unchanged",
        "block_order": "`shuffled` is `original`'s blocks in this order",
    },
    "candidates": {
        "replaced_index": "position of the sentence to replace",
        "candidate_sentence": "a non-opening sentence of a top-k neighbour",
        "similarity": "TF-IDF cosine with the replaced sentence (all candidates are kept; the threshold applies later)",
        "filter_score": "adversarial classifier's intruder probability (null without the filter)",
    },
}

CITATIONS = """```bibtex
@article{shen-etal-2021-evaluating,
  title = {Evaluating Document Coherence Modeling},
  author = {Shen, Aili and Mistica, Meladel and Salehi, Bahar and Li, Hang and Baldwin, Timothy and Qi, Jianzhong},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {9},
  pages = {621--640},
  year = {2021},
}

@inproceedings{laban-etal-2021-transformer,
  title = {Can Transformer Models Measure Coherence In Text: Re-Thinking the Shuffle Test},
  author = {Laban, Philippe and Dai, Luke and Bandarkar, Lucas and Hearst, Marti A.},
  booktitle = {Proceedings of ACL-IJCNLP 2021 (Volume 2: Short Papers)},
  pages = {1058--1064},
  year = {2021},
}
```"""


def _incoherent_version() -> str:
    try:
        return version("incoherent")
    except PackageNotFoundError:
        return "unknown"


def find_configs(dataset_dir: str) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [files]}}`` for every table under ``dataset_dir`` except dead letters."""
    configs: dict[str, dict[str, list[str]]] = {}
    for path in sorted(glob.glob(os.path.join(dataset_dir, "*", "*.parquet"))):
        config = os.path.basename(os.path.dirname(path))
        if config == "rejected":
            continue
        split = os.path.basename(path).split("-", 1)[0]
        configs.setdefault(config, {}).setdefault(split, []).append(path)
    if not configs:
        raise InputError(f"{dataset_dir}: no <config>/<split>-*.parquet tables to describe")
    return configs


def load_summaries(build_dir: str) -> list[dict]:
    """Every ``run_summary.json`` of the build; an incomplete run makes the build unusable."""
    summaries = []
    for path in sorted(glob.glob(os.path.join(build_dir, "**", "run_summary.json"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        if not summary.get("complete"):
            raise InputError(f"{path}: run did not complete; re-run it before writing a card")
        summary["_path"] = os.path.relpath(path, build_dir)
        summaries.append(summary)
    return summaries


def _features(config: str, files: list[str]) -> list[dict]:
    import datasets

    schema = schema_for(config)
    stored = pq.read_schema(files[0])
    if stored.remove_metadata() != schema.remove_metadata():
        raise InputError(
            f"{files[0]}: columns differ from the {config} schema (schema version {SCHEMA_VERSION})"
        )
    features = datasets.Features.from_arrow_schema(schema.remove_metadata())
    if "label" in features:
        features["label"] = datasets.ClassLabel(names=LABEL_NAMES)
    return features._to_yaml_list()


def _split_info(split: str, files: list[str]) -> dict:
    metas = [pq.ParquetFile(f).metadata for f in files]
    return {
        "name": split,
        "num_bytes": sum(m.row_group(i).total_byte_size for m in metas for i in range(m.num_row_groups)),
        "num_examples": sum(m.num_rows for m in metas),
    }


def card_metadata(dataset_dir: str, pretty_name: str, license_id: str) -> dict:
    configs = find_configs(dataset_dir)
    meta: dict = {
        "pretty_name": pretty_name,
        "language": ["en"],
        "license": license_id,
        "task_categories": ["text-classification"],
        "tags": ["coherence", "discourse", "intruder-sentence", "shuffle-test", "incoherent"],
        "configs": [],
        "dataset_info": [],
    }
    for config, splits in configs.items():
        meta["configs"].append(
            {
                "config_name": config,
                "data_files": [{"split": split, "path": f"{config}/{split}-*.parquet"} for split in splits],
            }
        )
        all_files = [f for files in splits.values() for f in files]
        meta["dataset_info"].append(
            {
                "config_name": config,
                "features": _features(config, all_files),
                "splits": [_split_info(split, files) for split, files in splits.items()],
            }
        )
    return meta


def _source_stats(summaries: list[dict]) -> list[str]:
    """Per-source construction figures of the intruder run (what INSteD reports), as markdown lines."""
    lines: list[str] = []
    for summary in summaries:
        for source, stats in sorted((summary.get("sources") or {}).items()):
            art = stats.get("artefact_check") or {}
            history = stats.get("history") or {}
            lines += [
                f"**{source}**: {stats.get('documents_read', 0):,} documents read, "
                f"{sum((stats.get('kept') or {}).values()):,} kept by the 3-8 sentence rule; "
                f"{stats.get('produced', 0):,} of {stats.get('incoherent_attempted', 0):,} intended intruders "
                f"produced (positive rate {stats.get('positive_rate')}); splits {stats.get('splits')}.",
                "",
            ]
            if stats.get("test_split"):
                lines += [f"- test split: {stats['test_split']}"]
            if history:
                lines += [
                    f"- history: {history.get('with_older_version', 0)} articles with an older version, "
                    f"{history.get('drifted', 0)} drifted, {history.get('test_from_history', 0)} test documents "
                    f"taken from older dumps"
                ]
            if "accuracy" in art:
                lines += [
                    f"- artefact check (single-sentence TF-IDF logistic regression, Shen et al. §4.4): accuracy "
                    f"{art['accuracy']:.3f} vs majority {art['majority_accuracy']:.3f}, intruder F1 {art['f1']:.3f}"
                ]
            lines.append("")
    return lines


def render_card(build_dir: str, dataset_dir: str, pretty_name: str, license_id: str) -> str:
    """The full ``README.md`` text: YAML front matter, then the human-readable card."""
    meta = card_metadata(dataset_dir, pretty_name, license_id)
    summaries = load_summaries(build_dir)
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {pretty_name}",
        "",
    ]
    lines += [
        "Coherence-evaluation corpora built with [`incoherent`](https://pypi.org/project/incoherent/) "
        f"{_incoherent_version()} (schema version {SCHEMA_VERSION}).",
        "",
        "- `intruder-*`: INSteD-style intruder-sentence detection (Shen et al., TACL 2021). Documents of 3-8 sentences; "
        "in about half of them one non-opening sentence is replaced by a non-opening sentence of one of the 10 most "
        "similar documents of the same source (DrQA hashed-bigram TF-IDF retrieval); candidates with TF-IDF cosine "
        ">= the similarity threshold to the replaced sentence are dropped.",
        "- `shuffle-*`: the k-block shuffle test (Laban et al., 2021): documents truncated to 20 sentences, blocks of k "
        "consecutive sentences put in a different order.",
        "- `candidates`: every intruder candidate with its similarity and filter score, so thresholds can be changed "
        "without re-running retrieval or the model.",
        "",
        "## Configs and splits",
        "",
        "| config | split | rows |",
        "|---|---|---:|",
    ]
    for info in meta["dataset_info"]:
        for split in info["splits"]:
            lines.append(f"| `{info['config_name']}` | {split['name']} | {split['num_examples']:,} |")
    lines += ["", "Labels: `0` = coherent, `1` = intruder.", ""]
    stats = _source_stats(summaries)
    if stats:
        lines += ["## Construction statistics", "", *stats]
    lines += ["## Columns", ""]
    for info in meta["dataset_info"]:
        table = info["config_name"].split("-", 1)[0]
        docs = COLUMN_DOCS.get(table, {})
        described = [f"- `{f['name']}`: {docs[f['name']]}" for f in info["features"] if f["name"] in docs]
        if described:
            lines += [f"`{info['config_name']}`:", "", *described, ""]
    lines += ["## Usage", "", "```python", "from datasets import load_dataset", ""]
    first = meta["configs"][0]["config_name"]
    lines += [f'ds = load_dataset("<this repo or folder>", "{first}")', "```", ""]
    lines += ["## How it was built", ""]
    for summary in summaries:
        params = json.dumps(summary.get("params", {}), sort_keys=True, default=str)
        lines.append(f"- `incoherent {summary['command']}` ({summary['_path']}): `{params}`")
    lines += [
        "",
        "Every record dropped on the way is counted in the `run_summary.json` files and kept with its reason under "
        "`rejected/`; ids are stable source ids and all randomness is derived from (seed, id), so the same inputs and "
        "seed rebuild the same rows.",
        "",
        "## Sources and licences",
        "",
        "Wikipedia text is CC BY-SA 3.0/4.0 and GFDL. CNN stories are CNN's copyright and are distributed for research "
        "in the DeepMind Q&A corpus; check the terms of every source you include before redistributing.",
        "",
        "## Citation",
        "",
        CITATIONS,
        "",
    ]
    return "\n".join(lines)


def write_card(build_dir: str, dataset_dir: str, pretty_name: str, license_id: str = "other") -> str:
    text = render_card(build_dir, dataset_dir, pretty_name, license_id)
    path = os.path.join(dataset_dir, "README.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path
