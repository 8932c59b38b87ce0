import json

import pytest

from incoherent.corpora.shuffle import blocks_of, shuffle_document
from incoherent.schemas.records import Rejected
from tests.conftest import MULTI_PROCESS, SAMPLES, file_bytes, read_rows, run_cli


def doc(n, doc_id="d"):
    return {"id": doc_id, "source": "s", "sentences": [f"s{i}" for i in range(n)]}


def test_blocks_are_consecutive_and_last_may_be_short():
    assert blocks_of(["a", "b", "c", "d", "e"], 2) == [["a", "b"], ["c", "d"], ["e"]]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("n", [2, 3, 7, 20, 31])
def test_blocks_intact_order_changed_truncated(k, n):
    for doc_id in ("a", "b", "c"):
        outs = list(shuffle_document(doc(n, doc_id), k, seed=0))
        truncated = [f"s{i}" for i in range(min(n, 20))]
        if len(blocks_of(truncated, k)) < 2:
            assert [o.reason for o in outs] == [f"fewer_than_two_blocks_k{k}"]
            continue
        (row,) = outs
        assert row["original"] == truncated
        assert row["shuffled"] != row["original"]
        assert sorted(row["block_order"]) == list(range(len(blocks_of(truncated, k))))
        blocks = blocks_of(truncated, k)
        assert row["shuffled"] == [s for j in row["block_order"] for s in blocks[j]]


def test_same_seed_same_permutation_other_seed_may_differ():
    a = next(shuffle_document(doc(20), 1, seed=0))
    assert a == next(shuffle_document(doc(20), 1, seed=0))
    assert any(
        next(shuffle_document(doc(20), 1, seed=s))["block_order"] != a["block_order"] for s in range(1, 5)
    )


@pytest.mark.parametrize(
    "n,k,order",
    [  # block orders drawn by the code before --permutations existed (commit f9e36a0)
        (20, 1, [10, 16, 5, 7, 13, 6, 8, 4, 17, 11, 18, 3, 14, 1, 15, 2, 19, 12, 9, 0]),
        (7, 2, [3, 0, 2, 1]),
        (3, 1, [1, 0, 2]),
        (12, 5, [1, 2, 0]),
    ],
)
def test_permutation_zero_is_the_order_drawn_before(n, k, order):
    d = doc(n, f"wsj:{n}")
    (row,) = shuffle_document(d, k, seed=0)
    assert row["block_order"] == order and row["permutation"] == 0
    assert next(shuffle_document(d, k, seed=0, permutations=20)) == row


@pytest.mark.parametrize(
    "n,k,expected", [(2, 1, 1), (3, 1, 5), (4, 1, 20), (7, 2, 20), (20, 1, 20), (3, 2, 1)]
)
def test_permutations_are_distinct_and_as_many_as_exist(n, k, expected):
    rows = list(shuffle_document(doc(n), k, seed=0, permutations=20))
    assert [r["permutation"] for r in rows] == list(range(expected))
    texts = {tuple(r["shuffled"]) for r in rows}
    assert len(texts) == expected and tuple(rows[0]["original"]) not in texts
    blocks = blocks_of(rows[0]["original"], k)
    assert all(r["shuffled"] == [s for j in r["block_order"] for s in blocks[j]] for r in rows)
    assert rows == list(shuffle_document(doc(n), k, seed=0, permutations=20))


def test_repeated_blocks_give_fewer_distinct_texts():
    same = {"id": "x", "source": "s", "sentences": ["A.", "A.", "B."]}
    rows = list(shuffle_document(same, 1, seed=0, permutations=20))
    assert sorted(tuple(r["shuffled"]) for r in rows) == [("A.", "B.", "A."), ("B.", "A.", "A.")]


def test_identical_blocks_cannot_be_shuffled():
    same = {"id": "x", "source": "s", "sentences": ["Same."] * 4}
    (out,) = shuffle_document(same, 2, seed=0)
    assert isinstance(out, Rejected) and out.reason == "identical_blocks_k2"


@pytest.mark.e2e
def test_cli_shuffle_is_identical_across_runners(tmp_path):
    docs = tmp_path / "docs"
    assert run_cli("ingest", "cnn", SAMPLES / "cnn", "--out", docs) == 0
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", tmp_path / "wsj") == 0
    for f in (tmp_path / "wsj").glob("documents-*"):
        f.rename(docs / f.name)
    one, two = tmp_path / "one", tmp_path / "two"
    assert run_cli("shuffle", docs, "--out", one, "--seed", "3", "--permutations", "2") == 0
    argv = ("shuffle", docs, "--out", two, "--seed", "3", "--permutations", "2")
    assert run_cli(*argv, beam=MULTI_PROCESS) == 0
    assert file_bytes(one) == file_bytes(two)
    rows = read_rows(one, "shuffle-cnn")
    assert {r["block_size"] for r in rows} == {1, 2, 3, 4, 5}
    assert all(len(r["original"]) <= 20 and r["shuffled"] != r["original"] for r in rows)
    assert {r["permutation"] for r in rows} == {0, 1}
    assert {r["split"] for r in rows} == {"test"}
    summary = json.loads((one / "run_summary.json").read_text())
    wsj_rows = read_rows(one, "shuffle-wsj")
    rejected = read_rows(one, "rejected/shuffle")
    assert summary["counters"]["shuffle"]["kept"] == len(rows) + len(wsj_rows)
    assert sum(v for k, v in summary["counters"]["shuffle"].items() if k != "kept") == len(rejected)


def test_cli_shuffle_sample_is_a_subset_of_the_full_rows(tmp_path):
    docs = tmp_path / "docs"
    assert run_cli("ingest", "cnn", SAMPLES / "cnn", "--out", docs) == 0
    full, part = tmp_path / "full", tmp_path / "part"
    assert run_cli("shuffle", docs, "--out", full, "--block-sizes", "2") == 0
    assert run_cli("shuffle", docs, "--out", part, "--block-sizes", "2", "--sample", "0.3") == 0
    full_rows, rows = read_rows(full, "shuffle-cnn"), read_rows(part, "shuffle-cnn")
    assert 0 < len(rows) < len(full_rows)
    assert rows == [r for r in full_rows if r["id"] in {p["id"] for p in rows}]
    summary = json.loads((part / "run_summary.json").read_text())
    documents = json.loads((full / "run_summary.json").read_text())["counters"]["shuffle"]
    assert (
        summary["counters"]["shuffle"]["not_sampled"] + summary["counters"]["shuffle"]["kept"]
        == documents["kept"]
    )


def test_cli_bad_block_sizes(tmp_path, capsys):
    assert run_cli("shuffle", SAMPLES, "--out", tmp_path / "o", "--block-sizes", "2", "0") == 2
    assert capsys.readouterr().err.strip() == "error: --block-sizes: block sizes must be >= 1, got 2 0"
    with pytest.raises(SystemExit):  # one value per block size: a comma list is argparse's one-line error
        run_cli("shuffle", SAMPLES, "--out", tmp_path / "o", "--block-sizes", "1,x")
    assert "--block-sizes: '1,x': write a list as values separated by spaces" in capsys.readouterr().err
