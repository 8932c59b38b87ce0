"""Paths holding ``[``, ``*`` or ``?`` (issue #53, item 10).

Apache Beam's file systems read every path they match, list or delete as a glob: an ``--out`` of ``o[1]`` made
every pipeline command end in a ``BeamIOError`` traceback (``Delete operation failed ... .spill``) and leave
``.spill/`` and ``_inputs/`` behind; a folder of tables under such a path read as empty. Escaping cannot work
(Beam's local match of an escaped pattern walks the whole parent folder and never matches a folder), so such a
path is refused in one line, before anything is written: every path a command writes, every existing input,
and the working folder they are resolved against.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from incoherent.pipelines import cli
from tests.conftest import ROOT, SAMPLES, run_cli

WSJ = SAMPLES / "wsj" / "wsj.jsonl"


def one_line(capsys, code: int) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("error: ") and "\n" not in err, err
    assert "wildcard" in err, err
    return err


def test_ingest_into_a_bracketed_out_is_one_line_and_writes_nothing(tmp_path, capsys):
    """The case of the issue: before, a BeamIOError traceback and ``.spill/``, ``_inputs/`` left in ``o[1]``."""
    out = tmp_path / "o[1]"
    err = one_line(capsys, run_cli("ingest", "text", WSJ, "--source", "wsj", "--out", out))
    assert f"--out {out}: the path holds '['" in err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["o[1]", "o*", "o?", "[x]"])
@pytest.mark.parametrize(
    "argv",
    [
        ["ingest", "cnn", str(SAMPLES / "cnn" / "allennlp")],
        ["ingest", "text", str(WSJ), "--source", "wsj"],
        ["probes", str(WSJ)],
        ["shuffle", str(SAMPLES / "wsj")],
        ["index", str(SAMPLES / "wsj")],
        ["build"],
        ["annotate", "export", str(SAMPLES / "wsj"), "--config", "shuffle-wsj"],
        ["export", "lm-eval", str(SAMPLES / "wsj")],
        ["export", "insted", str(SAMPLES / "wsj")],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_every_command_refuses_a_wildcard_out(tmp_path, capsys, argv, name):
    one_line(capsys, cli.main([*argv, "--out", str(tmp_path / name)]))
    assert os.listdir(tmp_path) == []


def test_evaluate_refuses_wildcard_predictions(tmp_path, capsys):
    code = cli.main(
        ["evaluate", str(SAMPLES / "wsj"), str(ROOT), "--predictions", str(tmp_path / "p?.jsonl")]
    )
    assert "--predictions" in one_line(capsys, code)
    assert os.listdir(tmp_path) == []


def test_an_input_folder_under_a_bracketed_path_is_one_line(tmp_path, capsys):
    """Before: ``no documents-*/*.parquet files``, which was wrong: the tables were there, under ``d[1]``."""
    docs = tmp_path / "d[1]" / "documents-wsj"
    docs.mkdir(parents=True)
    (docs / "documents-00000-of-00001.parquet").write_bytes(b"PAR1")
    err = one_line(capsys, run_cli("index", docs.parent, "--out", tmp_path / "ix"))
    assert f"input {docs.parent}" in err
    assert sorted(os.listdir(tmp_path)) == ["d[1]"]


def test_a_pattern_that_names_no_file_is_still_an_input_pattern(tmp_path):
    """``data/*.jsonl`` exists under no name: it is not taken for a path holding a wildcard (no refusal here;
    the command reads what it matches)."""
    from incoherent.pipelines.runtime import safety

    (tmp_path / "a.jsonl").write_text("{}\n")
    assert safety.path_arguments({"inputs": [str(tmp_path / "*.jsonl")]}) == []


def test_a_working_folder_holding_a_star_is_one_line(tmp_path, capsys, monkeypatch):
    """A relative ``--out`` becomes ``CWD/out``: the working folder's ``*`` is Beam's wildcard too."""
    cwd = tmp_path / "w*"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    err = one_line(capsys, run_cli("ingest", "text", WSJ, "--source", "wsj", "--out", "o"))
    assert f"(full path {cwd}/o)" in err
    assert os.listdir(cwd) == []


def test_a_build_config_out_or_input_with_wildcards_is_one_line(tmp_path, capsys):
    config = {"base": str(ROOT), "sources": {"wsj": {"kind": "text", "inputs": ["samples/wsj/wsj.jsonl"]}}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**config, "out": str(tmp_path / "b[1]")}))
    assert "--out" in one_line(capsys, run_cli("build", path))
    data = tmp_path / "in?"
    data.mkdir()
    shutil.copy(WSJ, data / "wsj.jsonl")
    config["sources"]["wsj"]["inputs"] = [str(data / "wsj.jsonl")]
    path.write_text(yaml.safe_dump(config))
    assert "input" in one_line(capsys, run_cli("build", path, "--out", tmp_path / "b"))
    assert sorted(os.listdir(tmp_path)) == ["c.yaml", "in?"]
    assert Path(data / "wsj.jsonl").read_bytes() == WSJ.read_bytes()
