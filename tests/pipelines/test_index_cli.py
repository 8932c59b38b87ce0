"""End to end: `incoherent index` and `incoherent neighbors` on the bundled WSJ sample, and their bad input."""

from __future__ import annotations

import json
import shutil

import pytest

from incoherent.corpora.sampling import in_sample, parse_sample, threshold_for
from incoherent.pipelines.runtime.tables import write_shard
from incoherent.retrieval import TfidfIndex
from incoherent.schemas import DOCUMENT_SCHEMA
from incoherent.schemas.records import document
from tests.conftest import MULTI_PROCESS, file_bytes, read_rows, run_cli


@pytest.fixture(scope="module")
def built(tmp_path_factory, samples):
    root = tmp_path_factory.mktemp("retrieval")
    docs, index, nbrs = root / "docs", root / "index", root / "neighbors"
    assert run_cli("ingest", "text", samples / "wsj" / "wsj.jsonl", "--out", docs) == 0
    assert run_cli("index", docs, "--out", index) == 0
    assert run_cli("neighbors", docs, "--index", index, "--k", "5", "--out", nbrs) == 0
    return docs, index, nbrs


def write_docs(path, rows: list[dict]) -> None:
    write_shard(str(path / "documents-test" / "documents-00000-of-00001.parquet"), DOCUMENT_SCHEMA, rows)


def test_index_files_and_summary(built):
    _, index, _ = built
    assert sorted(p.name for p in index.iterdir()) == [
        ".incoherent-run.json",  # the marker that makes --overwrite recognise the folder (docs/safety.md)
        "docs.npz",
        "idf.npz",
        "ids.json",
        "index.json",
        "run_summary.json",
        "tfidf.npz",
    ]
    summary = json.loads((index / "run_summary.json").read_text())
    assert summary["counters"]["index"]["documents"] == 199
    assert summary["index"]["num_docs"] == 199 and summary["index"]["num_zero_vector_docs"] == 0
    meta = json.loads((index / "index.json").read_text())
    assert meta["ngram"] == 2 and meta["hash_size"] == 2**24 and meta["tokenizer"] == "drqa-simple"
    assert meta["corpus_fingerprint"].startswith("199:")


def test_neighbors_rows_are_topk_by_dot_product(built):
    docs, index, nbrs = built
    rows = {r["id"]: r["neighbors"] for r in read_rows(nbrs, "neighbors")}
    assert len(rows) == 199 and all(1 <= len(n) <= 5 for n in rows.values())
    for doc_id, neighbors in rows.items():
        assert doc_id not in {n["id"] for n in neighbors}
        scores = [n["score"] for n in neighbors]
        assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    loaded = TfidfIndex.load(str(index))
    text = " ".join(read_rows(docs, "documents-wsj")[0]["sentences"])
    doc_id = read_rows(docs, "documents-wsj")[0]["id"]
    expected = [(d, s) for d, s in loaded.closest(text, k=6) if d != doc_id][:5]
    assert [n["id"] for n in rows[doc_id]] == [d for d, _ in expected]
    assert [n["score"] for n in rows[doc_id]] == pytest.approx([s for _, s in expected], rel=1e-5)
    summary = json.loads((nbrs / "run_summary.json").read_text())
    assert summary["counters"]["neighbors"]["queries"] == 199
    assert summary["outputs"] == {"neighbors": {"neighbors": 199}}


@pytest.mark.e2e
def test_two_workers_and_small_blocks_give_identical_files(built, tmp_path):
    docs, index, nbrs = built
    out = tmp_path / "nb"
    assert (
        run_cli(
            "neighbors",
            docs,
            "--index",
            index,
            "--k",
            "5",
            "--out",
            out,
            "--block-rows",
            "13",
            beam=MULTI_PROCESS,
        )
        == 0
    )
    assert file_bytes(out) == file_bytes(nbrs)


def test_empty_and_stopword_documents_are_zero_vectors_never_neighbours(tmp_path):
    write_docs(
        tmp_path / "docs",
        [
            document("t:a", "test", ["Stock markets fell sharply on Monday."]),
            document("t:b", "test", ["Markets fell again on Tuesday."]),
            document("t:c", "test", ["Farmers expect a large wheat harvest."]),
            document("t:d", "test", ["Rain helped the wheat harvest."]),
            document("t:e", "test", []),
            document("t:f", "test", ["The of and, to."]),
        ],
    )
    assert run_cli("index", tmp_path / "docs", "--out", tmp_path / "index") == 0
    assert (
        run_cli("neighbors", tmp_path / "docs", "--index", tmp_path / "index", "--out", tmp_path / "nb") == 0
    )
    summary = json.loads((tmp_path / "index" / "run_summary.json").read_text())
    assert summary["counters"]["index"] == {"documents": 6, "empty_text": 1, "zero_vector": 2}
    rows = {r["id"]: [n["id"] for n in r["neighbors"]] for r in read_rows(tmp_path / "nb", "neighbors")}
    assert rows["t:e"] == [] and rows["t:f"] == []
    assert all("t:e" not in n and "t:f" not in n for n in rows.values())
    assert rows["t:a"] == ["t:b"] and rows["t:c"] == ["t:d"]
    counters = json.loads((tmp_path / "nb" / "run_summary.json").read_text())["counters"]["neighbors"]
    assert counters["zero_vector"] == 2 and counters["no_neighbors"] == 2 and counters["fewer_than_k"] == 4


def test_one_document_corpus(tmp_path):
    write_docs(tmp_path / "docs", [document("t:only", "test", ["A lonely document about wheat."])])
    assert run_cli("index", tmp_path / "docs", "--out", tmp_path / "index") == 0
    assert (
        run_cli("neighbors", tmp_path / "docs", "--index", tmp_path / "index", "--out", tmp_path / "nb") == 0
    )
    assert read_rows(tmp_path / "nb", "neighbors") == [{"id": "t:only", "neighbors": []}]


# --------------------------------------------------------------------------------------------- bad input


def test_missing_index_dir(built, tmp_path, capsys):
    docs, _, _ = built
    assert run_cli("neighbors", docs, "--index", tmp_path / "nope", "--out", tmp_path / "nb") == 2
    assert "no such index directory" in capsys.readouterr().err


def test_index_with_other_parameters(built, tmp_path, capsys):
    docs, index, _ = built
    assert run_cli("neighbors", docs, "--index", index, "--hash-size", "1024", "--out", tmp_path / "nb") == 2
    err = capsys.readouterr().err
    assert (
        "--hash-size 1024: the index" in err and "was built with hash_size 16777216 (its index.json)" in err
    )


def test_truncated_matrix_is_a_one_line_error(built, tmp_path, capsys):
    docs, index, _ = built
    broken = tmp_path / "index"
    shutil.copytree(index, broken)
    data = (broken / "tfidf.npz").read_bytes()
    (broken / "tfidf.npz").write_bytes(data[:1000])
    assert run_cli("neighbors", docs, "--index", broken, "--out", tmp_path / "nb") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "tfidf.npz: corrupt or truncated .npz" in err[-1]


def test_sampled_queries_get_the_neighbour_lists_of_the_full_quadratic_run(built, tmp_path, capsys):
    docs, index, nbrs = built
    ids = [r["id"] for r in read_rows(docs, "documents-wsj")]
    keep = threshold_for(parse_sample("40", "--sample"), ids, seed=3)
    sampled = sorted(i for i in ids if in_sample(3, i, keep))
    assert len(sampled) == 40
    id_list = tmp_path / "queries.txt"
    id_list.write_text("\n".join(sampled) + "\n")
    out = tmp_path / "nb"
    argv = ["neighbors", docs, "--index", index, "--k", "5", "--queries", id_list, "--block-rows", "7"]
    assert run_cli(*argv, "--out", out) == 0
    full = {r["id"]: r["neighbors"] for r in read_rows(nbrs, "neighbors")}
    got = {r["id"]: r["neighbors"] for r in read_rows(out, "neighbors")}
    assert sorted(got) == sampled
    assert got == {i: full[i] for i in sampled}
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["counters"]["neighbors"]["queries"] == 40 and summary["params"]["num_queries"] == 40
    # a documents directory as the query list: every document, the same files as the full run
    assert (
        run_cli("neighbors", docs, "--index", index, "--k", "5", "--queries", docs, "--out", tmp_path / "all")
        == 0
    )
    assert file_bytes(tmp_path / "all") == file_bytes(nbrs)
    id_list.write_text("wsj:nope\n" + sampled[0])
    assert run_cli(*argv, "--out", tmp_path / "bad") == 2
    assert "--queries: 1 ids are not documents of the index, e.g. ['wsj:nope']" in capsys.readouterr().err
    assert run_cli(*argv[:-4], "--queries", tmp_path / "nowhere", "--out", tmp_path / "bad2") == 2
    assert f"--queries {tmp_path / 'nowhere'}: no such file or directory" in capsys.readouterr().err


def test_documents_other_than_the_indexed_ones(built, tmp_path, capsys):
    _, index, _ = built
    write_docs(tmp_path / "docs", [document("t:x", "test", ["Something else entirely."])])
    assert run_cli("neighbors", tmp_path / "docs", "--index", index, "--out", tmp_path / "nb") == 2
    assert "index was built from other documents" in capsys.readouterr().err


def test_bad_options_and_existing_output(built, tmp_path, capsys):
    docs, index, _ = built
    assert run_cli("neighbors", docs, "--index", index, "--k", "0", "--out", tmp_path / "nb") == 2
    assert "--k: must be >= 1" in capsys.readouterr().err
    assert run_cli("neighbors", docs, "--index", index, "--threads", "-1", "--out", tmp_path / "nb") == 2
    assert "--threads: must be >= 0" in capsys.readouterr().err
    assert run_cli("index", docs, "--out", tmp_path / "i", "--ngram", "5") == 2
    assert "--ngram" in capsys.readouterr().err
    assert run_cli("index", docs, "--out", index) == 2
    assert "not empty (pass --overwrite" in capsys.readouterr().err


def test_scoring_threads_follow_the_runner(monkeypatch):
    from incoherent.pipelines.neighbors.command import scoring_threads

    monkeypatch.setattr("incoherent.pipelines.neighbors.command.available_cores", lambda: 8)
    assert scoring_threads(0, []) == (8, 1)
    assert scoring_threads(0, ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]) == (4, 2)
    assert scoring_threads(0, ["--direct_running_mode=multi_processing", "--direct_num_workers=0"]) == (1, 8)
    assert scoring_threads(0, ["--direct_running_mode=multi_threading", "--direct_num_workers=4"]) == (8, 1)
    assert scoring_threads(0, ["--runner=DataflowRunner"]) == (1, 64)
    assert scoring_threads(3, ["--runner=FlinkRunner"]) == (3, 64)


def test_document_frequency_combine_and_batches_under_beam():
    import apache_beam as beam
    import numpy as np
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from apache_beam.testing.util import assert_that, equal_to

    from incoherent.pipelines.index.transforms import DocumentFrequencies, featurize_batch
    from incoherent.retrieval.index import IndexParams

    def as_lists(df):
        return df[0].tolist(), df[1].tolist()

    with beam.Pipeline(runner=FnApiRunner()) as p:
        sets = p | beam.Create([np.array([1, 5]), np.array([5]), np.array([5, 9]), np.array([], np.int64)])
        out = sets | beam.CombineGlobally(DocumentFrequencies()) | beam.Map(as_lists)
        assert_that(out, equal_to([([1, 5, 9], [1, 3, 1])]))
    batch = featurize_batch(
        [document("t:a", "test", ["Big cats."]), document("t:b", "test", [])], IndexParams()
    )
    assert batch["ids"] == ["t:a", "t:b"] and batch["lengths"].tolist() == [3, 0]
    assert len(batch["features"]) == 3 and batch["counts"].tolist() == [1, 1, 1]


def test_assembly_from_part_files_in_scrambled_order_saves_the_bytes_of_build(tmp_path, samples):
    import numpy as np

    from incoherent.pipelines.index.transforms import (
        PARTS_DIR,
        assemble_index,
        featurize_batch,
        merge_document_frequencies,
        write_df,
        write_manifest,
        write_part,
    )
    from incoherent.retrieval.featurize import document_text
    from incoherent.retrieval.index import IndexParams

    lines = (samples / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()
    rows = [document(f"wsj:{i:03d}", "test", [json.loads(line)["text"]]) for i, line in enumerate(lines)]
    rows = [rows[i] for i in np.random.default_rng(3).permutation(len(rows))]
    params, parts_dir = IndexParams(), str(tmp_path / "index" / PARTS_DIR)
    batches = [featurize_batch(rows[a : a + 40], params) for a in range(0, len(rows), 40)]
    paths = [write_part(batch, parts_dir) for batch in batches]
    write_manifest(paths, parts_dir)
    write_df(
        merge_document_frequencies((b["features"], np.ones(len(b["features"]), np.int64)) for b in batches),
        parts_dir,
    )
    meta = assemble_index(str(tmp_path / "index"), params, "docs/")
    TfidfIndex.build([(r["id"], document_text(r["sentences"])) for r in rows]).save(str(tmp_path / "built"))
    assert meta["num_docs"] == 199 and not (tmp_path / "index" / PARTS_DIR).exists()
    names = ["docs.npz", "idf.npz", "ids.json", "index.json", "tfidf.npz"]
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == names
    for name in names:
        assert (tmp_path / "index" / name).read_bytes() == (tmp_path / "built" / name).read_bytes(), name


def test_neighbors_k_is_bounded_by_the_documents(built, tmp_path, capsys):
    """``k`` beyond the other documents is clamped (and said so, in the summary too); an absurd ``k`` is one
    line before any work (a build config's ``neighbors.k``: tests/pipelines/build/test_safety_config.py)."""
    docs, index, _ = built
    documents = json.loads((index / "index.json").read_text())["num_docs"]
    out = tmp_path / "nb"
    assert run_cli("neighbors", docs, "--index", index, "--k", "30000", "--out", out) == 0
    printed = capsys.readouterr().out
    assert (
        f"--k 30,000 is more than the {documents - 1:,} other documents; using k = {documents - 1:,}"
        in printed
    )
    params = json.loads((out / "run_summary.json").read_text())["params"]
    assert params["k"] == documents - 1 and params["k_requested"] == 30000
    assert max(len(r["neighbors"]) for r in read_rows(out, "neighbors")) <= documents - 1
    for k in ("30000000", "1000000000"):
        assert run_cli("neighbors", docs, "--index", index, "--k", k, "--out", tmp_path / "no") == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"error: --k: at most 100,000 neighbours per document, got {int(k):,}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb"]
