"""``incoherent finetune-lm``: in-domain fine-tuning lowers held-out perplexity, the zero-shot guard refuses
shuffled text and leaves out the shuffle test documents, the same seed gives the same weights on a CPU."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from incoherent.pipelines import cli
from tests.conftest import run_cli
from tests.shuffle_fixtures import one_thread, wsj_docs_dir, wsj_shuffle_dir  # noqa: F401
from tests.tiny_lm import tiny_bert_dir, tiny_gpt2_dir  # noqa: F401


def train_cli(*args) -> int:
    """A command without Beam (no runner flags)."""
    return cli.main([str(a) for a in args])


pytestmark = pytest.mark.usefixtures("one_thread")

FAST = ["--epochs", "2", "--learning-rate", "3e-3", "--batch-size", "32", "--device", "cpu"]


def shuffle_test_ids(shuffle_dir: str) -> set[str]:
    ids = set()
    for config in [c for c in os.listdir(shuffle_dir) if c.startswith("shuffle-")]:
        for name in os.listdir(os.path.join(shuffle_dir, config)):
            if name.startswith("test-"):
                ids |= set(pq.read_table(os.path.join(shuffle_dir, config, name)).column("id").to_pylist())
    return ids


@pytest.fixture(scope="module")
def finetuned_gpt2(tmp_path_factory, tiny_gpt2_dir, wsj_docs_dir, wsj_shuffle_dir):  # noqa: F811
    out = str(tmp_path_factory.mktemp("ft") / "gpt2-id")
    code = train_cli(
        "finetune-lm", wsj_docs_dir, "--base-model", tiny_gpt2_dir, "--out", out,
        "--exclude-shuffle-test", wsj_shuffle_dir, *FAST,
    )  # fmt: skip
    assert code == 0
    return out


def test_finetuning_lowers_heldout_perplexity(finetuned_gpt2, wsj_shuffle_dir):  # noqa: F811
    with open(os.path.join(finetuned_gpt2, "provenance.json"), encoding="utf-8") as f:
        provenance = json.load(f)
    history = provenance["history"]
    assert [r["epoch"] for r in history] == [0, 1, 2]
    kept = history[provenance["chosen_epoch"]]
    assert provenance["chosen_epoch"] >= 1
    assert kept["heldout_perplexity"] < 0.8 * history[0]["heldout_perplexity"]
    assert kept["heldout_perplexity"] == min(r["heldout_perplexity"] for r in history)
    assert provenance["saw_shuffled_text"] is False
    assert provenance["data_fingerprint"].startswith("sha256:")
    assert provenance["seed"] == 0 and provenance["epochs"] == 2
    excluded = shuffle_test_ids(wsj_shuffle_dir)
    assert provenance["excluded_shuffle_test_documents"] == len(excluded) > 0
    assert os.path.isfile(os.path.join(finetuned_gpt2, "model.safetensors"))
    assert not any(n.endswith(".bin") for n in os.listdir(finetuned_gpt2))


@pytest.mark.e2e
def test_scored_like_any_model_and_labelled_zero_shot(finetuned_gpt2, wsj_shuffle_dir, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", finetuned_gpt2, wsj_shuffle_dir, "--out", out, "--device", "cpu") == 0
    printed = capsys.readouterr().out
    assert "not zero-shot" not in printed
    results = json.loads((out / "results.json").read_text())
    assert results["zero_shot"] is True and results["label"] is None


def test_same_seed_same_weights(tmp_path, tiny_gpt2_dir, wsj_docs_dir):  # noqa: F811
    """Two runs with seed 0 on a CPU: every tensor equal within 1e-6 (absolute)."""
    from safetensors.torch import load_file

    outs = []
    for name in ("a", "b"):
        out = str(tmp_path / name)
        args = ["--base-model", tiny_gpt2_dir, "--out", out, "--max-steps", "3", "--epochs", "1"]
        assert (
            train_cli("finetune-lm", wsj_docs_dir, *args, "--learning-rate", "3e-3", "--device", "cpu") == 0
        )
        outs.append(load_file(os.path.join(out, "model.safetensors")))
    import torch

    assert outs[0].keys() == outs[1].keys()
    for key in outs[0]:
        torch.testing.assert_close(outs[0][key], outs[1][key], atol=1e-6, rtol=0)
    base = load_file(os.path.join(tiny_gpt2_dir, "model.safetensors"))
    assert any(not torch.equal(base[k], outs[0][k]) for k in base if k in outs[0])


def test_refuses_shuffled_text(tmp_path, tiny_gpt2_dir, wsj_shuffle_dir, capsys):  # noqa: F811
    out = str(tmp_path / "m")
    assert train_cli("finetune-lm", wsj_shuffle_dir, "--base-model", tiny_gpt2_dir, "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "shuffled text" in err and "natural order" in err
    marked = tmp_path / "marked" / "documents-x"
    marked.mkdir(parents=True)
    table = pa.table({"id": ["x:1"], "sentences": [["A b.", "C d."]], "shuffled": [["C d.", "A b."]]})
    pq.write_table(table, marked / "documents-00000-of-00001.parquet")
    assert train_cli("finetune-lm", marked.parent, "--base-model", tiny_gpt2_dir, "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "marked shuffled" in err
    assert not os.path.exists(out)


def test_masked_lm(tmp_path, tiny_bert_dir, wsj_docs_dir):  # noqa: F811
    out = str(tmp_path / "bert-id")
    assert train_cli("finetune-lm", wsj_docs_dir, "--base-model", tiny_bert_dir, "--out", out, *FAST) == 0
    with open(os.path.join(out, "provenance.json"), encoding="utf-8") as f:
        provenance = json.load(f)
    assert provenance["objective"] == "masked language modelling"
    assert provenance["excluded_shuffle_test_documents"] == 0
    history = provenance["history"]
    assert history[provenance["chosen_epoch"]]["heldout_perplexity"] < history[0]["heldout_perplexity"]
