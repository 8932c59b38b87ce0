"""Policy by kind, end to end: the Quickstart config with its sources renamed (``wikipedia`` -> ``enwiki``,
``cnn`` -> ``news``) builds, with as many documents in every table as the plain Quickstart build (issue 49: a
Wikipedia source not named ``wikipedia`` got CNN's 20% test share, and a CNN source had to be named ``cnn``).
One extra build (the plain one is the shared fixture of :mod:`tests.sample_build`).

What renaming changes, by design: ids are ``<source>:<id in the source>`` (``news:<sha1>``), and a document's
split and draws are hashes of its id. So every table of documents has the same number of rows (the length rule
is the kind's; the candidates table, a row per candidate of the documents drawn to get an intruder, has not),
the Wikipedia tables (split by drift against the older dumps) and the shuffle tables (all test) have the same
rows in every split, and a CNN row's split is the hash split at CNN's test share: the same share, other
documents (measured 2026-11-29: intruder-news test/train 11/33 where intruder-cnn has 5/39)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import yaml

from incoherent.corpora import intruders as logic
from tests.conftest import ROOT, read_rows, run_cli
from tests.sample_build import quickstart_build

pytestmark = pytest.mark.e2e

RENAMED = {"wikipedia": "enwiki", "cnn": "news"}


def rows_per_split(dataset) -> dict[tuple[str, str], int]:
    """``{(table with its source renamed back, split): rows}`` of a build's dataset folder."""
    counts = {}
    for path in sorted(dataset.glob("*/*.parquet")):
        table = path.parent.name
        for old, new in RENAMED.items():
            table = table.replace(f"-{new}", f"-{old}")
        split = path.name.split("-", 1)[0]
        counts[(table, split)] = counts.get((table, split), 0) + pq.ParquetFile(path).metadata.num_rows
    return counts


def test_renamed_quickstart_builds_the_same_row_counts(tmp_path_factory, tmp_path):
    plain, done = quickstart_build(tmp_path_factory)
    assert done.returncode == 0, done.stderr[-3000:]
    config = yaml.safe_load((ROOT / "pipelines" / "configs" / "default.yaml").read_text())
    config["base"] = str(ROOT)
    config["sources"] = {RENAMED[name]: spec for name, spec in config["sources"].items()}
    path = tmp_path / "renamed.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert run_cli("build", path, "--out", out, "--quiet") == 0
    summary = json.loads((out / "work" / "intruders" / "run_summary.json").read_text())
    assert summary["params"]["kinds"] == {"enwiki": "wikipedia", "news": "cnn"}
    enwiki, news = summary["sources"]["enwiki"], summary["sources"]["news"]
    assert (enwiki["length_rule"], enwiki["test_fraction"]) == ("filter", 0.08)
    assert (news["length_rule"], news["test_fraction"]) == ("truncate", 0.2)
    got, expected = rows_per_split(out / "dataset"), rows_per_split(plain / "dataset")
    assert expected and set(got) == set(expected)
    for table in {table for table, _split in expected} - {"candidates"}:  # a row per document
        assert sum(n for (t, _), n in got.items() if t == table) == sum(
            n for (t, _), n in expected.items() if t == table
        ), table
    same_splits = [
        key for key in expected if key[0] in ("intruder-wikipedia", "shuffle-wikipedia", "shuffle-cnn")
    ]
    assert len(same_splits) == 4 and all(got[key] == expected[key] for key in same_splits)
    news = read_rows(out / "dataset", "intruder-news")
    assert news and all(row["split"] == logic.plain_split(row["id"], "cnn") for row in news)
    assert all(row["id"].startswith("news:") and row["source"] == "news" for row in news)
    card = (out / "dataset" / "README.md").read_text()
    assert "CNN stories" in card and "`intruder-news`" in card  # the card knows news is of kind cnn
    front = yaml.safe_load(card.split("---", 2)[1])
    assert next(c["config_name"] for c in front["configs"] if c.get("default")) == "intruder-enwiki"
