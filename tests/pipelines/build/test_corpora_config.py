"""``corpora:`` in a build config: which corpora a build makes (intruders, shuffle, or both, the default)."""

from __future__ import annotations

import json

import pytest
import yaml

from incoherent.pipelines.build.config import check_config, load_config
from incoherent.pipelines.build.plan import plan
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, run_cli

CNN = {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"]}}
WIKI = {
    "wikipedia": {
        "kind": "wikipedia",
        "inputs": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"],
        "history": ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"],
    }
}


def write_config(path, **changes):
    config = {"base": str(ROOT), "out": "unused", "sources": CNN, "shuffle": {"block_sizes": [2]}}
    config.update(changes)
    path.write_text(yaml.safe_dump(config))
    return str(path)


def stage_names(path) -> list[str]:
    return [stage.name for stage in plan(check_config(load_config(path), path), "work")]


def test_the_plan_has_only_the_stages_of_the_wanted_corpora(tmp_path):
    both = stage_names(write_config(tmp_path / "a.yaml", sources={**CNN, **WIKI}))
    assert both == [
        "ingest/cnn", "index/cnn", "neighbors/cnn",
        "ingest/wikipedia", "ingest-history/wikipedia/2019-08-16_minidumps-en_89657c7a",
        "index/wikipedia", "neighbors/wikipedia",
        "shuffle/cnn", "shuffle/wikipedia", "intruders",
    ]  # fmt: skip
    assert (
        stage_names(
            write_config(tmp_path / "b.yaml", sources={**CNN, **WIKI}, corpora=["intruders", "shuffle"])
        )
        == both
    )
    shuffle_only = stage_names(
        write_config(tmp_path / "c.yaml", sources={**CNN, **WIKI}, corpora=["shuffle"])
    )
    assert shuffle_only == ["ingest/cnn", "ingest/wikipedia", "shuffle/cnn", "shuffle/wikipedia"]
    intruders_only = stage_names(
        write_config(tmp_path / "d.yaml", sources={**CNN, **WIKI}, corpora="intruders")
    )
    assert intruders_only == [name for name in both if not name.startswith("shuffle/")]


def test_laban_config_builds_only_the_shuffle_corpora():
    path = str(ROOT / "pipelines" / "configs" / "laban.yaml")
    config = check_config(load_config(path), path)
    assert config["corpora"] == ["shuffle"]
    stages = plan(config, "work")
    assert [s.name for s in stages] == ["ingest/wsj", "shuffle/wsj"]
    assert not any(t.startswith("intruder-") or t == "candidates" for s in stages for t in s.tables)


@pytest.mark.parametrize(
    "value, message",
    [
        (["shufle"], "corpora: unknown corpus 'shufle' (known: intruders, shuffle)"),
        ([], "corpora: must be a list of intruders and shuffle, got []"),
        ({"shuffle": 1}, "corpora: must be a list of intruders and shuffle"),
        ([1], "corpora: must be a list of intruders and shuffle, got [1]"),
    ],
)
def test_unknown_corpora_are_one_line_errors(tmp_path, capsys, value, message):
    path = write_config(tmp_path / "bad.yaml", corpora=value)
    with pytest.raises(InputError, match="^" + str(tmp_path / "bad.yaml").replace(".", r"\.") + ": "):
        load_config(path)
    assert run_cli("build", path, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {message}") and err.count("\n") == 1


@pytest.mark.e2e
def test_a_resumed_build_drops_the_corpora_no_longer_wanted(tmp_path, capsys):
    out = tmp_path / "out"
    both = write_config(tmp_path / "both.yaml")
    assert run_cli("build", both, "--out", out) == 0
    dataset = out / "dataset"
    assert {"intruder-cnn", "candidates", "shuffle-cnn"} <= {p.name for p in dataset.iterdir()}
    shuffle_before = {p.name: p.read_bytes() for p in (dataset / "shuffle-cnn").iterdir()}
    capsys.readouterr()
    shuffle = write_config(tmp_path / "shuffle.yaml", corpora=["shuffle"])
    assert run_cli("build", shuffle, "--out", out) == 0
    printed = capsys.readouterr()
    names = {p.name for p in dataset.iterdir()}
    assert "intruder-cnn" not in names and "candidates" not in names and "shuffle-cnn" in names
    assert "removed dataset/intruder-cnn: not produced by this config" in printed.out
    summary = json.loads((out / "build_summary.json").read_text())
    assert summary["complete"] and set(summary["stages"]) == {"ingest/cnn", "shuffle/cnn"}
    assert summary["sources"] == {}
    assert summary["skipped"] == ["ingest/cnn", "shuffle/cnn"]  # fingerprints unchanged: nothing redone
    assert {p.name: p.read_bytes() for p in (dataset / "shuffle-cnn").iterdir()} == shuffle_before
    card = (dataset / "README.md").read_text()
    assert "intruder-cnn" not in card and "shuffle-cnn" in card


def test_a_dry_run_builds_only_the_wanted_graphs(tmp_path, capsys):
    path = str(ROOT / "pipelines" / "configs" / "laban.yaml")
    assert run_cli("build", path, "--out", tmp_path / "out", "--dry-run") == 0
    printed = capsys.readouterr().out.splitlines()[-1]
    assert printed.startswith(
        "dry run: `incoherent build` config checked and 2 job graphs built and validated"
    )
    assert "; shuffle on 6 stand-in documents per source in a temporary folder," in printed
    assert "intruders" not in printed and not (tmp_path / "out").exists()
