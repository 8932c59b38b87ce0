"""``incoherent probes``: end to end on the sample build and on a JSONL in INSteD's released format, the
run summary and dead letters, determinism, sampling, bad input; ``evaluate`` on a probes folder (INSteD's
Table 7), ``annotate export`` of a probe config and the card's probes section."""

from __future__ import annotations

import json
import os

import pytest

from incoherent.corpora.probes import PHENOMENA
from incoherent.corpora.probes.edits import Edit, apply_edits
from incoherent.pipelines.export_insted import original_sentences
from incoherent.sources.sentences import split_sentences
from tests.conftest import MULTI_PROCESS, ROOT, file_bytes, read_rows, run_cli
from tests.sample_build import wikipedia_build
from tests.tiny_model import tiny_base_dir, tiny_data_dir, write_intruder_build  # noqa: F401

RELEASED_KEYS = ["ctx", "replace_with", "to_be_replaced", "train", "file_id", "sen_position"]  # as released


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return wikipedia_build(tmp_path_factory)


def insted_jsonl(path, extra_lines=()) -> list[dict]:
    """A JSONL in INSteD's released format (its key order, no extra fields) made like INSteD's data from real
    text: the WSJ sample documents (``samples/wsj``), one in two of them with a non-opening sentence replaced
    by a non-opening sentence of another document; ``train`` alternates."""
    docs = []
    with open(ROOT / "samples" / "wsj" / "wsj.jsonl", encoding="utf-8") as f:
        for line in f:
            sentences = split_sentences(json.loads(line)["text"])[:8]
            if len(sentences) >= 3:
                docs.append(sentences)
    records = []
    for n, sentences in enumerate(docs):
        donor = docs[(n * 7 + 3) % len(docs)]
        position = 1 + n % (len(sentences) - 1)
        incoherent = n % 4 != 0
        values = {
            "ctx": " ".join(sentences),
            "replace_with": donor[1 + n % (len(donor) - 1)] if incoherent else "",
            "to_be_replaced": sentences[position] if incoherent else "",
            "train": n % 2,
            "file_id": 1000 + n,
            "sen_position": position if incoherent else -1,
        }
        records.append({k: values[k] for k in RELEASED_KEYS})
    lines = [json.dumps(r, ensure_ascii=False) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return records


def summary_of(out) -> dict:
    return json.loads((out / "run_summary.json").read_text())


def jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_probes_of_the_sample_build(build, tmp_path, capsys):
    dataset, out = build / "dataset", tmp_path / "probes"
    assert run_cli("probes", dataset, "--out", out, "--split", "train") == 0
    sources = {r["id"]: r for r in read_rows(dataset, "intruder-wikipedia") if r["split"] == "train"}
    incoherent = [r for r in sources.values() if r["intruder_index"] > 0]
    summary = summary_of(out)
    counters = summary["counters"]["probes"]
    assert counters["incoherent"] == len(incoherent) and counters["coherent"] == len(sources) - len(
        incoherent
    )
    assert summary["complete"] and summary["tagger"]["held_out"]["accuracy"] > 0.9
    # export insted numbers the build's documents: probes keep that file_id
    assert run_cli("export", "insted", dataset, "--out", tmp_path / "all.jsonl", beam=[]) == 0
    file_ids = {r["id"]: r["file_id"] for r in jsonl(tmp_path / "all.jsonl")}
    written = 0
    for phenomenon in PHENOMENA:
        rows = read_rows(out, f"probe-{phenomenon}")
        counts = summary["probes"][phenomenon]
        assert counts["probes"] == counts["with_site"] == len(rows) == counters.get(f"probed/{phenomenon}", 0)
        assert counts["with_site"] + counts["no_site"] == len(incoherent)  # every document: probed or counted
        records = jsonl(out / "insted" / f"{phenomenon}.jsonl")
        assert [r["id"] for r in records] == sorted((r["id"] for r in rows), key=file_ids.get)
        for row, record in zip(sorted(rows, key=lambda r: file_ids[r["id"]]), records, strict=True):
            source = sources[row["id"]]
            index = source["intruder_index"]
            assert row["phenomenon"] == phenomenon and row["intruder_index"] == index and row["label"] == 1
            assert row["intruder_sentence"] == source["intruder_sentence"] == source["sentences"][index]
            edits = [Edit(**e) for e in row["edits"]]
            assert (
                apply_edits(row["intruder_sentence"], edits)
                == row["probed_sentence"]
                != row["intruder_sentence"]
            )
            # everything but the intruder sentence is the source's, byte for byte
            assert row["sentences"][:index] == source["sentences"][:index]
            assert row["sentences"][index + 1 :] == source["sentences"][index + 1 :]
            assert row["sentences"][index] == row["probed_sentence"]
            assert (
                row["file_id"] == record["file_id"] == file_ids[row["id"]] and row["source_id"] == row["id"]
            )
            assert record["ctx"] == " ".join(original_sentences(source))
            assert record["replace_with"] == row["probed_sentence"] and record["phenomenon"] == phenomenon
            assert record["original_replace_with"] == source["intruder_sentence"]
            assert (record["to_be_replaced"], record["sen_position"], record["train"]) == (
                source["original_sentence"], index, 1
            )  # fmt: skip
        written += len(rows)
    assert written > 0
    assert "phenomenon" in capsys.readouterr().out


def test_every_phenomenon_yields_probes_on_an_insted_jsonl(tmp_path):
    data = tmp_path / "official_wsj.jsonl"
    bad = ['{"file_id": 1, "ctx": "A."}', "not json", '{"ctx": "A. B.", "replace_with": "X.", "to_be_replaced": '
           '"Q.", "train": 0, "file_id": 7, "sen_position": 1}']  # fmt: skip
    records = insted_jsonl(data, bad)
    out = tmp_path / "probes"
    assert run_cli("probes", data, "--out", out, "--split", "train") == 0
    summary = summary_of(out)
    for phenomenon in PHENOMENA:
        assert summary["probes"][phenomenon]["probes"] > 0, phenomenon
    by_file_id = {r["file_id"]: r for r in records}
    for phenomenon in PHENOMENA:
        for record in jsonl(out / "insted" / f"{phenomenon}.jsonl"):
            source = by_file_id[record["file_id"]]  # file_id of the input kept
            assert (
                record["id"] == f"official_wsj:{record['file_id']}"
                and record["train"] == source["train"] == 1
            )
            assert (record["ctx"], record["to_be_replaced"], record["sen_position"]) == (
                source["ctx"], source["to_be_replaced"], source["sen_position"]
            )  # fmt: skip
            assert record["original_replace_with"] == source["replace_with"] != record["replace_with"]
            assert set(RELEASED_KEYS) <= set(record)
    counters = summary["counters"]["probes"]
    assert counters["bad_json"] == 1 and counters["not_insted_format"] == 1
    # a record whose to_be_replaced is not sentence sen_position of ctx as we split it is dead-lettered
    mismatched = [
        json.loads(r["record"])
        for r in read_rows(out, "rejected/probes")
        if r["reason"] == "sentence_mismatch"
    ]
    assert len(mismatched) == counters["sentence_mismatch"] >= 1
    for record in mismatched:
        sentences = split_sentences(record["ctx"])
        assert (
            record["sen_position"] >= len(sentences)
            or sentences[record["sen_position"]] != record["to_be_replaced"]
        )
    rejected = read_rows(out, "rejected/probes")
    assert sorted(r["reason"] for r in rejected).count("bad_json") == 1
    assert any("official_wsj.jsonl:" in (r["detail"] or "") for r in rejected)


@pytest.mark.e2e
def test_same_input_and_seed_give_the_same_bytes_on_any_runner(build, tmp_path):
    data = tmp_path / "insted.jsonl"
    insted_jsonl(data)
    args = [data, build / "dataset", "--split", "test", "--per-phenomenon", "3", "--seed", "5"]
    assert run_cli("probes", *args, "--out", tmp_path / "a") == 0
    assert run_cli("probes", *args, "--out", tmp_path / "b", beam=MULTI_PROCESS) == 0
    assert file_bytes(tmp_path / "a") == file_bytes(tmp_path / "b") and file_bytes(tmp_path / "a")
    for phenomenon in PHENOMENA:
        a = (tmp_path / "a" / "insted" / f"{phenomenon}.jsonl").read_bytes()
        assert a == (tmp_path / "b" / "insted" / f"{phenomenon}.jsonl").read_bytes()
        assert len(a.splitlines()) <= 3


@pytest.mark.e2e
def test_per_phenomenon_keeps_a_stable_sample_by_seed(tmp_path):
    data = tmp_path / "insted.jsonl"
    insted_jsonl(data)
    ids = {}
    for name, seed in (("s0", 0), ("s0-again", 0), ("s1", 1)):
        assert run_cli("probes", data, "--out", tmp_path / name, "--phenomena", "negation", "past-to-future",
                       "--per-phenomenon", "5", "--seed", seed, "--split", "train") == 0  # fmt: skip
        ids[name] = {
            p: [r["id"] for r in read_rows(tmp_path / name, f"probe-{p}")]
            for p in ("negation", "past-to-future")
        }
        assert sorted(os.listdir(tmp_path / name / "insted")) == ["negation.jsonl", "past-to-future.jsonl"]
        summary = summary_of(tmp_path / name)
        assert summary["probes"]["negation"]["probes"] == 5 < summary["probes"]["negation"]["with_site"]
    assert ids["s0"] == ids["s0-again"] and ids["s0"] != ids["s1"]
    assert all(len(v) == 5 for v in ids["s0"].values())


def test_number_clash_keeps_only_values_that_contradict_the_document(tmp_path):
    """``--number clash`` (issue #50): of the default's number probes, only those whose new value contradicts
    the other sentences (a year out of their dates' span, a count they give otherwise): no ``count_up`` or
    ``word_up`` move, the same edit where both probe, and the variant in the run summary's parameters."""
    data = tmp_path / "insted.jsonl"
    insted_jsonl(data)
    rows, moves = {}, {}
    for variant in ("insted", "clash"):
        out = tmp_path / variant
        assert run_cli("probes", data, "--out", out, "--phenomena", "number", "--number", variant,
                       "--split", "train") == 0  # fmt: skip
        rows[variant] = {r["id"]: r["probed_sentence"] for r in read_rows(out, "probe-number")}
        summary = summary_of(out)
        assert summary["params"]["number"] == variant
        moves[variant] = {
            k.split("/")[2]: v
            for k, v in summary["counters"]["probes"].items()
            if k.startswith("move/number/")
        }
    assert 0 < len(rows["clash"]) < len(rows["insted"])
    assert all(rows["insted"][i] == probed for i, probed in rows["clash"].items())
    assert moves["insted"].get("count_up", 0) + moves["insted"].get("word_up", 0) > 0
    assert not {"count_up", "word_up"} & set(moves["clash"]), moves["clash"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--phenomena", "tense"], "invalid choice"),
        (["--per-phenomenon", "0"], "--per-phenomenon: must be >= 1"),
        (["--split", "../x"], "--split"),
        (["--phenomena", "gender", "gender"], "named twice"),
    ],
)
def test_bad_options_stop_with_one_line(tmp_path, capsys, args, message):
    data = tmp_path / "insted.jsonl"
    insted_jsonl(data)
    try:
        code = run_cli("probes", data, "--out", tmp_path / "out", *args)
    except SystemExit as exc:  # argparse's own refusal (an unknown choice)
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_unusable_inputs_are_one_line_errors(build, tmp_path, capsys):
    folder = tmp_path / "empty"
    folder.mkdir()
    cases = [
        ([tmp_path / "missing.jsonl"], "no such file or directory"),
        ([folder], "neither an intruder build"),
        ([build / "dataset", "--split", "validation"], "no 'validation' split"),
        ([ROOT / "samples" / "wsj" / "wsj.jsonl"], "not a JSONL file in INSteD's format"),
        ([ROOT / "samples" / "README.md"], "not a JSONL file in INSteD's format"),
    ]
    for args, message in cases:
        assert run_cli("probes", *args, "--out", tmp_path / "out") == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    # --out inside an input
    assert run_cli("probes", build / "dataset", "--out", build / "dataset" / "p") == 2
    err = capsys.readouterr().err
    assert "lies inside the input" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (build / "dataset" / "p").exists()


@pytest.mark.e2e
def test_evaluate_on_a_probes_folder_gives_table7(tiny_base_dir, tiny_data_dir, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "probes"
    assert run_cli("probes", tiny_data_dir, "--out", out, "--phenomena", "negation", "number", "gender") == 0
    report_path = tmp_path / "table7.json"
    assert run_cli("evaluate", f"base={tiny_base_dir}", out, "--out", report_path, beam=[]) == 0
    printed = capsys.readouterr().out
    assert "ΔF1" in printed and "negation" in printed
    report = json.loads(report_path.read_text())
    table = {r["phenomenon"] for r in report["models"]["base"]["phenomena"]}
    missing = [p for p in PHENOMENA if p not in table]  # five never generated: said, not silently left out
    assert report["missing_phenomena"] == missing and len(missing) >= 5
    assert f"not in the table: {len(missing)} of the 8 phenomena have no 'test' probes" in printed
    assert ", ".join(missing) in printed
    table = {r["phenomenon"]: r for r in report["models"]["base"]["phenomena"]}
    assert set(table) <= {"negation", "number", "gender"} and "negation" in table
    # the same figures as `evaluate` on intruder builds of the unprobed and of the probed documents
    for phenomenon, row in table.items():
        probes = read_rows(out, f"probe-{phenomenon}")
        assert row["documents"] == len(probes)
        unprobed = [dict(r, sentences=[*r["sentences"][: r["intruder_index"]], r["intruder_sentence"],
                                       *r["sentences"][r["intruder_index"] + 1 :]]) for r in probes]  # fmt: skip
        figures = []
        for name, rows in (("unprobed", unprobed), ("probed", probes)):
            build_dir = write_intruder_build(
                str(tmp_path / f"{phenomenon}-{name}"), {"test": [_intruder_row(r) for r in rows]}
            )
            assert (
                run_cli(
                    "evaluate",
                    tiny_base_dir,
                    build_dir,
                    "--out",
                    tmp_path / f"{phenomenon}-{name}.json",
                    beam=[],
                )
                == 0
            )
            figures.append(json.loads((tmp_path / f"{phenomenon}-{name}.json").read_text())["sentence"]["f1"])
        assert row["sentence_f1"] == figures[0] and row["probed_sentence_f1"] == figures[1]
        assert row["delta_f1"] == pytest.approx(figures[1] - figures[0], abs=1e-4)


def _intruder_row(row: dict) -> dict:
    from incoherent.schemas import INTRUDER_SCHEMA
    from incoherent.schemas.tables import empty_row

    out = empty_row(INTRUDER_SCHEMA)
    out.update(id=row["id"], source="wsj", sentences=row["sentences"], label=1, intruder_index=row["intruder_index"],
               num_candidates=1)  # fmt: skip
    return out


def test_annotate_export_of_a_probe_config(build, tmp_path):
    out = tmp_path / "probes"
    assert (
        run_cli("probes", build / "dataset", "--out", out, "--split", "train", "--phenomena", "negation") == 0
    )
    tasks_dir = tmp_path / "tasks"
    assert run_cli("annotate", "export", out, "--config", "probe-negation", "--split", "train", "--out",
                   tasks_dir, beam=[]) == 0  # fmt: skip
    key = json.loads((tasks_dir / "key.json").read_text())
    tasks = json.loads((tasks_dir / "tasks.json").read_text())
    probes = {r["id"]: r for r in read_rows(out, "probe-negation")}
    assert key["kind"] == "intruder" and key["config"] == "probe-negation"
    assert sorted(item["id"] for item in key["items"].values()) == sorted(probes)  # no control items
    shown = {tuple(item["sentences"]) for task in tasks["tasks"] for item in task["items"]}
    assert shown == {tuple(r["sentences"]) for r in probes.values()}  # the probed documents are what is asked
    for item in key["items"].values():
        assert item["gold"] == probes[item["id"]]["intruder_index"]


def test_card_of_a_probes_folder_has_a_probes_section(build, tmp_path):
    out = tmp_path / "probes"
    assert run_cli("probes", build / "dataset", "--out", out, "--split", "train") == 0
    assert run_cli("card", out, "--name", "Probes", "--license", "cc-by-sa-4.0", beam=[]) == 0
    card = (out / "README.md").read_text()
    summary = summary_of(out)
    assert "## Linguistic probes" in card and "held-out tokens" in card
    for phenomenon, counts in summary["probes"].items():
        if counts["probes"]:
            assert (
                f"| `{phenomenon}` | train | {counts['probes']:,} | {counts['with_site']:,} | {counts['no_site']:,} |"
                in card
            )
            assert f"config_name: probe-{phenomenon}" in card


@pytest.mark.e2e
def test_a_builds_card_gains_the_probes_section_when_probes_are_written_in_its_folder(build, tmp_path):
    import shutil

    copy = tmp_path / "build"
    shutil.copytree(build, copy)
    assert run_cli("probes", copy / "dataset", "--out", copy / "probes", "--split", "train") == 0
    assert run_cli("card", copy / "dataset", "--name", "Build", beam=[]) == 0
    card = (copy / "dataset" / "README.md").read_text()
    summary = summary_of(copy / "probes")
    assert "## Linguistic probes" in card and "config_name: probe-" not in card  # a section, not configs
    for phenomenon, counts in summary["probes"].items():
        row = f"| `{phenomenon}` | train | {counts['probes']:,} | {counts['with_site']:,} | {counts['no_site']:,} |"
        assert row in card
