"""``incoherent card``: metadata, statistics, figures, provenance without local paths, licence, validation."""

import glob
import hashlib
import json
import re
import shutil

import pyarrow.parquet as pq
import pytest

from incoherent.corpora.card import stats as card_stats
from incoherent.corpora.card.inputs import load_summaries, summary_files
from incoherent.corpora.card.metadata import card_metadata, derive_license, size_category, validate_card
from incoherent.corpora.card.render import render_card
from incoherent.corpora.provenance import dump_date_from_name, relativise
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, SAMPLES, read_rows, run_cli
from tests.sample_build import build_wikipedia, wikipedia_build


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    assert run_cli("ingest", "cnn", SAMPLES / "cnn" / "allennlp", "--out", root / "docs") == 0
    assert run_cli("shuffle", root / "docs", "--out", root / "ds", "--test-fraction", "0.5") == 0
    return root / "ds"


def test_card_metadata_lists_configs_splits_and_features(shuffled):
    meta = card_metadata(str(shuffled), "t", "other")
    (config,) = meta["configs"]
    assert config["config_name"] == "shuffle-cnn"
    assert sorted(d["split"] for d in config["data_files"]) == ["test", "train"]
    (info,) = meta["dataset_info"]
    assert {"name": "shuffled", "list": "string"} in info["features"]
    summary = json.loads((shuffled / "run_summary.json").read_text())
    assert sum(s["num_examples"] for s in info["splits"]) == summary["counters"]["shuffle"]["kept"]


def test_card_loads_with_datasets_offline(shuffled, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert run_cli("card", shuffled, "--name", "CNN shuffles", beam=[]) == 0
    text = (shuffled / "README.md").read_text()
    assert text.startswith("---\n") and "# CNN shuffles" in text and "Laban" in text
    import datasets

    ds = datasets.load_dataset(str(shuffled), "shuffle-cnn", cache_dir=str(shuffled.parent / "hf-cache"))
    assert set(ds) == {"test", "train"}
    row = ds["test"][0]
    assert row["shuffled"] != row["original"] and sorted(row["shuffled"]) == sorted(row["original"])


def test_incomplete_run_is_refused(tmp_path):
    (tmp_path / "run_summary.json").write_text(json.dumps({"complete": False}))
    with pytest.raises(InputError, match="did not complete"):
        load_summaries(str(tmp_path))


def test_publish_dry_run_lists_files_and_needs_a_card(shuffled, tmp_path, capsys):
    assert run_cli("card", shuffled, beam=[]) == 0
    assert run_cli("publish", shuffled, "--repo-id", "me/x", "--dry-run", beam=[]) == 0
    out = capsys.readouterr().out
    assert "README.md" in out and "shuffle-cnn/test-00000-of-00001.parquet" in out and "rejected" not in out
    (tmp_path / "t").mkdir()
    assert run_cli("publish", tmp_path / "t", "--repo-id", "me/x", "--dry-run", beam=[]) == 2
    assert "run `incoherent card" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------- the new card

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return wikipedia_build(tmp_path_factory)


def _front_matter(text: str) -> dict:
    import yaml

    return yaml.safe_load(text.split("---\n", 2)[1])


@pytest.mark.e2e
def test_build_card_validates_marks_the_default_and_licenses_wikipedia_as_cc_by_sa(build):
    from huggingface_hub import DatasetCard

    text = (build / "dataset" / "README.md").read_text()
    validate_card(text)
    card = DatasetCard(text)
    assert card.data.license == "cc-by-sa-4.0"
    assert card.data.pretty_name == "Wikipedia intruders (test build)"
    assert card.data.size_categories == ["n<1K"]
    assert card.data.task_categories == ["text-classification"] and card.data.task_ids
    defaults = [c["config_name"] for c in card.data.configs if c.get("default")]
    assert defaults == ["intruder-wikipedia"]
    assert (
        'load_dataset("<this repo or folder>", "intruder-wikipedia")' in text
        and 'print(ds["train"][0])' in text
    )


@pytest.mark.e2e
def test_build_card_has_no_local_paths_anywhere_it_publishes(build):
    published = [build / "dataset" / "README.md"] + [
        p for p in (build / "dataset" / "summaries").rglob("*.json")
    ]
    assert len(published) >= 5
    for path in published:
        text = path.read_text()
        assert str(build.parent) not in text, path
        assert str(ROOT) not in text, path
        assert "/tmp/" not in text, path
    text = (build / "dataset" / "README.md").read_text()
    # inputs by name, size and sha256, with the wiki and the dump date
    dump = ROOT / "samples" / "wikipedia" / "2022-08-24_minidumps-en_3def73f3.xml.bz2"
    digest = hashlib.sha256(dump.read_bytes()).hexdigest()
    row = next(line for line in text.splitlines() if digest in line)
    assert (
        f"{dump.stat().st_size:,}" in row and "enwiki" in row and "2022-08-24" in row and "| input |" in row
    )
    assert "| history (older dump) |" in text and "2019-08-16" in text
    # the exact stage commands, paths relative to base / OUT, and the config itself
    assert "incoherent build build.yaml --out OUT" in text
    assert (
        "#   incoherent ingest wikipedia samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2" in text
    )
    assert "--history OUT/work/history/wikipedia/2019-08-16_minidumps-en_89657c7a" in text
    assert "### Build config" in text and "base: .\n" in text and "- samples/wikipedia/history/" in text
    assert "seed: `0`" in text and "similarity threshold `0.6`" in text and "hashed into 16,777,216" in text
    assert re.search(r"- apache-beam \d", text) and re.search(r"- datasets \d", text)


@pytest.mark.e2e
def test_build_card_statistics_are_those_of_the_rows(build):
    dataset = build / "dataset"
    text = (dataset / "README.md").read_text()
    rows = read_rows(dataset, "intruder-wikipedia")
    for split in ("train", "test"):
        docs = [r for r in rows if r["split"] == split]
        sentences = sum(len(r["sentences"]) for r in docs)
        words = sum(len(s.split()) for r in docs for s in r["sentences"])
        positives = sum(r["label"] for r in docs)
        expected = (
            f"| wikipedia | {split} | {len(docs):,} | {sentences / len(docs):.2f} | {words / sentences:.2f} | "
            f"{100 * positives / len(docs):.1f}% |"
        )
        assert expected in text
    shuffle = read_rows(dataset, "shuffle-wikipedia")
    k1 = sum(1 for r in shuffle if r["block_size"] == 1)
    k3 = sum(1 for r in shuffle if r["block_size"] == 3)
    assert f"| wikipedia | test | {k1:,} | {k3:,} |" in text
    summary = json.loads((build / "work" / "intruders" / "run_summary.json").read_text())["sources"][
        "wikipedia"
    ]
    assert (
        f"| wikipedia | {summary['documents_read']:,} | {sum(summary['kept'].values()):,} | "
        f"{summary['incoherent_attempted']:,} | {summary['candidates']:,} |"
    ) in text
    assert "taken from older dumps" in text and "### Artefact check" in text


@pytest.mark.e2e
def test_build_card_figures_are_pngs_linked_relatively(build):
    dataset = build / "dataset"
    text = (dataset / "README.md").read_text()
    links = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert sorted(links) == [
        "figures/intruder_position.png",
        "figures/sentences_per_document.png",
        "figures/similarity.png",
    ]
    for link in links:
        data = (dataset / link).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000


@pytest.mark.e2e
def test_card_is_deterministic(tmp_path):
    # a build of its own, as the card is rewritten in place (the card of a copy of the shared build is that of a
    # moved build, whose summaries name the first folder: its commands' paths are then written another way)
    build_wikipedia(tmp_path)
    dataset = tmp_path / "out" / "dataset"
    before = {p: p.read_bytes() for p in [dataset / "README.md", *sorted((dataset / "figures").iterdir())]}
    # no --build-dir: OUT/dataset of a build finds its build folder, so the card comes out the same
    assert run_cli("card", dataset, "--name", "Wikipedia intruders (test build)", beam=[]) == 0
    after = {p: p.read_bytes() for p in [dataset / "README.md", *sorted((dataset / "figures").iterdir())]}
    assert before == after


@pytest.mark.e2e
def test_intruder_stats_read_in_small_batches_equal_whole_table_counts(build, monkeypatch):
    files = sorted(glob.glob(str(build / "dataset" / "intruder-wikipedia" / "*.parquet")))
    whole = card_stats.intruder_stats(files)
    monkeypatch.setattr(card_stats, "BATCH_ROWS", 3)
    small = card_stats.intruder_stats(files)
    assert small["by_split"] == whole["by_split"]
    assert small["intruder_position"] == whole["intruder_position"]
    assert (small["chosen_similarity"] == whole["chosen_similarity"]).all()
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    assert sum(whole["sentences_per_document"].values()) == len(rows)
    assert whole["intruder_position"] == {
        i: sum(1 for r in rows if r["label"] and r["intruder_index"] == i) for i in whole["intruder_position"]
    }


def test_licence_follows_the_sources():
    assert derive_license({"wikipedia"}, {"wikipedia": "wikipedia"})[0] == "cc-by-sa-4.0"
    assert derive_license({"w", "de"}, {"w": "wikipedia", "de": "wikipedia"})[0] == "cc-by-sa-4.0"
    licence, reason = derive_license({"wikipedia", "cnn"}, {"wikipedia": "wikipedia", "cnn": "cnn"})
    assert licence == "other" and "cnn (cnn)" in reason
    assert derive_license({"news"}, {})[0] == "other"
    assert derive_license(set(), {})[0] == "other"


def test_cnn_only_card_says_other_with_the_reason(shuffled):
    text = render_card(str(shuffled), str(shuffled), "CNN", figures=False)
    assert _front_matter(text)["license"] == "other"
    assert "Licence `other`: not only Wikipedia text: cnn (unknown kind)." in text  # no ingest summary here
    assert (
        _front_matter(render_card(str(shuffled), str(shuffled), "CNN", "mit", figures=False))["license"]
        == "mit"
    )


def test_size_categories_and_dump_dates():
    assert [size_category(n) for n in (0, 999, 1000, 25_000, 3_000_000)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "1M<n<10M",
    ]  # fmt: skip
    assert dump_date_from_name("enwiki-20260801-pages-articles-multistream.xml.bz2") == "2026-08-01"
    assert dump_date_from_name("2019-08-16_minidumps-en_89657c7a.xml.bz2") == "2019-08-16"
    assert dump_date_from_name("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2") is None


def test_relativise_never_leaves_an_absolute_path():
    roots = {"out": "/b/out", "config_dir": "/b/cfg", "base": "/b"}
    value = {
        "docs": ["/b/out/work/d", "/elsewhere/x.jsonl"],
        "index": ["w=/b/out/i"],
        "k": 10,
        "p": "/b/s/a.bz2",
    }
    assert relativise(value, roots) == {
        "docs": ["OUT/work/d", "x.jsonl"],
        "index": ["w=OUT/i"],
        "k": 10,
        "p": "s/a.bz2",
    }


def test_card_yaml_with_two_defaults_is_refused():
    text = "---\nlicense: other\npretty_name: x\nconfigs:\n- config_name: a\n  data_files: a/*.parquet\n  default: true\n- config_name: b\n  data_files: b/*.parquet\n  default: true\n---\n# x\n"
    with pytest.raises(InputError, match="default"):
        validate_card(text)
    with pytest.raises(InputError, match="YAML"):
        validate_card("---\nlicense: [unclosed\n---\n")


def test_tables_of_an_older_schema_version_are_refused(shuffled, tmp_path):

    copy = tmp_path / "old"
    shutil.copytree(shuffled, copy)
    path = next((copy / "shuffle-cnn").glob("*.parquet"))
    table = pq.read_table(path)
    metadata = dict(table.schema.metadata)
    metadata[b"incoherent.schema_version"] = b"0"
    pq.write_table(table.replace_schema_metadata(metadata), path)
    with pytest.raises(InputError, match="schema version 0"):
        render_card(str(copy), str(copy), "x", figures=False)
    summary = json.loads((copy / "run_summary.json").read_text())
    summary["schema_version"] = "0"
    (copy / "run_summary.json").write_text(json.dumps(summary))
    with pytest.raises(InputError, match="schema version 0"):
        load_summaries(str(copy))


def test_filter_score_figure_is_drawn_only_when_candidates_were_scored(tmp_path):
    import numpy as np

    from incoherent.corpora.card.statistics import write_figures

    hist = np.zeros(len(card_stats.SCORE_BINS) - 1, dtype=np.int64)
    hist[[2, 3, 15]] = [40, 25, 5]
    similarity = np.zeros(len(card_stats.SIMILARITY_BINS) - 1, dtype=np.int64)
    similarity[[0, 5, 29, 31]] = [50, 20, 2, 1]
    stats = {
        "intruder": {},
        "shuffle": {},
        "candidates": {
            "news": {"candidates": 73, "similarity": similarity, "filter_score": hist, "scored": 70}
        },
    }
    links = write_figures(stats, str(tmp_path), 0.6, 0.5)
    assert [rel for _, rel in links] == ["figures/similarity.png", "figures/filter_scores.png"]
    assert (tmp_path / "figures" / "filter_scores.png").read_bytes().startswith(PNG_MAGIC)
    stats["candidates"]["news"]["scored"] = 0
    assert [rel for _, rel in write_figures(stats, str(tmp_path), 0.6, 0.5)] == ["figures/similarity.png"]
    assert not (tmp_path / "figures" / "filter_scores.png").exists()  # a stale figure is not left behind


def test_usage_example_of_a_shuffle_only_card_loads_its_default_and_runs_as_printed(
    shuffled, tmp_path, capsys
):
    text = render_card(str(shuffled), str(shuffled), "CNN", figures=False)
    assert 'ds = load_dataset("<this repo or folder>", "shuffle-cnn")' in text
    assert [c for c in _front_matter(text)["configs"] if c.get("default")][0]["config_name"] == "shuffle-cnn"
    (shuffled / "README.md").write_text(text)
    code = text.split("```python\n", 1)[1].split("```", 1)[0].replace("<this repo or folder>", str(shuffled))
    code = code.replace(
        "from datasets import load_dataset",
        f"import functools, datasets\nload_dataset = functools.partial(datasets.load_dataset, cache_dir={str(tmp_path)!r})",
    )
    exec(compile(code, "usage", "exec"), {})  # the example runs as printed
    assert "'block_order': [" in capsys.readouterr().out


def test_provenance_names_the_filter_model_and_its_validation_metrics(tmp_path):
    from incoherent.corpora.card.provenance import provenance_section

    model = tmp_path / "out" / "model"
    model.mkdir(parents=True)
    (model / "metrics.json").write_text(
        json.dumps(
            {
                "config": {"base_model": "xlnet-large-cased", "epochs": 2},
                "chosen_epoch": 2,
                "train_examples": 1234,
                "validation": {"sentence_f1": 0.41234, "document_accuracy": 0.7},
            }
        )
    )
    intruders = {
        "command": "intruders",
        "_path": "work/intruders/run_summary.json",
        "params": {
            "seed": 3,
            "k": 10,
            "filter": str(model),
            "easy_threshold": 0.5,
            "similarity_threshold": 0.6,
        },
    }
    text = "\n".join(provenance_section(str(tmp_path / "out"), None, [intruders]))
    assert "adversarial filter: `OUT/model`, fine-tuned from `xlnet-large-cased` (epoch 2 of 2" in text
    assert "document_accuracy 0.7000, sentence_f1 0.4123" in text and "easy threshold: `0.5`" in text
    assert "seed: `3`" in text and str(tmp_path) not in text


@pytest.mark.e2e
def test_card_statistics_from_a_pipeline_equal_those_read_in_process(build, tmp_path):
    """A remote build's card counts rows in a pipeline, file by file, and merges the counts: the same numbers."""
    from incoherent.corpora.card.inputs import find_configs
    from incoherent.corpora.card.statistics import collect_stats
    from incoherent.pipelines.card import pipeline_stats

    configs = find_configs(str(build / "dataset"))
    assert {"intruder-wikipedia", "shuffle-wikipedia", "candidates"} <= set(configs)
    in_process = collect_stats(configs)
    work = tmp_path / "work"
    by_pipeline = pipeline_stats(
        configs, ["--direct_num_workers=2", "--direct_running_mode=multi_threading"], str(work)
    )
    assert card_stats.to_json(by_pipeline) == card_stats.to_json(in_process)
    assert by_pipeline["intruder"]["wikipedia"]["by_split"]["test"]["documents"] > 0
    assert not work.exists()  # the merged result was read and removed


def test_a_remote_card_copies_only_the_summaries_to_the_driver():
    listing = [
        "gs://b/out/build_summary.json",
        "gs://b/out/.incoherent-build.json",
        "gs://b/out/work/documents/wiki/run_summary.json",
        "gs://b/out/work/retrieval/wiki/index/ids.json",  # a line per document: never on the driver
        "gs://b/out/work/retrieval/wiki/index/index.json",  # read where it lies, when the card names the index
        "gs://b/out/work/retrieval/wiki/index/run_summary.json",
        "gs://b/out/dataset/shuffle-wiki/run_summary.jsonl",
        "gs://b/other/run_summary.json",
    ]
    assert summary_files(listing, "gs://b/out/") == [
        ("gs://b/out/build_summary.json", "build_summary.json"),
        ("gs://b/out/work/documents/wiki/run_summary.json", "work/documents/wiki/run_summary.json"),
        (
            "gs://b/out/work/retrieval/wiki/index/run_summary.json",
            "work/retrieval/wiki/index/run_summary.json",
        ),
    ]


@pytest.mark.e2e
def test_what_a_remote_card_copies_does_not_grow_with_the_documents(build):
    """Of a real build's JSON files, the card's driver copies the run and build summaries, whose size does not
    depend on the number of documents, and leaves the index's ids (36 bytes a document) where they lie."""
    listing = sorted(str(p) for p in build.rglob("*.json"))
    chosen = {relative for _, relative in summary_files(listing, str(build))}
    ids = [p for p in listing if p.endswith("/ids.json")]
    assert ids and not any(relative.endswith("ids.json") for relative in chosen)
    summaries = {str(p.relative_to(build)) for p in build.rglob("run_summary.json")}
    assert chosen == summaries | {"build_summary.json"}
    assert len(load_summaries(str(build))) == len([s for s in summaries if "/summaries/" not in f"/{s}"])


def test_statistics_merge_file_by_file_and_survive_json(shuffled):
    files = sorted(glob.glob(str(shuffled / "shuffle-cnn" / "*.parquet")))
    assert len(files) == 2
    merged = card_stats.merge_stats(card_stats.shuffle_stats(files[:1]), card_stats.shuffle_stats(files[1:]))
    assert merged == card_stats.shuffle_stats(files)
    stats = {
        "counts": card_stats.Counter({3: 2, 1: 5}),
        "hist": card_stats.np.arange(4, dtype=card_stats.np.int64),
        "by_k": {2: 7},
    }
    back = card_stats.from_json(card_stats.to_json(stats))
    assert isinstance(back["counts"], card_stats.Counter) and back["counts"] == stats["counts"]
    assert back["hist"].tolist() == [0, 1, 2, 3] and back["by_k"] == {2: 7}


@pytest.mark.e2e
def test_ingest_records_every_input_hashed_where_it_lies(build):
    """The card's inputs table comes from the ingest runs' summaries, not from reading the inputs again."""
    from incoherent.corpora.provenance import describe_input

    summary = json.loads((build / "work" / "documents" / "wikipedia" / "run_summary.json").read_text())
    dump = ROOT / "samples" / "wikipedia" / "2022-08-24_minidumps-en_3def73f3.xml.bz2"
    assert summary["inputs"] == [describe_input(str(dump), "wikipedia")]
    assert summary["inputs"][0]["sha256"] == hashlib.sha256(dump.read_bytes()).hexdigest()
    assert not (build / "work" / "documents" / "wikipedia" / "_inputs").exists()


def test_every_link_of_the_card_resolves(build):
    """Relative links point into the dataset; the tool is linked only to a URL its package metadata declares
    (never to a page that does not exist, like an unregistered PyPI project)."""
    dataset = build / "dataset"
    text = (dataset / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert "summaries/" in links
    for link in links:
        if link.startswith(("https://", "http://")):
            assert "pypi.org/project/incoherent" not in link
            continue
        assert (dataset / link).exists(), link


def test_the_tool_is_linked_to_its_declared_home_or_not_at_all(monkeypatch):
    from email.message import Message

    from incoherent.corpora.card import metadata as card

    declared = Message()
    declared["Project-URL"] = "Bug Tracker, https://example.org/issues"
    monkeypatch.setattr(card, "metadata", lambda name: declared)
    assert card.tool_link() == "`incoherent`"  # no home page among the URLs
    declared["Project-URL"] = "Repository, https://example.org/incoherent"
    assert card.tool_link() == "[`incoherent`](https://example.org/incoherent)"


def licence_section(text: str) -> str:
    return text.split("## Sources and licences", 1)[1].split("## Citation", 1)[0]


@pytest.mark.e2e
def test_laban_card_names_only_what_was_built_with_each_sources_terms(tmp_path):
    """With only the bundled WSJ sample (BillSum and Reddit TIFU absent), the card claims WSJ alone."""
    out = tmp_path / "out"
    assert run_cli("build", ROOT / "pipelines" / "configs" / "laban.yaml", "--out", out) == 0
    text = (out / "dataset" / "README.md").read_text()
    body = text.split("---\n", 2)[2].split("## How it was built", 1)[0]
    assert "BillSum" not in body and "Reddit" not in body and "(WSJ, BillSum" not in text
    built = body.split("## What was built", 1)[1].split("## Usage", 1)[0]
    assert "- `wsj` (text collection): `shuffle-wsj`" in built
    assert (
        "Not built: `billsum`, `reddit`" in built and "Corpora the build config asked for: shuffle." in built
    )
    assert "`intruder-*`" not in body and "`candidates`" not in body  # no intruder corpora were built
    licences = licence_section(text)
    assert "- `wsj`: WSJ text from NLTK's 10% sample of the Penn Treebank, (C) LDC 1995" in licences
    assert "Wikipedia" not in licences.replace("not only Wikipedia text", "") and "CNN" not in licences
    assert "BillSum" not in licences and "Reddit" not in licences


@pytest.mark.e2e
def test_build_card_gives_the_terms_of_each_source_it_holds(build):
    text = (build / "dataset" / "README.md").read_text()
    licences = licence_section(text)
    assert "- `wikipedia`: Wikipedia text: CC BY-SA 3.0/4.0 and GFDL" in licences and "CNN" not in licences
    built = text.split("## What was built", 1)[1].split("## Usage", 1)[0]
    assert "- `wikipedia` (Wikipedia dump): `candidates`, `intruder-wikipedia`, `shuffle-wikipedia`" in built
    assert "Not built" not in built


def test_a_text_source_without_recorded_terms_says_so(shuffled):
    from incoherent.corpora.card.metadata import source_terms

    assert source_terms("news", {"news": "text"}, None).startswith(
        "not recorded: give the collection's terms"
    )
    text = render_card(str(shuffled), str(shuffled), "CNN", figures=False)
    assert "- `cnn`: not recorded" in licence_section(text)  # no ingest summary here: the kind is unknown


def test_the_card_says_a_library_is_not_installed_rather_than_unknown(tmp_path, monkeypatch):
    """In a light install transformers is absent: the card's versions say so (it said "transformers unknown")."""
    from importlib.metadata import PackageNotFoundError

    import incoherent.corpora.card.metadata as card_module
    from incoherent.corpora.card.provenance import provenance_section

    real = card_module.version

    def without_transformers(package):
        if package == "transformers":
            raise PackageNotFoundError(package)
        return real(package)

    monkeypatch.setattr(card_module, "version", without_transformers)
    lines = provenance_section(str(tmp_path / "out"), None, [])
    assert "- transformers not installed" in lines
    assert not [line for line in lines if line.endswith(" unknown") and not line.startswith("- incoherent")]


def test_the_probes_table_names_the_split_of_every_count():
    """negation 13 was 1 test + 12 train probes beside one run's site counts, no split named: one row a split."""
    from incoherent.corpora.card.probes import probes_section

    stats = {"probe": {"negation": {"wikipedia": {"test": 1, "train": 12}}, "gender": {"cnn": {"test": 2}}}}
    runs = [
        {"command": "probes", "params": {"split": "test"}, "probes": {
            "negation": {"probes": 1, "with_site": 1, "no_site": 3},
            "gender": {"probes": 2, "with_site": 2, "no_site": 2}}},
        {"command": "probes", "params": {"split": "train"}, "probes": {
            "negation": {"probes": 12, "with_site": 12, "no_site": 30}}},
    ]  # fmt: skip
    lines = probes_section(stats, runs)
    table = [line for line in lines if line.startswith("| `")]
    assert table == [
        "| `gender` | test | 2 | 2 | 2 |",
        "| `negation` | test | 1 | 1 | 3 |",
        "| `negation` | train | 12 | 12 | 30 |",
    ]
    assert "| phenomenon | split | probes | with a site | no site |" in lines
