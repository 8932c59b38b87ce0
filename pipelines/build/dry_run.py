"""``incoherent build --dry_run=True``: check the config and build and validate every stage's job graph,
running nothing and writing nothing under ``OUT``; the stages after ingest get stand-in documents
(:func:`dry_run_build`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile

from incoherent.pipelines.build.plan import WORK, plan
from incoherent.pipelines.commands import run_in_process
from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.options import DryRun


def wants_dry_run(beam_args: list[str]) -> bool:
    """Whether Beam's flags ask for a dry run (``--dry_run=True``)."""
    if not any(a.startswith("--dry_run") for a in beam_args):
        return False
    from apache_beam.options.pipeline_options import PipelineOptions

    from incoherent.pipelines.runtime.run import is_dry_run

    return is_dry_run(PipelineOptions(beam_args))


STANDIN_DOCUMENTS = 6


def write_standin_documents(docs_dir: str, source: str, older: bool = False, kind: str | None = None) -> None:
    """A few documents of ``source`` laid out as ``incoherent ingest`` writes them (a dry run's stand-ins), with
    the run summary that says the source's ``kind`` (what ``intruders`` reads of its inputs) when it is given."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from incoherent.schemas import DOCUMENT_SCHEMA

    version = "an older" if older else "the current"
    rows = [
        {
            "id": f"{source}:{n}",
            "source": source,
            "title": f"Stand-in {n}",
            "sentences": [
                f"Stand-in document {n} opens {version} version of its text.",
                *(
                    f"Sentence {i} of stand-in document {n} says something about topic {n % 3}."
                    for i in range(1, 5)
                ),
            ],
        }
        for n in range(1, STANDIN_DOCUMENTS + 1)
    ]
    folder = os.path.join(docs_dir, f"documents-{source}")
    os.makedirs(folder, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=DOCUMENT_SCHEMA)
    pq.write_table(table, os.path.join(folder, "documents-00000-of-00001.parquet"))
    if kind is not None:
        summary = {"command": f"ingest {kind}", "kind": kind, "params": {"source": source}}
        with open(os.path.join(docs_dir, "run_summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f)


def _dry_run_stage(argv: list[str], beam_args: list[str]) -> str:
    try:
        run_in_process(argv, beam_args)
    except DryRun as exc:
        print(f"[build] {exc}", flush=True)
        return str(exc)
    raise RuntimeError(f"build --dry_run: `incoherent {' '.join(argv[:2])}` ran instead of stopping")


def dry_run_build(config: dict, out: str, beam_args: list[str]) -> int:
    """``--dry_run=True``: check the config and build and validate the job graph of every stage.

    Nothing is submitted and nothing is written under ``out``. The ingest graphs are built on the real inputs
    (listed, not read). The later stages read what ingest writes, which a dry run does not write, so their
    graphs are built on stand-ins: a few documents per source written to a temporary folder, which the local
    runner indexes and searches for real so that every stage's own checks pass; each stage's graph is then
    built with the given runner and options (on Dataflow: translated and validated, the package staged). The
    stand-ins are deleted; the `DryRun` message says all of this.
    """
    built, later = [], []
    for stage in plan(config, storage.join(out, WORK)):
        if stage.argv[0] == "ingest":
            built.append(_dry_run_stage(stage.argv, beam_args))
    standin = tempfile.mkdtemp(prefix="incoherent-dry-run-")
    try:
        ingest_names = {}
        for stage in plan(config, os.path.join(standin, WORK)):
            source = stage.name.split("/")[1] if "/" in stage.name else None
            if stage.argv[0] == "ingest":
                older = stage.name.startswith("ingest-history/")
                write_standin_documents(stage.out, source, older=older, kind=stage.argv[1])
                ingest_names[stage.name] = source
            elif stage.make is not None:
                stage.make(stage.out)  # the sample's query ids, from the stand-in documents
            else:
                built.append(_dry_run_stage(stage.argv, beam_args))
                later += [stage.argv[0]] if stage.argv[0] not in later else []
                if stage.argv[0] in ("index", "neighbors"):  # what the next stages' checks read
                    run_in_process(stage.argv, [])
    finally:
        shutil.rmtree(standin, ignore_errors=True)
    names = ", ".join(later[:-1]) + (" and " if len(later) > 1 else "") + (later[-1] if later else "")
    searched = (
        ", indexed and searched here in a temporary folder,"
        if "index" in later
        else " in a temporary folder,"
    )
    raise DryRun(
        f"dry run: `incoherent build` config checked and {len(built)} job graphs built and validated (ingest on "
        f"the real inputs, listed but not read; {names} on {STANDIN_DOCUMENTS} stand-in documents per "
        f"source{searched} since their real inputs are what ingest writes); nothing was submitted and nothing "
        "was written"
    )
