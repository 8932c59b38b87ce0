"""``pipelines/configs/laban.yaml`` (Laban et al.'s three shuffle domains), ``ingest text --head/--tail
--row-ids``, and ``score-shuffle``'s Table 1 layout over several domains."""

from __future__ import annotations

import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from incoherent.pipelines.build.config import check_config, load_config
from incoherent.pipelines.build.plan import plan
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, read_rows, run_cli
from tests.shuffle_fixtures import one_thread  # noqa: F401
from tests.tiny_lm import tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import sample_texts

LABAN = ROOT / "pipelines" / "configs" / "laban.yaml"


def hub_like_files(base) -> None:
    """Stand-ins for the two downloads, with the Hub's columns (no id field): texts of the bundled samples."""
    texts = sample_texts()
    folder = base / "data" / "laban"
    folder.mkdir(parents=True)
    pq.write_table(
        pa.table({"text": texts[:30], "summary": ["s"] * 30, "title": ["t"] * 30}),
        folder / "billsum_test.parquet",
        row_group_size=7,
    )
    pq.write_table(
        pa.table({"documents": texts[-40:], "tldr": ["x"] * 40, "ups": list(range(40))}),
        folder / "reddit_tifu_short_train.parquet",
    )


def test_only_the_wsj_sample_present_skips_the_optional_sources_in_one_line_each():
    config = check_config(load_config(str(LABAN)), str(LABAN))
    assert list(config["sources"]) == ["wsj"]
    skipped = config["skipped_sources"]
    assert sorted(skipped) == ["billsum", "reddit"]
    for line in skipped.values():
        assert (
            "\n" not in line
            and "not found, optional source skipped; get it: huggingface.co/datasets/" in line
        )
    assert "FiscalNote/billsum" in skipped["billsum"] and "reddit_tifu" in skipped["reddit"]


def test_the_three_domains_when_the_downloads_are_there(tmp_path):
    hub_like_files(tmp_path)
    raw = yaml.safe_load(LABAN.read_text())
    raw["base"] = str(tmp_path)
    raw["sources"]["wsj"]["inputs"] = [str(ROOT / "samples" / "wsj" / "wsj.jsonl")]
    path = tmp_path / "laban.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    config = check_config(load_config(str(path)), str(path))
    assert list(config["sources"]) == ["wsj", "billsum", "reddit"] and "skipped_sources" not in config
    argv = {s.name: s.argv for s in plan(config, "work")}
    assert argv["ingest/billsum"][-5:] == ["--text-field", "text", "--row-ids", "--head", "1000"]
    assert "--tail" in argv["ingest/reddit"] and "documents" in argv["ingest/reddit"]
    assert argv["shuffle/reddit"][-8:] == ["--block-sizes", "1", "2", "3", "4", "5", "--max-sentences", "20"]


def test_every_source_missing_is_an_error(tmp_path):
    raw = yaml.safe_load(LABAN.read_text())
    raw["sources"] = {k: v for k, v in raw["sources"].items() if k != "wsj"}
    path = tmp_path / "laban.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(InputError, match="every source is optional and missing"):
        check_config(load_config(str(path)), str(path))


def test_ingest_text_head_tail_and_row_ids(tmp_path):
    hub_like_files(tmp_path)
    folder = tmp_path / "data" / "laban"
    out = tmp_path / "billsum"
    assert run_cli("ingest", "text", folder / "billsum_test.parquet", "--out", out, "--source", "billsum",
                   "--row-ids", "--head", "10") == 0  # fmt: skip
    ids = sorted(r["id"] for r in read_rows(out, "documents-billsum"))
    assert ids == sorted(f"billsum:billsum_test-{i}" for i in range(10))
    out = tmp_path / "reddit"
    assert run_cli("ingest", "text", folder / "reddit_tifu_short_train.parquet", "--out", out,
                   "--source", "reddit", "--text-field", "documents", "--row-ids", "--tail", "5") == 0  # fmt: skip
    rows = read_rows(out, "documents-reddit")
    assert sorted(r["id"] for r in rows) == [f"reddit:reddit_tifu_short_train-{i}" for i in range(35, 40)]
    assert all(len(r["sentences"]) >= 1 for r in rows)
    out = tmp_path / "wsj"
    assert run_cli("ingest", "text", ROOT / "samples" / "wsj" / "wsj.jsonl", "--out", out, "--tail", "3") == 0
    assert sorted(r["id"] for r in read_rows(out, "documents-wsj")) == [
        "wsj:wsj_0197",
        "wsj:wsj_0198",
        "wsj:wsj_0199",
    ]
    assert (
        run_cli(
            "ingest", "text", ROOT / "samples" / "wsj" / "wsj.jsonl", "--out", tmp_path / "x", "--head", "0"
        )
        == 2
    )


@pytest.mark.e2e
@pytest.mark.usefixtures("one_thread")
def test_score_shuffle_prints_table1_over_several_domains(tmp_path, tiny_gpt2_dir, capsys):  # noqa: F811
    hub_like_files(tmp_path)
    docs = tmp_path / "docs"
    assert run_cli("ingest", "text", tmp_path / "data" / "laban" / "billsum_test.parquet", "--out", docs,
                   "--source", "billsum", "--row-ids", "--head", "12") == 0  # fmt: skip
    wsj = tmp_path / "wsj"
    assert (
        run_cli("ingest", "text", ROOT / "samples" / "wsj" / "wsj.jsonl", "--out", wsj, "--head", "40") == 0
    )
    shutil.copytree(wsj / "documents-wsj", docs / "documents-wsj")
    shuffled = tmp_path / "shuffled"
    assert run_cli("shuffle", docs, "--out", shuffled, "--block-sizes", "1", "2") == 0
    capsys.readouterr()
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", tiny_gpt2_dir, shuffled, "--out", out, "--device", "cpu") == 0
    printed = capsys.readouterr().out
    assert "Table 1 layout (k=1), accuracy (%)" in printed
    header = next(line for line in printed.splitlines() if line.startswith("model "))
    assert header.split() == ["model", "billsum", "wsj", "overall"]
    results = json.loads((out / "results.json").read_text())
    row = results["table1"]["k=1"]
    assert set(row) == {"billsum", "wsj", "overall"}
    assert row["overall"] == pytest.approx((row["billsum"] + row["wsj"]) / 2)
    assert set(results["table1"]) == {"k=1", "k=2"}
    assert "k=2" in printed  # Table 2's per-k rows


@pytest.mark.e2e  # a whole laban.yaml build with a tiny LM: 30-40 s on 2 idle cores, 185 s at load 18
@pytest.mark.usefixtures("one_thread")
def test_laban_builds_with_the_wsj_sample_alone(tmp_path, capsys, tiny_gpt2_dir):  # noqa: F811
    out = tmp_path / "laban"
    assert run_cli("build", LABAN, "--out", out) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if "optional source skipped" in line]
    assert len(lines) == 2
    summary = json.loads((out / "build_summary.json").read_text())
    assert sorted(summary["skipped_sources"]) == ["billsum", "reddit"]
    assert sorted(os.listdir(out / "dataset" / "shuffle-wsj")) == ["test-00000-of-00001.parquet"]
    # finetune-lm on the build folder: its documents, less every shuffle test document (found by itself)
    from incoherent.pipelines.cli import main

    test_ids = {r["id"] for r in read_rows(out / "dataset", "shuffle-wsj")}
    model = tmp_path / "wsj-id"
    argv = ["finetune-lm", str(out), "--base-model", tiny_gpt2_dir, "--out", str(model), "--epochs", "1"]
    assert main([*argv, "--device", "cpu"]) == 0
    provenance = json.loads((model / "provenance.json").read_text())
    assert provenance["excluded_shuffle_test_documents"] == len(test_ids) > 150
    assert provenance["train_documents"] + provenance["heldout_documents"] == 199 - len(test_ids)


def test_every_documented_command_line_parses():
    """Every ``incoherent ...`` line of docs/shuffle-models.md names a command and flags the CLI knows."""
    import re
    import shlex

    from incoherent.pipelines.commands import build_parser, selected_module

    text = (ROOT / "docs" / "shuffle-models.md").read_text().replace("\\\n", " ")
    lines = [m.group(1) for m in re.finditer(r"^incoherent (.+?)(?:\s+#.*)?$", text, re.MULTILINE)]
    assert len(lines) >= 10
    for line in lines:
        argv = shlex.split(line)
        module = selected_module(argv)
        assert module, line
        _, unknown = build_parser(module).parse_known_args(argv)
        assert not unknown, (line, unknown)
