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
