"""The plain functions of ``pipelines/neighbors/command.py`` (the command end to end: ``test_index_cli.py``)."""

from __future__ import annotations

from incoherent.pipelines.neighbors.transforms import neighbor_row


def _counted():
    seen: dict[str, int] = {}

    def tally(name):
        seen[name] = seen.get(name, 0) + 1

    return seen, tally


def test_neighbor_row_names_the_neighbours_best_first_and_counts_short_lists():
    ids = ["w:1", "w:2", "w:3"]
    seen, tally = _counted()
    row = neighbor_row(ids, 2, [0, 1], [0.75, 0.25], 2, zero_vector=False, has_duplicates=True, tally=tally)
    assert row == {"id": "w:3", "neighbors": [{"id": "w:1", "score": 0.75}, {"id": "w:2", "score": 0.25}]}
    assert seen == {"queries": 1, "has_duplicates": 1}
    neighbor_row(ids, 0, [1], [0.5], 2, zero_vector=False, has_duplicates=False, tally=tally)
    assert neighbor_row(ids, 1, [], [], 2, zero_vector=True, has_duplicates=False, tally=tally) == {
        "id": "w:2",
        "neighbors": [],
    }
    assert seen == {"queries": 3, "has_duplicates": 1, "fewer_than_k": 1, "zero_vector": 1, "no_neighbors": 1}


def test_a_cell_worker_reads_only_its_two_tiles_rows_and_gives_the_keys_of_the_whole_matrix(
    samples, tmp_path
):
    # TopKCells as a worker runs it (setup, then cells): for 1, 4 and 16 tiles each cell reads the rows of its
    # two tiles and no other from tfidf.npz, and its keys are those of the whole matrix's cell_keys
    import json

    from incoherent.pipelines.neighbors.transforms import TopKCells
    from incoherent.retrieval import topk as T
    from incoherent.retrieval.index import IndexParams, TfidfIndex

    lines = (samples / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()[:160]
    index = TfidfIndex.build(sorted((r["id"], r["text"]) for r in map(json.loads, lines)))
    index.save(str(tmp_path))
    scoring = T.prepare(index.matrix, index.text_keys)
    n = scoring.num_docs
    for tiles in (1, 4, 16):
        cells = T.grid(n, -(-n // tiles))
        assert len(cells) == tiles * (tiles + 1) // 2
        worker = TopKCells(str(tmp_path), IndexParams(), 5, 1, len(cells))
        worker.setup()
        try:
            for queries, tile in cells:
                before = len(worker._ranges.matrix.ranges_read)
                got = list(worker.process([list(queries), list(tile)], index.meta["corpus_fingerprint"]))
                read = {r for a, b in worker._ranges.matrix.ranges_read[before:] for r in range(a, b)}
                assert read == set(range(*queries)) | set(range(*tile))
                want = [(f, k.tobytes()) for f, k in T.cell_keys(scoring, queries, tile, 5, threads=1)]
                assert got == want
        finally:
            worker.teardown()
