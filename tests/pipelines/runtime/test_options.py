"""Flags nobody knows, unknown config keys, dry runs and relative paths (:mod:`pipelines.runtime.options`)."""

from __future__ import annotations

import os
import tempfile

import pytest
import yaml

from incoherent.pipelines.runtime.options import unknown_beam_args
from tests.conftest import ROOT, SAMPLES, run_cli

CNN = str(SAMPLES / "cnn" / "frank")


def test_unknown_beam_args_keeps_only_what_no_options_class_declares():
    assert unknown_beam_args([]) == []
    assert unknown_beam_args(["--runner", "DirectRunner", "--direct_num_workers=2"]) == []
    assert unknown_beam_args(["--flink_master=localhost:8081", "--sdk_worker_parallelism", "2"]) == []
    assert unknown_beam_args(["--dry_run=True", "--no_auth", "--s3_endpoint_url=http://127.0.0.1:1"]) == []
    assert unknown_beam_args(["--runner", "DirectRunner", "--no-such-flag", "1"]) == ["--no-such-flag", "1"]
    assert unknown_beam_args(["--direct_num_worker=2"]) == ["--direct_num_worker=2"]  # no abbreviations


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--no-such-flag", "1"], "--no-such-flag: unknown option"),
        (["--direct_num_worker=2"], "--direct_num_worker: unknown option"),
        (["stray"], "stray: unexpected argument"),
    ],
)
def test_an_unknown_flag_stops_the_command_before_any_work(tmp_path, capsys, extra, named):
    out = tmp_path / "out"
    assert run_cli("ingest", "cnn", CNN, "--out", out, *extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and named in err[0]
    assert not out.exists()  # nothing was written, not even the output folder


def test_a_beam_flag_without_its_value_is_one_line(tmp_path, capsys):
    assert run_cli("ingest", "cnn", CNN, "--out", tmp_path / "out", beam=["--runner"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: Beam pipeline options: argument --runner: expected one argument"]


def write_config(path, **sections):
    config = {"base": str(ROOT), "sources": {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"]}}}
    config.update(sections)
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    "sections, named",
    [
        (
            {"intruders": {"no_such_key": 4000}},
            "intruders.no_such_key: unknown key (`incoherent intruders` has no --no-such-key",
        ),
        ({"shuffle": {"block_size": [2]}}, "shuffle.block_size: unknown key"),
        ({"neighbors": {"k": 5, "kk": 1}}, "neighbors.kk: unknown key"),
        ({"intruders": {"out": "x"}}, "intruders.out: unknown key"),  # set by the build itself
        (
            {
                "sources": {
                    "cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"], "options": {"text_field": "x"}}
                }
            },
            "sources.cnn.options.text_field: unknown key (`incoherent ingest cnn`",
        ),
    ],
)
def test_an_unknown_config_key_stops_the_build_before_any_work(tmp_path, capsys, sections, named):
    path = write_config(tmp_path / "build.yaml", **sections)
    assert run_cli("build", path, "--out", tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0]
    assert not (tmp_path / "out").exists()


def test_known_stage_keys_pass_the_check(tmp_path):
    from incoherent.pipelines.build.config import check_config, load_config

    path = write_config(
        tmp_path / "build.yaml",
        neighbors={"k": 3, "threads": 1},
        shuffle={"block_sizes": [1, 2], "max_sentences": 10},
        intruders={"similarity_threshold": 0.5, "filter": "none"},
    )
    config = check_config(load_config(str(path)), str(path))
    assert config["neighbors"] == {"k": 3, "threads": 1}


def test_dry_run_builds_the_graph_writes_nothing_and_says_so(tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli("ingest", "cnn", CNN, "--out", out, "--dry_run=True") == 0
    printed = capsys.readouterr().out
    assert "dry run: `incoherent ingest cnn` job graph built and validated" in printed
    assert "nothing ran" in printed and "complete" not in printed
    assert not out.exists()


@pytest.mark.e2e
def test_build_dry_run_builds_every_stage_graph_and_writes_nothing(tmp_path, capsys):
    path = write_config(
        tmp_path / "build.yaml",
        sources={
            "cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"]},
            "wiki": {
                "kind": "wikipedia",
                "inputs": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"],
                "history": ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"],
            },
        },
        intruders={"sample": 3},
    )
    before = set(os.listdir(tempfile.gettempdir()))
    assert run_cli("build", path, "--out", tmp_path / "out", "--dry_run=True") == 0
    printed = capsys.readouterr().out
    # ingest x3 (one history dump), index x2, neighbors x2, intruders, shuffle x2
    assert "`incoherent build` config checked and 10 job graphs built and validated" in printed
    for command in ("ingest cnn", "ingest wikipedia", "index", "neighbors", "intruders", "shuffle"):
        assert f"dry run: `incoherent {command}` job graph built and validated" in printed, command
    assert "stand-in documents" in printed and "nothing was written" in printed
    assert not (tmp_path / "out").exists()
    assert not [
        n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("incoherent-dry-run-")
    ]


DATAFLOW = [
    "--runner=DataflowRunner",
    "--project=incoherent-test",
    "--region=europe-west1",
    "--temp_location=gs://incoherent-test/tmp",
    "--dry_run=True",
]


@pytest.mark.e2e
def test_dataflow_dry_run_of_every_stage_builds_the_job_and_the_package_offline(tmp_path, capsys):
    pytest.importorskip("google.cloud.storage", reason="needs the `dataflow` extra")
    pytest.importorskip("build", reason="needs the `dataflow` extra")
    docs, index, neighbors = tmp_path / "docs", tmp_path / "index", tmp_path / "neighbors"
    assert run_cli("ingest", "cnn", CNN, "--out", docs) == 0
    assert run_cli("index", docs, "--out", index) == 0
    assert run_cli("neighbors", docs, "--index", index, "--out", neighbors) == 0
    capsys.readouterr()
    setup = ["--setup_file", str(ROOT / "pyproject.toml")]
    runs = {
        "ingest cnn": ["ingest", "cnn", CNN, "--out", "gs://incoherent-test/docs", *setup],
        "index": ["index", docs, "--out", "gs://incoherent-test/index"],
        "neighbors": ["neighbors", docs, "--index", index, "--out", "gs://incoherent-test/neighbors"],
        "intruders": ["intruders", docs, "--index", index, "--neighbors", neighbors, "--out", tmp_path / "i"],
        "shuffle": ["shuffle", docs, "--out", "gs://incoherent-test/shuffle"],
    }
    for command, argv in runs.items():
        assert run_cli(*argv, beam=DATAFLOW) == 0, command
        printed = capsys.readouterr().out
        assert f"dry run: `incoherent {command}` job graph built and validated" in printed
        assert "nothing ran" in printed and '"complete"' not in printed
        if command == "ingest cnn":
            assert "package incoherent-0.1.0.tar.gz built" in printed
    assert not (tmp_path / "i").exists()


@pytest.mark.e2e
def test_dataflow_dry_run_of_a_whole_build(tmp_path, capsys):
    pytest.importorskip("google.cloud.storage", reason="needs the `dataflow` extra")
    pytest.importorskip("build", reason="needs the `dataflow` extra")
    path = write_config(tmp_path / "build.yaml")
    setup = ["--setup_file", str(ROOT / "pyproject.toml")]
    assert run_cli("build", path, "--out", "gs://incoherent-test/build", beam=[*DATAFLOW, *setup]) == 0
    printed = capsys.readouterr().out
    assert "`incoherent build` config checked and 5 job graphs built and validated" in printed
    for command in ("ingest cnn", "index", "neighbors", "intruders", "shuffle"):
        assert f"dry run: `incoherent {command}` job graph built and validated" in printed, command
    assert '"complete"' not in printed


@pytest.mark.parametrize(
    ("runner", "local"),
    [
        (None, True),
        ("DirectRunner", True),
        ("direct", True),
        ("directrunner", True),
        ("FnApiRunner", True),  # Beam's local Python engine itself: local everywhere in incoherent
        ("SwitchingDirectRunner", True),
        ("BundleBasedDirectRunner", True),
        ("DataflowRunner", False),
        ("dataflow", False),
        ("FlinkRunner", False),
        ("PortableRunner", False),
        ("PrismRunner", False),
    ],
)
def test_one_runner_test_for_every_stage(runner, local):
    from apache_beam.options.pipeline_options import PipelineOptions

    from incoherent.pipelines.ingest.wikipedia import several_workers
    from incoherent.pipelines.neighbors.command import scoring_threads
    from incoherent.pipelines.runtime import spill
    from incoherent.pipelines.runtime.options import is_local_runner

    assert is_local_runner(runner) is local
    args = [] if runner is None else ["--runner", runner]
    assert several_workers(args) is (not local)  # one in-process worker unless distributed
    assert (scoring_threads(0, args)[1] == 64) is (not local)

    class Pipeline:  # what spill_dir_of reads of a pipeline
        options = PipelineOptions(args)

    pipeline = Pipeline()
    spill.use_spill_dir(pipeline, "spill-dir")
    assert (spill.spill_dir_of(pipeline) is not None) is local


def test_parse_per_source_maps_sources_and_refuses_two_defaults():
    from incoherent.pipelines.runtime.options import parse_per_source
    from incoherent.schemas.records import InputError

    def ident(value, where):
        return value

    assert parse_per_source(["a=/x=1", "/y"], "--index", ["a", "b"], ident) == {"a": "/x=1", "b": "/y"}
    assert parse_per_source(["/p/a=1"], "--index", ["a"], ident) == {"a": "/p/a=1"}  # '/' before '=': a path
    with pytest.raises(InputError, match="--index c=1: no documents of source 'c'"):
        parse_per_source(["c=1"], "--index", ["a"], ident)
    with pytest.raises(InputError, match="give one sample for all sources, or SOURCE=N per source"):
        parse_per_source(["1", "2"], "--sample", ["a"], ident, metavar="N", what="sample")


def test_the_list_of_beam_flags_is_generated_from_the_installed_beam():
    from incoherent.pipelines.runtime.options import beam_flags_module

    page = (ROOT / "pipelines" / "runtime" / "beam_flags.py").read_text(encoding="utf-8")
    assert page == beam_flags_module(), (
        "pipelines/runtime/beam_flags.py is out of date: run `python -c 'from incoherent.pipelines.runtime.options import "
        'beam_flags_module as m; print(m(), end="")\' > pipelines/runtime/beam_flags.py`'
    )


@pytest.mark.parametrize(
    "argv, named",
    [
        (["build", "--ot", "x"], "--ot: unknown option; did you mean --out?"),
        (
            ["shuffle", CNN, "--out", "{out}", "--blok-sizes", "2"],
            "--blok-sizes: unknown option; did you mean --block-sizes?",
        ),
        (
            ["ingest", "cnn", CNN, "--out", "{out}", "--direct_num_worker=2"],
            "did you mean --direct_num_workers?",
        ),
    ],
)
def test_a_mistyped_flag_names_the_closest_flag(tmp_path, capsys, argv, named):
    out = tmp_path / "out"
    assert run_cli(*[a.format(out=out) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {named}" if named.startswith("--") else "error: ")
    assert named in err[0]
    assert not out.exists()


def test_an_unknown_flag_is_refused_before_beam_or_the_command_is_imported(tmp_path):
    """As fast as --help: the refusal needs neither Beam nor the command's run-time imports."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from incoherent.pipelines.cli import main\n"
        f"rc = main(['shuffle', {CNN!r}, '--out', {str(tmp_path / 'out')!r}, '--no-such-flag', '1'])\n"
        "print(rc, sorted(m for m in ('apache_beam', 'torch') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.strip() == "2 []", done.stderr
    assert "--no-such-flag: unknown option" in done.stderr


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["shuffle", CNN, "--out", "{out}", "--block-sizes", "1,2,3"], "--block-sizes 1 2 3"),
        (["annotate", "export", CNN, "--out", "{out}", "--block-sizes", "1, 2"], "--block-sizes 1 2"),
    ],
)
def test_a_comma_separated_list_says_how_to_write_it(tmp_path, capsys, argv, flag):
    with pytest.raises(SystemExit) as exit:
        run_cli(*[a.format(out=tmp_path / "out") for a in argv])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert f"write a list as values separated by spaces: {flag}\n" in err
