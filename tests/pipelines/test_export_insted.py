"""``incoherent export insted``: the released INSteD JSONL format."""

from __future__ import annotations

import json
import os

from incoherent.pipelines.export_insted import insted_record, original_sentences
from incoherent.pipelines.runtime.tables import write_shard
from incoherent.schemas import INTRUDER_SCHEMA
from tests.conftest import run_cli


def row(doc_id, source, split, sentences, index=-1, original=None):
    base = {name: None for name in INTRUDER_SCHEMA.names}
    base.update(id=doc_id, source=source, split=split, title=None, sentences=sentences, num_candidates=0)
    base.update(label=int(index >= 0), intruder_index=index)
    if index >= 0:
        base.update(original_sentence=original, intruder_sentence=sentences[index], intruder_source_id="x:1")
    return base


ROWS = {
    "wikipedia": [
        row("wikipedia:2", "wikipedia", "test", ["A.", "Intruder.", "C."], 1, "B."),
        row("wikipedia:1", "wikipedia", "train", ["One.", "Two.", "Three."]),
    ],
    "cnn": [row("cnn:f", "cnn", "validation", ["X.", "Y.", "Z.", "W."], 3, "Q.")],
}


def write_dataset(directory):
    for source, rows in ROWS.items():
        for split in {r["split"] for r in rows}:
            path = os.path.join(directory, f"intruder-{source}", f"{split}-00000-of-00001.parquet")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_shard(path, INTRUDER_SCHEMA, [r for r in rows if r["split"] == split])


def test_record_matches_the_released_field_types():
    record = insted_record(ROWS["wikipedia"][0], 7, with_id=False)
    assert record == {
        "file_id": 7, "ctx": "A. B. C.", "to_be_replaced": "B.", "replace_with": "Intruder.",
        "sen_position": 1, "train": 0,
    }  # fmt: skip
    coherent = insted_record(ROWS["wikipedia"][1], 8)
    assert (
        coherent["sen_position"] == -1 and coherent["to_be_replaced"] == "" and coherent["replace_with"] == ""
    )
    assert (
        coherent["train"] == 1 and coherent["ctx"] == "One. Two. Three." and coherent["id"] == "wikipedia:1"
    )
    assert original_sentences(ROWS["cnn"][0]) == ["X.", "Y.", "Z.", "Q."]


def test_export_writes_one_line_per_document(tmp_path, capsys):
    write_dataset(tmp_path / "data")
    out = tmp_path / "insted.jsonl"
    assert run_cli("export", "insted", tmp_path / "data", "--out", out, beam=[]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["cnn:f", "wikipedia:1", "wikipedia:2"]
    assert [r["file_id"] for r in records] == [0, 1, 2]
    assert [(r["sen_position"], r["train"]) for r in records] == [(3, 1), (-1, 1), (1, 0)]
    for r in records:
        assert (
            isinstance(r["file_id"], int) and isinstance(r["ctx"], str) and isinstance(r["sen_position"], int)
        )
        if r["sen_position"] >= 0:  # applying the replacement to ctx gives the document with the intruder
            assert r["to_be_replaced"] in r["ctx"]
    assert "3 documents (2 with an intruder" in capsys.readouterr().out
    assert (
        run_cli("export", "insted", tmp_path / "data", "--out", out, beam=[]) == 2
    )  # exists: needs --overwrite
    assert run_cli("export", "insted", tmp_path / "data", "--out", out, "--overwrite", "--source", "cnn",
                   "--validation-as-test", "--no-id", beam=[]) == 0  # fmt: skip
    (only,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert only["train"] == 0 and "id" not in only and only["replace_with"] == "W."


def test_overwrite_replaces_only_an_earlier_export(tmp_path, capsys):
    """A user's file (INSteD's own release has this very format), a link, or an export edited since is never
    replaced, even with ``--overwrite``."""
    write_dataset(tmp_path / "data")
    released, link, victim = tmp_path / "official.jsonl", tmp_path / "link.jsonl", tmp_path / "victim"
    released.write_text('{"file_id": 0, "ctx": "A.", "to_be_replaced": "", "replace_with": "", '
                        '"sen_position": -1, "train": 0}\n')  # fmt: skip
    victim.write_text("keep\n")
    link.symlink_to(victim)
    kept = released.read_bytes()
    for target in (released, link):
        assert run_cli("export", "insted", tmp_path / "data", "--out", target, "--overwrite", beam=[]) == 2
        err = capsys.readouterr().err
        assert "not an earlier output of `incoherent export insted`" in err and len(err.splitlines()) == 1
    assert released.read_bytes() == kept and victim.read_text() == "keep\n" and link.is_symlink()
    out = tmp_path / "mine.jsonl"
    assert run_cli("export", "insted", tmp_path / "data", "--out", out, beam=[]) == 0
    assert run_cli("export", "insted", tmp_path / "data", "--out", out, "--overwrite", beam=[]) == 0
    out.write_text(out.read_text()[:-1])  # edited since
    assert run_cli("export", "insted", tmp_path / "data", "--out", out, "--overwrite", beam=[]) == 2
    assert "(or changed since)" in capsys.readouterr().err


def test_export_of_a_directory_without_intruder_tables_is_an_input_error(tmp_path, capsys):
    os.makedirs(tmp_path / "empty")
    assert run_cli("export", "insted", tmp_path / "empty", "--out", tmp_path / "x.jsonl", beam=[]) == 2
    assert "no intruder-*" in capsys.readouterr().err
