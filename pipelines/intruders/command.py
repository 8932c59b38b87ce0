"""``incoherent intruders DOCS_DIR [DOCS_DIR ...] --out DIR``: the INSteD-style intruder-sentence corpus.

Writes ``OUT/intruder-<source>/<split>-*.parquet`` (``INTRUDER_SCHEMA``), every candidate of every document
meant to be incoherent in ``OUT/candidates/<split>-*.parquet`` (``CANDIDATE_SCHEMA``, with its similarity and,
with ``--filter``, its model score), dead letters in ``OUT/rejected/intruders/`` and ``OUT/run_summary.json``.

Retrieval: ``--index`` and ``--neighbors`` name the outputs of ``incoherent index`` / ``incoherent
neighbors``, as ``DIR`` (for every source) or ``SOURCE=DIR``. Without them, each DOCS_DIR gets its own index
and top-k neighbours, built before the pipeline by the retrieval commands into a temporary directory that is
removed afterwards (``incoherent build`` keeps them). Candidates only come from neighbours of the same source.

Pipeline shape (every join groups by a bucket of document ids, ``crc32(id) % buckets``, and each bucket is
processed by id, so nothing depends on worker order)::

    documents (+ older versions) --JoinHistory--> ChooseVersion --> PlaceDocuments(side input: drift counts;
        split, length rule) --> coherent rows (half, by draw)
                            --> targets --JoinNeighborLists--> RequestOffers --(neighbour's bucket)--JoinPool-->
                                MakeOffers --(document's bucket)--JoinOffers--> MakeCandidates (similarities)
                                --> intruder rows
                                [with --filter: --> ScoreCandidates --JoinCandidates--> Select --> intruder rows]

Beam elements are batches (a bucket's documents, requests, offers or candidates), not single rows: Beam's
cost per element and per encoding is paid once per batch (:class:`pipelines.runtime.spill.CoGroupBuckets`). On the
local runner the joins go through files, so memory does not grow with the collection.

Only one sentence per neighbour travels to the document (``MakeOffers`` draws it where the neighbour is).
The logic lives in :mod:`corpora.intruders` and :mod:`corpora.drift`; this module wires it into Beam.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from corpora import drift
from corpora import intruders as logic
from corpora.artefacts import MAX_DOCUMENTS, artefact_check, stream_sample_documents
from pipelines.runtime import progress, spill, storage
from pipelines.runtime.common import (
    Tally,
    WriteRejected,
    WriteTable,
    document_files,
    list_tables,
    print_report,
    read_ids,
    require_tables,
    run_pipeline,
    source_of_file,
)
from pipelines.runtime.options import parse_per_source
from pipelines.sampling import parse_samples, sample_thresholds
from schemas.records import InputError, Rejected

LOG = logging.getLogger("incoherent.intruders")
STAGE = "intruders"
NO_PROTECTION = (
    "plain hash sample of the documents: offers no protection against text a pre-trained model has memorised"
)


# --------------------------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Options:
    """Everything the stage needs besides file lists (picklable, sent to the workers)."""

    seed: int = 0
    k: int = logic.DEFAULT_K
    similarity_threshold: float = logic.SIMILARITY_THRESHOLD
    drift_threshold: float = drift.DRIFT_THRESHOLD
    validation_fraction: float = 0.0
    filtered: bool = False
    sample_thresholds: tuple[tuple[str, int], ...] = ()  # (source, key threshold) of sampled sources

    def sample_threshold(self, source: str) -> int | None:
        return dict(self.sample_thresholds).get(source)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "docs", nargs="+", metavar="DOCS_DIR", help="documents written by `incoherent ingest ...`"
    )
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    parser.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="[SOURCE=]DIR",
        help="index of `incoherent index` (for one source with SOURCE=DIR); default: built for each DOCS_DIR",
    )
    parser.add_argument(
        "--neighbors",
        action="append",
        default=[],
        metavar="[SOURCE=]DIR",
        help="output of `incoherent neighbors` (for one source with SOURCE=DIR); default: computed",
    )
    parser.add_argument(
        "--filter",
        default="none",
        metavar="none|MODEL_DIR",
        help="adversarial filter: `none`, or a classifier trained with `incoherent train-filter`",
    )
    parser.add_argument(
        "--history",
        nargs="+",
        action="extend",
        default=[],
        metavar="OLD_DOCS_DIR",
        help="documents ingested from older Wikipedia dumps: drift-based test split (DOCS_DIR is the newest)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument(
        "--similarity-threshold",
        type=float,
        default=logic.SIMILARITY_THRESHOLD,
        help="candidates with TF-IDF cosine >= this with the replaced sentence are not used (default 0.6)",
    )
    parser.add_argument(
        "--drift-threshold",
        type=float,
        default=drift.DRIFT_THRESHOLD,
        help="an older lead is a test document when its cosine with the newest lead is below this (0.72)",
    )
    parser.add_argument(
        "--validation-fraction", type=float, default=0.0, help="share of documents in a validation split (0)"
    )
    parser.add_argument("--k", type=int, default=logic.DEFAULT_K, help="neighbours per document (default 10)")
    parser.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="[SOURCE=]N|FRACTION",
        help="dataset documents: a stable sample by hash of (seed, id), N documents or a fraction, for every "
        "source or per source; every document stays in the retrieval and candidate pool (default: all)",
    )
    group = parser.add_argument_group("adversarial filter (with --filter MODEL_DIR)")
    group.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    group.add_argument("--batch-size", type=int, default=16)
    group.add_argument("--max-length", type=int, default=512)
    group.add_argument("--easy-threshold", type=float, default=0.5)


def check_options(args: argparse.Namespace) -> None:
    """The checks of the flags that need no input (``build`` runs them on its config first)."""
    if not 0.0 <= args.validation_fraction < 1.0:
        raise InputError(f"--validation-fraction: must be in [0, 1), got {args.validation_fraction}")
    if args.k < 1:
        raise InputError(f"--k: must be >= 1, got {args.k}")
    for name in ("similarity_threshold", "drift_threshold"):
        value = getattr(args, name)
        if not 0.0 < value <= 1.0:
            raise InputError(f"--{name.replace('_', '-')}: must be in (0, 1], got {value}")


# --------------------------------------------------------------------------------------------- inputs


def parse_mapping(values: list[str], option: str, sources: list[str]) -> dict[str, str]:
    """``["wikipedia=I1", "I2"]`` -> ``{"wikipedia": "I1", <every other source>: "I2"}``."""
    mapping = parse_per_source(values, option, sources, lambda path, _where: storage.absolute(path))
    for source, path in mapping.items():
        if not storage.exists(path):
            raise InputError(f"{option} {path}: no such directory (for source {source})")
    return mapping


def neighbor_files(neighbors_dir: str) -> list[str]:
    return require_tables(neighbors_dir, "neighbors", "incoherent neighbors")


def shares_an_id(files_a: list[str], files_b: list[str], sample: int = 100_000) -> bool:
    """Whether any of the first ``sample`` ids of ``files_a`` is among the ids of ``files_b`` (bounded memory:
    the sample; ``files_b`` is streamed until the first shared id)."""
    ids = set()
    for doc_id in read_ids(files_a):
        ids.add(doc_id)
        if len(ids) >= sample:
            break
    return any(doc_id in ids for doc_id in read_ids(files_b))


# --------------------------------------------------------------------------------------------- similarity


_INDEXES: dict[str, object] = {}


def load_index(index_dir: str):
    """The retrieval index of ``index_dir``, loaded once per worker process."""
    index = _INDEXES.get(index_dir)
    if index is None:
        from pipelines.runtime.storage import open_file
        from retrieval import TfidfIndex

        index = TfidfIndex.load(index_dir, opener=open_file)
        _INDEXES[index_dir] = index
    return index


def similarities_for(index_dir: str):
    """``f(texts_a, texts_b) -> cosines`` with the IDF of the index (pairwise, vectorised).

    :meth:`retrieval.TfidfIndex.similarities` featurises each distinct text once: a document's candidates all
    face the same original sentence (and drift compares several old leads with one new lead).
    """

    def similarities(a: list[str], b: list[str]):
        return load_index(index_dir).similarities(a, b)

    return similarities


# --------------------------------------------------------------------------------------------- stages


def _ns(source: str) -> str:
    return f"{STAGE}/{source}"


class ReadDocumentBatches(beam.DoFn):
    """Document table files -> ``(bucket of id, [rows])`` batches (rows as ``ReadAllFromParquet`` gives them)."""

    COLUMNS: list[str] | None = None  # all

    def __init__(self, buckets: int):
        self._buckets = buckets

    def start_bundle(self):
        self._buffers = spill.BucketBuffers(self._buckets)

    def item(self, row: dict):
        return row

    def process(self, path: str):
        with FileSystems.open(path) as f:
            for batch in pq.ParquetFile(f).iter_batches(columns=self.COLUMNS):
                for row in batch.to_pylist():
                    yield from self._buffers.add(row["id"], self.item(row))

    def finish_bundle(self):
        for batch in self._buffers.flush():
            yield GlobalWindows.windowed_value(batch)


class ChooseVersion(beam.DoFn):
    """A bucket of newest documents + older versions -> ``(bucket, [(source, newest, eligible older version
    or None)])`` for each id of the bucket.

    Every newest document, sampled or not, also goes to the ``pool`` output as ``(bucket, [(id, source,
    sentences)])``: the candidate pool. Documents left out by ``--sample`` go only there: they are neighbours
    and candidate sources only (no drift comparison, no split, no row). (The pool is an output of its own
    rather than a ``Flatten`` of two outputs: Beam's local engine holds a flattened PCollection in memory
    until its consumer runs, which was the whole pool, about 5 GB at a million documents.)
    """

    def __init__(
        self,
        indexes: dict[str, str],
        options: Options,
        history_sources: frozenset[str],
        total: int | None = None,
    ):
        self._indexes, self._options, self._history_sources = indexes, options, history_sources
        self._total = total  # documents to read, for the progress bar

    def process(self, element):
        bucket, grouped = element
        by_id: dict[str, tuple[list, list]] = {}
        for doc in grouped["new"]:
            by_id.setdefault(doc["id"], ([], []))[0].append(doc)
        for old in grouped["old"]:
            by_id.setdefault(old["id"], ([], []))[1].append(old)
        tally, versions, pool = Tally(), [], []
        for doc_id in sorted(by_id):
            for tag, (_source, doc, version) in self.choose(*by_id[doc_id], tally):
                pool.append((doc["id"], doc["source"], doc["sentences"]))
                if tag != "unsampled":
                    versions.append((_source, doc, version))
        tally.flush()
        progress.advance("intruders: documents read", len(pool), total=self._total)
        if versions:
            yield bucket, versions
        if pool:
            yield beam.pvalue.TaggedOutput("pool", (bucket, pool))

    def _similarities(self, source: str):
        return similarities_for(self._indexes[source])

    def choose(self, new: list[dict], old: list[dict], tally: Tally):
        """:func:`corpora.intruders.choose_version` with this stage's options."""
        return logic.choose_version(
            new,
            old,
            seed=self._options.seed,
            sample_threshold=self._options.sample_threshold,
            history_sources=self._history_sources,
            similarities=self._similarities,
            drift_threshold=self._options.drift_threshold,
            tally=tally.for_namespace(_ns),
        )


def _eligibility_counts(batch):
    """``(bucket, [(source, doc, version)])`` -> ``((source, "total" | "eligible"), n)`` for the batch."""
    _bucket, versions = batch
    counts: dict[tuple[str, str], int] = {}
    for source, _doc, version in versions:
        counts[(source, "total")] = counts.get((source, "total"), 0) + 1
        if version is not None:
            counts[(source, "eligible")] = counts.get((source, "eligible"), 0) + 1
    yield from sorted(counts.items())


class PlaceDocuments(beam.DoFn):
    """A batch of chosen versions -> split (with history the test documents are drifted older versions),
    length rule (drops dead-lettered: ``rejected``), then the coherent rows (``coherent``, a batch: half of
    the documents, by draw) and the documents meant to receive an intruder (``(bucket, [(doc, split)])``,
    and their ``(id, source)`` in ``target_ids``: the neighbour lists are joined with those, not with the
    documents)."""

    def __init__(self, options: Options, history_sources: frozenset[str]):
        self._options, self._history_sources = options, history_sources

    def place(self, source: str, newest: dict, version: dict | None, counts, tally: Tally):
        """:func:`corpora.intruders.place_document` with this stage's options."""
        return logic.place_document(
            source,
            newest,
            version,
            counts,
            seed=self._options.seed,
            history=source in self._history_sources,
            validation_fraction=self._options.validation_fraction,
            tally=tally.for_namespace(_ns),
        )

    def process(self, element, counts):
        bucket, versions = element
        tally, coherent, targets = Tally(), [], []
        for source, newest, version in versions:
            placed = self.place(source, newest, version, counts, tally)
            if isinstance(placed, Rejected):
                yield beam.pvalue.TaggedOutput("rejected", placed.to_row(STAGE))
            elif placed[0] == "target":
                targets.append(placed[1:])
            else:
                coherent.append(placed[1])
        tally.flush()
        if coherent:
            yield beam.pvalue.TaggedOutput("coherent", coherent)
        if targets:
            yield bucket, targets
            ids = [(doc["id"], doc["source"]) for doc, _split in targets]
            yield beam.pvalue.TaggedOutput("target_ids", (bucket, ids))


class ReadNeighborLists(ReadDocumentBatches):
    """Neighbours table files -> ``(bucket, [(doc id, [(rank, neighbour id, score)])])`` batches."""

    COLUMNS = ["id", "neighbors"]

    def item(self, row: dict):
        return row["id"], [(rank, n["id"], n["score"]) for rank, n in enumerate(row["neighbors"])]


SMALL_VALUES = 100_000  # requests and offers buffered per bundle before they are written (small tuples)


class RequestOffers(beam.DoFn):
    """A bucket of target ids and neighbour lists -> one request per top-k neighbour (batched by the
    neighbour's bucket) and whether each target has neighbours (``had``: ``(bucket, [(id, bool)])``)."""

    def __init__(self, k: int, buckets: int):
        self._k, self._buckets = k, buckets

    def start_bundle(self):
        self._requests = spill.BucketBuffers(self._buckets, SMALL_VALUES)

    def process(self, element):
        bucket, grouped = element
        lists: dict[str, list] = {}
        for doc_id, listed in grouped["nbrs"]:
            lists.setdefault(doc_id, listed)
        targets = dict(grouped["doc"])  # id -> source
        tally, had = Tally(), []
        for doc_id in sorted(targets):
            listed = lists.get(doc_id)
            ns = _ns(targets[doc_id])
            tally(ns, "incoherent_attempted")
            if listed is None:
                tally(ns, "not_in_neighbors_table")
                listed = []
            elif len(listed) < self._k:
                tally(ns, "fewer_than_k_neighbors")
            top = sorted(listed)[: self._k]
            for rank, neighbor_id, score in top:
                yield from self._requests.add(neighbor_id, (neighbor_id, doc_id, rank, score))
            had.append((doc_id, bool(top)))
        tally.flush()
        if had:
            yield beam.pvalue.TaggedOutput("had", (bucket, had))

    def finish_bundle(self):
        for batch in self._requests.flush():
            yield GlobalWindows.windowed_value(batch)


class MakeOffers(beam.DoFn):
    """A bucket of pool documents and requests -> the offers (as tuples), batched by the document's bucket."""

    def __init__(self, seed: int, buckets: int):
        self._seed, self._buckets = seed, buckets

    def start_bundle(self):
        self._offers = spill.BucketBuffers(self._buckets, SMALL_VALUES)

    def process(self, element):
        _bucket, grouped = element
        pool: dict[str, dict] = {}
        for doc_id, source, sentences in grouped["pool"]:
            pool.setdefault(doc_id, {"source": source, "sentences": sentences})
        for neighbor_id, doc_id, rank, score in grouped["requests"]:
            o = logic.offer(self._seed, doc_id, rank, neighbor_id, score, pool.get(neighbor_id))
            yield from self._offers.add(
                doc_id, (doc_id, o.rank, o.id, o.score, o.source, o.index, o.sentence)
            )

    def finish_bundle(self):
        for batch in self._offers.flush():
            yield GlobalWindows.windowed_value(batch)


def select_row(doc: dict, split: str, had_neighbors: bool, candidates: list[dict], o: Options, tally) -> dict:
    """:func:`corpora.intruders.select_row` with this stage's options; ``tally`` is a :class:`Tally`."""
    return logic.select_row(
        doc,
        split,
        had_neighbors,
        candidates,
        seed=o.seed,
        threshold=o.similarity_threshold,
        tally=tally.for_namespace(_ns),
    )


class MakeCandidates(beam.DoFn):
    """A bucket of targets (with whether they had neighbours) and their offers -> a batch of candidate rows
    with similarities (one vectorised similarity call per source for the whole bucket), plus ``document``
    when filtered.

    Without the filter the candidates are final, so each document's intruder row is chosen here too (the
    ``rows`` output): the same row :class:`Select` would choose after a join, without the join. With it, the
    pending documents go on (``pending``) to be joined with their scored candidates.
    """

    def __init__(self, indexes: dict[str, str], options: Options):
        self._indexes, self._options = indexes, options

    def process(self, element):
        _bucket, grouped = element
        offers: dict[str, list] = {}
        for doc_id, *fields in grouped["offers"]:
            offers.setdefault(doc_id, []).append(logic.Offer(*fields))
        had = dict(grouped["had"])
        pending: dict[str, tuple] = {}
        for doc, split in grouped["targets"]:
            pending.setdefault(doc["id"], (doc, split, had[doc["id"]]))
        if not pending:
            return
        o, tally = self._options, Tally()
        made, by_source = [], {}
        for doc_id in sorted(pending):
            doc, split, _had = pending[doc_id]
            candidates, skipped = logic.make_candidates(doc, split, offers.get(doc_id, ()), o.seed, o.k)
            ns = _ns(doc["source"])
            for reason, n in skipped.items():
                tally(ns, reason, n)
            made.append(candidates)
            by_source.setdefault(doc["source"], []).extend(candidates)
        for source, candidates in sorted(by_source.items()):
            scored = logic.with_similarities(candidates, similarities_for(self._indexes[source]))
            for candidate, with_similarity in zip(candidates, scored, strict=True):
                candidate["similarity"] = with_similarity["similarity"]
        progress.advance("intruders: documents given candidates", len(pending))
        batch, rows = [], []
        for doc_id, candidates in zip(sorted(pending), made, strict=True):
            doc, split, had_neighbors = pending[doc_id]
            ns = _ns(doc["source"])
            tally(ns, "candidates", len(candidates))
            for candidate in candidates:
                if candidate["similarity"] < o.similarity_threshold:
                    tally(ns, "candidates_below_threshold")
                if o.filtered:
                    candidate["document"] = logic.document_with(doc["sentences"], candidate)
                else:
                    candidate["difficulty"] = "unfiltered"
            batch.extend(candidates)
            if o.filtered:
                yield beam.pvalue.TaggedOutput("pending", (doc_id, (doc, split, had_neighbors)))
            else:
                rows.append(select_row(doc, split, had_neighbors, candidates, o, tally))
        tally.flush()
        if rows:
            yield beam.pvalue.TaggedOutput("rows", rows)
        if batch:
            yield batch


def _by_id(row: dict):
    return row["id"], row


def _each(batch: list):
    yield from batch


def _as_batch(row: dict) -> list[dict]:
    return [row]


def _rows_of(batch: list[dict], source: str) -> list[dict]:
    return [row for row in batch if row["source"] == source]


class Select(beam.DoFn):
    def __init__(self, options: Options):
        self._options = options

    def process(self, element):
        _doc_id, grouped = element
        pending = list(grouped["pending"])
        if not pending:
            return
        doc, split, had_neighbors = pending[0]
        tally = Tally()
        yield select_row(doc, split, had_neighbors, list(grouped["candidates"]), self._options, tally)
        tally.flush()


class BuildIntruders(beam.PTransform):
    """Documents (+ older versions, neighbour lists) -> ``(intruder row batches, candidate batches, rejected
    rows)``; a batch is a list of rows (``WriteTable(batched=True)`` writes them)."""

    def __init__(
        self,
        doc_files: list[str],
        neighbor_files: list[str],
        indexes: dict[str, str],
        options: Options,
        history_files: list[str] = (),
        score_candidates: beam.PTransform | None = None,
    ):
        super().__init__()
        self._doc_files, self._neighbor_files = list(doc_files), list(neighbor_files)
        self._history_files, self._indexes, self._options = list(history_files), indexes, options
        self._history_sources = frozenset(source_of_file(f) for f in self._history_files)
        self._score = score_candidates
        self._total = parquet_rows(self._doc_files) if progress.enabled() else None

    def expand(self, pbegin):
        o = self._options
        # every step works on buckets of documents (a stable hash of the id): one Beam element per batch
        buckets = spill.buckets_for(pbegin.pipeline)
        docs = (
            pbegin
            | "DocumentFiles" >> beam.Create(self._doc_files)
            | "ReadDocuments" >> beam.ParDo(ReadDocumentBatches(buckets))
        )
        old = (
            pbegin
            | "HistoryFiles" >> beam.Create(self._history_files)
            | "ReadHistory" >> beam.ParDo(ReadDocumentBatches(buckets))
        )
        chosen = (
            {"new": docs, "old": old}
            | "JoinHistory" >> spill.CoGroupBuckets()
            | "ChooseVersion"
            >> beam.ParDo(
                ChooseVersion(self._indexes, o, self._history_sources, total=self._total)
            ).with_outputs("pool", main="versions")
        )
        versions = chosen.versions
        place = PlaceDocuments(o, self._history_sources)
        outputs = ("coherent", "rejected", "target_ids")
        if self._history_files:  # PlaceDocuments waits for the counts: the documents wait on disk
            counts = (
                versions
                | "EligibilityCounts" >> beam.FlatMap(_eligibility_counts)
                | "CountEligible" >> beam.CombinePerKey(sum)
            )
            placed = (
                versions
                | "VersionsOnDisk" >> spill.Barrier(chunk_values=1)
                | "PlaceDocuments"
                >> beam.ParDo(place, counts=beam.pvalue.AsDict(counts)).with_outputs(*outputs, main="targets")
            )
        else:  # the counts only matter for sources with history: no wait
            placed = versions | "PlaceDocuments" >> beam.ParDo(place, counts={}).with_outputs(
                *outputs, main="targets"
            )
        lists = (
            pbegin
            | "NeighborFiles" >> beam.Create(self._neighbor_files)
            | "ReadNeighborLists" >> beam.ParDo(ReadNeighborLists(buckets))
        )
        requested = (
            {"doc": placed.target_ids, "nbrs": lists}
            | "JoinNeighborLists" >> spill.CoGroupBuckets()
            | "RequestOffers" >> beam.ParDo(RequestOffers(o.k, buckets)).with_outputs("had", main="requests")
        )
        offers = (
            {"pool": chosen.pool, "requests": requested.requests}
            | "JoinPool" >> spill.CoGroupBuckets()
            | "MakeOffers" >> beam.ParDo(MakeOffers(o.seed, buckets))
        )
        made = (
            {"targets": placed.targets, "had": requested.had, "offers": offers}
            | "JoinOffers" >> spill.CoGroupBuckets()
            | "MakeCandidates"
            >> beam.ParDo(MakeCandidates(self._indexes, o)).with_outputs("rows", "pending", main="candidates")
        )
        candidates = made.candidates
        if o.filtered:  # the model scores candidates elsewhere: join them back to their documents to choose
            scored = candidates | "EachCandidate" >> beam.FlatMap(_each) | "ScoreCandidates" >> self._score
            selected = (
                {"pending": made.pending, "candidates": scored | "KeyCandidates" >> beam.Map(_by_id)}
                | "JoinCandidates" >> spill.SpillCoGroupByKey()
                | "Select" >> beam.ParDo(Select(o))
                | "SelectedAsBatches" >> beam.Map(_as_batch)
            )
            candidates = scored | "AsBatches" >> beam.Map(_as_batch)
        else:
            selected = made.rows
        rows = (placed.coherent, selected) | "AllRows" >> spill.Flatten(chunk_values=1)
        return rows, candidates, placed.rejected


# --------------------------------------------------------------------------------------------- summary


def parquet_rows(files: list[str]) -> int:
    """Rows of Parquet files, from their footers."""
    total = 0
    for path in files:
        with FileSystems.open(path) as f:
            total += pq.ParquetFile(f).metadata.num_rows
    return total


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


def source_summary(out_dir: str, source: str, counters: dict[str, int], outputs: dict, history: bool) -> dict:
    """The per-source block of ``run_summary.json`` (counters regrouped, splits, positive rate, artefacts)."""
    kept = {k: counters.get(k, 0) for k in (logic.KEPT_IN_RANGE, logic.KEPT_TRUNCATED, logic.KEPT_WHOLE)}
    dropped = {k: counters.get(k, 0) for k in (logic.TOO_FEW, logic.TOO_MANY, logic.IDENTICAL)}
    fallback = {k.removeprefix("fallback_"): v for k, v in counters.items() if k.startswith("fallback_")}
    rows, total, positives = artefact_sample(list_tables(out_dir, f"intruder-{source}"))
    summary = {
        "documents_read": counters.get("read", 0),
        "length_rule": logic.length_mode(source),
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
        "splits": outputs.get(f"intruder-{source}", {}),
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


# --------------------------------------------------------------------------------------------- running


@contextlib.contextmanager
def retrieval_for(
    docs_dirs: list[str], sources_by_dir: dict[str, list[str]], index_map, neighbor_map, k, beam_args
):
    """Index and neighbour directories per source; builds missing ones in a temporary directory."""
    missing = [
        d for d in docs_dirs if any(s not in index_map or s not in neighbor_map for s in sources_by_dir[d])
    ]
    if not missing:
        yield index_map, neighbor_map
        return
    from pipelines.build.processes import run_in_process

    work = tempfile.mkdtemp(prefix="incoherent-retrieval-")
    try:
        index_map, neighbor_map = dict(index_map), dict(neighbor_map)
        for i, docs_dir in enumerate(missing):
            index_dir = os.path.join(work, f"index-{i}")
            neighbors_dir = os.path.join(work, f"neighbors-{i}")
            LOG.info("building the retrieval index of %s in %s", docs_dir, work)
            run_in_process(["index", docs_dir, "--out", index_dir], beam_args)
            run_in_process(
                ["neighbors", docs_dir, "--index", index_dir, "--k", str(k), "--out", neighbors_dir],
                beam_args,
            )
            for source in sources_by_dir[docs_dir]:
                index_map.setdefault(source, index_dir)
                neighbor_map.setdefault(source, neighbors_dir)
        yield index_map, neighbor_map
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    check_options(args)
    sources_by_dir = {d: sorted({source_of_file(f) for f in document_files(d)}) for d in args.docs}
    doc_files = sorted(f for d in args.docs for f in document_files(d))
    sources = sorted({s for ss in sources_by_dir.values() for s in ss})
    if len(doc_files) != len(set(doc_files)):
        raise InputError("DOCS_DIR: the same directory is given twice")
    history_files = sorted(f for d in args.history for f in document_files(d))
    history_sources = sorted({source_of_file(f) for f in history_files})
    for source in history_sources:
        if source not in sources:
            raise InputError(
                f"--history: documents of source {source!r}, but DOCS_DIR has none (sources: {sources})"
            )
    if args.history:
        newest = [f for f in doc_files if source_of_file(f) in history_sources]
        for old_dir in args.history:
            if not shares_an_id(document_files(old_dir), newest):
                raise InputError(
                    f"--history {old_dir}: shares no article with DOCS_DIR (ids differ; wrong dump?)"
                )
    index_map = parse_mapping(args.index, "--index", sources)
    neighbor_map = parse_mapping(args.neighbors, "--neighbors", sources)
    filtered = args.filter != "none"
    if filtered:
        args.filter = storage.absolute(args.filter)
    if filtered and not storage.exists(args.filter):
        raise InputError(f"--filter {args.filter}: no such model directory (or pass --filter none)")
    if storage.is_remote(args.out) and (set(index_map) != set(sources) or set(neighbor_map) != set(sources)):
        raise InputError("--index/--neighbors: required for every source when --out is not a local directory")
    samples = parse_samples(args.sample, "--sample", sources)
    thresholds = sample_thresholds(samples, doc_files, args.seed)
    options = Options(
        sample_thresholds=tuple(sorted(thresholds.items())),
        seed=args.seed,
        k=args.k,
        similarity_threshold=args.similarity_threshold,
        drift_threshold=args.drift_threshold,
        validation_fraction=args.validation_fraction,
        filtered=filtered,
    )
    score = None
    if filtered:
        from pipelines.intruders.filter_stage import ScoreCandidates

        score = ScoreCandidates(
            args.filter,
            device=args.device,
            batch_size=args.batch_size,
            max_length=args.max_length,
            easy_threshold=args.easy_threshold,
        )
    params = {
        "docs": args.docs,
        "index": args.index,
        "neighbors": args.neighbors,
        "filter": args.filter,
        "history": args.history,
        "seed": args.seed,
        "similarity_threshold": args.similarity_threshold,
        "drift_threshold": args.drift_threshold,
        "validation_fraction": args.validation_fraction,
        "k": args.k,
    }
    if samples:
        params["sample"] = {source: str(spec) for source, spec in samples.items()}
    if filtered:
        params.update(
            device=args.device,
            batch_size=args.batch_size,
            max_length=args.max_length,
            easy_threshold=args.easy_threshold,
        )
    with retrieval_for(args.docs, sources_by_dir, index_map, neighbor_map, args.k, beam_args) as (
        indexes,
        nbrs,
    ):
        n_files = sorted({f for source in sources for f in neighbor_files(nbrs[source])})

        def build(p):
            rows, candidates, rejected = p | "BuildIntruders" >> BuildIntruders(
                doc_files, n_files, indexes, options, history_files, score
            )
            for source in sources:
                (
                    rows
                    | f"Rows-{source}" >> beam.Map(_rows_of, source)
                    | f"Write-{source}" >> WriteTable(args.out, f"intruder-{source}", batched=True)
                )
            candidates | "WriteCandidates" >> WriteTable(
                args.out, "candidates", sort_keys=("id", "neighbor_rank", "candidate_source_id"), batched=True
            )
            rejected | "WriteRejected" >> WriteRejected(args.out, STAGE)

        def extra(summary):
            per_source = {}
            for source in sources:
                counters = summary["counters"].get(_ns(source), {})
                per_source[source] = source_summary(
                    args.out, source, counters, summary["outputs"], source in history_sources
                )
                if source in samples:
                    per_source[source]["sample"] = {
                        "requested": str(samples[source]),
                        "documents": counters.get("read", 0) - counters.get("not_sampled", 0),
                        "pool": counters.get("read", 0),
                    }
            extra_fields = {"sources": per_source, "retrieval": {"index": indexes, "neighbors": nbrs}}
            if "wikipedia" in per_source:
                extra_fields["wikipedia_test_split"] = per_source["wikipedia"]["test_split"]
            return extra_fields

        summary = run_pipeline(
            build,
            command="intruders",
            out_dir=args.out,
            params=params,
            beam_args=beam_args,
            overwrite=args.overwrite,
            extra_summary=extra,
        )
    print_report(summary, args.out)
    print_table(summary)
    return 0


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
