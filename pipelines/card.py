"""``incoherent card DATASET_DIR``: write the Hugging Face dataset card (``README.md``) of a build.

Also writes the card's figures (``DATASET_DIR/figures/*.png``) and sanitised copies of the run summaries
(``DATASET_DIR/summaries/``), which ``incoherent publish`` uploads with it.
"""

from __future__ import annotations

import argparse
import functools
import os
import posixpath
import shutil
import tempfile

from incoherent.schemas.records import InputError

WRITES_DATASET = "dataset_dir"  # the CLI holds the dataset's build lock while the card is written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset_dir", metavar="DATASET_DIR", help="folder holding the <config>/<split>-*.parquet tables"
    )
    parser.add_argument(
        "--build-dir",
        help="folder searched for run_summary.json files (default: the build folder when DATASET_DIR is "
        "OUT/dataset of `incoherent build`, else DATASET_DIR and below)",
    )
    parser.add_argument(
        "--name",
        default="incoherent coherence corpora",
        help="pretty name of the dataset (default: %(default)s)",
    )
    parser.add_argument(
        "--license",
        help="licence id for the card's metadata (default: from the sources: cc-by-sa-4.0 when every config "
        "holds Wikipedia text only, else other)",
    )


def default_build_dir(args: argparse.Namespace) -> str:
    """``--build-dir``, else the parent of ``OUT/dataset`` for a build, else DATASET_DIR itself."""
    from incoherent.corpora.card.inputs import BUILD_SUMMARY
    from incoherent.pipelines.runtime import storage

    if args.build_dir:
        return storage.absolute(args.build_dir)
    dataset = storage.absolute(args.dataset_dir)
    parent = (
        posixpath.dirname(dataset.rstrip("/")) if storage.is_remote(dataset) else os.path.dirname(dataset)
    )
    return parent if storage.BeamFiles().isfile(storage.join(parent, BUILD_SUMMARY)) else dataset


def write_local_card(build_dir: str, dataset_dir: str, name: str, license_id: str | None = None) -> str:
    """:func:`corpora.card.render.write_card` with the human-verification section of ``incoherent annotate verify``."""
    from incoherent.annotation.verify import card_lines
    from incoherent.corpora.card.render import write_card

    return write_card(build_dir, dataset_dir, name, license_id, verification=card_lines)


DRY_RUN = (
    False  # the card of a remote dataset runs a pipeline, but a card is small: no dry run (no --dry-run)
)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.runtime import storage

    if storage.is_remote(args.dataset_dir):  # its statistics are computed by a pipeline: Beam flags apply
        path = write_remote_card(
            default_build_dir(args), args.dataset_dir, args.name, args.license, list(beam_args)
        )
        print(f"wrote {path}")
        return 0
    if beam_args:
        raise InputError(f"unrecognized arguments: {' '.join(beam_args)}")
    if not os.path.isdir(args.dataset_dir):
        raise InputError(f"{args.dataset_dir}: no such directory")
    path = write_local_card(default_build_dir(args), args.dataset_dir, args.name, args.license)
    print(f"wrote {path}")
    return 0


def _file_stats(item: tuple[str, str]) -> tuple[str, object]:
    from incoherent.corpora.card.statistics import table_stats
    from incoherent.pipelines.runtime import storage

    config, path = item
    return config, table_stats(config, [path], storage.open_any)


def _merge_all(values) -> object:
    from incoherent.corpora.card.stats import merge_stats

    return functools.reduce(merge_stats, values)


def pipeline_stats(configs: dict[str, dict[str, list[str]]], beam_args: list[str], work: str) -> dict:
    """The card's statistics computed by a pipeline: each table file read by a worker where it lies (every
    row is read there, never by the driver), the per-file counts merged per config, and the merged result
    (a few KB of JSON) written to ``work`` for the driver. Equal to :func:`corpora.card.statistics.collect_stats`."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from incoherent.corpora.card.statistics import assemble_stats
    from incoherent.corpora.card.stats import from_json, to_json
    from incoherent.pipelines.runtime import storage
    from incoherent.pipelines.runtime.job_servers import stop_job_servers
    from incoherent.pipelines.runtime.run import resolve_runner

    items = [
        (c, path) for c, splits in sorted(configs.items()) for paths in splits.values() for path in paths
    ]
    result = storage.join(work, "card_stats.json")

    def write(per_config: list[tuple[str, object]]) -> None:
        storage.write_bytes(result, to_json(dict(per_config)).encode("utf-8"))

    options = PipelineOptions(list(beam_args))
    runner = resolve_runner(options)
    try:
        with beam.Pipeline(runner=runner, options=options) as pipeline:
            _ = (
                pipeline
                | "Tables" >> beam.Create(items)
                | "Spread" >> beam.Reshuffle()
                | "FileStats" >> beam.Map(_file_stats)
                | "WithStats" >> beam.Filter(lambda kv: kv[1] is not None)
                | "Merge" >> beam.CombinePerKey(_merge_all)
                | "Gather" >> beam.combiners.ToList()
                | "Write" >> beam.Map(write)
            )
    finally:
        stop_job_servers(runner)  # Flink, Spark: the job server this pipeline started
    per_config = from_json(storage.read_bytes(result).decode("utf-8"))
    storage.delete_tree(work)
    return assemble_stats(per_config)


def write_remote_card(
    build_dir: str, dataset_dir: str, name: str, license_id: str | None, beam_args: list[str]
) -> str:
    """The card of a dataset in object storage, written there (``README.md``, ``figures/``, ``summaries/``).

    The driver reads only what is small and does not grow with the corpus: the run summaries and the build
    summary (:func:`corpora.card.inputs.summary_files`; they also record each input's size and sha256 from the ingest
    runs), the index metadata and the tables' Parquet footers.
    The statistics, which count every row, come from :func:`pipeline_stats` on the same runner as the build.
    """
    from incoherent.corpora.card.figures import FIGURES
    from incoherent.corpora.card.inputs import find_configs, load_build_summary, load_summaries, summary_files
    from incoherent.corpora.card.provenance import write_summaries
    from incoherent.corpora.card.render import render_card
    from incoherent.pipelines.runtime import storage

    build_dir, dataset_dir = storage.absolute(build_dir), storage.absolute(dataset_dir).rstrip("/")
    files = storage.BeamFiles()
    local = tempfile.mkdtemp(prefix="incoherent-card-")
    try:
        summaries_dir, staged = os.path.join(local, "build"), os.path.join(local, "card")
        for path, relative in summary_files(files.glob(storage.join(build_dir, "**", "*.json")), build_dir):
            storage.write_bytes(os.path.join(summaries_dir, *relative.split("/")), storage.read_bytes(path))
        if not os.path.isdir(summaries_dir):
            raise InputError(f"{build_dir}: no run summaries to describe the build with")
        configs = find_configs(dataset_dir, files)
        stats = pipeline_stats(configs, beam_args, storage.join(build_dir, "_card"))
        text = render_card(
            summaries_dir,
            dataset_dir,
            name,
            license_id,
            files=files,
            stats=stats,
            figures_dir=staged,
            out=build_dir,
        )
        write_summaries(
            summaries_dir,
            staged,
            load_build_summary(summaries_dir),
            load_summaries(summaries_dir),
            out=build_dir,
        )
        with open(os.path.join(staged, "README.md"), "w", encoding="utf-8") as f:
            f.write(text)
        for stale in (FIGURES, "summaries"):  # an earlier card's files must not survive beside the new ones
            storage.delete_tree(storage.join(dataset_dir, stale))
        for root, _, names in os.walk(staged):
            for file_name in sorted(names):
                path = os.path.join(root, file_name)
                target = storage.join(dataset_dir, *os.path.relpath(path, staged).split(os.sep))
                with open(path, "rb") as f:
                    storage.write_bytes(target, f.read())
        return storage.join(dataset_dir, "README.md")
    finally:
        shutil.rmtree(local, ignore_errors=True)
