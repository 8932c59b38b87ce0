"""End to end: ``incoherent intruders`` on the bundled samples (Wikipedia with history dumps, CNN)."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from incoherent.corpora import intruders as logic
from incoherent.corpora.intruders import normalise
from incoherent.corpora.sampling import parse_sample
from incoherent.pipelines.intruders import transforms
from incoherent.pipelines.intruders.similarity import similarities_for
from incoherent.pipelines.runtime.tables import write_shard
from incoherent.pipelines.runtime.threads import available_cores
from incoherent.pipelines.sampling import sampled_ids, write_id_list
from incoherent.retrieval import TfidfIndex
from incoherent.schemas import DOCUMENT_SCHEMA
from incoherent.schemas.records import document
from tests.conftest import MULTI_PROCESS, SAMPLES, file_bytes, read_rows, run_cli
from tests.tiny_model import tiny_base_dir  # noqa: F401

pytestmark = pytest.mark.e2e

WIKI_NEW = SAMPLES / "wikipedia" / "2022-08-24_minidumps-en_3def73f3.xml.bz2"
WIKI_GENSIM = SAMPLES / "wikipedia" / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
HISTORY = sorted((SAMPLES / "wikipedia" / "history").glob("*.xml.bz2"))


def write_docs(directory, rows, source):
    path = os.path.join(directory, f"documents-{source}", "documents-00000-of-00001.parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_shard(path, DOCUMENT_SCHEMA, rows)


def retrieval(docs_dir, index_dir, neighbors_dir, k=10):
    """Index and neighbours with the retrieval commands."""
    assert run_cli("index", docs_dir, "--out", index_dir) == 0
    assert run_cli("neighbors", docs_dir, "--index", index_dir, "--k", k, "--out", neighbors_dir) == 0


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Ingested samples plus index and neighbours per source."""
    root = tmp_path_factory.mktemp("intruders")
    # Atlantic Ocean is in both dumps: the ingest keeps the newest revision.
    assert run_cli("ingest", "wikipedia", WIKI_NEW, WIKI_GENSIM, "--out", root / "wiki") == 0
    history = []
    for dump in HISTORY:
        history.append(root / dump.name.split(".")[0])
        assert run_cli("ingest", "wikipedia", dump, "--out", history[-1]) == 0
    assert (
        run_cli(
            "ingest", "cnn", SAMPLES / "cnn" / "allennlp", SAMPLES / "cnn" / "frank", "--out", root / "cnn"
        )
        == 0
    )
    for name in ("wiki", "cnn"):
        retrieval(root / name, root / f"index-{name}", root / f"nbrs-{name}")
    return root, history


def retrieval_args(root):
    return [
        "--index", f"wikipedia={root / 'index-wiki'}", "--index", f"cnn={root / 'index-cnn'}",
        "--neighbors", f"wikipedia={root / 'nbrs-wiki'}", "--neighbors", f"cnn={root / 'nbrs-cnn'}",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def built(corpus):
    root, history = corpus
    out = root / "out"
    args = [
        "intruders",
        root / "wiki",
        root / "cnn",
        "--out",
        out,
        *retrieval_args(root),
        "--history",
        *history,
    ]
    assert run_cli(*args) == 0
    return root, history, out, args


def documents(*dirs):
    rows = {}
    for d in dirs:
        for f in sorted(d.glob("documents-*/*.parquet")):
            for r in pq.read_table(f).to_pylist():
                best = rows.get((r["id"], r["dump"]))
                rows[(r["id"], r["dump"])] = r if best is None else best
    return rows


def neighbor_lists(root):
    lists = {}
    for name in ("wiki", "cnn"):
        for f in (root / f"nbrs-{name}").glob("neighbors*/*.parquet"):
            for r in pq.read_table(f).to_pylist():
                lists[r["id"]] = [n["id"] for n in r["neighbors"]]
    return lists


def test_rows_have_the_intruder_properties(built):
    root, history, out, _ = built
    source_docs = documents(root / "wiki", root / "cnn", *history)
    lists = neighbor_lists(root)
    index = {
        "wikipedia": TfidfIndex.load(str(root / "index-wiki")),
        "cnn": TfidfIndex.load(str(root / "index-cnn")),
    }
    rows = read_rows(out, "intruder-wikipedia") + read_rows(out, "intruder-cnn")
    assert rows and {r["source"] for r in rows} == {"wikipedia", "cnn"}
    assert len({r["id"] for r in rows}) == len(rows)
    positives = [r for r in rows if r["label"] == 1]
    assert 0.3 < len(positives) / len(rows) < 0.6
    for row in rows:
        assert 3 <= len(row["sentences"]) <= 8
        original = source_docs[(row["id"], row["dump"])]["sentences"]
        if row["source"] == "wikipedia":
            assert len(original) == len(row["sentences"])
        original = original[: len(row["sentences"])]  # CNN: the first n sentences
        assert row["intruder_index"] != 0
        if row["label"] == 0:
            assert row["intruder_index"] == -1 and row["sentences"] == original
            continue
        i = row["intruder_index"]
        assert i >= 1 and row["sentences"][i] == row["intruder_sentence"]
        assert row["sentences"][:i] + row["sentences"][i + 1 :] == original[:i] + original[i + 1 :]
        assert row["original_sentence"] == original[i]
        donor_id = row["intruder_source_id"]
        assert donor_id != row["id"] and donor_id in lists[row["id"]][:10]
        donor = next(d for (doc_id, _), d in source_docs.items() if doc_id == donor_id)
        assert row["intruder_sentence"] in donor["sentences"][1:]
        assert normalise(row["intruder_sentence"]) not in {normalise(s) for s in original}
        assert row["similarity"] < 0.6 and row["difficulty"] == "unfiltered" and row["filter_score"] is None
        expected = index[row["source"]].similarity(row["original_sentence"], row["intruder_sentence"])
        assert row["similarity"] == pytest.approx(expected, abs=1e-6)
        assert row["num_candidates"] >= 1


def test_candidates_hold_every_candidate_of_every_attempted_document(built):
    _, _, out, _ = built
    rows = {r["id"]: r for r in read_rows(out, "intruder-wikipedia") + read_rows(out, "intruder-cnn")}
    candidates = read_rows(out, "candidates")
    by_doc = {}
    for c in candidates:
        by_doc.setdefault(c["id"], []).append(c)
    summary = json.loads((out / "run_summary.json").read_text())
    attempted = sum(s["incoherent_attempted"] for s in summary["sources"].values())
    assert len(by_doc) <= attempted and candidates
    for doc_id, cands in by_doc.items():
        row = rows[doc_id]
        assert len({c["replaced_index"] for c in cands}) == 1 and cands[0]["replaced_index"] >= 1
        assert all(c["split"] == row["split"] and c["candidate_index"] >= 1 for c in cands)
        if row["label"]:
            assert any(
                c["candidate_source_id"] == row["intruder_source_id"]
                and c["candidate_sentence"] == row["intruder_sentence"]
                for c in cands
            )
            assert row["num_candidates"] == sum(c["similarity"] < 0.6 for c in cands)


def test_run_summary_reports_sources_history_and_artefact_check(built):
    _, _, out, _ = built
    summary = json.loads((out / "run_summary.json").read_text())
    wiki, cnn = summary["sources"]["wikipedia"], summary["sources"]["cnn"]
    assert wiki["documents_read"] == 118 and cnn["documents_read"] == 44
    assert wiki["kept"]["kept_in_range"] == sum(wiki["splits"].values())
    assert wiki["dropped"]["too_many_sentences"] > 0 and cnn["kept"]["kept_truncated"] > 0
    assert wiki["incoherent_attempted"] == wiki["produced"] + sum(wiki["fallen_back_to_coherent"].values())
    assert (
        wiki["history"]["with_older_version"] > 0
        and wiki["history"]["test_from_history"] == wiki["splits"]["test"]
    )
    assert "drift" in wiki["test_split"] and "no protection" in cnn["test_split"]
    assert "drift" in summary["wikipedia_test_split"]
    for s in (wiki, cnn):
        art = s["artefact_check"]
        assert {"accuracy", "f1", "majority_accuracy", "majority_f1"} <= set(art)
        assert 0 <= s["positive_rate"] <= 1


def test_wikipedia_test_documents_are_drifted_older_leads(built):
    root, history, out, _ = built
    index = TfidfIndex.load(str(root / "index-wiki"))
    newest = {
        doc_id: d for (doc_id, _), d in documents(root / "wiki").items() if d["dump"].startswith("2022")
    }
    test = [r for r in read_rows(out, "intruder-wikipedia") if r["split"] == "test"]
    assert test
    for row in test:
        assert row["dump"].startswith(("2019", "2020"))
        old = documents(*history)[(row["id"], row["dump"])]
        assert index.similarity(" ".join(old["sentences"]), " ".join(newest[row["id"]]["sentences"])) < 0.72


def test_same_seed_same_rows_in_process_and_multi_process(built, tmp_path):
    _, _, out, args = built
    again = tmp_path / "again"
    assert run_cli(*[again if a == out else a for a in args]) == 0
    assert file_bytes(again) == file_bytes(out)
    multi = tmp_path / "multi"
    assert run_cli(*[multi if a == out else a for a in args], beam=MULTI_PROCESS) == 0
    assert file_bytes(multi) == file_bytes(out)


def test_other_seed_other_rows_and_no_history_means_no_protection(built, tmp_path):
    root, _, seed0, _ = built
    out = tmp_path / "seed1"
    cnn_retrieval = ["--index", root / "index-cnn", "--neighbors", root / "nbrs-cnn"]
    assert run_cli("intruders", root / "cnn", "--out", out, *cnn_retrieval, "--seed", "1") == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert "no protection" in summary["sources"]["cnn"]["test_split"]
    assert "wikipedia" not in summary["sources"] and "wikipedia_test_split" not in summary
    seed1_rows, seed0_rows = read_rows(out, "intruder-cnn"), read_rows(seed0, "intruder-cnn")
    assert [r["id"] for r in seed1_rows] == [r["id"] for r in seed0_rows]  # same documents and splits ...
    assert [r["split"] for r in seed1_rows] == [r["split"] for r in seed0_rows]
    assert [r["sentences"] for r in seed1_rows] != [r["sentences"] for r in seed0_rows]  # ... other draws


def test_a_sample_over_the_whole_pool_gives_the_full_runs_rows_of_its_documents(built, tmp_path, capsys):
    root, _, full, _ = built
    cnn_files = sorted(str(f) for f in (root / "cnn").glob("documents-*/*.parquet"))
    ids = sampled_ids(cnn_files, parse_sample("40", "--sample"), seed=0)
    assert len(ids) == 40
    queries = tmp_path / "queries.txt"
    write_id_list(str(queries), ids)
    nbrs = tmp_path / "nbrs"
    index = root / "index-cnn"
    assert run_cli("neighbors", root / "cnn", "--index", index, "--queries", queries, "--out", nbrs) == 0
    out = tmp_path / "sampled"
    argv = ["intruders", root / "cnn", "--index", index, "--neighbors", nbrs, "--sample", "40"]
    assert run_cli(*argv, "--out", out) == 0
    rows = read_rows(out, "intruder-cnn")
    full_rows = {r["id"]: r for r in read_rows(full, "intruder-cnn")}
    assert rows and {r["id"] for r in rows} <= set(ids)
    assert rows == [
        full_rows[r["id"]] for r in rows
    ]  # candidates came from the whole pool, as in the full run
    assert read_rows(out, "candidates") == [c for c in read_rows(full, "candidates") if c["id"] in set(ids)]
    summary = json.loads((out / "run_summary.json").read_text())
    cnn = summary["sources"]["cnn"]
    assert cnn["sample"] == {"requested": "40", "documents": 40, "pool": cnn["documents_read"]}
    assert summary["counters"]["intruders/cnn"]["not_sampled"] == cnn["documents_read"] - 40
    assert run_cli(*argv[:-1], "wikipedia=10", "--out", tmp_path / "bad") == 2
    assert "--sample wikipedia=10: no documents of source 'wikipedia'" in capsys.readouterr().err


def test_too_few_documents_for_ten_neighbours_and_identical_sentences(tmp_path):
    docs = tmp_path / "docs"
    sentences = [
        [
            "Rivers flow to the sea.",
            "Salmon swim up rivers.",
            "Bears catch salmon.",
            "Rain fills the rivers.",
        ],
        ["The sea is salty.", "Rivers carry salt.", "Whales live in the sea.", "Tides move the sea."],
        ["Mountains feed rivers.", "Snow melts in spring.", "Rivers flood valleys.", "Farmers like floods."],
        ["Same words here.", "Same words here.", "Same words here."],
    ]
    rows = [document(f"tiny:{i}", "tiny", s) for i, s in enumerate(sentences)]
    write_docs(docs, rows, "tiny")
    retrieval(docs, tmp_path / "index", tmp_path / "nbrs")
    out = tmp_path / "out"
    retrieved = ["--index", tmp_path / "index", "--neighbors", tmp_path / "nbrs"]
    # A documents folder not written by `incoherent ingest` does not say its kind: one line, nothing written.
    assert run_cli("intruders", docs, "--out", out, *retrieved) == 2
    assert not out.exists()
    assert run_cli("intruders", docs, "--out", out, *retrieved, "--kind", "tiny=wiki") == 2
    assert run_cli("intruders", docs, "--out", out, *retrieved, "--kind", "tiny=text") == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["params"]["kinds"] == {"tiny": "text"}
    tiny = summary["sources"]["tiny"]
    assert tiny["dropped"]["identical_sentences"] == 1
    attempted = tiny["incoherent_attempted"]
    assert (
        tiny["neighbors"]["fewer_than_k_neighbors"] + tiny["neighbors"]["not_in_neighbors_table"] == attempted
    )
    rejected = read_rows(out, "rejected/intruders")
    assert [(r["id"], r["reason"]) for r in rejected] == [("tiny:3", "identical_sentences")]


def test_a_cnn_source_of_any_name_gets_the_cnn_policy(built, tmp_path, capsys):
    """``ingest cnn --source news``: ids ``news:<sha1>``, the run summary says kind cnn, and ``intruders`` run
    alone reads it: the articles are truncated (CNN's rule), not dropped as too long (issue 49)."""
    root, _history, built_out, _args = built
    docs = tmp_path / "news"
    stories = [SAMPLES / "cnn" / "allennlp", SAMPLES / "cnn" / "frank"]
    assert run_cli("ingest", "cnn", *stories, "--out", docs, "--source", "news") == 0
    assert json.loads((docs / "run_summary.json").read_text())["kind"] == "cnn"
    rows = read_rows(docs, "documents-news")
    assert rows and all(r["id"].startswith("news:") and r["source"] == "news" for r in rows)
    out = tmp_path / "out"
    assert run_cli("intruders", docs, "--out", out) == 0
    news = json.loads((out / "run_summary.json").read_text())["sources"]["news"]
    cnn = json.loads((built_out / "run_summary.json").read_text())["sources"]["cnn"]
    assert (news["kind"], news["length_rule"], news["test_fraction"]) == ("cnn", "truncate", 0.2)
    # The same stories under the same rule: as many kept (truncated or whole: the draw follows the id)
    assert sum(news["kept"].values()) == sum(cnn["kept"].values()) > 0
    assert news["kept"][logic.KEPT_TRUNCATED] > 0 and news["dropped"][logic.TOO_MANY] == 0
    capsys.readouterr()
    assert run_cli("intruders", docs, "--out", tmp_path / "o2", "--kind", "news=text") == 2
    assert "was ingested as kind 'cnn'" in capsys.readouterr().err


def test_history_sharing_no_article_is_an_input_error(corpus, tmp_path, capsys):
    root, _ = corpus
    other = tmp_path / "other"
    write_docs(other, [document("wikipedia:999999999", "wikipedia", ["A.", "B.", "C."])], "wikipedia")
    out = tmp_path / "out"
    wiki_retrieval = ["--index", root / "index-wiki", "--neighbors", root / "nbrs-wiki"]
    code = run_cli("intruders", root / "wiki", "--out", out, *wiki_retrieval, "--history", other)
    assert code == 2
    assert "shares no article" in capsys.readouterr().err
    assert not out.exists()


def test_bad_options_are_input_errors(corpus, tmp_path, capsys):
    root, _ = corpus
    base = ["intruders", root / "cnn", "--out", tmp_path / "o"]
    assert run_cli(*base, "--index", tmp_path / "missing") == 2
    assert "no such directory" in capsys.readouterr().err
    assert run_cli(*base, "--validation-fraction", "1.5") == 2
    assert "--validation-fraction" in capsys.readouterr().err
    assert run_cli(*base, "--filter", tmp_path / "no-model") == 2
    assert "--filter" in capsys.readouterr().err


def prefer_first_neighbour(candidate: dict) -> float:
    """A controlled adversarial model: only the best-ranked neighbour's sentence is hard."""
    return 0.1 if candidate["neighbor_rank"] == 0 else 0.9


def test_filter_seam_prefers_hard_candidates(corpus, tmp_path):
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.testing.util import assert_that

    from incoherent.filters.handler import FixedScoreHandler
    from incoherent.pipelines.intruders.filter_stage import ScoreCandidates
    from incoherent.pipelines.runtime.run import resolve_runner
    from incoherent.pipelines.runtime.tables import document_files

    root, _ = corpus
    options = transforms.Options(filtered=True, kinds=(("cnn", "cnn"),))
    indexes = {"cnn": str(root / "index-cnn")}
    score = ScoreCandidates(None, handler=FixedScoreHandler(prefer_first_neighbour))
    nbr_files = sorted(str(p) for p in (root / "nbrs-cnn").glob("neighbors*/*.parquet"))

    def verdict(element):
        _doc_id, grouped = element
        rows, cands = list(grouped["rows"]), list(grouped["cands"])
        row = rows[0]
        assert all(c["difficulty"] in ("hard", "easy") and "document" not in c for c in cands)
        if not row["label"]:
            return "coherent"
        has_hard = any(c["difficulty"] == "hard" and c["similarity"] < 0.6 for c in cands)
        assert row["difficulty"] == ("hard" if has_hard else "easy")
        assert row["filter_score"] == pytest.approx(0.1 if has_hard else 0.9)
        return row["difficulty"]

    def check(verdicts):
        assert "hard" in verdicts

    with beam.Pipeline(runner=resolve_runner(PipelineOptions([]))) as p:
        rows, cands, _ = p | transforms.BuildIntruders(
            document_files(str(root / "cnn")), nbr_files, indexes, options, score_candidates=score
        )
        verdicts = (
            {
                "rows": rows
                | "EachRow" >> beam.FlatMap(list)
                | "KeyRows" >> beam.Map(lambda r: (r["id"], r)),
                "cands": cands | "EachCand" >> beam.FlatMap(list) | beam.Map(lambda c: (c["id"], c)),
            }
            | beam.CoGroupByKey()
            | beam.Map(verdict)
        )
        assert_that(verdicts, check)


def test_without_index_and_neighbors_they_are_built_on_the_fly(built, tmp_path):
    root, _, _, _ = built
    explicit, auto = tmp_path / "explicit", tmp_path / "auto"
    assert (
        run_cli(
            "intruders",
            root / "cnn",
            "--out",
            explicit,
            "--index",
            root / "index-cnn",
            "--neighbors",
            root / "nbrs-cnn",
        )
        == 0
    )
    assert run_cli("intruders", root / "cnn", "--out", auto) == 0
    assert read_rows(auto, "intruder-cnn") == read_rows(explicit, "intruder-cnn")
    summary = json.loads((auto / "run_summary.json").read_text())
    assert not any(os.path.exists(p) for p in summary["retrieval"]["index"].values())  # temporary, removed


def test_similarities_for_an_index_dir_are_the_index_similarities(corpus):
    root, _ = corpus
    index = TfidfIndex.load(str(root / "index-wiki"))
    similarities = similarities_for(str(root / "index-wiki"))
    a = ["The Atlantic Ocean is large.", "The Atlantic Ocean is large.", "", "Berlin is a city.", "!!!"]
    b = [
        "Oceans cover the Earth.",
        "The Atlantic Ocean is large.",
        "Berlin.",
        "Berlin is the capital city.",
        "x",
    ]
    assert similarities(a, b).tolist() == pytest.approx(index.similarities(a, b).tolist(), abs=1e-12)
    assert similarities([], []).tolist() == []


def test_filter_with_a_real_tiny_model_through_the_cli(built, tiny_base_dir, tmp_path):  # noqa: F811
    root, _, _, _ = built
    out = tmp_path / "filtered"
    retrieval_cnn = ["--index", root / "index-cnn", "--neighbors", root / "nbrs-cnn"]
    assert run_cli("intruders", root / "cnn", "--out", out, *retrieval_cnn, "--filter", tiny_base_dir,
                   "--device", "cpu", "--max-length", "64", "--batch-size", "8") == 0  # fmt: skip
    candidates = read_rows(out, "candidates")
    assert candidates and all(
        0.0 <= c["filter_score"] <= 1.0 and c["difficulty"] in ("hard", "easy") for c in candidates
    )
    hard = {c["id"] for c in candidates if c["difficulty"] == "hard" and c["similarity"] < 0.6}
    for row in read_rows(out, "intruder-cnn"):
        if row["label"]:
            assert (
                row["difficulty"] == ("hard" if row["id"] in hard else "easy")
                and row["filter_score"] is not None
            )
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["params"]["torch_threads"] == available_cores()  # one in-process worker: every core
    assert summary["params"]["filter"] == str(tiny_base_dir) and summary["counters"]["filter"][
        "scored"
    ] == len(candidates)


def test_artefact_sample_streams_the_tables_and_picks_what_sample_documents_picks(tmp_path):
    import pyarrow as pa

    from incoherent.corpora.artefacts import sample_documents
    from incoherent.pipelines.intruders.command import shares_an_id
    from incoherent.pipelines.intruders.summary import artefact_sample

    rows = [
        {"id": f"d{i}", "sentences": ["a", "b"], "label": int(i % 3 == 0), "intruder_index": 1 if i % 3 == 0 else -1,
         "split": "train"}
        for i in range(50)
    ]  # fmt: skip
    files = []
    for k in range(3):
        path = str(tmp_path / f"f{k}.parquet")
        pq.write_table(pa.Table.from_pylist(rows[k * 17 : (k + 1) * 17]), path, row_group_size=5)
        files.append(path)
    for limit in (5, 17, 49, 50, 60):
        sample, total, positives = artefact_sample(files, limit)
        assert sample == sample_documents(rows, limit)
        assert (total, positives) == (50, 17)
    assert shares_an_id(files[:1], files[2:], sample=3) is False
    assert shares_an_id(files, files[2:], sample=100) is True
