"""Direct tests of :mod:`pipelines.build.resume` (fingerprints, completeness, partial outputs)."""

from __future__ import annotations

import os

from incoherent.pipelines.build import resume
from incoherent.pipelines.runtime import summary


def test_file_fingerprints_cover_files_under_folders_sorted(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "b.txt").write_text("bb")
    (tmp_path / "d" / "a.txt").write_text("a")
    (tmp_path / "f.txt").write_text("fff")
    found = resume.file_fingerprints(
        [str(tmp_path / "f.txt"), str(tmp_path / "d"), str(tmp_path / "missing")]
    )
    assert list(found) == sorted(found)
    assert {os.path.relpath(p, tmp_path): size for p, (size, _mtime) in found.items()} == {
        "d/a.txt": 1,
        "d/sub/b.txt": 2,
        "f.txt": 3,
    }


def test_fingerprint_changes_with_argv_inputs_and_upstream():
    base = resume.fingerprint(["index", "docs"], {"docs/a": [1, 2]}, ["up"])
    assert base == resume.fingerprint(["index", "docs"], {"docs/a": [1, 2]}, ["up"])
    assert base != resume.fingerprint(["index", "docs", "--k", "5"], {"docs/a": [1, 2]}, ["up"])
    assert base != resume.fingerprint(["index", "docs"], {"docs/a": [1, 3]}, ["up"])
    assert base != resume.fingerprint(["index", "docs"], {"docs/a": [1, 2]}, ["other"])


def test_a_stage_is_finished_only_with_its_fingerprint_and_a_complete_summary(tmp_path):
    out = tmp_path / "stage"
    out.mkdir()
    assert not resume.run_complete(str(out))
    (out / summary.SUMMARY_FILE).write_text("{not json")
    assert not resume.run_complete(str(out))
    summary.write_json_atomic(str(out / summary.SUMMARY_FILE), {"complete": False})
    assert not resume.run_complete(str(out))
    summary.write_json_atomic(str(out / summary.SUMMARY_FILE), {"complete": True})
    assert resume.is_finished({"fingerprint": "f"}, "f", str(out))
    assert not resume.is_finished({"fingerprint": "g"}, "f", str(out))
    assert not resume.is_finished(None, "f", str(out))


def test_partial_output_is_published_by_a_rename_and_cleaned(tmp_path):
    out = str(tmp_path / "stage")
    os.makedirs(out + summary.PARTIAL)
    with open(os.path.join(out + summary.PARTIAL, "x"), "w") as f:
        f.write("x")
    resume.publish(out)
    assert os.listdir(out) == ["x"] and not os.path.exists(out + summary.PARTIAL)
    os.makedirs(out + summary.PARTIAL)
    resume.clean(out)
    assert not os.path.exists(out) and not os.path.exists(out + summary.PARTIAL)
    resume.clean(out)  # nothing there: nothing to do
