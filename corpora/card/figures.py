"""PNG figures of the dataset card, drawn headless (matplotlib's Agg backend) from :mod:`corpora.card.stats`.

Each function takes counts or histograms (never rows) and writes one PNG; the card links them relatively
(``figures/<name>.png``). PNG metadata carries no date, so the same statistics give the same bytes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

FIGURES = "figures"
DPI = 100
SIZE = (7.0, 3.6)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str) -> str:
    """Write the PNG whole (:func:`incoherent.fileio.outputs.replace_file`: a link at ``path`` is replaced)."""
    import io

    from incoherent.fileio.outputs import replace_file

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    _pyplot().close(fig)
    replace_file(path, buffer.getvalue())
    return path


def _bars(ax, counts_by_source: dict[str, Counter], xlabel: str, ylabel: str) -> None:
    """Grouped bars of integer counts, one colour per source, as fractions of each source's total."""
    present = {int(k) for counts in counts_by_source.values() for k in counts}
    keys = list(range(min(present), max(present) + 1)) if present else []
    width = 0.8 / max(1, len(counts_by_source))
    for i, (source, counts) in enumerate(sorted(counts_by_source.items())):
        total = sum(counts.values()) or 1
        xs = np.arange(len(keys)) + (i - (len(counts_by_source) - 1) / 2) * width
        ax.bar(xs, [counts.get(k, 0) / total for k in keys], width, label=f"{source} (n={total:,})")
    ax.set_xticks(np.arange(len(keys)), [str(k) for k in keys])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)


def sentences_per_document(counts_by_source: dict[str, Counter], path: str) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE)
    _bars(ax, counts_by_source, "sentences per document", "fraction of documents")
    ax.set_title("Document length (intruder configs, all splits)")
    return _save(fig, path)


def intruder_position(counts_by_source: dict[str, Counter], path: str) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE)
    _bars(ax, counts_by_source, "position of the intruder sentence (0 = opening, never replaced)", "fraction")
    ax.set_title("Where the intruder sits (incoherent documents)")
    return _save(fig, path)


def similarity(
    candidates: dict[str, np.ndarray], chosen: dict[str, np.ndarray], bins: np.ndarray, threshold, path: str
) -> str:
    """Histograms (density) of the similarity of all candidates and of the chosen intruders, per source."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE)
    centers = (bins[:-1] + bins[1:]) / 2
    for source in sorted(set(candidates) | set(chosen)):
        for label, hist, style in (
            ("all candidates", candidates.get(source), "-"),
            ("chosen intruders", chosen.get(source), "--"),
        ):
            if hist is None or not hist.sum():
                continue
            ax.plot(
                centers,
                hist / hist.sum(),
                style,
                drawstyle="steps-mid",
                label=f"{source}: {label} (n={hist.sum():,})",
            )
    if threshold is not None:
        ax.axvline(float(threshold), color="black", linewidth=1)
        ax.annotate(
            f"threshold {float(threshold):g}: not used at or above ",
            (float(threshold), 0.75),
            xycoords=("data", "axes fraction"),
            ha="right",
            va="center",
            fontsize="small",
        )
    ax.set_xlim(0, 1)
    ax.set_yscale("log")
    ax.set_xlabel("TF-IDF cosine between the replaced sentence and the candidate (bins of 0.02)")
    ax.set_ylabel("fraction (log scale)")
    ax.set_title("Similarity of intruder candidates")
    ax.legend(frameon=False, fontsize="small")
    ax.grid(alpha=0.3)
    return _save(fig, path)


def filter_scores(scores: dict[str, np.ndarray], bins: np.ndarray, easy_threshold, path: str) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE)
    centers = (bins[:-1] + bins[1:]) / 2
    for source, hist in sorted(scores.items()):
        ax.plot(
            centers, hist / max(1, hist.sum()), drawstyle="steps-mid", label=f"{source} (n={hist.sum():,})"
        )
    if easy_threshold is not None:
        ax.axvline(float(easy_threshold), color="black", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_xlabel("adversarial filter's intruder probability of the candidate (right of the line: easy)")
    ax.set_ylabel("fraction")
    ax.set_title("Filter scores of intruder candidates")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    return _save(fig, path)
