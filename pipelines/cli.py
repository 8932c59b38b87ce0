"""The ``incoherent`` command line.

Each command lives in its own module under ``pipelines/`` exposing ``add_arguments(parser)`` and
``run(args, beam_args) -> int``. Flags we do not know are Beam's (``--runner``, ``--direct_num_workers``,
Dataflow and Flink options) and are passed to the pipeline untouched; a flag that no registered Beam
``PipelineOptions`` class knows either stops the command before any work (:mod:`pipelines.runtime.options`).

Unusable input or configuration ends with one line, ``error: <what> (<file or option>)``, and exit status 2.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
import logging
import re
import sys
from typing import NamedTuple

from pipelines.runtime import progress, safety
from pipelines.runtime.options import DryRun, StageFailed, check_beam_args, use_storage_options
from schemas.records import InputError
from sources.paths import check_name

# Beam's BigQuery module warns on import about an optional client we never use; keep that off the terminal.
logging.getLogger().addFilter(lambda record: "apitools not found" not in record.getMessage())


def _not_input_error(record: logging.LogRecord) -> bool:
    """False for Beam's log of a step that raised our InputError or found the disk full (with a traceback):
    main prints it as one line."""
    raised = record.exc_info[1] if record.exc_info else None
    if isinstance(record.msg, InputError) or isinstance(raised, InputError):
        return False
    return not (raised is not None and disk_full_message(raised))


logging.getLogger("apache_beam.runners.common").addFilter(_not_input_error)


class Command(NamedTuple):
    words: tuple[str, ...]  # ("ingest", "cnn")
    module: str  # the module with add_arguments(parser) and run(args, beam_args)
    help: str  # one line
    stage: bool = False  # run as a stage by `incoherent build` (preloaded by its fork server)


# The one table of commands: the build's stage maps and the fork server's preloads derive from it.
COMMANDS: list[Command] = [
    Command(
        ("ingest", "wikipedia"),
        "pipelines.ingest.wikipedia",
        "MediaWiki XML dumps -> lead-section documents",
        True,
    ),
    Command(
        ("ingest", "cnn"), "pipelines.ingest.cnn", "CNN .story files or cnn_stories.tgz -> documents", True
    ),
    Command(
        ("ingest", "text"), "pipelines.ingest.text", "JSONL / Parquet text collections -> documents", True
    ),
    Command(("shuffle",), "pipelines.shuffle", "k-block shuffled corpora (Laban et al., 2021)", True),
    Command(
        ("score-shuffle",),
        "pipelines.score_shuffle",
        "zero-shot k-block shuffle test of a causal or masked LM",
    ),
    Command(("index",), "pipelines.index", "DrQA hashed-bigram TF-IDF index of documents", True),
    Command(("neighbors",), "pipelines.neighbors", "top-k most similar documents for every document", True),
    Command(("intruders",), "pipelines.intruders.command", "intruder-sentence corpus (INSteD method)", True),
    Command(
        ("build",),
        "pipelines.build.command",
        "ingest -> index -> neighbours -> intruders -> shuffle -> card, from one config",
    ),
    Command(("export", "insted"), "pipelines.export_insted", "write the released INSteD JSONL format"),
    Command(("train-filter",), "pipelines.train_filter", "fine-tune the adversarial intruder classifier"),
    Command(("evaluate",), "pipelines.evaluate", "document accuracy and sentence F1 of a classifier"),
    Command(("finetune-lm",), "pipelines.finetune_lm", "in-domain LM fine-tuning on natural-order text"),
    Command(
        ("train-shuffle",), "pipelines.train_shuffle", "supervised Shuffle Test classifier (not zero-shot)"
    ),
    Command(("card",), "pipelines.card", "write the dataset card (README.md) of a build"),
    Command(("publish",), "pipelines.publish", "upload a build to the Hugging Face Hub"),
    Command(
        ("annotate", "export"), "pipelines.annotate.export", "annotation tasks: MTurk, Label Studio, in-lab"
    ),
    Command(("annotate", "serve"), "pipelines.annotate.serve", "in-lab annotation web application"),
    Command(
        ("annotate", "import"),
        "pipelines.annotate.import_answers",
        "answers from MTurk, Label Studio, the lab, INSteD",
    ),
    Command(("annotate", "report"), "pipelines.annotate.report", "agreement, human accuracy, human vs model"),
    Command(
        ("annotate", "verify"), "pipelines.annotate.verify", "human-verified split and card from a study"
    ),
]


def module_of(*words: str) -> str:
    """The module of the command ``words`` (``module_of("ingest", "cnn")`` -> ``pipelines.ingest.cnn``); a
    command that is not in :data:`COMMANDS` is a KeyError, never a silent miss."""
    for command in COMMANDS:
        if command.words == words:
            return command.module
    raise KeyError(f"no command {' '.join(words)!r} in pipelines.cli.COMMANDS")


def stage_modules() -> list[str]:
    """The modules of the commands a build runs as stages, in table order."""
    return [command.module for command in COMMANDS if command.stage]


_DISK_FULL_TEXT = re.compile(r"(No space left on device|Disk quota exceeded)(?:: '([^'\n]{1,300})')?")


def disk_full_message(exc: BaseException) -> str | None:
    """One line for a write that failed because the disk (or the quota) is full, however it was wrapped (a
    Beam worker's error arrives as text); None for any other error.

    >>> disk_full_message(RuntimeError("OSError: [Errno 28] No space left on device: '/out/a.parquet'"))
    'no space left on device writing /out/a.parquet; free some space or choose another --out'
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            where = f" writing {exc.filename}" if exc.filename else ""
            return f"no space left on device{where}; free some space or choose another --out"
        found = _DISK_FULL_TEXT.search(str(exc))
        if found:
            where = f" writing {found.group(2)}" if found.group(2) else ""
            return f"no space left on device{where}; free some space or choose another --out"
        exc = exc.__cause__ or exc.__context__
    return None


# Arguments of some command that name things, not paths (``config``: a dataset config name; build's config
# file is checked by build itself): a folder of that name in the working directory is not an input.
NOT_PATHS = ("out", "block_sizes", "config", "host", "id_field", "license", "name", "repo_id", "revision")
NOT_PATHS += ("sample", "source", "split", "split_name", "text_field", "token")


def check_out(args: argparse.Namespace) -> None:
    """Before any work: ``--out`` must be apart from every input, and ``--source`` a safe name."""
    out = getattr(args, "out", None)
    if isinstance(out, str) and out:
        safety.check_out_vs_inputs(out, safety.path_arguments(vars(args), skip=NOT_PATHS))
    if isinstance(getattr(args, "source", None), str):
        check_name(args.source, "--source")


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def selected_module(argv: list[str]) -> str | None:
    """The module of the command named in ``argv`` (``ingest cnn ...`` -> ``pipelines.ingest.cnn``), if any."""
    words = [a for a in argv if not a.startswith("-")][:2]
    for command_words, module, _help, _stage in COMMANDS:
        if tuple(words[: len(command_words)]) == command_words:
            return module
    return None


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the selected command's module is imported (fast start, isolated failures)."""
    parser = argparse.ArgumentParser(
        prog="incoherent",
        description="Build coherence-evaluation corpora with Apache Beam. Unknown flags are passed to Beam "
        "(e.g. --runner DataflowRunner, --direct_running_mode multi_processing --direct_num_workers 2).",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log Beam's progress")
    top = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    groups: dict[str, argparse._SubParsersAction] = {}
    for words, module, help_text, _stage in COMMANDS:
        if not _available(module):
            continue
        holder = top
        if len(words) == 2:
            if words[0] not in groups:
                group = top.add_parser(words[0], help=f"{words[0]} commands")
                metavar = "SOURCE" if words[0] == "ingest" else "COMMAND"
                groups[words[0]] = group.add_subparsers(dest="subcommand", metavar=metavar, required=True)
            holder = groups[words[0]]
        sub = holder.add_parser(words[-1], help=help_text, description=help_text)
        sub.set_defaults(_module=module)
        if module == selected:
            importlib.import_module(module).add_arguments(sub)
            sub.add_argument("--quiet", action="store_true", help="no progress bars on the terminal")
    return parser


def command_name(args: argparse.Namespace) -> str:
    """``ingest cnn``, ``shuffle``, ... for messages."""
    return " ".join(w for w in (args.command, getattr(args, "subcommand", None)) if w)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(selected_module(argv))
    args, beam_args = parser.parse_known_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        force=True,
    )
    unknown = [a for a in beam_args if a.startswith("-") and not a.startswith("--")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    progress.configure(quiet=getattr(args, "quiet", False))
    try:
        module = importlib.import_module(args._module)
        if not getattr(module, "CHECKS_OWN_BEAM_ARGS", False):  # build untangles its CONFIG first
            check_beam_args(beam_args, command_name(args))
        use_storage_options(beam_args)
        check_out(args)
        return module.run(args, beam_args) or 0
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except StageFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except DryRun as exc:
        print(exc)
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        message = disk_full_message(exc)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    finally:
        progress.close_all()


if __name__ == "__main__":
    sys.exit(main())
