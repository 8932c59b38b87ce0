"""``incoherent build``: config checks before any work, and the default build from the bundled samples."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil

import pytest
import yaml

from incoherent.pipelines.build.command import untangle
from incoherent.pipelines.build.config import check_config, config_inputs, default_config_path, load_config
from incoherent.pipelines.build.plan import _flags, plan
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, read_rows, run_cli
from tests.sample_build import quickstart_build

RETRIEVAL_COMMANDS = all(
    importlib.util.find_spec(m)
    for m in ("incoherent.pipelines.index.command", "incoherent.pipelines.neighbors.command")
)


def write_config(path, config):
    path.write_text(yaml.safe_dump(config))
    return path


def sample_config(**changes):
    config = {
        "base": str(ROOT),
        "out": "unused",
        "sources": {
            "cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"]},
            "wikipedia": {
                "kind": "wikipedia",
                "inputs": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"],
                "history": ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"],
            },
        },
    }
    config.update(changes)
    return config


def test_default_config_is_shipped_and_names_existing_samples():
    path = default_config_path()
    assert path.endswith(os.path.join("pipelines", "configs", "default.yaml"))
    config = check_config(load_config(path), path)
    assert set(config["sources"]) == {"wikipedia", "cnn"}
    wiki = config["sources"]["wikipedia"]
    assert len(wiki["inputs"]) == 2 and len(wiki["history"]) == 2
    assert all(os.path.isfile(p) for p in wiki["inputs"] + wiki["history"])
    assert all(os.path.isdir(p) for p in config["sources"]["cnn"]["inputs"])


def test_relative_paths_resolve_against_base_then_the_current_directory(tmp_path, monkeypatch):
    config = sample_config(base=".")
    path = write_config(tmp_path / "build.yaml", config)
    monkeypatch.chdir(ROOT)  # not found next to the config: found from the current directory
    resolved = check_config(load_config(str(path)), str(path))
    assert resolved["sources"]["cnn"]["inputs"] == [str(ROOT / "samples" / "cnn" / "frank")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sources": {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/nowhere"]}}}, "sources.cnn.inputs: samples/cnn/nowhere not found"),
        ({"sources": {"w": {"kind": "wikipedia", "inputs": ["samples/wikipedia/history"], "history": ["old.xml.bz2"]}}}, "sources.w.history: old.xml.bz2 not found"),
        ({"sources": {"cnn": {"kind": "pdf", "inputs": ["x"]}}}, "sources.cnn.kind must be one of"),
        ({"sources": {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"], "history": ["samples/cnn"]}}}, "only for Wikipedia"),
        ({"sources": {}}, "`sources` must map"),
        ({"shufle": {}}, "unknown keys ['shufle']"),
        ({"intruders": {"filter": "models/none-here"}}, "intruders.filter: models/none-here not found"),
    ],
)  # fmt: skip
def test_config_faults_are_input_errors_naming_the_key(tmp_path, change, message):
    path = write_config(tmp_path / "build.yaml", sample_config(**change))
    with pytest.raises(InputError, match=None) as error:
        check_config(load_config(str(path)), str(path))
    assert message in str(error.value) and str(path) in str(error.value)


def test_any_name_for_any_kind_and_two_sources_of_one_kind(tmp_path):
    """CNN and Daily Mail stories as two sources of kind ``cnn`` (issue 49: a CNN source had to be named
    ``cnn``): each is ingested under its own name by ``ingest cnn``, and the intruder stage reads both."""
    stories = {"kind": "cnn", "inputs": ["samples/cnn/frank"]}
    config = sample_config(
        sources={"news": stories, "dailymail": dict(stories, inputs=["samples/cnn/allennlp"])}
    )
    path = write_config(tmp_path / "build.yaml", config)
    resolved = check_config(load_config(str(path)), str(path))
    stages = {stage.name: stage for stage in plan(resolved, str(tmp_path / "work"))}
    for name in ("news", "dailymail"):
        argv = stages[f"ingest/{name}"].argv
        assert argv[:2] == ["ingest", "cnn"] and argv[argv.index("--source") + 1] == name
    assert {"intruder-news", "intruder-dailymail"} <= set(stages["intruders"].tables)


def test_missing_files_fail_before_any_work_starts(tmp_path, capsys):
    config = sample_config()
    config["sources"]["cnn"]["inputs"].append("samples/cnn/missing-dir")
    path = write_config(tmp_path / "build.yaml", config)
    out = tmp_path / "out"
    assert run_cli("build", path, "--out", out) == 2
    assert "samples/cnn/missing-dir not found" in capsys.readouterr().err
    assert not out.exists()
    assert run_cli("build", tmp_path / "nope.yaml", "--out", out) == 2
    assert "no such config file" in capsys.readouterr().err
    (tmp_path / "bad.yaml").write_text("sources: [unclosed")
    assert run_cli("build", tmp_path / "bad.yaml", "--out", out) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_a_non_empty_directory_that_is_not_a_build_is_never_deleted(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    path = write_config(tmp_path / "build.yaml", sample_config())
    assert run_cli("build", path, "--out", out) == 2
    assert run_cli("build", path, "--out", out, "--overwrite") == 2
    assert "not an earlier build" in capsys.readouterr().err
    assert (out / "precious.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("config", "beam", "expected"),
    [
        ("DirectRunner", ["--runner"], (None, ["--runner", "DirectRunner"])),
        ("DirectRunner", ["--runner", "b.yaml"], ("b.yaml", ["--runner", "DirectRunner"])),
        ("b.yaml", ["--runner", "DirectRunner"], ("b.yaml", ["--runner", "DirectRunner"])),
        (None, ["--runner=DirectRunner"], (None, ["--runner=DirectRunner"])),
    ],
)
def test_beam_flag_values_are_not_taken_for_the_config(config, beam, expected):
    assert untangle(config, beam) == expected


def test_stage_options_become_flags():
    assert _flags({"block_sizes": [1, 2], "max_sentences": 20, "filter": "none", "x": False, "y": True}) == [
        "--block-sizes", "1", "2", "--max-sentences", "20", "--filter", "none", "--y",
    ]  # fmt: skip


DUMPS = [
    str(ROOT / "samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"),
    str(ROOT / "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"),
]


def index_config(tmp_path, index, inputs=DUMPS):
    """A Wikipedia source with ``options: {multistream_index: index}``, based at ``tmp_path``."""
    source = {"kind": "wikipedia", "inputs": inputs, "options": {"multistream_index": index, "range_mb": 8}}
    config = {"base": str(tmp_path), "out": "unused", "sources": {"w": source}}
    return write_config(tmp_path / "build.yaml", config)


def test_multistream_index_option_resolves_against_base_and_reaches_the_ingest_stage(tmp_path):
    (tmp_path / "indexes").mkdir()
    for name in ("a.txt.bz2", "b.txt.bz2"):
        (tmp_path / "indexes" / name).write_bytes(
            b""
        )  # the config checks that it is there, the ingest reads it
    path = index_config(tmp_path, ["indexes/a.txt.bz2", "indexes/b.txt.bz2"])
    config = check_config(load_config(str(path)), str(path))
    indexes = [str(tmp_path / "indexes" / name) for name in ("a.txt.bz2", "b.txt.bz2")]
    assert config["sources"]["w"]["multistream_index"] == indexes
    assert config["sources"]["w"]["options"] == {"range_mb": 8}
    ingest = plan(config, str(tmp_path / "work"))[0]
    assert ingest.argv == [
        "ingest", "wikipedia", *DUMPS, "--out", str(tmp_path / "work/documents/w"), "--source", "w",
        "--range-mb", "8", "--multistream-index", indexes[0], "--multistream-index", indexes[1],
    ]  # fmt: skip
    assert ingest.inputs == DUMPS + indexes  # fingerprinted for resume like the dumps
    assert set(indexes) <= set(config_inputs(config))  # --out may not sit inside them either
    one = index_config(tmp_path, "indexes/a.txt.bz2", inputs=DUMPS[:1])  # one dump: a path, not a list
    resolved = check_config(load_config(str(one)), str(one))["sources"]["w"]["multistream_index"]
    assert resolved == indexes[:1]


@pytest.mark.parametrize(
    ("index", "inputs", "message"),
    [
        ("nope.txt.bz2", DUMPS[:1], "sources.w.options.multistream_index: nope.txt.bz2 not found (tried "),
        ("indexes", DUMPS[:1], "sources.w.options.multistream_index: indexes is not a file"),
        ("indexes/a.txt.bz2", DUMPS, "multistream_index: 1 paths for 2 inputs; give one per input"),
        ([3], DUMPS[:1], "sources.w.options.multistream_index: must be a path, or a list of paths"),
    ],
)
def test_a_bad_multistream_index_option_is_one_line_before_any_work(tmp_path, capsys, index, inputs, message):
    (tmp_path / "indexes").mkdir()
    (tmp_path / "indexes" / "a.txt.bz2").write_bytes(b"")
    path = index_config(tmp_path, index, inputs)
    with pytest.raises(InputError) as error:
        check_config(load_config(str(path)), str(path))
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value)
    out = tmp_path / "out"
    assert run_cli("build", path, "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not out.exists()


@pytest.mark.e2e
@pytest.mark.skipif(not RETRIEVAL_COMMANDS, reason="needs the `index` and `neighbors` commands")
def test_default_build_from_the_bundled_samples(tmp_path, tmp_path_factory, monkeypatch):
    """The Quickstart's build (the default config, made once per test run by :func:`quickstart_build`), then
    ``incoherent build`` again in a copy of it, which resumes it."""
    built, done = quickstart_build(tmp_path_factory)
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out" / "sample"
    shutil.copytree(built, out, symlinks=True)  # the second build writes into it
    monkeypatch.chdir(tmp_path)
    summary = json.loads((out / "build_summary.json").read_text())
    assert summary["complete"] is True
    dataset = out / "dataset"
    assert {p.name for p in dataset.iterdir()} >= {
        "intruder-wikipedia", "intruder-cnn", "candidates", "shuffle-wikipedia", "shuffle-cnn",
    }  # fmt: skip
    wiki = read_rows(dataset, "intruder-wikipedia")
    assert wiki and any(r["label"] for r in wiki) and any(r["split"] == "test" for r in wiki)
    assert all(r["dump"].startswith(("2019", "2020")) for r in wiki if r["split"] == "test")
    assert set(summary["seconds"]) >= {
        "ingest/wikipedia",
        "index/cnn",
        "neighbors/cnn",
        "intruders",
        "shuffle/cnn",
    }
    assert set(summary["peak_rss_mb"]) == set(summary["seconds"]) - {"card"}
    # each stage's own process reports its peak: at least the fork server's imports (Beam: > 100 MB)
    assert all(mb > 100 for mb in summary["peak_rss_mb"].values()), summary["peak_rss_mb"]
    # Atlantic Ocean is in both Wikipedia dumps: the ingest keeps the newest revision and dead-letters the other.
    dropped = read_rows(out / "work" / "documents" / "wikipedia", "rejected/ingest-wikipedia")
    assert "wikipedia:698" in {r["id"] for r in dropped if r["reason"] == "duplicate_id"}
    assert summary["sources"]["wikipedia"]["history"]["test_from_history"] >= 1
    assert (out / "work" / "intruders" / "run_summary.json").exists()
    card = (dataset / "README.md").read_text()
    assert "config_name: intruder-wikipedia" in card and "## Statistics" in card
    assert "license: other" in card and "not only Wikipedia text: cnn (cnn)" in card  # CNN is not CC BY-SA
    assert "| history (older dump) | wikipedia |" in card and "taken from older dumps" in card
    assert str(built.parent) not in card and "#   incoherent ingest cnn samples/cnn/allennlp" in card
    assert sorted(p.name for p in (dataset / "figures").iterdir()) == [
        "intruder_position.png", "sentences_per_document.png", "similarity.png",
    ]  # fmt: skip
    assert run_cli("build") == 0  # the earlier build is resumed: every stage finished, every stage skipped
    again = json.loads((out / "build_summary.json").read_text())
    assert again["skipped"] == list(summary["stages"]) and set(again["seconds"]) == {"card"}
    assert read_rows(dataset, "intruder-wikipedia") == wiki
