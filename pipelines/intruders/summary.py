"""The run summary of ``incoherent intruders``: the per-source blocks of ``run_summary.json`` and the table
printed at the end.

Read on the driver once the pipeline has run, from the Beam counters (namespace ``intruders/<source>``) and the
written tables; the artefact check's rows are streamed (:func:`artefact_sample`), so the driver's memory stays
bounded however large the corpus.
"""

from __future__ import annotations

import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from incoherent.corpora import intruders as logic
from incoherent.corpora.artefacts import MAX_DOCUMENTS, artefact_check, stream_sample_documents
from incoherent.corpora.sampling import SampleSpec
from incoherent.pipelines.intruders.transforms import namespace
from incoherent.pipelines.runtime.tables import list_tables

NO_PROTECTION = (
    "plain hash sample of the documents: offers no protection against text a pre-trained model has memorised"
)


def artefact_sample(files: list[str], limit: int = MAX_DOCUMENTS) -> tuple[list[dict], int, int]:
    """``(rows for the artefact check, rows read, positives)`` with at most ``limit`` rows held at a time.

    The tables are streamed a record batch at a time through :func:`corpora.artefacts.stream_sample_documents`
    (what :func:`corpora.artefacts.sample_documents` would pick from all rows), so the driver's memory stays
    bounded however large the corpus.
    """
    seen = {"rows": 0, "positives": 0}

    def rows():
        for path in files:
            with FileSystems.open(path) as f:
                table = pq.ParquetFile(f)
                for batch in table.iter_batches(
                    columns=["id", "sentences", "label", "intruder_index", "split"]
                ):
                    for row in batch.to_pylist():
                        seen["rows"] += 1
                        seen["positives"] += row["label"]
                        yield row

    sample = stream_sample_documents(rows(), limit)
    return sample, seen["rows"], seen["positives"]


def source_summary(
    out_dir: str, source: str, counters: dict[str, int], outputs: dict, history: bool, kind: str
) -> dict:
    """The per-source block of ``run_summary.json``: :func:`source_block` of the source's counters, splits
    (``outputs``: the written tables) and the artefact check's sample of its intruder table under ``out_dir``."""
    rows, total, positives = artefact_sample(list_tables(out_dir, f"intruder-{source}"))
    splits = outputs.get(f"intruder-{source}", {})
    return source_block(kind, counters, splits, rows, total, positives, history)


def source_block(
    kind: str,
    counters: dict[str, int],
    splits: dict,
    rows: list[dict],
    total: int,
    positives: int,
    history: bool,
) -> dict:
    """The per-source block of ``run_summary.json`` of a source of ``kind``: its kind, policy (length rule, test
    share), the counters regrouped (length rule, neighbours, fallbacks, history), the ``splits``, the positive rate (``positives`` of ``total`` rows) and the artefact check of the
    sampled ``rows``."""
    kept = {k: counters.get(k, 0) for k in (logic.KEPT_IN_RANGE, logic.KEPT_TRUNCATED, logic.KEPT_WHOLE)}
    dropped = {k: counters.get(k, 0) for k in (logic.TOO_FEW, logic.TOO_MANY, logic.IDENTICAL)}
    fallback = {k.removeprefix("fallback_"): v for k, v in counters.items() if k.startswith("fallback_")}
    summary = {
        "kind": kind,
        "documents_read": counters.get("read", 0),
        "length_rule": logic.length_mode(kind),
        "test_fraction": logic.test_fraction(kind),
        "kept": kept,
        "dropped": dropped,
        "incoherent_attempted": counters.get("incoherent_attempted", 0),
        "produced": counters.get("produced", 0),
        "fallen_back_to_coherent": fallback,
        "neighbors": {
            k: counters.get(k, 0)
            for k in (
                "not_in_neighbors_table",
                "fewer_than_k_neighbors",
                logic.NEIGHBOR_MISSING,
                logic.NEIGHBOR_TOO_SHORT,
                logic.NEIGHBOR_OTHER_SOURCE,
                logic.NEIGHBOR_IS_SELF,
                logic.IDENTICAL_CANDIDATE,
                logic.NO_WORDS_CANDIDATE,
            )
        },
        "candidates": counters.get("candidates", 0),
        "candidates_below_threshold": counters.get("candidates_below_threshold", 0),
        "splits": splits,
        "positive_rate": round(positives / total, 4) if total else None,
        "artefact_check": artefact_check(rows),
    }
    if history:
        summary["test_split"] = "drift: older leads with TF-IDF cosine below the drift threshold"
        summary["history"] = {
            "articles": counters.get("history_candidates", 0),
            "with_older_version": counters.get("history_matched", 0),
            "versions_compared": counters.get("history_versions_compared", 0),
            "drifted": counters.get("history_drifted", 0),
            "eligible": counters.get("drift_eligible", 0),
            "test_from_history": counters.get("test_from_history", 0),
            "older_versions_without_newest": counters.get("history_unmatched_versions", 0),
        }
        articles = summary["history"]["articles"]
        summary["history"]["coverage"] = (
            round(summary["history"]["with_older_version"] / articles, 4) if articles else 0.0
        )
    else:
        summary["test_split"] = NO_PROTECTION
    return summary


def summary_fields(
    summary: dict,
    out_dir: str,
    sources: list[str],
    history_sources: list[str],
    samples: dict[str, SampleSpec],
    retrieval: dict[str, dict[str, str]],
    kinds: dict[str, str],
) -> dict:
    """What ``intruders`` adds to ``run_summary.json``: a block per source (:func:`source_summary`, with the
    sample when ``--sample`` chose one), the retrieval directories used and, with a source of kind ``wikipedia``,
    the test split of the first one."""
    per_source = {}
    for source in sources:
        counters = summary["counters"].get(namespace(source), {})
        per_source[source] = source_summary(
            out_dir, source, counters, summary["outputs"], source in history_sources, kinds[source]
        )
        if source in samples:
            per_source[source]["sample"] = {
                "requested": str(samples[source]),
                "documents": counters.get("read", 0) - counters.get("not_sampled", 0),
                "pool": counters.get("read", 0),
            }
    extra_fields = {"sources": per_source, "retrieval": retrieval}
    wikipedia = [source for source in sources if kinds[source] == "wikipedia"]
    if wikipedia:
        extra_fields["wikipedia_test_split"] = per_source[wikipedia[0]]["test_split"]
    return extra_fields


def print_table(summary: dict) -> None:
    """One line per source: documents, positives, fallbacks, splits, artefact check."""
    for source, s in summary.get("sources", {}).items():
        art = s["artefact_check"]
        check = (
            f"artefact check acc {art['accuracy']:.3f} / F1 {art['f1']:.3f} vs majority {art['majority_accuracy']:.3f}"
            if "accuracy" in art
            else f"artefact check {art['method']}"
        )
        print(
            f"{source}: read {s['documents_read']:,}, produced {s['produced']:,} of {s['incoherent_attempted']:,}, "
            f"positive rate {s['positive_rate']}, splits {s['splits']}; {check}"
        )
