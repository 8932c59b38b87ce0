import json

import pytest

from corpora.card import card_metadata, load_summaries
from schemas.records import InputError
from tests.conftest import SAMPLES, run_cli


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    assert run_cli("ingest", "cnn", SAMPLES / "cnn" / "allennlp", "--out", root / "docs") == 0
    assert run_cli("shuffle", root / "docs", "--out", root / "ds", "--test-fraction", "0.5") == 0
    return root / "ds"


def test_card_metadata_lists_configs_splits_and_features(shuffled):
    meta = card_metadata(str(shuffled), "t", "other")
    (config,) = meta["configs"]
    assert config["config_name"] == "shuffle-cnn"
    assert sorted(d["split"] for d in config["data_files"]) == ["test", "train"]
    (info,) = meta["dataset_info"]
    assert {"name": "shuffled", "list": "string"} in info["features"]
    summary = json.loads((shuffled / "run_summary.json").read_text())
    assert sum(s["num_examples"] for s in info["splits"]) == summary["counters"]["shuffle"]["kept"]


def test_card_loads_with_datasets_offline(shuffled, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert run_cli("card", shuffled, "--name", "CNN shuffles", beam=[]) == 0
    text = (shuffled / "README.md").read_text()
    assert text.startswith("---\n") and "# CNN shuffles" in text and "Laban" in text
    import datasets

    ds = datasets.load_dataset(str(shuffled), "shuffle-cnn", cache_dir=str(shuffled.parent / "hf-cache"))
    assert set(ds) == {"test", "train"}
    row = ds["test"][0]
    assert row["shuffled"] != row["original"] and sorted(row["shuffled"]) == sorted(row["original"])


def test_incomplete_run_is_refused(tmp_path):
    (tmp_path / "run_summary.json").write_text(json.dumps({"complete": False}))
    with pytest.raises(InputError, match="did not complete"):
        load_summaries(str(tmp_path))


def test_publish_dry_run_lists_files_and_needs_a_card(shuffled, tmp_path, capsys):
    assert run_cli("card", shuffled, beam=[]) == 0
    assert run_cli("publish", shuffled, "--repo-id", "me/x", "--dry-run", beam=[]) == 0
    out = capsys.readouterr().out
    assert "README.md" in out and "shuffle-cnn/test-00000-of-00001.parquet" in out and "rejected" not in out
    (tmp_path / "t").mkdir()
    assert run_cli("publish", tmp_path / "t", "--repo-id", "me/x", "--dry-run", beam=[]) == 2
    assert "run `incoherent card" in capsys.readouterr().err
