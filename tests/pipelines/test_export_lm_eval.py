"""``incoherent export lm-eval``: the task folder it writes (YAMLs, local data, groups), its conventions (a build
folder or its dataset/, --overwrite, one-line errors), and the real ``lm_eval`` run on it with the tiny Llama,
agreeing pair for pair with ``score-shuffle --compare sum``."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from collections import Counter

import pytest
import yaml

from incoherent.pipelines.export_lm_eval import join_text, probe_items, shuffle_items, task_name, two_choice
from tests.conftest import read_rows, run_cli
from tests.shuffle_fixtures import write_documents, wsj_docs_dir, wsj_shuffle_dir  # noqa: F401
from tests.tiny_lm import tiny_gpt2_dir, tiny_llama_dir  # noqa: F401
from tests.tiny_model import sample_documents, tiny_data_dir  # noqa: F401


def jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def export(*args) -> int:
    return run_cli("export", "lm-eval", *map(str, args), beam=[])


def test_task_names_and_choice_order():
    assert task_name("shuffle", "wsj", "k2") == "incoherent_shuffle_wsj_k2"
    assert task_name("probe", "animacy-down") == "incoherent_probe_animacy_down"
    labels = [two_choice("A", "B", 0, "t", f"d{i}", 2, 0) for i in range(200)]
    for choices, label in labels:
        assert choices[label] == "A" and choices[1 - label] == "B"
    assert 70 < sum(label for _, label in labels) < 130  # the coherent text is not always first
    assert labels == [two_choice("A", "B", 0, "t", f"d{i}", 2, 0) for i in range(200)]  # stable
    assert [label for _, label in labels] != [
        two_choice("A", "B", 1, "t", f"d{i}", 2, 0)[1] for i in range(200)
    ]
    assert (
        join_text(["A b.", "", "C."], "space") == "A b. C." and join_text(["A.", "B."], "newline") == "A.\nB."
    )


def test_shuffle_tasks_of_a_shuffle_folder(wsj_shuffle_dir, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "tasks"
    assert export(wsj_shuffle_dir, "--out", out) == 0
    printed = capsys.readouterr().out
    rows = read_rows(wsj_shuffle_dir, "shuffle-wsj")
    test = [r for r in rows if r["split"] == "test"]
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["command"] == "export lm-eval" and summary["complete"] is True
    tasks = summary["tasks"]
    assert sorted(tasks) == [
        "incoherent_shuffle_wsj_k1",
        "incoherent_shuffle_wsj_k2",
        "incoherent_shuffle_wsj_k3",
    ]
    assert jsonl(out / "rejected.jsonl") == []  # `shuffle` writes no pair whose texts are the same
    assert sum(tasks.values()) == len(test)
    assert summary["counters"]["export-lm-eval"] == {"items": len(test)}
    for task, n in tasks.items():
        config = yaml.safe_load((out / f"{task}.yaml").read_text())
        assert config["output_type"] == "multiple_choice" and config["target_delimiter"] == ""
        data_file = config["dataset_kwargs"]["data_files"]["test"]
        assert os.path.isabs(data_file) and data_file == str(out / "data" / f"{task}.jsonl")
        items = jsonl(data_file)
        assert len(items) == n
        k = int(task.rsplit("_k", 1)[1])
        by_key = {(r["id"], r["permutation"]): r for r in test if r["block_size"] == k}
        for item in items:
            row = by_key[item["id"], item["permutation"]]
            assert item["context"] == "" and item["block_size"] == k
            assert item["choices"][item["label"]] == " ".join(row["original"])
            assert item["choices"][1 - item["label"]] == " ".join(row["shuffled"])
    overall = yaml.safe_load((out / "incoherent_shuffle.yaml").read_text())
    assert overall["task"] == sorted(tasks, key=lambda t: int(t[-1]))
    assert overall["aggregate_metric_list"][0] == {
        "metric": "acc",
        "aggregation": "mean",
        "weight_by_size": True,
    }
    assert yaml.safe_load((out / "incoherent_shuffle_wsj.yaml").read_text())["task"] == overall["task"]
    assert f"--tasks incoherent_shuffle --include_path {out}" in printed and "left out" not in printed


def test_pairs_without_signal_are_left_out_and_counted():
    rows = [
        {
            "id": "a",
            "block_size": 2,
            "permutation": 0,
            "original": ["A b.", "C d."],
            "shuffled": ["C d.", "A b."],
        },
        {"id": "b", "block_size": 1, "permutation": 0, "original": ["A b."], "shuffled": ["A b."]},
        {"id": "c", "block_size": 2, "permutation": 1, "original": ["", " "], "shuffled": [" ", ""]},
    ]
    left_out = []
    tasks = shuffle_items(
        rows, "wsj", "space", 0, lambda reason, record: left_out.append((reason, record["id"]))
    )
    assert [item["id"] for item in tasks["incoherent_shuffle_wsj_k2"]] == ["a"] and len(tasks) == 1
    assert left_out == [("identical_texts", "b"), ("empty_document", "c")]
    probe = {"id": "p", "phenomenon": "gender", "sentences": ["A.", "She ran."], "intruder_index": 1,
             "intruder_sentence": "He ran."}  # fmt: skip
    first = {**probe, "id": "f", "sentences": ["She ran.", "B."], "intruder_index": 0}
    (items,) = probe_items([probe, {**probe, "id": "q", "intruder_index": 5}, first], "gender", "newline", 0,
                           lambda reason, record: left_out.append((reason, record["id"]))).values()  # fmt: skip
    assert [(item["context"], item["choices"][item["label"]]) for item in items] == [("A.", "He ran.")]
    assert left_out[-2:] == [("bad_probe", "q"), ("intruder_first", "f")]  # no context: the metric would tie


def test_a_build_folder_its_dataset_and_probes_are_accepted(wsj_shuffle_dir, tiny_data_dir, tmp_path):  # noqa: F811
    build = tmp_path / "build"
    shutil.copytree(wsj_shuffle_dir, build / "dataset")
    probes = tmp_path / "probes"
    assert run_cli("probes", tiny_data_dir, "--out", probes, "--phenomena", "negation", "gender") == 0
    assert export(build, probes, "--out", tmp_path / "a") == 0
    assert export(build / "dataset", probes, "--out", tmp_path / "b") == 0
    for name in ("incoherent_shuffle_wsj_k2.yaml", "incoherent_probes.yaml"):
        a = (tmp_path / "a" / name).read_text().replace(str(tmp_path / "a"), "OUT")
        assert a == (tmp_path / "b" / name).read_text().replace(str(tmp_path / "b"), "OUT")
    summary = json.loads((tmp_path / "a" / "run_summary.json").read_text())
    assert summary["groups"]["incoherent_probes"] == ["incoherent_probe_gender", "incoherent_probe_negation"]
    for phenomenon in ("gender", "negation"):
        rows = {r["id"]: r for r in read_rows(probes, f"probe-{phenomenon}")}
        items = jsonl(tmp_path / "a" / "data" / f"incoherent_probe_{phenomenon}.jsonl")
        assert items and len(items) == len(rows) == summary["tasks"][f"incoherent_probe_{phenomenon}"]
        for item in items:
            row = rows[item["id"]]
            unprobed = list(row["sentences"])
            unprobed[row["intruder_index"]] = row["intruder_sentence"]
            # context + delimiter + choice: the whole document, unprobed (gold) or probed
            assert item["context"] + " " + item["choices"][item["label"]] == " ".join(unprobed)
            assert item["context"] + " " + item["choices"][1 - item["label"]] == " ".join(row["sentences"])
            assert item["context"] == " ".join(row["sentences"][: row["intruder_index"]])
        config = yaml.safe_load((tmp_path / "a" / f"incoherent_probe_{phenomenon}.yaml").read_text())
        assert config["target_delimiter"] == " "
        assert [m["metric"] for m in config["metric_list"]] == ["acc_mutual_info", "acc", "acc_norm"]
    group = yaml.safe_load((tmp_path / "a" / "incoherent_probes.yaml").read_text())
    assert [m["metric"] for m in group["aggregate_metric_list"]] == ["acc_mutual_info", "acc", "acc_norm"]
    shuffle_task = yaml.safe_load((tmp_path / "a" / "incoherent_shuffle_wsj_k2.yaml").read_text())
    assert [m["metric"] for m in shuffle_task["metric_list"]] == ["acc", "acc_norm"]  # as before
    # --config picks configs; the same input gives the same bytes
    assert export(build, probes, "--out", tmp_path / "c", "--config", "probe-gender") == 0
    assert sorted(os.listdir(tmp_path / "c" / "data")) == ["incoherent_probe_gender.jsonl"]
    assert (tmp_path / "c" / "data" / "incoherent_probe_gender.jsonl").read_bytes() == (
        tmp_path / "a" / "data" / "incoherent_probe_gender.jsonl"
    ).read_bytes()


def test_overwrite_and_bad_input(wsj_shuffle_dir, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "tasks"
    assert export(wsj_shuffle_dir, "--out", out) == 0
    assert export(wsj_shuffle_dir, "--out", out) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    (out / "data" / "stale.jsonl").write_text("{}\n")
    assert export(wsj_shuffle_dir, "--out", out, "--overwrite", "--split", "train") == 0
    assert not (out / "data" / "stale.jsonl").exists()  # the earlier run is replaced whole
    (out / "mine.yaml").write_text("task: mine\n")  # #53: a user's own file beside the tasks stays
    assert export(wsj_shuffle_dir, "--out", out, "--overwrite") == 0
    assert (out / "mine.yaml").read_text() == "task: mine\n"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    cases = [
        ((tmp_path / "empty-in", "--out", tmp_path / "x"), "no such directory"),
        (
            (wsj_shuffle_dir, "--out", tmp_path / "x", "--config", "shuffle-cnn"),
            "--config: shuffle-cnn not found",
        ),
        ((wsj_shuffle_dir, "--out", tmp_path / "x", "--split", "dev"), "--split dev: no rows"),
        ((wsj_shuffle_dir, "--out", mine, "--overwrite"), "not the output of `incoherent export lm-eval`"),
    ]
    for args, message in cases:
        capsys.readouterr()
        assert export(*args) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (mine / "notes.txt").read_text() == "keep"
    (tmp_path / "plain").mkdir()
    assert export(tmp_path / "plain", "--out", tmp_path / "x") == 2
    assert "no shuffle-*/ or probe-*/ tables" in capsys.readouterr().err


def lm_eval_samples(model_dir: str, tasks_dir, tasks: str, out) -> dict[str, list[dict]]:
    """Run the real ``lm_eval`` CLI offline on the exported tasks; ``{task: logged samples}``."""
    pytest.importorskip("lm_eval", reason="lm-eval is not installed (the bench extra pins it)")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(out / "datasets-cache"),
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    command = [
        sys.executable, "-m", "lm_eval", "--model", "hf",
        "--model_args", f"pretrained={model_dir},dtype=float32", "--device", "cpu", "--batch_size", "8",
        "--tasks", tasks, "--include_path", str(tasks_dir), "--output_path", str(out / "results"),
        "--log_samples",
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    samples: dict[str, list[dict]] = {}
    for path in glob.glob(str(out / "results" / "**" / "samples_*.jsonl"), recursive=True):
        task = os.path.basename(path).removeprefix("samples_").rsplit("_", 1)[0]
        samples[task] = jsonl(path)
    results = glob.glob(str(out / "results" / "**" / "results_*.json"), recursive=True)
    assert len(results) == 1
    samples["_results"] = json.loads(open(results[0], encoding="utf-8").read())["results"]
    return samples


@pytest.mark.e2e
def test_lm_eval_agrees_with_score_shuffle_pair_for_pair(tiny_llama_dir, tiny_data_dir, tmp_path):  # noqa: F811
    """The real ``lm_eval`` on the exported tasks, with the tiny Llama (8,192 positions: every document in one
    window, as lm-eval reads it): its per-choice log-likelihoods are score-shuffle's summed NLLs, and its
    ``acc`` decides every pair as ``score-shuffle --compare sum`` does; the default ``--compare mean`` (the
    same scores, divided by the token counts) decides some pairs the other way, where the shuffle changed the
    token count. The probes' log-likelihoods are our scorer's too. Small (the first 12 WSJ sample documents of 3 sentences or more, k = 2 and 3, two
    permutations) to stay fast."""
    pytest.importorskip("lm_eval", reason="lm-eval is not installed (the bench extra pins it)")
    write_documents(tmp_path / "docs", sample_documents(min_sentences=3, max_sentences=5)[:12])
    data = tmp_path / "shuffle"
    assert run_cli("shuffle", tmp_path / "docs", "--out", data, "--block-sizes", "2", "3", "--permutations", "2",
                   "--test-fraction", "1") == 0  # fmt: skip
    probes = tmp_path / "probes"
    assert (
        run_cli("probes", tiny_data_dir, "--out", probes, "--phenomena", "negation", "--per-phenomenon", "6")
        == 0
    )
    assert export(data, probes, "--out", tmp_path / "tasks") == 0
    assert run_cli(
        "score-shuffle", tiny_llama_dir, data, "--out", tmp_path / "scores", "--compare", "sum",
        "--torch-threads", "1", "--dtype", "float32", "--device", "cpu",
    ) == 0  # fmt: skip
    scores = {
        (r["id"], r["block_size"], r["permutation"]): r for r in read_rows(tmp_path / "scores", "scores")
    }
    samples = lm_eval_samples(
        tiny_llama_dir, tmp_path / "tasks", "incoherent_shuffle,incoherent_probes", tmp_path / "lm-eval"
    )
    compared, max_diff, by_mean, correct, token_changes = 0, 0.0, 0, 0, 0
    for k in (2, 3):
        for sample in samples[f"incoherent_shuffle_wsj_k{k}"]:
            doc = sample["doc"]
            row = scores.pop((doc["id"], k, doc["permutation"]))
            lls = [float(r[0]) for r in sample["filtered_resps"]]
            original_ll, shuffled_ll = lls[doc["label"]], lls[1 - doc["label"]]
            max_diff = max(
                max_diff,
                abs(-original_ll - row["score_original"] * row["tokens_original"]),
                abs(-shuffled_ll - row["score_shuffled"] * row["tokens_shuffled"]),
            )
            assert not row["tie"]
            assert sample["acc"] == float(row["correct"]), doc  # pair for pair
            correct += row["correct"]
            token_changes += row["tokens_original"] != row["tokens_shuffled"]
            by_mean += (row["score_shuffled"] > row["score_original"]) != row["correct"]
            compared += 1
    assert scores == {} and compared > 30  # every scored pair is an lm-eval item
    assert max_diff < 1e-3, max_diff
    assert token_changes > 0 and by_mean > 0  # the default statistic is another one (docs/lm-eval.md)
    overall = samples["_results"]["incoherent_shuffle"]["acc,none"]
    results = json.loads((tmp_path / "scores" / "results.json").read_text())
    assert results["compare"] == "sum"
    per_k = results["results"]["wsj"]
    assert overall == pytest.approx(correct / compared)
    assert overall == pytest.approx(
        sum(v["correct"] for v in per_k.values()) / sum(v["pairs"] for v in per_k.values())
    )
    for k in (2, 3):
        assert samples["_results"][f"incoherent_shuffle_wsj_k{k}"]["acc,none"] == pytest.approx(
            per_k[str(k)]["accuracy"]
        )
    # the probes: lm-eval's log-likelihoods are our scorer's summed NLLs, its acc the unprobed one's win
    from incoherent.filters.lm import LanguageModelScorer

    probe_samples = samples["incoherent_probe_negation"]
    assert len(probe_samples) == len(read_rows(probes, "probe-negation")) > 0
    scorer = LanguageModelScorer.load(tiny_llama_dir, device="cpu", dtype="float32")
    texts = [" " + choice for sample in probe_samples for choice in sample["doc"]["choices"]]
    ours, _ = scorer.score_texts(texts)
    for i, sample in enumerate(probe_samples):
        # two per choice: given the context, then alone (from BOS, the delimiter first: our scorer's text)
        lls = [float(r[0]) for r in sample["filtered_resps"]]
        assert len(lls) == 4
        for j in (0, 1):
            mean, tokens = ours[2 * i + j]
            max_diff = max(max_diff, abs(-lls[2 + j] - mean * tokens))
        label = sample["doc"]["label"]
        assert sample["acc"] == float(lls[label] > lls[1 - label])
        gain = [lls[j] - lls[2 + j] for j in (0, 1)]
        assert sample["acc_mutual_info"] == float(gain[label] > gain[1 - label])
    assert max_diff < 1e-3, max_diff
    print(f"lm-eval vs score-shuffle --compare sum: {compared} pairs, max |dLL| {max_diff:.2e}, "  # noqa: T201
          f"{token_changes} with another token count, {by_mean} decided otherwise by the mean")  # fmt: skip


@pytest.mark.e2e
def test_a_random_model_scores_the_probes_headline_near_chance(tiny_llama_dir, tmp_path):  # noqa: F811
    """#50: the probe tasks' headline was ``acc`` (summed log-likelihood of the two whole documents), and the
    randomly initialised tiny Llama scored 0.91 on it: the unprobed document is the shorter in most pairs
    (negation and past-to-future add words). The headline is now ``acc_mutual_info`` on the document's rest
    after its context: the random model scores 0.40-0.60 (0.52 on the 145 probes of every WSJ sample document,
    docs/lm-eval.md), while ``acc`` stays length-bound, reported beside it."""
    from tests.tiny_model import intruder_rows, write_intruder_build

    data = write_intruder_build(str(tmp_path / "data"), {"test": intruder_rows(sample_documents())})
    probes = tmp_path / "probes"
    assert run_cli("probes", data, "--out", probes) == 0
    assert export(probes, "--out", tmp_path / "tasks") == 0
    samples = lm_eval_samples(tiny_llama_dir, tmp_path / "tasks", "incoherent_probes", tmp_path / "lm-eval")
    group = samples["_results"]["incoherent_probes"]
    items = [sample for task, got in samples.items() if task != "_results" for sample in got]
    assert len(items) > 120  # 145 since #50's fifth round (170 before: negation skips more clauses)
    shorter_gold = sum(
        len(s["doc"]["choices"][s["doc"]["label"]]) < len(s["doc"]["choices"][1 - s["doc"]["label"]])
        for s in items
    )
    assert shorter_gold > 0.8 * len(items)  # the length bias the headline must not follow
    assert group["acc,none"] > 0.8
    assert 0.40 <= group["acc_mutual_info,none"] <= 0.60, group
    headline = next(key for key in group if key.endswith(",none") and not key.endswith("_stderr,none"))
    assert headline == "acc_mutual_info,none"  # the group reports it first
    print(
        f"random tiny Llama, {len(items)} probes: acc_mutual_info {group['acc_mutual_info,none']:.4f}, "  # noqa: T201
        f"acc {group['acc,none']:.4f}, acc_norm {group['acc_norm,none']:.4f}; gold shorter in {shorter_gold}; "
        f"per phenomenon {sorted(Counter(s['doc']['phenomenon'] for s in items).items())}"
    )


@pytest.mark.e2e
def test_compare_sum_changes_only_the_decisions(tiny_gpt2_dir, tmp_path, capsys):  # noqa: F811
    """``score-shuffle``'s default writes what it wrote before ``--compare`` existed (no ``compare`` key in
    ``results.json`` or the run summary's params); ``--compare sum`` keeps the score columns (mean NLL) and
    decides by score x tokens; a classifier has no summed NLL (one line)."""
    write_documents(tmp_path / "docs", sample_documents(min_sentences=3, max_sentences=4)[:6])
    data = tmp_path / "shuffle"
    assert run_cli("shuffle", tmp_path / "docs", "--out", data, "--block-sizes", "2", "--permutations", "3",
                   "--test-fraction", "1") == 0  # fmt: skip
    for compare in ("mean", "sum"):
        flags = ["--compare", "sum"] if compare == "sum" else []
        assert run_cli("score-shuffle", tiny_gpt2_dir, data, "--out", tmp_path / compare, "--torch-threads", "1",
                       "--dtype", "float32", *flags) == 0  # fmt: skip
    results = json.loads((tmp_path / "mean" / "results.json").read_text())
    assert list(results) == ["model_dir", "scorer", "window", "join", "split", "zero_shot", "label", "provenance",
                             "results"]  # fmt: skip
    params = json.loads((tmp_path / "mean" / "run_summary.json").read_text())["params"]
    assert "compare" not in params
    assert json.loads((tmp_path / "sum" / "run_summary.json").read_text())["params"]["compare"] == "sum"
    mean, summed = read_rows(tmp_path / "mean", "scores"), read_rows(tmp_path / "sum", "scores")
    assert len(mean) == len(summed) == 6
    decisions = ("correct", "tie")
    for a, b in zip(mean, summed, strict=True):
        assert {k: v for k, v in a.items() if k not in decisions} == {
            k: v for k, v in b.items() if k not in decisions
        }
        assert a["correct"] == (a["score_shuffled"] - a["score_original"] > 1e-6)
        total_o, total_s = (
            b["score_original"] * b["tokens_original"],
            b["score_shuffled"] * b["tokens_shuffled"],
        )
        assert b["correct"] == (total_s - total_o > 1e-6)
    assert [a["correct"] for a in mean] != [b["correct"] for b in summed]  # the statistics differ here
    capsys.readouterr()
    assert run_cli("score-shuffle", tiny_gpt2_dir, data, "--out", tmp_path / "c", "--scorer", "classifier",
                   "--compare", "sum") == 2  # fmt: skip
    assert "--compare sum: language-model scores" in capsys.readouterr().err


def shuffle_of(tmp_path, sources: dict[str, slice], block_sizes=("1", "2")):
    """``incoherent shuffle`` of WSJ sample documents, ``{source: which documents}``, all in the test split."""
    docs = sample_documents(min_sentences=3, max_sentences=5)
    for source, part in sources.items():
        write_documents(tmp_path / "docs", docs[part], source=source)
    out = tmp_path / "shuffle"
    assert run_cli("shuffle", tmp_path / "docs", "--out", out, "--block-sizes", *block_sizes,
                   "--test-fraction", "1") == 0  # fmt: skip
    return out


@pytest.mark.parametrize(
    "sources, message",
    [
        (("news-a", "news_a"), "shuffle-news_a: incoherent_shuffle_news_a, the lm-eval name of its group, is also"),
        (("x", "x_k1"), "incoherent_shuffle_x_k1, the lm-eval name of its group, is also incoherent_shuffle_x_k1, "
                        "the k = 1 task of shuffle-x"),
        (("wsj", "WSJ"), "case is not told apart"),
    ],
)  # fmt: skip
def test_sources_whose_task_names_collide_are_refused(tmp_path, capsys, sources, message):
    """#53: sources ``news-a`` and ``news_a`` gave "2 tasks, 14 items" (14 of 28 pairs dropped, nothing in
    rejected.jsonl), and ``x_k1``'s group overwrote ``x``'s k = 1 task. Now one line, nothing written."""
    data = shuffle_of(tmp_path, {sources[0]: slice(0, 4), sources[1]: slice(4, 8)})
    out = tmp_path / "tasks"
    assert export(data, "--out", out) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_one_config_in_two_folders_is_refused(wsj_shuffle_dir, tmp_path, capsys):  # noqa: F811
    """Two corpora of one source name (two builds of ``wsj``) would merge into one task; one line instead."""
    other = tmp_path / "other"
    shutil.copytree(wsj_shuffle_dir, other)
    assert export(wsj_shuffle_dir, other, "--out", tmp_path / "tasks") == 2
    err = capsys.readouterr().err
    assert f"shuffle-wsj: in both {wsj_shuffle_dir} and {other}" in err and len(err.strip().splitlines()) == 1


@pytest.mark.e2e
def test_lm_eval_scores_every_item_of_near_colliding_sources(tiny_llama_dir, tmp_path):  # noqa: F811
    """Sources ``x`` and ``x-k`` (tasks ``incoherent_shuffle_x_k1`` and ``incoherent_shuffle_x_k_k1``): the real
    ``lm_eval`` loads every task under its own name and scores every pair of each once."""
    data = shuffle_of(tmp_path, {"x": slice(0, 4), "x-k": slice(4, 8)})
    tasks = tmp_path / "tasks"
    assert export(data, "--out", tasks) == 0
    summary = json.loads((tasks / "run_summary.json").read_text())
    pairs = {c: len(read_rows(data, c)) for c in ("shuffle-x", "shuffle-x-k")}
    assert sum(summary["tasks"].values()) + sum(
        v for k, v in summary["counters"]["export-lm-eval"].items() if k != "items"
    ) == sum(pairs.values())
    samples = lm_eval_samples(tiny_llama_dir, tasks, "incoherent_shuffle", tmp_path / "lm-eval")
    assert sorted(t for t in samples if t != "_results") == sorted(summary["tasks"])
    for task, items in summary["tasks"].items():
        assert len(samples[task]) == items > 0
        ids = {s["doc"]["id"] for s in samples[task]}
        source = "x-k" if task.startswith("incoherent_shuffle_x_k_") else "x"
        assert ids <= {r["id"] for r in read_rows(data, f"shuffle-{source}")}


@pytest.mark.e2e
def test_a_document_too_long_for_the_model_is_left_out_not_a_failed_run(tiny_llama_dir, tmp_path, capsys):  # noqa: F811
    """#53: lm-eval 0.4.13 cuts only the context (ours is empty), so a 200,000-character document failed the
    whole run (``AssertionError len(continuation_enc) <= max_length``). Now a pair whose longer text has more
    than ``--max-bytes`` UTF-8 bytes is left out, counted ``too_long`` and written to rejected.jsonl."""
    docs = sample_documents(min_sentences=3, max_sentences=5)[:4]
    sentences = [s for _, doc in sample_documents(min_sentences=3) for s in doc]
    long_doc, size = [], 0
    while size < 200_000:
        long_doc.append(sentences[len(long_doc) % len(sentences)])
        size += len(long_doc[-1]) + 1
    write_documents(tmp_path / "docs", [*docs, ("long-1", long_doc)])
    data = tmp_path / "shuffle"
    assert run_cli("shuffle", tmp_path / "docs", "--out", data, "--block-sizes", "2", "--test-fraction", "1",
                   "--max-sentences", "100000") == 0  # fmt: skip
    assert any(r["id"] == "long-1" for r in read_rows(data, "shuffle-wsj"))
    tasks = tmp_path / "tasks"
    assert export(data, "--out", tasks) == 0
    assert "left out: too_long 1" in capsys.readouterr().out
    rejected = jsonl(tasks / "rejected.jsonl")
    assert [(r["id"], r["reason"]) for r in rejected] == [("long-1", "too_long")]
    assert json.loads((tasks / "run_summary.json").read_text())["counters"]["export-lm-eval"]["too_long"] == 1
    samples = lm_eval_samples(tiny_llama_dir, tasks, "incoherent_shuffle", tmp_path / "lm-eval")
    assert (
        len(samples["incoherent_shuffle_wsj_k2"])
        == len(jsonl(tasks / "data" / "incoherent_shuffle_wsj_k2.jsonl"))
        > 0
    )
    assert export(data, "--out", tmp_path / "t2", "--max-bytes", "15") == 2
    assert "--max-bytes 15: at least 16" in capsys.readouterr().err
