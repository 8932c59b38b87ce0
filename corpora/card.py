"""Dataset card (Hugging Face ``README.md``) for a finished build, from its Parquet tables and run summaries.

The card's YAML lists every config and split with explicit ``data_files`` and the features of our explicit
schemas (``label`` as a ``ClassLabel`` with names ``coherent`` / ``intruder``), marks the main intruder config
``default: true`` and derives the licence from the sources, so ``load_dataset(DIR)`` works on the folder as it
is, locally or on the Hub. The body holds INSteD-style statistics (read column-wise from the Parquet files,
:mod:`corpora.card_stats`), PNG figures under ``figures/`` (:mod:`corpora.card_figures`) and the provenance of
the build without local paths (:mod:`corpora.provenance`). Sanitised copies of the run summaries go to
``summaries/`` so that what is published says how it was built. Nothing in the card depends on the time of the
run, so the same build gives the same card.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, metadata, version

import pyarrow.parquet as pq
import yaml

from corpora import card_figures, card_stats
from corpora.provenance import describe_input, relativise
from schemas import SCHEMA_VERSION, schema_for
from schemas.records import InputError
from sources.outputs import make_folder, replace_text
from sources.paths import Files, LocalFiles, is_remote

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
    "probe": {
        "phenomenon": "INSteD's linguistic phenomenon (Shen et al. 2021, Table 7) the probe applies",
        "sentences": "the document with the probed intruder sentence in place",
        "intruder_index": "position of the (probed) intruder sentence",
        "intruder_sentence": "the intruder sentence before the probe",
        "probed_sentence": "the intruder sentence after the probe's minimal edit",
        "edits": "the edit: character spans in the intruder sentence, the characters before and after",
        "source_id": "the document's id in its input (an INSteD JSONL file: its `file_id`)",
        "file_id": "INSteD's `file_id` (for a build: the numbering of `incoherent export insted`)",
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


BUILD_SUMMARY = "build_summary.json"
SUMMARIES = "summaries"
WIKIPEDIA_LICENSE = "cc-by-sa-4.0"
TASK_CATEGORIES = ["text-classification"]
TASK_IDS = ["acceptability-classification", "text-scoring"]
VERSIONED = ["incoherent", "apache-beam", "transformers", "datasets", "huggingface-hub", "pyarrow"]
SIZE_CATEGORIES = [
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
]


LOCAL = LocalFiles()  # the local disk; pipelines/card.py passes Beam's filesystems for a remote build


def _read_json(path: str, files: Files) -> dict:
    with files.open(path) as f:
        return json.loads(f.read().decode("utf-8"))


def _version(package: str, missing: str = "unknown") -> str:
    """The installed version of ``package``, else ``missing`` (``incoherent`` run from a tree is "unknown";
    a library that is not installed, transformers in a light install, is "not installed")."""
    try:
        return version(package)
    except PackageNotFoundError:
        return missing


def _incoherent_version() -> str:
    return _version("incoherent")


HOME_LABELS = ("homepage", "home", "repository", "source", "documentation")


def tool_link() -> str:
    """The tool's name for the card, linked to the project's home from the installed package's metadata
    (``Project-URL: Homepage, https://...`` from ``[project.urls]``), or without a link when the metadata
    declares none: the card never links a page that does not exist (how the build was made is in the dataset's
    own ``summaries/`` either way)."""
    try:
        entries = metadata("incoherent").get_all("Project-URL") or []
    except PackageNotFoundError:
        entries = []
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls[label.strip().lower()] = url.strip()
    for label in HOME_LABELS:
        if urls.get(label, "").startswith("https://"):
            return f"[`incoherent`]({urls[label]})"
    return "`incoherent`"


def find_configs(dataset_dir: str, files: Files = LOCAL) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [files]}}`` for every table under ``dataset_dir`` except dead letters."""
    configs: dict[str, dict[str, list[str]]] = {}
    for path in files.glob(os.path.join(dataset_dir, "*", "*.parquet")):
        config = os.path.basename(os.path.dirname(path))
        if config == "rejected":
            continue
        split = os.path.basename(path).split("-", 1)[0]
        configs.setdefault(config, {}).setdefault(split, []).append(path)
    if not configs:
        raise InputError(f"{dataset_dir}: no <config>/<split>-*.parquet tables to describe")
    return configs


def load_summaries(build_dir: str) -> list[dict]:
    """Every ``run_summary.json`` of the build (not the published copies under ``summaries/``).

    An incomplete run, or one written by another schema version, makes the build unusable.
    """
    summaries = []
    for path in sorted(glob.glob(os.path.join(build_dir, "**", "run_summary.json"), recursive=True)):
        if SUMMARIES in os.path.relpath(path, build_dir).split(os.sep):
            continue  # the card's own copies
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        if not summary.get("complete"):
            raise InputError(f"{path}: run did not complete; re-run it before writing a card")
        found = summary.get("schema_version")
        if str(found) != SCHEMA_VERSION:
            raise InputError(
                f"{path}: written with schema version {found or '(none)'}, this incoherent writes "
                f"{SCHEMA_VERSION}; rebuild with this version"
            )
        summary["_path"] = os.path.relpath(path, build_dir)
        summaries.append(summary)
    return summaries


RUN_SUMMARY = "run_summary.json"


def summary_files(paths: list[str], build_dir: str) -> list[tuple[str, str]]:
    """``(path, path relative to build_dir)`` of the files among ``paths`` (a listing of the build's JSON files)
    that the card reads: every ``run_summary.json`` and the ``build_summary.json``. Never the other JSON a build
    holds (an index's ``ids.json`` has a line per document): a remote build's driver copies only these, so what
    it moves does not grow with the corpus.

    >>> summary_files(["b/build_summary.json", "b/work/index/ids.json", "b/work/index/run_summary.json"], "b")
    [('b/build_summary.json', 'build_summary.json'), ('b/work/index/run_summary.json', 'work/index/run_summary.json')]
    """
    prefix = build_dir.rstrip("/") + "/"
    chosen = []
    for path in paths:
        relative = path[len(prefix) :] if path.startswith(prefix) else None
        if relative and (relative == BUILD_SUMMARY or relative.rsplit("/", 1)[-1] == RUN_SUMMARY):
            chosen.append((path, relative))
    return chosen


def load_build_summary(build_dir: str) -> dict | None:
    """``build_summary.json`` of an ``incoherent build`` (None for folders of single commands)."""
    path = os.path.join(build_dir, BUILD_SUMMARY)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        summary = json.load(f)
    return summary


def check_table_versions(configs: dict[str, dict[str, list[str]]], files: Files = LOCAL) -> None:
    """Every table must carry this version's ``incoherent.schema_version`` in its Parquet metadata."""
    for splits in configs.values():
        for paths in splits.values():
            for path in paths:
                with files.open(path) as handle:
                    metadata = pq.read_schema(handle).metadata or {}
                found = metadata.get(b"incoherent.schema_version", b"").decode() or "(none)"
                if found != SCHEMA_VERSION:
                    raise InputError(
                        f"{path}: table of schema version {found}, this incoherent writes {SCHEMA_VERSION}; "
                        "rebuild with this version"
                    )


def _features(config: str, paths: list[str], files: Files = LOCAL) -> list[dict]:
    import datasets

    schema = schema_for(config)
    with files.open(paths[0]) as handle:
        stored = pq.read_schema(handle)
    if stored.remove_metadata() != schema.remove_metadata():
        raise InputError(
            f"{paths[0]}: columns differ from the {config} schema (schema version {SCHEMA_VERSION})"
        )
    features = datasets.Features.from_arrow_schema(schema.remove_metadata())
    if "label" in features:
        features["label"] = datasets.ClassLabel(names=LABEL_NAMES)
    return features._to_yaml_list()


def _split_info(split: str, paths: list[str], files: Files = LOCAL) -> dict:
    metas = []
    for path in paths:
        with files.open(path) as handle:
            metas.append(pq.ParquetFile(handle).metadata)
    return {
        "name": split,
        "num_bytes": sum(m.row_group(i).total_byte_size for m in metas for i in range(m.num_row_groups)),
        "num_examples": sum(m.num_rows for m in metas),
    }


def default_config(configs) -> str:
    """The config ``load_dataset(REPO)`` loads: ``intruder-wikipedia``, else the first intruder, shuffle, any."""
    names = sorted(configs)
    for prefix in ("intruder-wikipedia", "intruder-", "shuffle-"):
        for name in names:
            if name == prefix or (prefix.endswith("-") and name.startswith(prefix)):
                return name
    return names[0]


def ingest_runs(summaries: list[dict]):
    """``(summary, kind, params)`` of each ingest run: ``command: "ingest cnn"`` -> kind ``"cnn"``."""
    for summary in summaries:
        command = str(summary.get("command", ""))
        if command.startswith("ingest "):
            yield summary, command.split(" ", 1)[1], summary.get("params") or {}


def source_kinds(summaries: list[dict]) -> dict[str, str]:
    """``{source: kind}`` from the ingest runs: ``incoherent ingest wikipedia --source w`` -> ``{"w": "wikipedia"}``."""
    kinds: dict[str, str] = {}
    for summary, kind, params in ingest_runs(summaries):
        names = list(summary.get("outputs") or {})
        sources = [n.removeprefix("documents-") for n in names if n.startswith("documents-")]
        for source in sources or [params.get("source") or kind]:
            kinds[source] = kind
    return kinds


def config_sources(configs: dict[str, dict[str, list[str]]], stats: dict) -> dict[str, set[str]]:
    """The sources whose text each config holds (``intruder-cnn`` -> ``{"cnn"}``; candidates: the sources its
    statistics counted rows of)."""
    out = {}
    for config in configs:
        if config.startswith("probe-"):  # probe-<phenomenon>: the sources of its rows
            out[config] = set(stats.get("probe", {}).get(config.removeprefix("probe-"), {}))
        else:
            out[config] = {config.split("-", 1)[1]} if "-" in config else set(stats["candidates"])
    return out


# The terms of each kind of source, as the card states them; a text collection's are the build config's
# `sources.<name>.license` (the card cannot know them otherwise).
KIND_TERMS = {
    "wikipedia": "Wikipedia text: CC BY-SA 3.0/4.0 and GFDL; attribution by the page URLs (the `url` column)",
    "cnn": "CNN stories: CNN's copyright, distributed for research in the DeepMind Q&A corpus (research use)",
}
KIND_NAMES = {"wikipedia": "Wikipedia dump", "cnn": "CNN stories", "text": "text collection"}
TABLE_KINDS = {  # what each kind of table is, for the card's opening list (only the kinds that were built)
    "intruder": "INSteD-style intruder-sentence detection (Shen et al., TACL 2021). Documents of 3-8 sentences; "
    "in about half of them one non-opening sentence is replaced by a non-opening sentence of one of the 10 most "
    "similar documents of the same source (DrQA hashed-bigram TF-IDF retrieval); candidates with TF-IDF cosine "
    ">= the similarity threshold to the replaced sentence are dropped.",
    "shuffle": "the k-block shuffle test (Laban et al., 2021): documents truncated to 20 sentences, blocks of k "
    "consecutive sentences put in a different order.",
    "candidates": "every intruder candidate with its similarity and filter score, so thresholds can be changed "
    "without re-running retrieval or the model.",
}


def source_terms(source: str, kinds: dict[str, str], build: dict | None) -> str:
    """The licence terms of one source's text: the build config's ``sources.<name>.license``, else its kind's.

    >>> source_terms("cnn", {"cnn": "cnn"}, None).startswith("CNN stories: CNN's copyright")
    True
    >>> source_terms("wsj", {"wsj": "text"}, {"resolved": {"sources": {"wsj": {"license": "LDC, non-commercial"}}}})
    'LDC, non-commercial'
    """
    spec = (((build or {}).get("resolved") or {}).get("sources") or {}).get(source) or {}
    if spec.get("license"):
        return str(spec["license"])
    kind = kinds.get(source)
    if kind in KIND_TERMS:
        return KIND_TERMS[kind]
    return (
        "not recorded: give the collection's terms as `sources.<name>.license` in the build config, and check "
        "them before redistributing"
    )


def built_section(
    configs: dict, sources: dict[str, set[str]], kinds: dict[str, str], build: dict | None
) -> list[str]:
    """What this dataset holds: each source with its configs, and the build's sources that were not built."""
    lines = ["## What was built", ""]
    for source in sorted(set().union(*sources.values()) if sources else set()):
        held = ", ".join(f"`{c}`" for c in sorted(configs) if source in sources[c])
        kind = KIND_NAMES.get(kinds.get(source, ""), "source of unknown kind")
        lines.append(f"- `{source}` ({kind}): {held}")
    skipped = (build or {}).get("skipped_sources") or {}
    if skipped:
        lines += [
            "",
            f"Not built: {', '.join(f'`{s}`' for s in sorted(skipped))}, sources of the build config whose inputs "
            "were missing when it ran (optional sources are skipped, and said so); this dataset holds none of "
            "their text.",
        ]
    corpora = ((build or {}).get("resolved") or {}).get("corpora")
    if corpora:
        lines += ["", f"Corpora the build config asked for: {', '.join(corpora)}."]
    return lines + [""]


def derive_license(sources: set[str], kinds: dict[str, str]) -> tuple[str, str]:
    """``(licence id, reason)``: CC BY-SA 4.0 when every source is Wikipedia-derived, ``other`` otherwise.

    >>> derive_license({"wikipedia"}, {"wikipedia": "wikipedia"})[0]
    'cc-by-sa-4.0'
    >>> derive_license({"wikipedia", "cnn"}, {"wikipedia": "wikipedia", "cnn": "cnn"})
    ('other', 'not only Wikipedia text: cnn (cnn)')
    """
    others = sorted(s for s in sources if kinds.get(s) != "wikipedia")
    if sources and not others:
        return (
            WIKIPEDIA_LICENSE,
            "every config holds Wikipedia text only (CC BY-SA 4.0, attribution: the page URLs)",
        )
    described = ", ".join(f"{s} ({kinds.get(s, 'unknown kind')})" for s in others)
    return "other", f"not only Wikipedia text: {described}"


def size_category(rows: int) -> str:
    for bound, label in SIZE_CATEGORIES:
        if rows < bound:
            return label
    return "n>1T"


def card_metadata(
    dataset_dir: str,
    pretty_name: str,
    license_id: str,
    configs: dict[str, dict[str, list[str]]] | None = None,
    files: Files = LOCAL,
) -> dict:
    configs = configs or find_configs(dataset_dir, files)
    default = default_config(configs)
    meta: dict = {
        "pretty_name": pretty_name,
        "language": ["en"],
        "license": license_id,
        "task_categories": TASK_CATEGORIES,
        "task_ids": TASK_IDS,
        "size_categories": [],
        "tags": ["coherence", "discourse", "intruder-sentence", "shuffle-test", "incoherent"],
        "configs": [],
        "dataset_info": [],
    }
    examples = 0
    for config in sorted(configs, key=lambda c: (c != default, c)):
        splits = configs[config]
        entry = {
            "config_name": config,
            "data_files": [{"split": split, "path": f"{config}/{split}-*.parquet"} for split in splits],
        }
        if config == default:
            entry["default"] = True
        meta["configs"].append(entry)
        all_files = [f for files in splits.values() for f in files]
        info = {
            "config_name": config,
            "features": _features(config, all_files, files),
            "splits": [_split_info(split, paths, files) for split, paths in splits.items()],
        }
        meta["dataset_info"].append(info)
        if config != "candidates":
            examples += sum(s["num_examples"] for s in info["splits"])
    meta["size_categories"] = [size_category(examples)]
    return meta


def validate_card(text: str) -> None:
    """Parse the card as the Hub and ``datasets`` do; raise :class:`InputError` if either would refuse it."""
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    try:
        card = DatasetCard(text)
        data = DatasetCardData(**card.data.to_dict())
        configs = MetadataConfigs.from_dataset_card_data(data)
        DatasetInfosDict.from_dataset_card_data(data)
    except (ValueError, TypeError, yaml.YAMLError) as exc:
        raise InputError(f"dataset card: YAML the Hub would refuse ({str(exc).splitlines()[0]})") from None
    defaults = [name for name, config in configs.items() if config.get("default")]
    if len(defaults) != 1:
        raise InputError(f"dataset card: expected exactly one default config, found {defaults}")
    if not data.license or not data.pretty_name:
        raise InputError("dataset card: license and pretty_name are required")


# --------------------------------------------------------------------------------------------- statistics


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%" if total else "-"


def _mean(n: int, total: int) -> str:
    return f"{n / total:.2f}" if total else "-"


def table_stats(config: str, paths: list[str], opener=None):
    """The statistics of some files of one config (they add up over files: :func:`card_stats.merge_stats`);
    None for a config the card has no statistics of."""
    if config.startswith("intruder-"):
        return card_stats.intruder_stats(paths, opener)
    if config.startswith("shuffle-"):
        return card_stats.shuffle_stats(paths, opener)
    if config == "candidates":
        return card_stats.candidate_stats(paths, opener)
    if config.startswith("probe-"):
        return card_stats.probe_stats(paths, opener)
    return None


def assemble_stats(per_config: dict[str, object]) -> dict:
    """``{config: statistics}`` in the layout the card's tables and figures read."""
    stats: dict = {"intruder": {}, "shuffle": {}, "candidates": {}, "probe": {}}
    for config, value in sorted(per_config.items()):
        if value is None:
            continue
        if config.startswith("intruder-"):
            stats["intruder"][config.removeprefix("intruder-")] = value
        elif config.startswith("shuffle-"):
            stats["shuffle"][config.removeprefix("shuffle-")] = value
        elif config == "candidates":
            stats["candidates"] = value
        elif config.startswith("probe-"):
            stats["probe"][config.removeprefix("probe-")] = value
    return stats


def collect_stats(configs: dict[str, dict[str, list[str]]], files: Files = LOCAL) -> dict:
    """Everything the card's tables and figures show, read once from the Parquet tables (in this process)."""
    return assemble_stats(
        {
            config: table_stats(config, [f for paths in splits.values() for f in paths], files.open)
            for config, splits in configs.items()
        }
    )


def statistics_section(stats: dict) -> list[str]:
    lines: list[str] = []
    if stats["intruder"]:
        lines += [
            "### Intruder-sentence configs (as in INSteD's Table 1)",
            "",
            "| source | split | documents | sentences / document | words / sentence | positive (intruder) rate |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for source, s in sorted(stats["intruder"].items()):
            for split, c in s["by_split"].items():
                lines.append(
                    f"| {source} | {split} | {c['documents']:,} | {_mean(c['sentences'], c['documents'])} | "
                    f"{_mean(c['words'], c['sentences'])} | {_pct(c['positives'], c['documents'])} |"
                )
        lines += ["", "Words are whitespace-separated tokens of the sentences as published.", ""]
    if stats["shuffle"]:
        sizes = sorted({k for s in stats["shuffle"].values() for split in s.values() for k in split})
        lines += [
            "### Shuffle configs: rows per block size k",
            "",
            "| source | split | " + " | ".join(f"k={k}" for k in sizes) + " |",
            "|---|---|" + "---:|" * len(sizes),
        ]
        for source, s in sorted(stats["shuffle"].items()):
            for split, per_k in s.items():
                cells = " | ".join(f"{per_k.get(k, 0):,}" for k in sizes)
                lines.append(f"| {source} | {split} | {cells} |")
        lines += [
            "",
            "A document yields no row for k when it has fewer than two blocks of k sentences (counted in the "
            "shuffle run summaries).",
            "",
        ]
    return lines


def funnel_section(intruders: dict | None, threshold) -> list[str]:
    """Candidate funnel, drift split and artefact check per source, from the intruders run summary."""
    if not intruders:
        return []
    sources = intruders.get("sources") or {}
    if not sources:
        return []
    lines = [
        "### How intruders were found (candidate funnel)",
        "",
        "| source | documents read | kept (3-8 sentences) | chosen to be incoherent | candidates | "
        f"below similarity threshold ({threshold}) | intruders inserted |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    fallbacks = []
    for source, s in sorted(sources.items()):
        kept = sum((s.get("kept") or {}).values())
        lines.append(
            f"| {source} | {s.get('documents_read', 0):,} | {kept:,} | {s.get('incoherent_attempted', 0):,} | "
            f"{s.get('candidates', 0):,} | {s.get('candidates_below_threshold', 0):,} | {s.get('produced', 0):,} |"
        )
        for reason, n in sorted((s.get("fallen_back_to_coherent") or {}).items()):
            fallbacks.append(f"- {source}: {n:,} stayed coherent: `{reason}`")
    lines.append("")
    if fallbacks:
        lines += [
            "Documents chosen to be incoherent that kept no candidate stay coherent (`fallback_reason`):",
            "",
        ]
        lines += fallbacks + [""]
    else:
        lines += ["Every document chosen to be incoherent received an intruder (no fallbacks).", ""]
    lines += ["### Test split and drift", ""]
    for source, s in sorted(sources.items()):
        history = s.get("history")
        if history:
            lines.append(
                f"- **{source}**: test documents are older versions of articles whose lead drifted (TF-IDF cosine "
                f"below the drift threshold to the newest lead): {history.get('articles', 0):,} articles, "
                f"{history.get('with_older_version', 0):,} with an older version (coverage "
                f"{100 * history.get('coverage', 0):.1f}%), {history.get('versions_compared', 0):,} versions "
                f"compared, {history.get('drifted', 0):,} drifted, {history.get('test_from_history', 0):,} test "
                "documents taken from older dumps."
            )
        else:
            lines.append(f"- **{source}**: {s.get('test_split', 'hash split')}.")
    lines += [
        "",
        "### Artefact check",
        "",
        "A TF-IDF bag-of-words logistic regression classifies each non-opening sentence in isolation (Shen et al., "
        "§4.4); if it beats the majority class, intruders are recognisable without context.",
        "",
        "| source | sentences evaluated | accuracy | majority accuracy | intruder F1 | majority F1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for source, s in sorted(sources.items()):
        art = s.get("artefact_check") or {}
        if "accuracy" in art:
            lines.append(
                f"| {source} | {art.get('evaluated', 0):,} | {art['accuracy']:.3f} | {art['majority_accuracy']:.3f} "
                f"| {art['f1']:.3f} | {art['majority_f1']:.3f} |"
            )
        else:
            lines.append(f"| {source} | {art.get('evaluated', 0):,} | - | - | - | - |")
    return lines + [""]


def write_figures(stats: dict, dataset_dir: str, threshold, easy_threshold) -> list[tuple[str, str]]:
    """PNGs under ``DATASET_DIR/figures/``; returns ``[(caption, relative path)]`` for the card."""
    out: list[tuple[str, str]] = []
    folder = make_folder(os.path.join(dataset_dir, card_figures.FIGURES))  # a link: replaced, not followed
    for name in os.listdir(folder):
        if name.endswith(".png"):
            os.remove(os.path.join(folder, name))

    def add(caption: str, name: str, draw, *args) -> None:
        draw(*args, os.path.join(folder, name))
        out.append((caption, f"{card_figures.FIGURES}/{name}"))

    intruder = stats["intruder"]
    if intruder:
        add(
            "Sentences per document",
            "sentences_per_document.png",
            card_figures.sentences_per_document,
            {s: v["sentences_per_document"] for s, v in intruder.items()},
        )
        add(
            "Intruder position",
            "intruder_position.png",
            card_figures.intruder_position,
            {s: v["intruder_position"] for s, v in intruder.items()},
        )
    candidates = stats["candidates"]
    if candidates or intruder:
        add(
            "Similarity of all candidates and of the chosen intruders",
            "similarity.png",
            card_figures.similarity,
            {s: v["similarity"] for s, v in candidates.items()},
            {s: v["chosen_similarity"] for s, v in intruder.items()},
            card_stats.SIMILARITY_BINS,
            threshold,
        )
    scored = {s: v["filter_score"] for s, v in candidates.items() if v["scored"]}
    if scored:
        add(
            "Adversarial filter scores of the candidates",
            "filter_scores.png",
            card_figures.filter_scores,
            scored,
            card_stats.SCORE_BINS,
            easy_threshold,
        )
    return out


# --------------------------------------------------------------------------------------------- provenance


def _roots(build_dir: str, build: dict | None) -> dict[str, str | None]:
    config_path = (build or {}).get("config")
    config_dir = os.path.dirname(config_path) if config_path else None
    base = None
    if build and config_dir:
        base = os.path.normpath(
            os.path.join(config_dir, str((build.get("raw_config") or {}).get("base", ".")))
        )
    out = build_dir if is_remote(build_dir) else os.path.abspath(build_dir)
    return {"out": out, "config_dir": config_dir, "base": base}


def _filter_model(path: str, roots: dict, files: Files = LOCAL) -> list[str]:
    metrics_path = os.path.join(path, "metrics.json")
    name = relativise(path, roots)
    if not files.isfile(metrics_path):
        return [f"- adversarial filter: `{name}` (no metrics.json beside it)"]
    metrics = _read_json(metrics_path, files)
    config = metrics.get("config") or {}
    validation = metrics.get("validation") or {}
    shown = ", ".join(
        f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in sorted(validation.items())
    )
    return [
        f"- adversarial filter: `{name}`, fine-tuned from `{config.get('base_model', 'unknown')}` "
        f"(epoch {metrics.get('chosen_epoch')} of {config.get('epochs', '?')}, "
        f"{metrics.get('train_examples', 0):,} training examples); validation: {shown or 'none'}"
    ]


def provenance_section(
    build_dir: str,
    build: dict | None,
    summaries: list[dict],
    files: Files = LOCAL,
    out: str | None = None,
) -> list[str]:
    roots = _roots(out or build_dir, build)
    lines = ["## How it was built", "", "### Inputs", ""]
    runs = list(ingest_runs(summaries))
    if not runs:
        lines += [
            "Not recorded here: no ingest run was found under the folder the card was written from (pass "
            "`--build-dir` the folder that holds the ingest runs, or use `incoherent build`).",
            "",
        ]
    else:
        lines += [
            "| role | source | file | size (bytes) | sha256 | wiki | dump date |",
            "|---|---|---|---:|---|---|---|",
        ]
    for summary, kind, params in runs:
        paths = params.get("dumps") or params.get("paths") or []
        role = "history (older dump)" if f"{os.sep}history{os.sep}" in os.sep + summary["_path"] else "input"
        source = params.get("source") or kind
        # recorded by the ingest run (hashed where the input lies); described here for older layouts
        infos = summary.get("inputs")
        if infos is None:
            infos = [describe_input(path, kind) for path in paths]
        for info in infos:
            info = dict(info)
            if "files" in info:
                info["name"] += f" ({info['files']} files)"
            lines.append(
                f"| {role} | {source} | `{info['name']}` | {info['size']:,} | `{info['sha256']}` | "
                f"{info.get('wiki') or ''} | {info.get('dump_date') or ('not in the file name' if kind == 'wikipedia' else '')} |"
            )
    lines += [
        "",
        "Sizes and sha256 are of the files as read (a folder: sha256 over its files' relative names and sha256).",
        "",
    ]
    intruders = next((s for s in summaries if s.get("command") == "intruders"), None)
    if intruders:
        params = intruders.get("params") or {}
        lines += ["### Parameters", ""]
        lines.append(
            f"- seed: `{params.get('seed')}` (all randomness is derived from (seed, purpose, document id))"
        )
        lines.append(
            f"- neighbours: top `{params.get('k')}` most similar documents of the same source; similarity threshold "
            f"`{params.get('similarity_threshold')}` (candidates at or above it are not used); drift threshold "
            f"`{params.get('drift_threshold')}`; validation fraction `{params.get('validation_fraction')}`"
        )
        for source, index in sorted(((intruders.get("retrieval") or {}).get("index") or {}).items()):
            meta_path = os.path.join(index, "index.json")
            if files.isfile(meta_path):
                meta = _read_json(meta_path, files)
                lines.append(
                    f"- index `{source}`: DrQA TF-IDF, {meta.get('ngram')}-grams hashed into {meta.get('hash_size'):,} "
                    f"features, tokenizer `{meta.get('tokenizer')}`, {meta.get('num_docs', 0):,} documents, "
                    f"{meta.get('nnz', 0):,} non-zeros"
                )
        if params.get("filter") not in (None, "none"):
            lines += _filter_model(params["filter"], roots, files)
            lines.append(f"- easy threshold: `{params.get('easy_threshold')}`")
        else:
            lines.append("- adversarial filter: none (every intruder is `unfiltered`)")
        lines.append("")
    lines += [
        "### Commands",
        "",
        "Input paths are relative to the build config's `base` (as the config names them); `OUT` is the "
        "build's output folder; other paths are shown by file name.",
        "",
    ]
    lines.append("```bash")
    if build and build.get("commands"):
        config_name = relativise(build.get("config", ""), roots)
        lines.append(f"incoherent build {config_name}".rstrip() + " --out OUT")
        for argv in build["commands"]:
            lines.append("#   incoherent " + " ".join(relativise(list(argv), roots)))
    else:
        for summary in summaries:
            params = json.dumps(relativise(summary.get("params", {}), roots), sort_keys=True)
            lines.append(f"incoherent {summary['command']}  # {summary['_path']}: {params}")
    lines += ["```", ""]
    if build and build.get("raw_config"):
        lines += ["### Build config", "", "```yaml"]
        lines.append(yaml.safe_dump(relativise(build["raw_config"], roots), sort_keys=False).rstrip())
        lines += ["```", ""]
    lines += ["### Versions", ""]
    lines += [
        f"- {package} {_version(package, 'unknown' if package == 'incoherent' else 'not installed')}"
        for package in VERSIONED
    ]
    lines += [f"- schema version {SCHEMA_VERSION}", ""]
    return lines


def write_summaries(
    build_dir: str, dataset_dir: str, build: dict | None, summaries: list[dict], out: str | None = None
) -> list[str]:
    """Copies of the run summaries (and the build summary) with paths relativised, under ``DATASET_DIR/summaries``.

    ``out``: where the build lies when ``build_dir`` is a local copy of its summaries (a remote build)."""
    roots = _roots(out or build_dir, build)
    folder = os.path.join(dataset_dir, SUMMARIES)
    if os.path.isdir(folder) and not os.path.islink(folder):
        import shutil

        shutil.rmtree(folder)
    make_folder(folder)  # a link there is replaced by a real folder, never written through
    written = []
    items = [(s["_path"], {k: v for k, v in s.items() if k != "_path"}) for s in summaries]
    if build:
        kept = ("command", "config", "raw_config", "resolved", "beam_args", "commands")
        items.append((BUILD_SUMMARY, {k: build[k] for k in kept if k in build}))
    for rel, summary in items:
        summary = {
            k: v for k, v in summary.items() if k != "seconds"
        }  # no wall times: the same build, the same files
        path = os.path.join(folder, rel)
        text = json.dumps(relativise(summary, roots), indent=2, sort_keys=True, default=str)
        replace_text(path, text + "\n")
        written.append(os.path.relpath(path, dataset_dir))
    return written


def probes_section(stats: dict, summaries: list[dict]) -> list[str]:
    """The linguistic probes (``incoherent probes``): per phenomenon the probes in the tables, the documents
    skipped for want of a site, examples; the tagger's held-out accuracy. Empty without probe tables or runs."""
    runs = [s for s in summaries if s.get("command") == "probes" and isinstance(s.get("probes"), dict)]
    if not stats.get("probe") and not runs:
        return []
    lines = [
        "## Linguistic probes",
        "",
        "INSteD's linguistic probes (Shen et al., 2021, §7, Table 7), generated by `incoherent probes`: the intruder "
        "sentence of an incoherent document minimally edited so that the incoherence should be easier to see, "
        "everything else unchanged. A document whose intruder sentence has no site for a phenomenon is skipped "
        "for it (`no site`).",
        "",
        "| phenomenon | split | probes | with a site | no site |",
        "|---|---|---:|---:|---:|",
    ]
    # one row per phenomenon and split: the tables' rows of that split, and the counts of the runs that probed
    # it (a table may hold several splits, probed by several runs: never added across splits)
    counts: dict[str, dict] = {}
    for run in runs:
        split = str((run.get("params") or {}).get("split", "test"))
        for phenomenon, c in run["probes"].items():
            total = counts.setdefault(phenomenon, {"examples": []})
            by_split = total.setdefault(split, {"probes": 0, "with_site": 0, "no_site": 0})
            by_split["probes"] += int(c.get("probes", 0))
            by_split["with_site"] += int(c.get("with_site", 0))
            by_split["no_site"] += int(c.get("no_site", 0))
            total["examples"] += list(c.get("examples") or [])
    for phenomenon in sorted(set(counts) | set(stats.get("probe", {}))):
        tables = stats.get("probe", {}).get(phenomenon) or {}
        in_tables: dict[str, int] = {}
        for splits in tables.values():
            for split, n in splits.items():
                in_tables[split] = in_tables.get(split, 0) + n
        ran = {k: v for k, v in counts.get(phenomenon, {}).items() if k != "examples"}
        for split in sorted(set(in_tables) | set(ran)):
            c = ran.get(split)
            # the tables described, else (probes written elsewhere in the build's folder) what their run wrote
            rows = in_tables.get(split, 0) if tables else c["probes"]
            sites = f"{c['with_site']:,} | {c['no_site']:,}" if c else "- | -"
            lines.append(f"| `{phenomenon}` | {split} | {rows:,} | {sites} |")
    lines.append("")
    moves: dict[str, int] = {}
    for run in runs:
        for move, n in ((run["probes"].get("number") or {}).get("moves") or {}).items():
            moves[move] = moves.get(move, 0) + int(n)
    if moves:  # the number probes' mix of moves: no single marker (BC, a unit) gives most of them away
        total = sum(moves.values())
        mix = ", ".join(
            f"{m} {n:,} ({100 * n / total:.0f}%)" for m, n in sorted(moves.items(), key=lambda kv: -kv[1])
        )
        lines += [f"Number probes by move: {mix}.", ""]
    examples = [(p, e) for p, c in sorted(counts.items()) for e in c["examples"][:1]]
    if examples:
        lines += ["Examples (the intruder sentence before -> after the probe):", ""]
        for phenomenon, example in examples:
            lines.append(f"- `{phenomenon}`: {example['before']} -> **{example['after']}**")
        lines.append("")
    tagger = next((r["tagger"] for r in runs if isinstance(r.get("tagger"), dict)), None)
    if tagger and isinstance(tagger.get("held_out"), dict):
        held = tagger["held_out"]
        lines += [
            f"Part-of-speech tags: NLTK's averaged perceptron trained on the Penn Treebank sample, accuracy "
            f"{held.get('accuracy')} on {held.get('tokens')} held-out tokens ({held.get('files')}).",
            "",
        ]
    return lines


# --------------------------------------------------------------------------------------------- the card


def render_card(
    build_dir: str,
    dataset_dir: str,
    pretty_name: str,
    license_id: str | None = None,
    figures: bool = True,
    *,
    files: Files = LOCAL,
    stats: dict | None = None,
    figures_dir: str | None = None,
    out: str | None = None,
    verification: Callable[[str], list[str]] | None = None,
) -> str:
    """The full ``README.md`` text (YAML front matter, then the card); writes the figures when asked.

    A remote build passes its own ``files`` (Beam's filesystems: the card reads only footers and JSON there),
    the ``stats`` its pipeline computed, a local ``figures_dir`` to upload from, and ``out``, the build's
    folder, when ``build_dir`` is a local copy of the run summaries.
    """
    configs = find_configs(dataset_dir, files)
    check_table_versions(configs, files)
    summaries = load_summaries(build_dir)
    build = load_build_summary(build_dir)
    kinds = source_kinds(summaries)
    stats = stats if stats is not None else collect_stats(configs, files)
    by_config = config_sources(configs, stats)
    all_sources = set().union(*by_config.values())
    derived, reason = derive_license(all_sources, kinds)
    chosen = license_id or derived
    meta = card_metadata(dataset_dir, pretty_name, chosen, configs, files)
    default = next(c["config_name"] for c in meta["configs"] if c.get("default"))
    first_split = "train" if "train" in configs[default] else sorted(configs[default])[0]
    intruders = next((s for s in summaries if s.get("command") == "intruders"), None)
    params = (intruders or {}).get("params") or {}
    threshold = params.get("similarity_threshold")
    figure_links = (
        write_figures(stats, figures_dir or dataset_dir, threshold, params.get("easy_threshold"))
        if figures
        else []
    )
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {pretty_name}",
        "",
        f"Coherence-evaluation corpora built with {tool_link()} {_incoherent_version()} (schema version "
        f"{SCHEMA_VERSION}; how: [`{SUMMARIES}/`]({SUMMARIES}/)).",
        "",
        *(
            f"- `{kind}{'' if kind == 'candidates' else '-*'}`: {text}"
            for kind, text in TABLE_KINDS.items()
            if any(c.split("-", 1)[0] == kind for c in configs)
        ),
        "",
        *built_section(configs, by_config, kinds, build),
        "## Usage",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("<this repo or folder>", "{default}")  # the default config: load_dataset("<repo>") alike',
        f'print(ds["{first_split}"][0])',
        "```",
        "",
        "## Configs and splits",
        "",
        "| config | split | rows |",
        "|---|---|---:|",
    ]
    for info in meta["dataset_info"]:
        for split in info["splits"]:
            lines.append(f"| `{info['config_name']}` | {split['name']} | {split['num_examples']:,} |")
    lines += ["", "Labels: `0` = coherent, `1` = intruder.", "", "## Statistics", ""]
    lines += statistics_section(stats)
    lines += funnel_section(intruders, threshold)
    lines += probes_section(stats, summaries)
    if (
        files is LOCAL and verification is not None
    ):  # `incoherent annotate verify` writes into a local dataset
        lines += verification(dataset_dir)
    if figure_links:
        lines += ["## Figures", ""]
        for caption, rel in figure_links:
            lines += [f"![{caption}]({rel})", ""]
    lines += ["## Columns", ""]
    by_table: dict[str, list[dict]] = {}
    for info in meta["dataset_info"]:
        by_table.setdefault(info["config_name"].split("-", 1)[0], []).append(info)
    for table, infos in by_table.items():  # one description per kind of table (intruder-*, shuffle-*, ...)
        docs = COLUMN_DOCS.get(table, {})
        described = [f"- `{f['name']}`: {docs[f['name']]}" for f in infos[0]["features"] if f["name"] in docs]
        if described:
            names = ", ".join(f"`{info['config_name']}`" for info in infos)
            lines += [f"{names}:", "", *described, ""]
    lines += provenance_section(build_dir, build, summaries, files, out)
    lines += [
        "Every record dropped on the way is counted in the run summaries (copies under `summaries/`, paths "
        "relativised); ids are stable source ids and all randomness is derived from (seed, id), so the same inputs "
        "and seed rebuild the same rows.",
        "",
        "## Sources and licences",
        "",
    ]
    if license_id and license_id != derived:
        lines.append(
            f"Licence `{license_id}` set by the builder (derived from the sources: `{derived}`, {reason})."
        )
    elif derived == WIKIPEDIA_LICENSE:
        lines.append(f"Licence `{derived}`: {reason}.")
    else:
        lines.append(f"Licence `other`: {reason}.")
    lines += ["", "The terms of each source's text:", ""]
    lines += [f"- `{source}`: {source_terms(source, kinds, build)}" for source in sorted(all_sources)]
    lines += [
        "",
        "Check the terms of every source you include before redistributing.",
        "",
        "## Citation",
        "",
        CITATIONS,
        "",
    ]
    text = "\n".join(lines)
    validate_card(text)
    return text


def write_card(
    build_dir: str,
    dataset_dir: str,
    pretty_name: str,
    license_id: str | None = None,
    verification: Callable[[str], list[str]] | None = None,
) -> str:
    """Write ``README.md``, ``figures/*.png`` and ``summaries/`` into ``dataset_dir``; returns the card's path.

    ``verification(dataset_dir)`` gives the lines of the "Human verification" section
    (:func:`annotation.study.card_lines`; passed in because ``annotation`` sits above ``corpora``).
    """
    text = render_card(build_dir, dataset_dir, pretty_name, license_id, verification=verification)
    summaries = load_summaries(build_dir)
    write_summaries(build_dir, dataset_dir, load_build_summary(build_dir), summaries)
    path = os.path.join(dataset_dir, "README.md")
    replace_text(path, text)  # a link planted at README.md is replaced, its target left alone
    return path
