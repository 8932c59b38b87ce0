"""``incoherent build [CONFIG]``: ingest -> index -> neighbours -> shuffle -> intruders from one YAML file.

Without CONFIG the bundled ``pipelines/configs/default.yaml`` builds from the repository's ``samples/``
into ``out/sample/``. Every input named by the config is checked before any work starts.

Config (see the default for a complete example)::

    base: ../..                  # relative input paths: against base (relative to the config file), then the CWD
    out: out/sample              # relative to the current directory; --out overrides
    seed: 0
    sources:
      wikipedia: {kind: wikipedia, inputs: [dump.xml.bz2], history: [old-dump.xml.bz2]}
      cnn: {kind: cnn, inputs: [cnn/stories]}
      news: {kind: text, inputs: [news.jsonl], options: {text-field: body}}
    neighbors: {k: 10}
    intruders: {filter: none, similarity_threshold: 0.6, drift_threshold: 0.72, validation_fraction: 0.0}
    shuffle: {block_sizes: [1, 2, 3, 4, 5], max_sentences: 20}

What a build writes under ``OUT`` and the order of its stages: :mod:`pipelines.build.plan`; how it runs them
and resumes an earlier build: :mod:`pipelines.build.execute`; the config's checks: :mod:`pipelines.build.config`.
"""

from __future__ import annotations

import argparse
import os

from incoherent.pipelines.build.config import (
    check_before_run,
    check_config,
    config_inputs,
    default_config_path,
    load_config,
)
from incoherent.pipelines.build.dry_run import dry_run_build, wants_dry_run
from incoherent.pipelines.build.execute import build, prepare_build_dir
from incoherent.pipelines.build.plan import WORK, plan
from incoherent.pipelines.runtime import progress, safety, storage
from incoherent.pipelines.runtime.job_servers import (
    SharedJobServer,
    check_runner_services,
    local_paths_problem,
)
from incoherent.pipelines.runtime.options import bound_driver_retries, check_beam_args
from incoherent.schemas.records import InputError

ON_INTERRUPT = (
    "interrupted: run the same command again to resume (finished stages are kept; the stage that was running "
    "starts over)"
)
CHECKS_OWN_BEAM_ARGS = True  # the CLI leaves the check of Beam's flags to run(), after untangle()
OWN_LOCK = True  # the build takes OUT's lock itself (pipelines.build.execute), after its checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config", nargs="?", metavar="CONFIG", help="YAML build config (default: bundled samples)"
    )
    parser.add_argument("--out", help="output directory (default: the config's `out`)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="redo every stage (default: resume an earlier build in --out, skipping its finished stages)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="the same as --force: redo every stage, replacing only the build's own earlier output in --out "
        "(dataset/, work/, build_summary.json; nothing else there is touched)",
    )


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    args.config, beam_args = untangle(args.config, list(beam_args))
    check_beam_args(beam_args, "build")
    check_runner_services(beam_args)  # Flink/Spark: a local job server jar and a master that answers
    bound_driver_retries()
    config_path = args.config or default_config_path()
    raw = load_config(config_path)
    config = check_config(raw, config_path)
    check_before_run(raw, config, plan(config, WORK), config_path)  # every value, no work yet
    out = storage.absolute(args.out or str(raw.get("out", "out/build")))  # local, gs:// or s3://
    safety.check_no_wildcards(out, "--out")  # from the config's `out:` too
    for path in config_inputs(config):
        if os.path.exists(path):
            safety.check_no_wildcards(path, "input")
    safety.check_out_vs_inputs(out, [os.path.abspath(config_path), *config_inputs(config)])
    problem = local_paths_problem(beam_args, [("--out", out), *(("", p) for p in config_inputs(config))])
    if problem:  # SDK workers on other hosts cannot read this machine's disk
        raise InputError(problem)
    for line in config.get("skipped_sources", {}).values():
        progress.write(f"[build] {line}")
    if wants_dry_run(beam_args):
        return dry_run_build(config, out, beam_args)
    earlier, lock = prepare_build_dir(out, args.force or args.overwrite)
    job_server = SharedJobServer(beam_args)  # Flink, Spark: one job server for every stage
    try:
        return build(beam_args, config_path, raw, config, out, earlier, job_server.args)
    finally:
        job_server.stop()  # on success, failure and Ctrl-C alike
        if lock is not None:
            lock.release()


CONFIG_SUFFIXES = (".yaml", ".yml")


def untangle(config: str | None, beam_args: list[str]) -> tuple[str | None, list[str]]:
    """Undo argparse giving a Beam flag's value to the optional CONFIG positional.

    ``incoherent build --runner DirectRunner`` parses as CONFIG=``DirectRunner`` with ``--runner`` left
    dangling among Beam's flags; put the value back after its flag and take a ``*.yaml`` token as CONFIG.

    >>> untangle("DirectRunner", ["--runner"])
    (None, ['--runner', 'DirectRunner'])
    >>> untangle("DirectRunner", ["--runner", "my.yaml", "--x=1"])
    ('my.yaml', ['--runner', 'DirectRunner', '--x=1'])
    """
    if config is None or config.endswith(CONFIG_SUFFIXES) or os.path.isfile(config):
        return config, beam_args
    dangling = [
        i
        for i, a in enumerate(beam_args)
        if a.startswith("--")
        and "=" not in a
        and (
            i + 1 == len(beam_args)
            or beam_args[i + 1].startswith("-")
            or beam_args[i + 1].endswith(CONFIG_SUFFIXES)
        )
    ]
    if not dangling:
        return config, beam_args
    i = dangling[0]
    rest = beam_args[: i + 1] + [config] + beam_args[i + 1 :]
    configs = [a for a in rest if a.endswith(CONFIG_SUFFIXES) and not a.startswith("-")]
    if configs:
        rest.remove(configs[0])
        return configs[0], rest
    return None, rest
