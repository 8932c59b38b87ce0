"""The card's statistics (INSteD-style, read column-wise from the Parquet files: :mod:`corpora.card.stats`), the
intruder funnel and the figures (:mod:`corpora.card.figures`).
"""

from __future__ import annotations

import os

from incoherent.corpora.card import figures as card_figures
from incoherent.corpora.card import stats as card_stats
from incoherent.corpora.card.inputs import LOCAL
from incoherent.fileio.outputs import make_folder
from incoherent.fileio.paths import Files


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
