"""The card's YAML metadata and fixed text: features and column docs, citations, licence, size category,
versions, the tool's link, the source terms and what was built; the YAML checked before it is written.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, metadata, version

import yaml

from incoherent.corpora.card.inputs import LOCAL, default_config, find_configs, split_info, table_features
from incoherent.fileio.paths import Files
from incoherent.schemas.records import InputError

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


def package_version(package: str, missing: str = "unknown") -> str:
    """The installed version of ``package``, else ``missing`` (``incoherent`` run from a tree is "unknown";
    a library that is not installed, transformers in a light install, is "not installed")."""
    try:
        return version(package)
    except PackageNotFoundError:
        return missing


def _incoherent_version() -> str:
    return package_version("incoherent")


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
    kinds: dict[str, str] | None = None,
) -> dict:
    configs = configs or find_configs(dataset_dir, files)
    default = default_config(configs, kinds)
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
            "features": table_features(config, all_files, files),
            "splits": [split_info(split, paths, files) for split, paths in splits.items()],
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
