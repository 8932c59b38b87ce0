"""The Beam graph of ``incoherent intruders``: :class:`BuildIntruders` and its DoFns (loops and joins only).

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
Every decision is a plain function of :mod:`corpora.intruders` (and :mod:`corpora.drift`); the DoFns here
group, call them and count.
"""

from __future__ import annotations

from dataclasses import dataclass

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from incoherent.corpora import drift
from incoherent.corpora import intruders as logic
from incoherent.pipelines.intruders.similarity import similarities_for
from incoherent.pipelines.runtime import progress, spill
from incoherent.pipelines.runtime.tables import Tally, source_of_file
from incoherent.schemas.records import Rejected

STAGE = "intruders"


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
    kinds: tuple[
        tuple[str, str], ...
    ] = ()  # (source, kind): the kind chooses the split share and length rule

    def sample_threshold(self, source: str) -> int | None:
        return dict(self.sample_thresholds).get(source)

    def kind(self, source: str) -> str:
        """The kind of ``source`` (``wikipedia``, ``cnn``, ``text``): every source read has one."""
        return dict(self.kinds)[source]


def parquet_rows(files: list[str]) -> int:
    """Rows of Parquet files, from their footers."""
    total = 0
    for path in files:
        with FileSystems.open(path) as f:
            total += pq.ParquetFile(f).metadata.num_rows
    return total


def namespace(source: str) -> str:
    """The counter namespace of a source: ``intruders/<source>``."""
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
        self._kinds = dict(options.kinds)
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
            kinds=self._kinds,
            tally=tally.for_namespace(namespace),
        )


def _eligibility_counts(batch):
    """``(bucket, [(source, doc, version)])`` -> :func:`corpora.intruders.eligibility_counts` of the batch."""
    _bucket, versions = batch
    yield from logic.eligibility_counts(versions)


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
            kind=self._options.kind(source),
            history=source in self._history_sources,
            validation_fraction=self._options.validation_fraction,
            tally=tally.for_namespace(namespace),
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
            top = logic.neighbors_to_ask(
                targets[doc_id], lists.get(doc_id), self._k, tally=tally.for_namespace(namespace)
            )
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
        tally=tally.for_namespace(namespace),
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
            ns = namespace(doc["source"])
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
            logic.finish_candidates(
                doc,
                candidates,
                threshold=o.similarity_threshold,
                filtered=o.filtered,
                tally=tally.for_namespace(namespace),
            )
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


def rows_of(batch: list[dict], source: str) -> list[dict]:
    """The rows of one source in a batch of intruder rows (each source is written as its own config)."""
    return [row for row in batch if row["source"] == source]


class Select(beam.DoFn):
    """A document (``pending``) joined with its scored candidates -> its intruder row (with ``--filter``)."""

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
