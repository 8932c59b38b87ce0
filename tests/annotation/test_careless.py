"""Every `annotate` command as a careless user and a hostile input would use it: wrong paths, links, files
instead of folders, a folder of the user's own, results files as spreadsheets leave them. Each case is one line
and exit 2 (or a counted record), and nothing outside ``--out`` changes: inputs are hashed before and after."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import warnings
from pathlib import Path

import pytest

from tests.annotation.test_annotate import cli, mturk_results
from tests.annotation.test_study_inputs import dataset, export, one_line_error  # noqa: F401 (fixture)


def tree(path: Path) -> str:
    """A hash of every name, link target and byte under ``path`` (links are not followed)."""
    digest = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            full = os.path.join(root, name)
            digest.update(full.encode())
            digest.update(os.readlink(full).encode() if os.path.islink(full) else Path(full).read_bytes())
    return digest.hexdigest()


def refused(capsys, *args) -> str:
    capsys.readouterr()
    assert cli(*args) == 2
    return one_line_error(capsys)


@pytest.fixture
def tasks(dataset, tmp_path) -> tuple[Path, dict]:  # noqa: F811
    folder = tmp_path / "tasks"
    return folder, export(dataset, folder, "--documents", "6")


def imported(folder: Path, key: dict, tmp_path: Path) -> Path:
    """``TMP/r.csv``, MTurk results of three workers on the export, imported into ``TMP/study``; returns it."""
    (tmp_path / "r.csv").write_text(mturk_results(folder, ["ann", "ben", "cat"], key))
    study = tmp_path / "study"
    assert cli("annotate", "import", tmp_path / "r.csv", "--format", "mturk", "--key", folder,
               "--out", study) == 0  # fmt: skip
    return study


def export_args(dataset: Path, out: Path) -> list:  # noqa: F811
    return ["annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
            "--documents", "6", "--per-task", "4", "--out", out]  # fmt: skip


def test_export_overwrite_replaces_only_an_export(dataset, tmp_path, capsys):  # noqa: F811
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "key.json").write_text("my own notes\n")
    (mine / "tasks.json").write_text('{"mine": true}\n')
    before, data = tree(mine), tree(dataset)
    err = refused(capsys, *export_args(dataset, mine), "--overwrite")
    assert "not a folder `annotate export` wrote" in err
    assert tree(mine) == before and tree(dataset) == data
    assert cli(*export_args(dataset, tmp_path / "ours")) == 0  # an export's own folder is replaced
    assert cli(*export_args(dataset, tmp_path / "ours"), "--overwrite") == 0
    # an import folder holds a copy of the key: still not an export's folder
    (tmp_path / "r.csv").write_text(
        mturk_results(tmp_path / "ours", ["ann"], json.loads((tmp_path / "ours" / "key.json").read_text()))
    )
    study = tmp_path / "study"
    assert cli("annotate", "import", tmp_path / "r.csv", "--format", "mturk", "--key", tmp_path / "ours",
               "--out", study) == 0  # fmt: skip
    before = tree(study)
    err = refused(capsys, *export_args(dataset, study), "--overwrite", "--seed", "7")
    assert "not a folder `annotate export` wrote" in err and tree(study) == before


def test_export_never_writes_through_links(dataset, tmp_path, capsys):  # noqa: F811
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / "link"
    link.symlink_to(outside)
    err = refused(capsys, *export_args(dataset, link))
    assert "a link; --out must be a real folder" in err
    assert list(outside.iterdir()) == []
    # a linked sub-folder of an earlier export is replaced by a real folder
    ours = tmp_path / "ours"
    assert cli(*export_args(dataset, ours)) == 0
    for sub in ("mturk", "labelstudio"):
        for f in (ours / sub).iterdir():
            f.unlink()
        (ours / sub).rmdir()
        (ours / sub).symlink_to(outside)
    assert cli(*export_args(dataset, ours), "--overwrite") == 0
    assert list(outside.iterdir()) == []
    assert not (ours / "mturk").is_symlink() and (ours / "mturk" / "input.csv").is_file()


def test_export_paths_below_a_file_and_leaked_key(dataset, tmp_path, capsys):  # noqa: F811
    afile = tmp_path / "afile"
    afile.write_text("x")
    err = refused(capsys, *export_args(dataset, afile / "sub"))
    assert "is a file, not a directory" in err and afile.read_text() == "x"
    ours = tmp_path / "ours"
    assert cli(*export_args(dataset, ours)) == 0
    err = refused(capsys, *export_args(dataset, tmp_path / "t2"), "--instructions", ours / "key.json")
    assert "is the key of an export" in err
    assert not (tmp_path / "t2").exists()


def test_import_out_is_never_a_link(tasks, tmp_path, capsys):
    folder, key = tasks
    (tmp_path / "r.csv").write_text(mturk_results(folder, ["ann", "ben"], key))
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside)
    err = refused(capsys, "annotate", "import", tmp_path / "r.csv", "--format", "mturk", "--key", folder,
                  "--out", tmp_path / "link")  # fmt: skip
    assert "a link" in err and list(outside.iterdir()) == []


def rewrite(text: str, change) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(change(rows))
    return out.getvalue()


def test_results_as_spreadsheets_leave_them(tasks, tmp_path, capsys):
    folder, key = tasks
    good = mturk_results(folder, ["ann", "ben", "cat"], key)
    inputs = tree(folder)
    imp = ["annotate", "import", "--format", "mturk", "--key", folder, "--out"]
    # BOM and CRLF: every answer kept
    (tmp_path / "bom.csv").write_text("\ufeff" + good.replace("\n", "\r\n"), newline="")
    capsys.readouterr()
    assert cli(*imp, tmp_path / "s_bom", tmp_path / "bom.csv") == 0
    kept = len((tmp_path / "s_bom" / "answers.jsonl").read_text().splitlines())
    assert kept == sum(len(t) for t in key["tasks"].values()) * 3
    # a torn row (fewer cells than the header) is one counted record, not a traceback
    end = good.splitlines()[0].split(",").index("Input.export_id") + 1

    def torn(rows):
        return [rows[0], rows[1][:end], *rows[2:]]

    (tmp_path / "torn.csv").write_text(rewrite(good, torn))
    capsys.readouterr()
    assert cli(*imp, tmp_path / "s_torn", tmp_path / "torn.csv") == 0
    assert json.loads((tmp_path / "s_torn" / "import.json").read_text())["rejected"] == {"bad_record": 1}
    # a column named twice: refused, not the last one silently read
    (tmp_path / "twice.csv").write_text(rewrite(good, lambda rows: [r + [r[-2]] for r in rows]))
    err = refused(capsys, *imp, tmp_path / "s_twice", tmp_path / "twice.csv")
    assert "columns named twice in the header: Answer.answer_" in err
    assert not (tmp_path / "s_twice").exists()
    # the same file twice (or a row pasted twice): review lists every assignment once
    assert cli(*imp, tmp_path / "s_dup", tmp_path / "bom.csv", tmp_path / "bom.csv") == 0
    assert cli("annotate", "review", tmp_path / "s_dup", "--out", tmp_path / "rev.csv") == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rev.csv").read_text())))
    assert len(rows) == len({r["AssignmentId"] for r in rows}) == len(good.splitlines()) - 1
    # results without AssignmentId: review refuses (it would reject every assignment)
    (tmp_path / "noid.csv").write_text(
        rewrite(good, lambda rows: [r[:1] + r[2:] for r in rows])  # AssignmentId is the 2nd column
    )
    assert cli(*imp, tmp_path / "s_noid", tmp_path / "noid.csv") == 0
    err = refused(capsys, "annotate", "review", tmp_path / "s_noid", "--out", tmp_path / "noid-rev.csv")
    assert "no AssignmentId column" in err and not (tmp_path / "noid-rev.csv").exists()
    assert tree(folder) == inputs


def test_lab_line_without_export_id_is_counted(tasks, tmp_path, capsys):
    folder, key = tasks
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "x.jsonl").write_text('{"task_id": "t1", "answer": 2}\n')
    err = refused(capsys, "annotate", "import", answers, "--format", "lab", "--key", folder,
                  "--out", tmp_path / "s")  # fmt: skip
    assert "no answers kept (bad_record: 1)" in err


def test_inputs_that_never_end(tasks, tmp_path, capsys):
    folder, key = tasks
    study = imported(folder, key, tmp_path)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for fmt in ("lab", "mturk", "labelstudio"):
        err = refused(capsys, "annotate", "import", fifo, "--format", fmt, "--key", folder,
                      "--out", tmp_path / "s")  # fmt: skip
        assert "not a regular file" in err
    for hostile in ("/dev/zero", fifo):
        err = refused(capsys, "annotate", "report", study, "--min-agreement", "2", "--predictions", hostile)
        assert "not a regular file" in err
    # a file where a study folder is expected
    err = refused(capsys, "annotate", "report", tmp_path / "r.csv")
    assert "no such file" in err


def test_report_replaces_a_linked_figures_folder(tasks, tmp_path, capsys):
    folder, key = tasks
    study = imported(folder, key, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (study / "figures").symlink_to(outside)
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    assert list(outside.iterdir()) == []
    assert not (study / "figures").is_symlink() and (study / "figures" / "gold_agreement.png").is_file()


def test_review_and_release_out_files(tasks, tmp_path, capsys):
    folder, key = tasks
    study = imported(folder, key, tmp_path)
    inputs = tree(folder)
    for command in ("review", "release"):
        for target in (folder / "key.json", folder / "mturk" / "input.csv"):  # the export's files
            err = refused(capsys, "annotate", command, study, "--out", target, "--overwrite")
            assert "(an export or an import); write elsewhere" in err
        err = refused(capsys, "annotate", command, study, "--out", tmp_path / "r.csv" / "out.csv")
        assert "is a file, not a directory" in err
    assert tree(folder) == inputs
    assert (tmp_path / "r.csv").is_file()


def test_review_and_release_overwrite_replace_only_their_own_output(tasks, tmp_path, capsys):
    """``--overwrite`` replaces the command's own earlier output, unchanged since, and nothing else: not the
    MTurk batch CSV the study was imported from, not a user's notes, not the other command's file."""
    folder, key = tasks
    study = imported(folder, key, tmp_path)
    batch, notes = tmp_path / "r.csv", tmp_path / "notes.txt"
    notes.write_text("my own notes\n")
    before = batch.read_bytes()
    for command, target in (("review", batch), ("release", notes), ("review", notes)):
        err = refused(capsys, "annotate", command, study, "--out", target, "--overwrite")
        assert f"not an earlier output of `incoherent annotate {command}`" in err, err
    assert batch.read_bytes() == before and notes.read_text() == "my own notes\n"
    for command, name in (("review", "rev.csv"), ("release", "rel.jsonl")):
        out = tmp_path / name
        assert cli("annotate", command, study, "--out", out) == 0
        assert "exists (pass --overwrite" in refused(capsys, "annotate", command, study, "--out", out)
        assert cli("annotate", command, study, "--out", out, "--overwrite") == 0  # its own: replaced
        other = "release" if command == "review" else "review"
        err = refused(capsys, "annotate", other, study, "--out", out, "--overwrite")
        assert f"not an earlier output of `incoherent annotate {other}`" in err
        out.write_text(out.read_text() + "edited by hand\n")  # changed since: the user's now
        err = refused(capsys, "annotate", command, study, "--out", out, "--overwrite")
        assert "(or changed since)" in err and out.read_text().endswith("edited by hand\n")


def test_study_files_of_another_shape(dataset, tasks, tmp_path, capsys):  # noqa: F811
    """A folder import never wrote, or its files edited by hand: one line from every command, never a
    traceback; the dataset is untouched."""
    folder, key = tasks
    study = imported(folder, key, tmp_path)
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    data = tree(dataset)
    report = (study / "report.json").read_text()
    for bad in ("[1, 2]", '{"items": 5}', '{"items": {"x": {"kept": true}}}'):
        (study / "report.json").write_text(bad)
        err = refused(capsys, "annotate", "verify", study, dataset)
        assert "not a report of `annotate report`" in err
    (study / "report.json").write_text(report)
    err = refused(capsys, "annotate", "verify", study, dataset, "--split-name", "")
    assert "--split-name: '' must be" in err
    assert tree(dataset) == data
    marker = (study / "import.json").read_text()
    for bad in ("[]", "{}"):  # no marker of an import: not a study folder
        (study / "import.json").write_text(bad)
        for command in (["report", study], ["verify", study, dataset], ["release", study, "--out", tmp_path / "x"],
                        ["review", study, "--out", tmp_path / "x.csv"]):  # fmt: skip
            err = refused(capsys, "annotate", *command)
            assert "not an `annotate import` folder" in err
    summary = json.loads(marker)
    summary["max_control_errors"] = "half"
    (study / "import.json").write_text(json.dumps(summary))
    err = refused(capsys, "annotate", "review", study, "--out", tmp_path / "x.csv")
    assert "not what `annotate import` wrote" in err
    (study / "import.json").write_text(marker)
    for bad in ('{"format": "incoherent.annotation.key"}', "[1]"):
        (study / "key.json").write_text(bad)
        err = refused(capsys, "annotate", "report", study, "--min-agreement", "2")
        assert "not the key of an `annotate export`" in err
        (tmp_path / "k.json").write_text(bad)
        err = refused(capsys, "annotate", "import", tmp_path / "r.csv", "--format", "mturk",
                      "--key", tmp_path / "k.json", "--out", tmp_path / "s2")  # fmt: skip
        assert "not the key of an `annotate export`" in err and not (tmp_path / "s2").exists()
    assert tree(dataset) == data and not (tmp_path / "x").exists() and not (tmp_path / "x.csv").exists()


def test_undefined_kappa_is_quiet(tmp_path, capsys):
    """Two annotators who agree on the only label: κ is undefined, reported as "-", with no warning text."""
    (tmp_path / "a.jsonl").write_text('{"file_id": 1, "gold": "3", "annoated": ["3", "3"]}\n')
    assert cli("annotate", "import", tmp_path / "a.jsonl", "--format", "insted", "--out", tmp_path / "s") == 0
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli("annotate", "report", tmp_path / "s", "--min-agreement", "2") == 0
    assert [str(w.message) for w in caught] == [] and capsys.readouterr().err == ""
    assert json.loads((tmp_path / "s" / "report.json").read_text())["cohen_kappa"] is None


def test_export_numbers_out_of_reach(dataset, tmp_path, capsys):  # noqa: F811
    pairs = ["annotate", "export", dataset, "--config", "shuffle-wikipedia", "--out", tmp_path / "p"]
    for sizes in (["0"], ["1", "99"]):  # a block size the split does not hold is not silently left out
        err = refused(capsys, *pairs, "--block-sizes", *sizes)
        assert err.startswith("error: --block-sizes: ") and "not in split 'test'" in err
    err = refused(capsys, *export_args(dataset, tmp_path / "w"), "--workers", "1000000000")
    assert "--workers: must be 1..100" in err
    assert not (tmp_path / "p").exists() and not (tmp_path / "w").exists()


def test_many_failing_workers_and_a_huge_file(tasks, tmp_path, capsys):
    folder, key = tasks
    spam = mturk_results(folder, ["spam"], key)

    def crowd(rows):  # 12 spam workers, each on every task
        out = [rows[0]]
        for n in range(12):
            out += [[c.replace("spam", f"spam{n:02d}") for c in row] for row in rows[1:]]
        return out

    (tmp_path / "r.csv").write_text(rewrite(spam, crowd))
    capsys.readouterr()
    assert cli("annotate", "import", tmp_path / "r.csv", "--format", "mturk", "--key", folder,
               "--out", tmp_path / "s") == 0  # fmt: skip
    line = [x for x in capsys.readouterr().out.splitlines() if "control errors" in x][0]
    assert "spam09 and 2 more, listed in import.json)" in line and "spam10" not in line
    assert len(json.loads((tmp_path / "s" / "import.json").read_text())["failing_workers"]) == 12
    huge = tmp_path / "huge.csv"
    with open(huge, "wb") as f:  # sparse: no disk used
        f.truncate((256 << 20) + 1)
    err = refused(capsys, "annotate", "import", huge, "--format", "mturk", "--key", folder,
                  "--out", tmp_path / "s2")  # fmt: skip
    assert "larger than 256 MiB" in err


def test_serve_answers_never_into_the_export_or_a_build(tasks, tmp_path):
    """Answers hold annotators' names: never beside the key, nor in a build whose dataset is published."""
    import subprocess
    import sys

    folder, _ = tasks
    build = tmp_path / "out"
    (build / "dataset").mkdir(parents=True)
    (build / ".incoherent-build.json").write_text("{}\n")
    inputs = tree(folder)
    for answers, why in (
        (folder, "is or holds the export folder's files"),
        (build / "dataset", "inside the build"),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "incoherent.pipelines.cli", "annotate", "serve", folder, "--port", "0", "--answers", answers],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()},
        )  # fmt: skip
        err = [x for x in run.stderr.splitlines() if not x.startswith("<frozen")]
        assert run.returncode == 2 and len(err) == 1 and why in err[0], run.stderr
    assert tree(folder) == inputs and list((build / "dataset").iterdir()) == []


def test_empty_out(dataset, tasks, tmp_path, capsys, monkeypatch):  # noqa: F811
    folder, key = tasks
    imported(folder, key, tmp_path)
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    for command in (
        export_args(dataset, ""),
        ["annotate", "import", tmp_path / "r.csv", "--format", "mturk", "--key", folder, "--out", ""],
        ["annotate", "release", tmp_path / "study", "--out", ""],
        ["annotate", "review", tmp_path / "study", "--out", ""],
    ):
        assert "--out: an empty path" in refused(capsys, *command)
    assert tree(tmp_path) == before


def test_a_folder_where_a_file_goes(dataset, tasks, tmp_path, capsys):  # noqa: F811
    folder, key = tasks
    (tmp_path / "r.csv").write_text(mturk_results(folder, ["ann", "ben", "cat"], key))
    study = tmp_path / "study"
    imp = ["annotate", "import", tmp_path / "r.csv", "--format", "mturk", "--key", folder, "--out", study]
    assert cli(*imp) == 0
    (study / "report.json").mkdir()
    assert "report.json: a folder where a file goes" in refused(capsys, "annotate", "report", study,
                                                                "--min-agreement", "2")  # fmt: skip
    (study / "report.json").rmdir()
    (study / "figures").write_text("mine")
    assert "figures: a file where a folder goes" in refused(capsys, "annotate", "report", study,
                                                            "--min-agreement", "2")  # fmt: skip
    assert (study / "figures").read_text() == "mine" and not (study / "report.json").exists()
    (study / "answers.jsonl").unlink()
    (study / "answers.jsonl").mkdir()
    before = tree(study)
    assert "answers.jsonl: a folder where a file goes" in refused(capsys, *imp, "--overwrite")
    assert tree(study) == before
    ours = tmp_path / "ours"
    assert cli(*export_args(dataset, ours)) == 0
    (ours / "tasks.json").unlink()
    (ours / "tasks.json").mkdir()
    before = tree(ours)
    assert "tasks.json: a folder where a file goes" in refused(
        capsys, *export_args(dataset, ours), "--overwrite"
    )
    assert tree(ours) == before


def test_verify_writes_all_or_nothing(dataset, tasks, tmp_path, capsys):  # noqa: F811
    folder, key = tasks
    study = imported(folder, key, tmp_path)
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    answers = dataset / "human_verification" / "intruder-wikipedia-answers.jsonl"
    answers.mkdir(parents=True)
    before = tree(dataset)
    err = refused(capsys, "annotate", "verify", study, dataset)
    assert "intruder-wikipedia-answers.jsonl: a folder where a file goes" in err
    assert tree(dataset) == before  # no split written before the refusal
    answers.rmdir()
    (dataset / "human_verification").rmdir()
    (dataset / "human_verification").write_text("mine")
    before = tree(dataset)
    assert "human_verification" in refused(capsys, "annotate", "verify", study, dataset)
    assert tree(dataset) == before
