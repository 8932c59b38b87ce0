"""`incoherent score-shuffle` end to end on shuffles of the WSJ sample with the tiny GPT-2 and BERT: pairs,
originals scored once, ties, dead letters, results.json / accuracy.png, determinism across runners, bad input."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from incoherent.corpora.shuffle import shuffle_document
from incoherent.filters.lm import LanguageModelScorer, join_sentences
from incoherent.schemas import SHUFFLE_SCHEMA
from tests.conftest import MULTI_PROCESS, file_bytes, read_rows, run_cli
from tests.tiny_lm import build_bert, build_gpt2_tokenizer, tiny_bert_dir, tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import sample_documents

DOCS = 6


def write_shuffles(out_dir, rows: list[dict], config: str = "shuffle-wsj") -> str:
    os.makedirs(os.path.join(out_dir, config), exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=SHUFFLE_SCHEMA)
    pq.write_table(table, os.path.join(out_dir, config, "test-00000-of-00001.parquet"))
    return str(out_dir)


def shuffle_rows(permutations: int = 2, docs: int = DOCS) -> list[dict]:
    """Shuffles of the first WSJ sample documents (cut to 4 sentences), k = 1, 2, ``permutations`` each."""
    rows = []
    for doc_id, sentences in sample_documents(min_sentences=4, max_sentences=4)[:docs]:
        doc = {"id": doc_id, "source": "wsj", "sentences": sentences}
        for k in (1, 2):
            for row in shuffle_document(doc, k, seed=0, permutations=permutations):
                rows.append(dict(row, split="test"))
    return rows


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> str:
    return write_shuffles(tmp_path_factory.mktemp("shuffles"), shuffle_rows())


def test_scores_pairs_and_scores_each_original_once(tiny_gpt2_dir, data_dir, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    assert run_cli("score-shuffle", tiny_gpt2_dir, data_dir, "--out", out, "--pool-size", "8") == 0
    printed = capsys.readouterr().out
    source = shuffle_rows()
    rows = read_rows(out, "scores")
    assert [(r["id"], r["block_size"], r["permutation"]) for r in rows] == sorted(
        (r["id"], r["block_size"], r["permutation"]) for r in source
    )
    # every row's scores are those of its two texts, scored alone with the same model
    scorer = LanguageModelScorer.load(tiny_gpt2_dir, device="cpu")
    by_key = {(r["id"], r["block_size"], r["permutation"]): r for r in source}
    texts = sorted({join_sentences(r[c]) for r in source for c in ("original", "shuffled")})
    alone = dict(zip(texts, scorer.score_texts(texts)[0], strict=True))
    for row in rows:
        pair = by_key[(row["id"], row["block_size"], row["permutation"])]
        want_o, want_s = alone[join_sentences(pair["original"])], alone[join_sentences(pair["shuffled"])]
        assert abs(row["score_original"] - want_o[0]) < 1e-5 and row["tokens_original"] == want_o[1]
        assert abs(row["score_shuffled"] - want_s[0]) < 1e-5 and row["tokens_shuffled"] == want_s[1]
        assert row["correct"] == (row["score_shuffled"] - row["score_original"] > 1e-6) and not row["tie"]
    # originals once per document, not once per pair: texts scored = documents + distinct shuffles
    counters = json.loads((out / "run_summary.json").read_text())["counters"]["score-shuffle"]
    assert counters["scored"] == len(texts) == DOCS + len(source)
    assert counters["tokenized_by_parts"] == len(texts)  # each distinct sentence tokenized once per pool
    # windows shared by a document's texts (blocks that stay in place) run once, and so do predictions
    # over the leading tokens that shuffles share with their original: documents share neither
    pieces = [p for t in texts for p in scorer.plan(t)[0]]
    distinct = {(p.ids, p.mask_at, p.start, p.gold) for p in pieces}
    assert counters["forward_rows"] <= len(distinct) < len(pieces)
    assert counters["shared_targets"] > 0
    assert counters["forward_rows"] + counters["shared_rows"] == len(pieces)
    assert counters["pairs"] == counters["scored_pairs"] == len(source)
    results = json.loads((out / "results.json").read_text())
    assert results["scorer"] == "causal" and results["window"] == "exact" and results["join"] == "space"
    for k in ("1", "2"):
        cell = results["results"]["wsj"][k]
        mine = [r for r in rows if str(r["block_size"]) == k]
        assert cell["pairs"] == len(mine) and cell["correct"] == sum(r["correct"] for r in mine)
        assert cell["ties"] == 0 and cell["accuracy"] == cell["correct"] / cell["pairs"]
    assert (out / "accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "k=1" in printed and "k=2" in printed and "wsj" in printed


@pytest.mark.e2e
def test_ties_empty_documents_and_laban_masked(tiny_bert_dir, tmp_path):  # noqa: F811
    rows = shuffle_rows(permutations=1, docs=2)[:3]
    one_block = dict(rows[0], block_size=5, original=rows[0]["original"], shuffled=rows[0]["original"])
    one_block["block_order"] = [0]
    empty = dict(rows[-1], block_size=3, original=["", ""], shuffled=["", ""], block_order=[1, 0])
    data = write_shuffles(tmp_path / "data", rows + [one_block, empty])
    out = tmp_path / "out"
    argv = ["score-shuffle", tiny_bert_dir, data, "--out", out, "--window", "laban", "--join", "newline"]
    assert run_cli(*argv) == 0
    scored = read_rows(out, "scores")
    assert len(scored) == len(rows) + 1
    (tie,) = [r for r in scored if r["block_size"] == 5]
    assert tie["tie"] and not tie["correct"] and tie["score_original"] == tie["score_shuffled"]
    results = json.loads((out / "results.json").read_text())
    cell = results["results"]["wsj"]["5"]
    assert (cell["pairs"], cell["ties"], cell["correct"], cell["accuracy"]) == (1, 1, 0, None)
    assert results["scorer"] == "masked" and results["window"] == "laban" and results["join"] == "newline"
    counters = json.loads((out / "run_summary.json").read_text())["counters"]["score-shuffle"]
    assert counters["empty_document"] == 1 and counters["identical_texts"] == 1
    (dead,) = read_rows(out, "rejected/score-shuffle")
    assert dead["reason"] == "empty_document" and dead["id"] == rows[-1]["id"]


@pytest.mark.e2e
def test_same_files_in_process_and_with_two_workers(tiny_gpt2_dir, data_dir, tmp_path):  # noqa: F811
    # the same torch threads on both (by default each of two workers gets half the cores of one): scores are
    # bit for bit the same at the same thread count, within ~1e-9 across thread counts
    one, two = tmp_path / "one", tmp_path / "two"
    threads = ("--pool-size", "4", "--torch-threads", "1")
    assert run_cli("score-shuffle", tiny_gpt2_dir, data_dir, "--out", one, *threads) == 0
    argv = ("score-shuffle", tiny_gpt2_dir, data_dir, "--out", two, *threads)
    assert run_cli(*argv, beam=MULTI_PROCESS) == 0
    assert file_bytes(one) == file_bytes(two) and len(file_bytes(one)) == 1
    assert (one / "results.json").read_bytes() == (two / "results.json").read_bytes()


def error_of(capsys, *argv) -> str:
    capsys.readouterr()
    assert run_cli(*argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    return err


@pytest.mark.e2e
def test_bad_input(tiny_gpt2_dir, tiny_bert_dir, data_dir, tmp_path, capsys):  # noqa: F811
    from tests.tiny_model import build_model, build_tokenizer

    out = str(tmp_path / "out")
    xlnet = build_model(str(tmp_path / "xlnet"), build_tokenizer(str(tmp_path / "xlnet")))
    err = error_of(capsys, "score-shuffle", xlnet, data_dir, "--out", out)
    assert err.startswith(f"error: {xlnet}: no causal or masked language-model head") and "XLNetFor" in err
    # a masked LM whose tokenizer has no mask token
    no_mask = str(tmp_path / "no-mask")
    build_bert(no_mask, build_gpt2_tokenizer())
    err = error_of(capsys, "score-shuffle", no_mask, data_dir, "--out", out)
    assert err == f"error: {no_mask}: the tokenizer has no mask token, the masked scorer needs one"
    empty = tmp_path / "empty"  # apart from --out: an --out inside an input is refused (docs/safety.md)
    empty.mkdir()
    err = error_of(capsys, "score-shuffle", tiny_gpt2_dir, str(empty), "--out", out)
    assert err.startswith(f"error: {empty}: no shuffle-*/ configs")
    err = error_of(capsys, "score-shuffle", tiny_gpt2_dir, data_dir, "--out", out, "--split", "train")
    assert err == f"error: --split train: no such split in {data_dir} (found: test)"
    err = error_of(capsys, "score-shuffle", tiny_gpt2_dir, data_dir, "--out", out, "--config", "shuffle-cnn")
    assert err == f"error: --config: shuffle-cnn not in {data_dir} (found: shuffle-wsj)"
    import torch

    if not torch.cuda.is_available():
        err = error_of(capsys, "score-shuffle", tiny_gpt2_dir, data_dir, "--out", out, "--device", "cuda")
        assert err.startswith("error: --device cuda: CUDA was requested but no GPU")
    assert not os.path.exists(os.path.join(out, "run_summary.json"))


def test_pairs_are_keyed_by_their_texts_and_finished_with_their_scores():
    from incoherent.pipelines.score_shuffle.transforms import finish_pair, make_pair, text_key

    row = {"id": "d", "source": "wsj", "block_size": 1, "permutation": 0, "original": ["A.", "", "B."],
           "shuffled": ["B.", "A."]}  # fmt: skip
    pair = make_pair(row, "space")
    assert pair["original"] == ("A.", "B.") and pair["original_key"] == text_key("A. B.")
    assert make_pair(dict(row, shuffled=["", ""]), "space").reason == "empty_document"
    seen = []
    scored = finish_pair(pair, (1.0, 2), (2.0, 2), seen.append)  # a loss: lower is better
    assert (scored["correct"], scored["tie"], seen) == (True, False, [])
    same = dict(pair, shuffled_key=pair["original_key"])
    assert finish_pair(same, (-1.0, 2), (-1.0, 0), seen.append).reason == "no_scored_tokens"
    assert seen == ["identical_texts"]


def test_a_document_s_texts_share_one_of_ceil_texts_over_pool_size_pools():
    from incoherent.pipelines.score_shuffle.transforms import pool_of

    assert {pool_of(f"doc{i}", 64, 64) for i in range(50)} == {0}
    pools = {pool_of(f"doc{i}", 129, 64) for i in range(200)}
    assert pools == {0, 1, 2}
    assert pool_of("doc7", 1000, 10) == pool_of("doc7", 1000, 10)
