import io
import json
import tarfile

import pytest

from incoherent.schemas.records import InputError, Rejected
from incoherent.sources.cnn import clean_body, list_inputs, parse_story, stories
from tests.conftest import SAMPLES, read_rows, run_cli

STORY = SAMPLES / "cnn" / "allennlp" / "017d27d00eb43678c15cb4a8dd4723a035323219.story"


def test_dateline_teasers_and_email_furniture_are_removed():
    body = "WASHINGTON (CNN) -- Bush spoke.  Watch the speech »\n\nHe left. E-mail to a friend"
    assert clean_body(body) == ["Bush spoke.", "He left."]
    assert clean_body("Marseille, France (CNN)The prosecutor spoke.") == ["The prosecutor spoke."]
    assert clean_body("(CNN)  -- The NFL said so.") == ["The NFL said so."]


def test_real_story_body_only_without_highlights():
    (doc,) = list(stories(str(STORY)))
    assert doc["id"] == "cnn:017d27d00eb43678c15cb4a8dd4723a035323219"
    assert doc["sentences"][0].startswith("As he awaits a crucial progress report on Iraq")
    text = " ".join(doc["sentences"])
    assert "@highlight" not in text and "E-mail to a friend" not in text and "»" not in text
    assert "(CNN)" not in text


def test_bad_stories_are_rejected_with_reasons():
    assert list(parse_story("a.story", b"\xff\xfe bad", "x/a.story")) == [
        Rejected(
            "not_utf8",
            id="cnn:a",
            source="cnn",
            detail="x/a.story: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
        )
    ]
    (empty,) = parse_story("b.story", b"  \n", "x/b.story")
    assert empty.reason == "empty_story"
    (only_highlights,) = parse_story("c.story", b"\n@highlight\n\nA highlight", "x/c.story")
    assert only_highlights.reason == "empty_body"


def test_archive_is_read_like_a_directory(tmp_path):
    archive = tmp_path / "cnn_stories.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        data = STORY.read_bytes()
        info = tarfile.TarInfo("cnn/stories/" + STORY.name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (doc,) = list(stories(str(archive)))
    assert doc["id"] == "cnn:" + STORY.stem


def test_unusable_inputs_raise_one_clear_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list_inputs([str(tmp_path / "missing")])
    with pytest.raises(InputError, match="holds no .story files"):
        list_inputs([str(tmp_path)])
    broken = tmp_path / "broken.tgz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="unreadable archive"):
        list(stories(str(broken)))


def test_cli_ingests_samples_and_dead_letters_bad_files(tmp_path, capsys):
    stories_dir = tmp_path / "stories"
    stories_dir.mkdir()
    for f in sorted((SAMPLES / "cnn" / "allennlp").glob("*.story"))[:3]:
        (stories_dir / f.name).write_bytes(f.read_bytes())
    (stories_dir / "latin1.story").write_bytes("Caf\xe9 society (CNN) -- text.".encode("latin-1"))
    (stories_dir / "empty.story").write_bytes(b"")
    out = tmp_path / "out"
    assert run_cli("ingest", "cnn", stories_dir, "--out", out) == 0
    docs = read_rows(out, "documents-cnn")
    assert [d["id"] for d in docs] == sorted(d["id"] for d in docs) and len(docs) == 3
    rejected = read_rows(out, "rejected/ingest-cnn")
    assert sorted(r["reason"] for r in rejected) == ["empty_story", "not_utf8"]
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["counters"]["ingest-cnn"] == {"empty_story": 1, "kept": 3, "not_utf8": 1}
    assert summary["outputs"]["documents-cnn"] == {"documents": 3}


def test_cli_missing_path_is_one_line_error(tmp_path, capsys):
    assert run_cli("ingest", "cnn", tmp_path / "nope", "--out", tmp_path / "o") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'nope'}: no such file or directory"]


def test_a_file_of_another_kind_is_refused(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(InputError, match=r"notes.txt: unsupported file type \(expected a .story file"):
        list_inputs([str(other)])
