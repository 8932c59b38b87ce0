"""Safety of ``--out`` (issue #24, D1-D4, D12, D13, D10's unusable ``--out``): write only under ``--out``,
delete only what a build or command wrote, refuse before any work.

Most cases stop before any pipeline runs: they check the one-line message, exit status 2, that nothing was
written outside ``--out`` and that the inputs are intact. A few run real builds on the bundled samples.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import apache_beam as beam
import psutil
import pytest
import yaml

from incoherent.fileio.paths import check_name
from incoherent.pipelines import cli, commands
from incoherent.pipelines.build import execute
from incoherent.pipelines.build.config import check_config
from incoherent.pipelines.build.plan import plan
from incoherent.pipelines.runtime import run, safety
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, SAMPLES, run_cli

WIKI_DUMP = SAMPLES / "wikipedia" / "2022-08-24_minidumps-en_3def73f3.xml.bz2"
CNN_DIR = SAMPLES / "cnn" / "allennlp"


def tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (and the folders), by relative path: a victim's fingerprint."""
    found = {}
    for path in sorted(Path(root).rglob("*")):
        rel = path.relative_to(root).as_posix()
        found[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return found


def refused(capsys, *argv: str) -> str:
    """Run the CLI; it must exit 2 with exactly one line on stderr, which is returned."""
    code = run_cli(*argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "VICTIM"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me\n")
    return folder


def write_config(path: Path, sources: dict, **more) -> Path:
    config = {"base": str(ROOT), "sources": sources, "shuffle": {"block_sizes": [2]}, **more}
    path.write_text(yaml.safe_dump(config))
    return path


# ------------------------------------------------------------------------------------------------ D1: names


@pytest.mark.parametrize("name", ["wikipedia", "cnn", "wiki.en_2022-08", "A1", "x" * 64])
def test_safe_names_pass(name):
    assert check_name(name, "sources") == name


@pytest.mark.parametrize(
    "name", ["../../../../VICTIM", "..", ".hidden", "a/b", "a\\b", "a..b", "", "-x", "x" * 65, "é", 3, None]
)
def test_unsafe_names_are_refused(name):
    with pytest.raises(InputError, match="is not allowed"):
        check_name(name, "sources")


def test_a_traversal_source_name_is_refused_before_any_work(tmp_path, capsys):
    target = victim(tmp_path)
    before = tree(target)
    config = write_config(
        tmp_path / "trav.yaml",
        {
            "cnn": {"kind": "cnn", "inputs": ["samples/cnn/allennlp"]},
            "../../../../VICTIM": {
                "kind": "wikipedia",
                "inputs": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"],
            },
        },
    )
    out = tmp_path / "a" / "b" / "c" / "OUT"
    err = refused(capsys, "build", config, "--out", out)
    assert "../../../../VICTIM" in err and "is not allowed" in err
    assert tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["VICTIM", "trav.yaml"]  # nothing written anywhere


def test_a_history_dump_with_an_unsafe_label_is_refused(tmp_path, capsys):
    hidden = tmp_path / ".hidden.xml.bz2"
    shutil.copy(WIKI_DUMP, hidden)
    config = write_config(
        tmp_path / "c.yaml",
        {"wikipedia": {"kind": "wikipedia", "inputs": [str(WIKI_DUMP)], "history": [str(hidden)]}},
    )
    err = refused(capsys, "build", config, "--out", tmp_path / "OUT")
    assert "its label" in err and not (tmp_path / "OUT").exists()


@pytest.mark.parametrize("command", [["ingest", "wikipedia", str(WIKI_DUMP)], ["ingest", "text", "x.jsonl"]])
def test_a_traversal_source_flag_is_refused(tmp_path, capsys, command):
    out = tmp_path / "one" / "two" / "OUT"
    err = refused(capsys, *command, "--out", out, "--source", "../../../x")
    assert "--source" in err and "is not allowed" in err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------- D2: a build is recognised


def test_force_on_a_folder_that_is_not_a_build_is_refused(tmp_path, capsys):
    folder = tmp_path / "P"
    (folder / "work").mkdir(parents=True)
    (folder / "notes.txt").write_text("keep\n")
    before = tree(folder)
    for flags in (["--force"], ["--overwrite"], []):
        err = refused(capsys, "build", "--out", folder, *flags)
        assert "not an earlier build" in err
        assert tree(folder) == before


def test_force_deletes_only_what_a_build_wrote(tmp_path):
    out = tmp_path / "OUT"
    _records, lock = execute.prepare_build_dir(str(out), force=False)
    lock.release()
    for name in ("dataset/intruder-cnn", "work/documents/cnn", "work/intruders.partial"):
        (out / name).mkdir(parents=True)
    (out / "build_summary.json").write_text('{"command": "build", "stages": {}}')
    (out / "notes.txt").write_text("mine\n")
    (out / "mine").mkdir()
    (out / "mine" / "data.csv").write_text("1,2\n")
    records, lock = execute.prepare_build_dir(str(out), force=True)
    lock.release()
    assert records == {}
    names = sorted(os.listdir(out))
    assert names == sorted([safety.BUILD_MARKER, safety.LOCK_FILE, "mine", "notes.txt"])
    assert (out / "mine" / "data.csv").read_text() == "1,2\n"
    # in dataset/, only what a build writes there: a file of the user's beside the tables stays
    (out / "dataset" / "intruder-cnn").mkdir(parents=True)
    (out / "dataset" / "README.md").write_text("the card\n")
    (out / "dataset" / "LICENSE").write_text("mine\n")
    _records, lock = execute.prepare_build_dir(str(out), force=True)
    lock.release()
    assert os.listdir(out / "dataset") == ["LICENSE"]


def test_a_build_killed_while_writing_its_marker_is_resumed_or_forced(tmp_path):
    """Killed between the marker's ``.partial`` and its rename: the folder holds the lock's file and that
    leftover only, nothing to lose, and the next build takes it (the leftover is replaced by the marker)."""
    for force in (False, True):
        out = tmp_path / f"OUT-{force}"
        out.mkdir()
        (out / safety.LOCK_FILE).write_text("")
        (out / (safety.BUILD_MARKER + ".partial")).write_text('{"format": 1, "wri')
        assert execute.is_build(str(out))
        records, lock = execute.prepare_build_dir(str(out), force=force)
        lock.release()
        assert records == {}
        assert sorted(os.listdir(out)) == sorted([safety.BUILD_MARKER, safety.LOCK_FILE])
    other = tmp_path / "OTHER"  # a run marker's leftover is no build's: refused as before
    other.mkdir()
    (other / (safety.RUN_MARKER + ".partial")).write_text("")
    assert not execute.is_build(str(other))


def test_a_command_killed_while_writing_its_marker_runs_again_without_overwrite(tmp_path, capsys):
    out = tmp_path / "docs"
    out.mkdir()
    (out / (safety.RUN_MARKER + ".partial")).write_text("")
    assert run_cli("ingest", "cnn", CNN_DIR, "--out", out) == 0
    assert json.loads((out / "run_summary.json").read_text())["complete"] is True
    assert not (out / (safety.RUN_MARKER + ".partial")).exists()
    mine = tmp_path / "mine"  # the leftover beside anything else: refused and kept, as before
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    (mine / (safety.RUN_MARKER + ".partial")).write_text("")
    assert "not the output of `incoherent ingest cnn`" in refused(
        capsys, "ingest", "cnn", CNN_DIR, "--out", mine
    )
    assert sorted(os.listdir(mine)) == sorted(["notes.txt", safety.RUN_MARKER + ".partial"])


def test_a_build_killed_after_its_marker_is_resumed_or_forced(tmp_path):
    out = tmp_path / "OUT"
    _records, lock = execute.prepare_build_dir(str(out), force=False)
    (out / "dataset").mkdir()  # what a build killed in its first seconds leaves
    lock.release()
    for force in (False, True):
        records, lock = execute.prepare_build_dir(str(out), force=force)
        lock.release()
        assert records == {}


def wait_for_group_to_end(group: int, seconds: float) -> None:
    """Wait until no live (non-zombie) process of process group ``group`` is left."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        left = [
            p
            for p in psutil.process_iter(["status"])
            if p.info["status"] != psutil.STATUS_ZOMBIE and _group_of(p.pid) == group
        ]
        if not left:
            return
        time.sleep(0.02)
    raise AssertionError(f"process group {group} still has processes after {seconds} s")


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


@pytest.mark.e2e  # kills a real build
def test_the_marker_is_written_first_by_a_real_build(tmp_path):
    """D13: kill a real build as soon as its output folder appears; resume and --force both accept it."""
    out = tmp_path / "OUT"
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(out), "--quiet"]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.time() + 60
        while not out.exists() and time.time() < deadline and process.poll() is None:
            time.sleep(0.005)
    finally:
        # The whole group, as a terminal's kill does: killed in its first milliseconds, the build may be in the
        # middle of starting its fork server, and that child keeps the build's descriptors (the lock among
        # them) until its exec closes them. The lock is free once no process of the group is left.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        wait_for_group_to_end(process.pid, seconds=30)
    assert execute.is_build(str(out))
    for force in (False, True):
        _records, lock = execute.prepare_build_dir(str(out), force=force)
        lock.release()


# --------------------------------------------------------------------------------------------- D3: inputs


def test_out_equal_to_the_input_is_refused_and_the_input_kept(tmp_path, capsys):
    stories = tmp_path / "S"
    shutil.copytree(CNN_DIR, stories)
    before = tree(stories)
    err = refused(capsys, "ingest", "cnn", stories, "--out", stories, "--overwrite")
    assert "is the input" in err
    err = refused(capsys, "ingest", "cnn", stories, "--out", stories / "sub", "--overwrite")
    assert "lies inside the input" in err
    err = refused(capsys, "ingest", "cnn", stories / os.listdir(stories)[0], "--out", stories, "--overwrite")
    assert "contains the input" in err
    assert tree(stories) == before


def test_a_config_input_under_out_is_refused_before_force_deletes_it(tmp_path, capsys):
    out = tmp_path / "OUT"
    _records, lock = execute.prepare_build_dir(str(out), force=False)  # an earlier build's folder
    lock.release()
    shutil.copytree(CNN_DIR, out / "stories")
    before = tree(out)
    config = write_config(tmp_path / "c.yaml", {"cnn": {"kind": "cnn", "inputs": [str(out / "stories")]}})
    err = refused(capsys, "build", config, "--out", out, "--force")
    assert "contains the input" in err
    assert tree(out) == before


def test_a_config_inside_out_is_an_input_too(tmp_path, capsys):
    out = tmp_path / "OUT"
    out.mkdir()
    config = write_config(out / "c.yaml", {"cnn": {"kind": "cnn", "inputs": [str(CNN_DIR)]}})
    refused(capsys, "build", config, "--out", out, "--force")
    assert config.exists()


def test_a_build_into_an_input_folder_is_refused(tmp_path, capsys):
    config = write_config(tmp_path / "c.yaml", {"cnn": {"kind": "cnn", "inputs": [str(tmp_path)]}})
    err = refused(capsys, "build", config, "--out", tmp_path / "OUT")
    assert "lies inside the input" in err and not (tmp_path / "OUT").exists()


@pytest.mark.parametrize(
    ("out", "path", "clash"),
    [
        ("gs://b/data", "gs://b/data/", True),
        ("gs://b/data/out", "gs://b//data", True),
        ("s3://b/x", "s3://b/x/./y/file.jsonl", True),
        ("gs://b/data-out", "gs://b/data", False),
        ("gs://b/data", "s3://b/data", False),
        ("GS://b/data", "gs://b/data", True),
    ],
)
def test_remote_paths_are_compared_normalised(out, path, clash):
    if clash:
        with pytest.raises(InputError, match="choose an output folder apart from every input"):
            safety.check_out_vs_inputs(out, [path])
    else:
        safety.check_out_vs_inputs(out, [path])


def test_a_link_to_an_input_is_the_input(tmp_path):
    (tmp_path / "data").mkdir()
    os.symlink(tmp_path / "data", tmp_path / "link")
    with pytest.raises(InputError, match="is the input"):
        safety.check_out_vs_inputs(str(tmp_path / "link"), [str(tmp_path / "data")])


# ----------------------------------------------------------------------------- D10: --out unusable as such


def test_out_that_is_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert "is a file" in refused(capsys, "ingest", "cnn", CNN_DIR, "--out", tmp_path / "file")
    assert "is a file" in refused(capsys, "build", "--out", tmp_path / "file")


@pytest.mark.parametrize(
    "argv",
    [
        ["ingest", "cnn", str(CNN_DIR)],
        ["ingest", "text", str(SAMPLES / "wsj" / "wsj.jsonl"), "--source", "wsj"],
        ["probes", str(SAMPLES / "wsj" / "wsj.jsonl")],
        ["shuffle", str(SAMPLES / "wsj")],
        ["build"],
        ["annotate", "export", str(SAMPLES / "wsj"), "--config", "shuffle-wsj"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
@pytest.mark.parametrize("where", ["out", "parent"])
def test_a_dangling_link_out_is_one_line(tmp_path, capsys, argv, where):
    """``--out`` a link to nothing (or below one): one line, not makedirs' ``FileExistsError`` traceback."""
    os.symlink(tmp_path / "gone", tmp_path / "link")
    out = tmp_path / "link" if where == "out" else tmp_path / "link" / "sub"
    assert cli.main([*argv, "--out", str(out)]) == 2  # refused before any Beam flag matters
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "link" in err, err
    assert os.listdir(tmp_path) == ["link"] and not (tmp_path / "gone").exists()


def test_a_relative_out_that_does_not_exist_yet_is_fine(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    safety.check_writable_dir("docs")
    safety.check_writable_dir("a/b/c")


def test_out_below_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert "is a file" in refused(capsys, "ingest", "cnn", CNN_DIR, "--out", tmp_path / "file" / "sub")
    assert "is a file" in refused(capsys, "build", "--out", tmp_path / "file" / "sub")


def test_a_read_only_out_is_one_line_even_for_root(tmp_path, capsys, monkeypatch):
    """The same check with ``os.access`` saying no (root may write anywhere, a read-only mount it may not)."""
    locked = tmp_path / "ro"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(
        os, "access", lambda path, mode: False if str(path) == str(locked) else real(path, mode)
    )
    assert "not writable" in refused(capsys, "ingest", "cnn", CNN_DIR, "--out", locked / "x")
    assert "not writable" in refused(capsys, "build", "--out", locked / "x")
    assert list(locked.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_out_is_one_line(tmp_path, capsys):
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert "not writable" in refused(capsys, "ingest", "cnn", CNN_DIR, "--out", locked / "x")
        assert "not writable" in refused(capsys, "build", "--out", locked / "x")
    finally:
        locked.chmod(0o755)


# ------------------------------------------------------------------- D2/D13: single commands' --overwrite


def test_overwrite_replaces_only_that_commands_output(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work\n")
    with pytest.raises(InputError, match="not the output of `incoherent ingest cnn`"):
        run.prepare_output(str(mine), True, "ingest cnn")
    assert (mine / "thesis.tex").exists()
    other = tmp_path / "other"
    run.prepare_output(str(other), False, "index")
    (other / "run_summary.json").write_text('{"command": "index", "complete": true}')
    with pytest.raises(InputError, match="not the output of `incoherent shuffle`"):
        run.prepare_output(str(other), True, "shuffle")
    with pytest.raises(InputError, match="pass --overwrite"):
        run.prepare_output(str(other), False, "index")
    run.prepare_output(str(other), True, "index")
    assert os.listdir(other) == [safety.RUN_MARKER]


def test_train_filter_overwrite_replaces_only_a_model_it_wrote(tmp_path):
    from incoherent.filters.train import _check_out

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="not a model written by `incoherent train-filter`"):
        _check_out(str(mine), True)
    model = tmp_path / "model"
    model.mkdir()
    task = "intruder sentence detection (Shen et al.)"
    (model / "metrics.json").write_text(json.dumps({"task": task}))
    with pytest.raises(InputError, match="older incoherent whose metrics.json does not list the files"):
        _check_out(str(model), True)  # which of its files are the user's cannot be told: refused
    (model / "metrics.json").write_text(json.dumps({"task": task, "files": ["metrics.json"]}))
    with pytest.raises(InputError, match="pass --overwrite"):
        _check_out(str(model), False)
    _check_out(str(model), True)


@pytest.mark.parametrize("command", ["finetune-lm", "train-shuffle"])
def test_lm_training_overwrite_replaces_only_a_model_it_wrote(tmp_path, command):
    from incoherent.filters.provenance import PROVENANCE
    from incoherent.filters.training import check_out

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("x")
    with pytest.raises(InputError, match=f"not a model written by `incoherent {command}`"):
        check_out(str(mine), True, [], command=command)
    model = tmp_path / "model"
    model.mkdir()
    (model / PROVENANCE).write_text(json.dumps({"command": command}))
    with pytest.raises(InputError, match=f"older incoherent whose {PROVENANCE} does not list the files"):
        check_out(str(model), True, [], command=command)
    (model / PROVENANCE).write_text(json.dumps({"command": command, "files": [PROVENANCE]}))
    check_out(str(model), True, [], command=command)
    other = "train-shuffle" if command == "finetune-lm" else "finetune-lm"
    with pytest.raises(InputError, match="not a model written by"):
        check_out(str(model), True, [], command=other)


def test_overwrite_keeps_the_users_own_files_in_out(tmp_path):
    """#53: ``--overwrite`` replaced the whole folder, a user's ``NOTES.txt`` and ``mine/`` with it; now only
    what the earlier run wrote (its marker lists it) is deleted, run after run."""
    out = tmp_path / "o"
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", out) == 0
    (out / "NOTES.txt").write_text("x\n")
    (out / "mine").mkdir()
    (out / "mine" / "data.csv").write_text("1,2\n")
    (out / "documents-wsj" / "stale.parquet").write_text("the command's own folder: replaced whole")
    for _ in range(2):
        assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", out, "--overwrite") == 0
        assert (out / "NOTES.txt").read_text() == "x\n" and (out / "mine" / "data.csv").read_text() == "1,2\n"
        assert not (out / "documents-wsj" / "stale.parquet").exists()
        marker = json.loads((out / safety.RUN_MARKER).read_text())
        assert marker["kept"] == ["NOTES.txt", "mine"]
        assert {"documents-wsj", "run_summary.json", safety.RUN_MARKER} <= set(marker["wrote"])
        assert not set(marker["wrote"]) & {"NOTES.txt", "mine"}


def test_a_failed_run_is_replaced_but_what_it_kept_stays(tmp_path):
    """A run that did not finish lists what was there before it (``kept``): the rest is its own."""
    out = tmp_path / "o"
    run.prepare_output(str(out), False, "index")
    (out / "tables").mkdir()
    run.finish_output(str(out), "index")
    (out / "NOTES.txt").write_text("x")
    run.prepare_output(str(out), True, "index")  # a second run starts ...
    (out / "tables").mkdir()  # ... writes, and is killed: no finish_output
    (out / ".spill").mkdir()
    run.prepare_output(str(out), False, "index")  # replaced without --overwrite, NOTES.txt kept
    assert sorted(os.listdir(out)) == sorted(["NOTES.txt", safety.RUN_MARKER])


def test_an_older_marker_listing_nothing_is_refused_and_kept(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / safety.RUN_MARKER).write_text('{"format": 1, "written_by": "incoherent index", "kind": "run"}\n')
    (out / "run_summary.json").write_text('{"command": "index", "complete": true}')
    (out / "thesis.tex").write_text("years of work")
    before = tree(out)
    with pytest.raises(InputError, match="older incoherent whose marker does not list the files it wrote"):
        run.prepare_output(str(out), True, "index")
    assert tree(out) == before


def test_a_hand_edited_marker_deletes_nothing_outside_out(tmp_path):
    out, victim = tmp_path / "o", tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("keep")
    run.prepare_output(str(out), False, "index")
    wrote = ["../victim", str(victim), "/", ".", "..", safety.LOCK_FILE]
    marker = {"format": 2, "written_by": "incoherent index", "kind": "run", "kept": [], "wrote": wrote}
    (out / safety.RUN_MARKER).write_text(json.dumps(marker))
    (out / "run_summary.json").write_text('{"command": "index", "complete": true}')
    run.prepare_output(str(out), True, "index")
    assert (victim / "keep").read_text() == "keep"


def test_model_overwrite_keeps_the_users_files(tmp_path):
    """train-filter, finetune-lm, train-shuffle: the provenance (metrics) lists the model's files."""
    from incoherent.fileio.outputs import files_written
    from incoherent.filters.provenance import PROVENANCE
    from incoherent.filters.training import check_out, prepare_out

    model = tmp_path / "model"
    kept = prepare_out(str(model))
    (model / "model.safetensors").write_text("w")
    (model / PROVENANCE).write_text(
        json.dumps({"command": "finetune-lm", "files": files_written(str(model), kept, PROVENANCE)})
    )
    (model / "NOTES.txt").write_text("mine")
    check_out(str(model), True, [], command="finetune-lm")
    assert prepare_out(str(model)) == {"NOTES.txt"}
    assert sorted(os.listdir(model)) == ["NOTES.txt"]


def _fail(_element, out):
    folder = os.path.join(out, "_inputs")
    os.makedirs(folder, exist_ok=True)
    Path(folder, "00000.json").write_text("{}")
    raise InputError("bad input (test)")


def test_a_failed_command_leaves_no_inputs_folder_and_can_be_rerun(tmp_path):
    out = str(tmp_path / "OUT")

    def pipeline(p):
        p | beam.Create([0]) | beam.Map(_fail, out)

    with pytest.raises(InputError, match="bad input"):
        run.run_pipeline(
            pipeline, command="ingest text", out_dir=out, params={}, beam_args=["--runner", "DirectRunner"]
        )
    assert not os.path.exists(os.path.join(out, "_inputs"))
    run.prepare_output(out, False, "ingest text")  # the failed run is replaced without --overwrite


# ----------------------------------------------------------------------------------------------- D12: lock


def test_a_second_build_says_who_holds_the_lock(tmp_path, capsys):
    out = tmp_path / "OUT"
    _records, lock = execute.prepare_build_dir(str(out), force=False)
    try:
        before = sorted(os.listdir(out))
        err = refused(capsys, "build", "--out", out, "--force")
        assert f"pid {os.getpid()}" in err and "another build is running" in err
        assert sorted(os.listdir(out)) == before  # the loser wrote and deleted nothing
    finally:
        lock.release()
    assert (out / safety.LOCK_FILE).read_text() == ""  # released: emptied, the same bytes every time


@pytest.mark.e2e
def test_two_concurrent_builds(tmp_path):
    out = tmp_path / "OUT"
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(out), "--quiet"]
    first = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        lock_file = out / safety.LOCK_FILE
        deadline = time.time() + 120
        while time.time() < deadline and first.poll() is None:
            if lock_file.exists() and lock_file.read_text().strip():
                break
            time.sleep(0.02)
        assert first.poll() is None
        second = subprocess.run(command + ["--force"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and f"pid {first.pid}" in lines[0], second.stderr
        assert first.poll() is None  # the first build goes on
    finally:
        first.kill()
        first.wait(timeout=30)


# ------------------------------------------------------------------------------------- D4: stale tables


def test_remove_stale_keeps_exactly_what_the_plan_writes(tmp_path):
    out = tmp_path / "OUT"
    config = check_config(
        {"sources": {"cnn": {"kind": "cnn", "inputs": [str(CNN_DIR)]}}}, str(tmp_path / "c.yaml")
    )
    stages = plan(config, str(out / "work"))
    for folder in (
        "dataset/intruder-cnn", "dataset/intruder-wikipedia", "dataset/shuffle-wikipedia",
        "dataset/candidates",
        "dataset/figures", "dataset/summaries", "work/documents/cnn", "work/documents/wikipedia",
        "work/retrieval/cnn/index", "work/retrieval/wikipedia/index", "work/history/wikipedia/old",
        "work/intruders", "work/shuffle/cnn", "work/shuffle/wikipedia",
    ):  # fmt: skip
        (out / folder).mkdir(parents=True)
        (out / folder / "run_summary.json").write_text("{}")
    removed = {os.path.relpath(p, out) for p in execute.remove_stale(str(out), stages)}
    assert removed == {
        "dataset/intruder-wikipedia", "dataset/shuffle-wikipedia", "work/documents/wikipedia",
        "work/retrieval/wikipedia", "work/history", "work/shuffle/wikipedia",
    }  # fmt: skip


@pytest.mark.e2e
def test_a_smaller_config_leaves_no_stale_tables_and_force_keeps_user_files(tmp_path):
    """D4 and D2 on real builds: Wikipedia + CNN, then CNN only into the same --out, then --force."""
    out = tmp_path / "OUT"
    both = write_config(
        tmp_path / "both.yaml",
        {
            "cnn": {"kind": "cnn", "inputs": [str(CNN_DIR)]},
            "wikipedia": {"kind": "wikipedia", "inputs": [str(WIKI_DUMP)]},
        },
    )
    assert run_cli("build", both, "--out", out, "--quiet") == 0
    assert (out / "dataset" / "intruder-wikipedia").is_dir()
    cnn_only = write_config(tmp_path / "cnn.yaml", {"cnn": {"kind": "cnn", "inputs": [str(CNN_DIR)]}})
    assert run_cli("build", cnn_only, "--out", out, "--quiet") == 0
    dataset = out / "dataset"
    tables = sorted(
        p.name for p in dataset.iterdir() if p.is_dir() and p.name not in ("figures", "summaries")
    )
    assert tables == ["candidates", "intruder-cnn", "shuffle-cnn"]
    assert not list((dataset / "summaries").rglob("*wikipedia*"))
    assert not list((out / "work").rglob("*wikipedia*"))
    card = (dataset / "README.md").read_text()
    assert "intruder-wikipedia" not in card
    summary = json.loads((out / "build_summary.json").read_text())
    assert summary["complete"] and set(summary["dataset"]) - {"figures", "summaries"} == set(tables)
    (out / "notes.txt").write_text("mine\n")
    assert run_cli("build", cnn_only, "--out", out, "--force", "--quiet") == 0
    assert (out / "notes.txt").read_text() == "mine\n"
    assert json.loads((out / "build_summary.json").read_text())["skipped"] == []


def test_a_name_argument_is_not_taken_for_an_input(tmp_path, monkeypatch):
    """``--source wsj`` beside a folder ``wsj/`` holding the output is no clash: a source is a name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wsj").mkdir()
    shutil.copy(SAMPLES / "wsj" / "wsj.jsonl", tmp_path / "wsj" / "wsj.jsonl")
    args = commands.build_parser("incoherent.pipelines.ingest.text").parse_args(
        ["ingest", "text", "wsj/wsj.jsonl", "--source", "wsj", "--out", "wsj/docs"]
    )
    cli.check_out(args)
    args.out = "wsj"
    with pytest.raises(InputError, match="contains the input wsj/wsj.jsonl"):
        cli.check_out(args)


def test_cli_check_out_finds_path_arguments(tmp_path):
    (tmp_path / "docs").mkdir()
    found = safety.path_arguments(
        {
            "out": str(tmp_path),
            "paths": [str(tmp_path / "docs")],
            "index": [f"cnn={tmp_path / 'docs'}"],
            "k": 10,
        }
    )
    assert found == [str(tmp_path / "docs"), str(tmp_path / "docs")]
    assert cli.check_out  # the CLI runs it before every command
