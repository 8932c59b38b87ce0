"""Safety of every command, not only ``build`` (issue #31): every path a command writes obeys the ``--out``
rule, every command that writes a folder holds its lock, and no command writes through a link.

Each case checks the one-line message, exit status 2, and that the inputs (and whatever lies outside
``--out``) hash the same before and after.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from incoherent.fileio.outputs import LOCK_FILE, clear_folder, entries, replace_file
from incoherent.pipelines import cli, commands
from incoherent.pipelines.runtime import safety
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, SAMPLES
from tests.pipelines.runtime.test_safety_out import tree
from tests.tiny_model import tiny_base_dir, tiny_data_dir  # noqa: F401

WSJ = SAMPLES / "wsj" / "wsj.jsonl"


def refused(capsys, *argv) -> str:
    """Run the CLI (no Beam flags added); it must exit 2 with exactly one line on stderr, which is returned."""
    code = cli.main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def copy(src: str | Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# ------------------------------------------------------------------ every written path obeys the --out rule


@pytest.fixture
def model_and_data(tmp_path, tiny_base_dir, tiny_data_dir):  # noqa: F811
    """Private copies (a failing check must not damage the session's models)."""
    return copy(tiny_base_dir, tmp_path / "MODEL"), copy(tiny_data_dir, tmp_path / "data")


@pytest.mark.parametrize(
    "target",
    [
        "data/intruder-wsj/test-00000-of-00001.parquet",
        "MODEL/model.safetensors",
        "MODEL",
        "data",
        "MODEL/new-predictions.jsonl",
        ".",
        "link-to-split",
    ],
)
def test_evaluate_predictions_onto_an_input_is_refused(model_and_data, tmp_path, capsys, target):
    model, data = model_and_data
    os.symlink(data / "intruder-wsj" / "test-00000-of-00001.parquet", tmp_path / "link-to-split")
    before = tree(tmp_path)
    err = refused(
        capsys, "evaluate", model, data, "--predictions", tmp_path / target, "--out", tmp_path / "r.json"
    )
    assert err.startswith(f"error: --predictions {tmp_path / target} ") and "the input" in err, err
    assert tree(tmp_path) == before  # nothing written, nothing replaced, the weights and split intact


def test_evaluate_out_and_predictions_must_differ(model_and_data, tmp_path, capsys):
    model, data = model_and_data
    before = tree(tmp_path)
    err = refused(
        capsys, "evaluate", model, data, "--out", tmp_path / "r.json", "--predictions", tmp_path / "r.json"
    )
    assert "is the path of --out too" in err
    err = refused(capsys, "evaluate", model, data, "--out", tmp_path / "r.json", "--predictions", tmp_path)
    assert err.startswith(f"error: --predictions {tmp_path} contains the input")
    assert tree(tmp_path) == before


@pytest.mark.e2e
def test_evaluate_replaces_only_its_own_files(model_and_data, tmp_path, capsys):
    """``--out`` and ``--predictions`` on a user's file, a link (dangling too) or evaluate's own file edited
    since: refused, with or without ``--overwrite``, before any model is loaded; evaluate's own earlier files
    are replaced with ``--overwrite`` only."""
    model, data = model_and_data
    victim, precious, mine = tmp_path / "victim.txt", tmp_path / "precious.jsonl", tmp_path / "mine.json"
    for path in (victim, precious, mine):
        path.write_text("keep me\n")
    out, predictions = tmp_path / "res" / "r.json", tmp_path / "res" / "p.jsonl"
    out.parent.mkdir()
    os.symlink(victim, out)
    os.symlink(tmp_path / "gone", predictions)
    inputs = tree(model), tree(data)
    cases = [("--out", mine, "--predictions", tmp_path / "p2.jsonl"), ("--out", tmp_path / "r2.json",
             "--predictions", precious), ("--out", out, "--predictions", tmp_path / "p3.jsonl"),
             ("--out", tmp_path / "r3.json", "--predictions", predictions)]  # fmt: skip
    for case in cases:
        err = refused(capsys, "evaluate", model, data, *case)
        assert "exists (pass --overwrite to replace it)" in err, err
        err = refused(capsys, "evaluate", model, data, *case, "--overwrite")
        assert "not an earlier output of `incoherent evaluate`" in err, err
    assert victim.read_text() == precious.read_text() == mine.read_text() == "keep me\n"
    assert out.is_symlink() and predictions.is_symlink()
    out.unlink()
    predictions.unlink()
    argv = ["evaluate", str(model), str(data), "--out", str(out), "--predictions", str(predictions)]
    assert cli.main(argv) == 0
    assert json.loads(out.read_text())["split"] == "test" and len(predictions.read_text().splitlines()) == 30
    assert "exists (pass --overwrite" in refused(capsys, *argv)
    assert cli.main([*argv, "--overwrite"]) == 0  # its own files: replaced
    predictions.write_text(predictions.read_text() + "\n")  # edited since: the user's now
    assert "(or changed since)" in refused(capsys, *argv, "--overwrite")
    assert (tree(model), tree(data)) == inputs


def test_the_cli_checks_every_path_a_command_writes():
    """``--out`` and the options a command module lists in ``OUTPUTS`` (``evaluate --predictions``); ``annotate
    report --predictions`` is read, not written, so it is an input there."""
    import importlib

    def written(*argv: str) -> dict:
        parser = commands.build_parser(commands.selected_module(list(argv)))
        args, _ = parser.parse_known_args(list(argv))
        return cli.outputs(args, importlib.import_module(args._module))

    assert written("evaluate", "M", "D", "--predictions", "p.jsonl", "--out", "r.json") == {
        "--out": "r.json",
        "--predictions": "p.jsonl",
    }
    assert written("annotate", "report", "S", "--predictions", "p.jsonl") == {}
    assert importlib.import_module("incoherent.pipelines.build.command").OWN_LOCK is True


def test_every_command_with_a_file_out_says_so():
    """The CLI locks ``--out`` as a folder unless the module says ``OUT_IS_FILE``: a command whose ``--out``
    is a file (``metavar="FILE"``) must say so, or the lock would make a folder of that name."""
    import argparse
    import importlib

    files = []
    for command in commands.COMMANDS:
        try:
            module = importlib.import_module(command.module)
        except ImportError:  # optional dependencies missing
            continue
        parser = argparse.ArgumentParser()
        module.add_arguments(parser)
        out = parser._option_string_actions.get("--out")
        if out is None:
            continue
        is_file = out.metavar == "FILE" or command.words == ("export", "insted")
        assert bool(getattr(module, "OUT_IS_FILE", False)) == is_file, command.words
        files += [command.words] if is_file else []
    assert ("evaluate",) in files and ("export", "insted") in files


# -------------------------------------------------------------------------------- one lock per --out


PAUSED_RUN = """
import os, sys, time
from incoherent.pipelines import cli
from incoherent.pipelines.runtime import run

ready, go = sys.argv[1], sys.argv[2]
prepare = run.prepare_output

def paused(*args, **kwargs):  # the first run, caught just after it prepared its --out
    prepare(*args, **kwargs)
    open(ready, "w").close()
    deadline = time.time() + 120
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.05)

run.prepare_output = paused
sys.exit(cli.main(sys.argv[3:]))
"""


@pytest.mark.e2e
def test_two_commands_on_one_out_the_second_names_the_holder(tmp_path):
    """``ingest text A --out oc & ingest text B --out oc``: two real processes. The second ends at once with
    one line naming the first; the first finishes and its output is whole."""
    out, ready, go = tmp_path / "oc", tmp_path / "ready", tmp_path / "go"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    lines = WSJ.read_text().splitlines()
    a.write_text("\n".join(lines[:20]) + "\n")
    b.write_text("\n".join(lines[20:40]) + "\n")
    inputs = tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        [sys.executable, "-c", PAUSED_RUN, str(ready), str(go), "ingest", "text", str(a), "--out", str(out),
         "--source", "a", "--quiet"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.time() + 120
        while not ready.exists() and first.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert ready.exists(), first.communicate()[1]
        written = tree(out)
        second = subprocess.run(
            [sys.executable, "-m", "incoherent.pipelines.cli", "ingest", "text", str(b), "--out", str(out), "--source", "b"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        lines_err = second.stderr.strip().splitlines()
        assert second.returncode == 2 and len(lines_err) == 1, second.stderr
        assert lines_err[0] == (
            f"error: {out}: another run is running there (`incoherent ingest text`, pid {first.pid} on "
            f"{os.uname().nodename}, started {json.loads((out / LOCK_FILE).read_text())['started']}); wait "
            "for it or choose another --out"
        )
        assert tree(out) == written  # the second deleted nothing of the first's
        go.touch()
        assert first.wait(timeout=300) == 0, first.communicate()[1]
    finally:
        go.touch()
        if first.poll() is None:
            first.kill()
        first.wait(timeout=30)
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["complete"] and summary["outputs"] == {"documents-a": {"documents": 20}}
    assert not (out / LOCK_FILE).exists()  # released, and not part of the output
    assert {k: v for k, v in tree(tmp_path).items() if k in inputs} == inputs


def test_a_refused_command_leaves_no_folder_and_no_lock(tmp_path, capsys):
    out = tmp_path / "a" / "b" / "OUT"
    err = refused(capsys, "ingest", "text", tmp_path / "missing.jsonl", "--out", out)
    assert "missing.jsonl" in err
    assert list(tmp_path.iterdir()) == []
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    err = refused(capsys, "ingest", "text", WSJ, "--out", mine)
    assert "not the output of `incoherent ingest text`" in err
    assert sorted(os.listdir(mine)) == ["notes.txt"]  # no lock file left in a folder the command refused


def test_a_held_lock_stops_every_folder_command(tmp_path, capsys, tiny_base_dir, tiny_data_dir):  # noqa: F811
    out = tmp_path / "OUT"
    out.mkdir()
    with safety.command_lock(str(out), "ingest text"):
        before = tree(out)
        for argv in (
            ["ingest", "text", WSJ, "--out", out, "--overwrite"],
            ["ingest", "cnn", SAMPLES / "cnn" / "allennlp", "--out", out],
            ["train-filter", tiny_data_dir, "--base-model", tiny_base_dir, "--out", out, "--overwrite"],
            ["annotate", "export", tiny_data_dir, "--config", "intruder-wsj", "--out", out],
        ):
            err = refused(capsys, *argv)
            assert "another run is running there (`incoherent ingest text`, pid" in err, err
            assert tree(out) == before


def test_the_lock_file_is_not_content():
    """A folder holding only a lock is empty to every command; clearing a folder keeps its lock."""
    import tempfile

    folder = tempfile.mkdtemp()
    Path(folder, LOCK_FILE).write_text("")
    assert entries(folder) == []
    Path(folder, "x").mkdir()
    os.symlink("/", Path(folder, "root-link"))
    clear_folder(folder)
    assert os.listdir(folder) == [LOCK_FILE]
    shutil.rmtree(folder)


# --------------------------------------------------------------------------------- never through a link


def test_replace_file_replaces_a_link_and_refuses_a_folder(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(victim, tmp_path / "f")
    replace_file(str(tmp_path / "f"), b"new")
    assert victim.read_text() == "keep" and (tmp_path / "f").read_text() == "new"
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="a directory, not a regular file"):
        replace_file(str(tmp_path / "d"), b"x")
    with pytest.raises(InputError, match="a FIFO, not a regular file"):
        replace_file(str(tmp_path / "fifo"), b"x")
    assert sorted(os.listdir(tmp_path)) == ["d", "f", "fifo", "victim"]  # no temporary file left


WITHOUT_MODELS = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (the [models] extra)"
)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["evaluate", "M", "D", "--out"], marks=WITHOUT_MODELS),
        ["export", "insted", "D", "--overwrite", "--out"],
    ],
)
def test_a_device_or_fifo_as_an_output_file_is_refused(tmp_path, capsys, argv):
    """``--out /dev/null`` was replaced by a regular file (a rename over the device, as root); a FIFO hangs."""
    os.mkfifo(tmp_path / "fifo")
    for target in (tmp_path / "fifo", tmp_path):
        err = refused(capsys, *argv, target)
        assert err.endswith(", not a regular file; choose a file to write"), err
    assert os.listdir(tmp_path) == ["fifo"]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["evaluate", "M", "D", "--out", ""], marks=WITHOUT_MODELS),
        pytest.param(["evaluate", "M", "D", "--out", "r.json", "--predictions", ""], marks=WITHOUT_MODELS),
        ["export", "insted", "D", "--out", ""],
    ],
)
def test_an_empty_output_file_path_is_one_line(tmp_path, capsys, monkeypatch, argv):
    """``--out ''`` wrote evaluate's default file, ``--predictions ''`` no file at all, both silently."""
    monkeypatch.chdir(tmp_path)
    assert "an empty path; name the file to write" in refused(capsys, *argv)
    assert os.listdir(tmp_path) == []


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from tests.sample_build import wikipedia_build

    return wikipedia_build(tmp_path_factory)


def plant_links(dataset: Path, outside: Path) -> dict[str, str]:
    """Links from the files and folders a card writes to a folder outside the build; returns its hashes."""
    outside.mkdir()
    (outside / "README.md").write_text("the victim's own file\n")
    (outside / "figures").mkdir()
    (outside / "figures" / "keep.png").write_bytes(b"\x89PNG victim")
    (outside / "summaries").mkdir()
    (outside / "summaries" / "keep.json").write_text("{}\n")
    (dataset / "README.md").unlink()
    os.symlink(outside / "README.md", dataset / "README.md")
    for folder in ("figures", "summaries"):
        shutil.rmtree(dataset / folder)
        os.symlink(outside / folder, dataset / folder)
    return tree(outside)


def test_card_writes_through_no_link(built, tmp_path, capsys):
    out = copy(built, tmp_path / "out")
    victim = plant_links(out / "dataset", tmp_path / "outside")
    assert cli.main(["card", str(out / "dataset")]) == 0
    assert tree(tmp_path / "outside") == victim
    for name in ("README.md", "figures", "summaries"):
        assert not (out / "dataset" / name).is_symlink()
    assert (out / "dataset" / "README.md").read_text().startswith("---\n")
    assert any(p.suffix == ".png" for p in (out / "dataset" / "figures").iterdir())


def test_a_resumed_build_writes_through_no_link(built, tmp_path):
    out = copy(built, tmp_path / "out")
    victim = plant_links(out / "dataset", tmp_path / "outside")
    config = tmp_path / "build.yaml"
    shutil.copy(built.parent / "build.yaml", config)
    assert cli.main(["build", str(config), "--out", str(out), "--quiet", "--runner", "DirectRunner"]) == 0
    assert tree(tmp_path / "outside") == victim
    assert not (out / "dataset" / "README.md").is_symlink()


def test_annotate_verify_writes_through_no_link(built, tmp_path, capsys):
    """``annotate report`` writes ``figures/``, ``annotate verify`` ``human_verification/<config>.json`` and
    the card: a link planted at ``figures/`` or ``README.md`` is replaced, at ``human_verification/`` refused;
    the targets are untouched."""
    from tests.annotation.test_annotate import ACCURACY, mturk_results

    dataset = copy(built / "dataset", tmp_path / "dataset")
    tasks, study = tmp_path / "tasks", tmp_path / "study"
    assert cli.main(["annotate", "export", str(dataset), "--config", "intruder-wikipedia", "--split", "train",
                     "--documents", "6", "--per-task", "4", "--out", str(tasks)]) == 0  # fmt: skip
    results = tmp_path / "results.csv"
    results.write_text(mturk_results(tasks, list(ACCURACY), json.loads((tasks / "key.json").read_text())))
    assert cli.main(["annotate", "import", str(results), "--format", "mturk", "--key", str(tasks),
                     "--out", str(study)]) == 0  # fmt: skip
    outside = tmp_path / "outside"
    (outside / "figures").mkdir(parents=True)
    shutil.rmtree(study / "figures", ignore_errors=True)
    os.symlink(outside / "figures", study / "figures")  # annotate report writes its figures there
    assert cli.main(["annotate", "report", str(study)]) == 0
    assert not (study / "figures").is_symlink() and os.listdir(outside / "figures") == []
    (outside / "verification").mkdir(parents=True)
    (outside / "verification" / "keep.json").write_text("{}\n")
    (outside / "README.md").write_text("the victim's README\n")
    verification = dataset / "human_verification"
    shutil.rmtree(verification, ignore_errors=True)
    os.symlink(outside / "verification", verification)
    (dataset / "README.md").unlink()
    os.symlink(outside / "README.md", dataset / "README.md")
    victim = tree(outside)
    argv = ["annotate", "verify", str(study), str(dataset), "--split-name", "sample"]
    assert refused(capsys, *argv) == (
        f"error: {verification}: a link; verify writes only into folders of the dataset itself"
    )
    assert tree(outside) == victim
    verification.unlink()
    assert cli.main(argv) == 0
    assert tree(outside) == victim
    record = json.loads((verification / "intruder-wikipedia.json").read_text())
    assert record["verified_split"] == "sample"
    assert (
        not (dataset / "README.md").is_symlink()
        and "Human verification" in (dataset / "README.md").read_text()
    )


# ------------------------------------------------------------------- an input that changes during the run


@pytest.mark.parametrize("change", ["truncate", "rewrite"])
def test_an_input_changed_while_ingest_text_reads_it_fails_the_run(tmp_path, capsys, monkeypatch, change):
    """The reader alters the file after it read its first lines: before, exit 0 with the sha256 of the original
    file in the summary; now one line naming the file, exit 2, no run summary (the run is not complete)."""
    from incoherent.sources import textfiles

    path = tmp_path / "news.jsonl"
    path.write_bytes(WSJ.read_bytes())
    original = textfiles.json_file_records

    def altering(*args, **kwargs):
        for n, record in enumerate(original(*args, **kwargs)):
            if n == 2:
                data = path.read_bytes()
                if change == "truncate":
                    path.write_bytes(data[: len(data) // 2])
                else:  # the same size, other bytes
                    path.write_bytes(data.replace(b"Vinken", b"Vinkel"))
            yield record

    monkeypatch.setattr(textfiles, "json_file_records", altering)
    out = tmp_path / "OUT"
    err = refused(capsys, "ingest", "text", path, "--out", out, "--runner", "DirectRunner")
    how = f"changed size ({WSJ.stat().st_size:,} -> {WSJ.stat().st_size // 2:,} bytes)"
    assert err == (
        f"error: {path}: {how if change == 'truncate' else 'was written to'} while this run read it; the output "
        "and the input's sha256 would not match, run again once the input is stable"
    )
    assert not (out / "run_summary.json").exists() and not (out / "_inputs").exists()
    monkeypatch.setattr(textfiles, "json_file_records", original)
    assert (
        cli.main(["ingest", "text", str(path), "--out", str(out), "--runner", "DirectRunner"]) == 0
    )  # stable now
    described = json.loads((out / "run_summary.json").read_text())["inputs"]
    assert described[0]["size"] == path.stat().st_size and "_fingerprints" not in described[0]


def test_card_and_verify_wait_for_the_build_of_their_dataset(built, tmp_path, capsys):
    """A card (or annotate verify) written into ``OUT/dataset`` while a build runs on ``OUT`` is refused."""
    out = copy(built, tmp_path / "out")
    lock = safety.OutLock(str(out))  # what a running build holds
    lock.acquire()
    try:
        before = tree(out)
        err = refused(capsys, "card", out / "dataset")
        assert err.startswith(f"error: {out}: another build is running there (pid {os.getpid()} on ")
        err = refused(capsys, "annotate", "verify", tmp_path / "study", out / "dataset")
        assert "another build is running there" in err
        assert tree(out) == before
    finally:
        lock.release()
    assert cli.main(["card", str(out / "dataset")]) == 0  # the build ended: the card is written


# ------------------------------------------------------------------------ no code from the current directory

HOSTILE = ("json", "dis", "inspect", "argparse", "tokenize", "csv", "dataclasses", "typing")


def hostile_folder(path: Path) -> Path:
    """A folder of modules named after the standard library's, each leaving a file when it is imported (what a
    ``dis.py`` left in a download folder does, as a run of arbitrary code)."""
    path.mkdir()
    for name in HOSTILE:
        (path / f"{name}.py").write_text(
            f"open({str(path / ('IMPORTED-' + name))!r}, 'w').close()\nraise SystemExit('hostile {name}.py ran')\n"
        )
    return path


def imported_from(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("IMPORTED-"))


def run_in(folder: Path, argv: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONSAFEPATH", None)
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    "how",
    [
        "python -m incoherent",
        "python -m incoherent.pipelines.cli",
        "console script",
        "multi_processing",  # Beam's SDK workers: subprocesses started with python -m
    ],
)
def test_no_command_imports_from_the_current_directory(tmp_path, how):
    """#53: ``python -m`` (and ``-c``) put the current folder first on ``sys.path``; a ``dis.py`` there was
    imported and run by ``build``'s fork server. Started in a folder of hostile modules, no process imports
    one."""
    folder = hostile_folder(tmp_path / "downloads")
    out = tmp_path / "out"
    starts = {
        "python -m incoherent": [sys.executable, "-m", "incoherent"],
        "python -m incoherent.pipelines.cli": [sys.executable, "-m", "incoherent.pipelines.cli"],
        "console script": [str(Path(sys.executable).parent / "incoherent")],
        "multi_processing": [sys.executable, "-m", "incoherent"],
    }
    argv = [*starts[how], "ingest", "text", str(WSJ), "--out", str(out), "--quiet"]
    if how == "multi_processing":
        argv += ["--direct_running_mode", "multi_processing", "--direct_num_workers", "2"]
    done = run_in(folder, argv)
    assert imported_from(folder) == [], done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((out / "run_summary.json").read_text())["complete"] is True


@pytest.mark.e2e  # a whole build
def test_build_fork_server_and_stages_import_nothing_from_the_current_directory(tmp_path):
    """The case of #53: ``build``'s fork server (``python -c``, Python 3.11 keeps ``''`` on its ``sys.path``)
    preloads Beam and every stage, and stage processes are forked from it."""
    folder = hostile_folder(tmp_path / "downloads")
    config = tmp_path / "wsj.yaml"
    config.write_text(
        (ROOT / "tests" / "data" / "wsj-build.yaml").read_text().replace("base: ../..", f"base: {ROOT}")
    )
    done = run_in(
        folder,
        [sys.executable, "-m", "incoherent", "build", str(config), "--out", str(tmp_path / "b"), "--quiet"],
    )
    assert imported_from(folder) == [], done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
