"""The one table of ``incoherent`` commands, :data:`COMMANDS`, and what reads it: the parser, and running a
command by its command line in this process.

A command is a module with ``add_arguments(parser)`` and ``run(args, beam_args) -> int``. Nothing here imports
a command module by an import statement: :func:`build_parser` and :func:`run_in_process` import it by its name
from the table (``importlib``), and only the one that was asked for, so the CLI starts fast, a command whose
optional dependencies are missing fails alone, and this module sits below every command in the import layers
(``tests/test_imports.py``). What derives from the table: the build's stage maps
(:mod:`pipelines.build.config`) and the fork server's preloads (:mod:`pipelines.build.processes`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import sys
from typing import NamedTuple

from incoherent.pipelines.runtime import progress
from incoherent.schemas.records import InputError


class Command(NamedTuple):
    words: tuple[str, ...]  # ("ingest", "cnn")
    module: str  # the module with add_arguments(parser) and run(args, beam_args)
    help: str  # one line
    stage: bool = False  # run as a stage by `incoherent build` (preloaded by its fork server)


# The one table of commands: the build's stage maps and the fork server's preloads derive from it.
COMMANDS: list[Command] = [
    Command(
        ("ingest", "wikipedia"),
        "incoherent.pipelines.ingest.wikipedia",
        "MediaWiki XML dumps -> lead-section documents",
        True,
    ),
    Command(
        ("ingest", "cnn"),
        "incoherent.pipelines.ingest.cnn",
        "CNN .story files or cnn_stories.tgz -> documents",
        True,
    ),
    Command(
        ("ingest", "text"),
        "incoherent.pipelines.ingest.text",
        "JSONL / Parquet text collections -> documents",
        True,
    ),
    Command(
        ("shuffle",),
        "incoherent.pipelines.shuffle.command",
        "k-block shuffled corpora (Laban et al., 2021)",
        True,
    ),
    Command(
        ("score-shuffle",),
        "incoherent.pipelines.score_shuffle.command",
        "zero-shot k-block shuffle test of a causal or masked LM",
    ),
    Command(
        ("index",), "incoherent.pipelines.index.command", "DrQA hashed-bigram TF-IDF index of documents", True
    ),
    Command(
        ("neighbors",),
        "incoherent.pipelines.neighbors.command",
        "top-k most similar documents for every document",
        True,
    ),
    Command(
        ("intruders",),
        "incoherent.pipelines.intruders.command",
        "intruder-sentence corpus (INSteD method)",
        True,
    ),
    Command(
        ("build",),
        "incoherent.pipelines.build.command",
        "ingest -> index -> neighbours -> intruders -> shuffle -> card, from one config",
    ),
    Command(
        ("probes",),
        "incoherent.pipelines.probes.command",
        "linguistic probes of intruder sentences (INSteD's eight phenomena)",
    ),
    Command(
        ("export", "insted"), "incoherent.pipelines.export_insted", "write the released INSteD JSONL format"
    ),
    Command(
        ("export", "lm-eval"),
        "incoherent.pipelines.export_lm_eval",
        "lm-evaluation-harness tasks: shuffle test and probes as two-choice items",
    ),
    Command(
        ("train-filter",),
        "incoherent.pipelines.train_filter",
        "fine-tune the adversarial intruder classifier",
    ),
    Command(
        ("evaluate",), "incoherent.pipelines.evaluate", "document accuracy and sentence F1 of a classifier"
    ),
    Command(
        ("finetune-lm",), "incoherent.pipelines.finetune_lm", "in-domain LM fine-tuning on natural-order text"
    ),
    Command(
        ("train-shuffle",),
        "incoherent.pipelines.train_shuffle",
        "supervised Shuffle Test classifier (not zero-shot)",
    ),
    Command(("card",), "incoherent.pipelines.card", "write the dataset card (README.md) of a build"),
    Command(("publish",), "incoherent.pipelines.publish", "upload a build to the Hugging Face Hub"),
    Command(
        ("annotate", "export"),
        "incoherent.pipelines.annotate.export",
        "annotation tasks: MTurk, Label Studio, in-lab",
    ),
    Command(
        ("annotate", "serve"), "incoherent.pipelines.annotate.serve", "in-lab annotation web application"
    ),
    Command(
        ("annotate", "import"),
        "incoherent.pipelines.annotate.import_answers",
        "answers from MTurk, Label Studio, the lab, INSteD",
    ),
    Command(
        ("annotate", "overlap"),
        "incoherent.pipelines.annotate.overlap",
        "set annotators per task of a Label Studio project (its API)",
    ),
    Command(
        ("annotate", "review"),
        "incoherent.pipelines.annotate.review",
        "approve or reject each MTurk assignment (results CSV to upload)",
    ),
    Command(
        ("annotate", "report"),
        "incoherent.pipelines.annotate.report",
        "agreement, human accuracy, human vs model",
    ),
    Command(
        ("annotate", "verify"),
        "incoherent.pipelines.annotate.verify",
        "human-verified split and card from a study",
    ),
    Command(
        ("annotate", "release"),
        "incoherent.pipelines.annotate.release",
        "a study's per-document answers in INSteD's released format",
    ),
    Command(
        ("completion",),
        "incoherent.pipelines.completion",
        "shell completion script (bash, zsh, tcsh) on stdout",
    ),
]

# The kinds of source (`ingest KIND`): what a source's kind may be, in the build config and `intruders --kind`.
INGEST_KINDS: tuple[str, ...] = tuple(c.words[1] for c in COMMANDS if c.words[0] == "ingest")

# The options every command shares, with one meaning everywhere (docs/commands.md#common-behaviour).
QUIET_HELP = (
    "nothing but the result on the terminal: no progress bars, no model-loading bars or library warnings "
    "(a run without a terminal prints none either)"
)
DRY_RUN_HELP = (
    "check the inputs and options and build the job graph (Beam's --dry_run=True), run nothing and write "
    "nothing; says that it was a dry run"
)
DEVICE_HELP = (
    "where the model runs: auto (a CUDA GPU when torch sees one, else the CPU), cuda or cpu (default: auto)"
)
DTYPE_HELP = (
    "the model's number type: auto (bfloat16 on GPUs that support it, else float16 on a GPU, float32 on the "
    "CPU), float32, bfloat16 or float16 (default: auto)"
)
OVERWRITE_HELP = (
    "replace this command's own earlier output in {where} (nothing else there is touched; without it a "
    "non-empty {where} is refused)"
)


def add_overwrite(parser: argparse.ArgumentParser, where: str = "--out") -> None:
    """The one ``--overwrite`` flag: it replaces only the command's own earlier output in ``where``."""
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP.format(where=where))


def list_flag(parser: argparse.ArgumentParser, *flags: str, **kwargs) -> argparse.Action:
    """A flag taking a list as repeated values, the one convention of every command: ``--block-sizes 1 2 3``
    (and ``--block-sizes 1 --block-sizes 2`` adds to the list)."""
    kwargs.setdefault("default", [])
    return parser.add_argument(*flags, nargs="+", action="extend", **kwargs)


def list_item(convert, flag: str):
    """The ``type`` of one value of a list flag (``--block-sizes 1 2 3``): ``1,2,3`` is refused with the way
    to write it, as the earlier docs and scripts wrote it."""

    def item(value: str):
        if "," in value:
            spaced = " ".join(part.strip() for part in value.split(",") if part.strip())
            raise argparse.ArgumentTypeError(
                f"{value!r}: write a list as values separated by spaces: {flag} {spaced}"
            )
        try:
            return convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {convert.__name__} value: {value!r}") from None

    item.__name__ = convert.__name__
    return item


def module_of(*words: str) -> str:
    """The module of the command ``words`` (``module_of("ingest", "cnn")`` -> ``pipelines.ingest.cnn``); a
    command that is not in :data:`COMMANDS` is a KeyError, never a silent miss."""
    for command in COMMANDS:
        if command.words == words:
            return command.module
    raise KeyError(f"no command {' '.join(words)!r} in pipelines.commands.COMMANDS")


def stage_modules() -> list[str]:
    """The modules of the commands a build runs as stages, in table order."""
    return [command.module for command in COMMANDS if command.stage]


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def selected_module(argv: list[str]) -> str | None:
    """The module of the command named in ``argv`` (``ingest cnn ...`` -> ``pipelines.ingest.cnn``), if any."""
    words = [a for a in argv if not a.startswith("-")][:2]
    for command_words, module, _help, _stage in COMMANDS:
        if tuple(words[: len(command_words)]) == command_words:
            return module
    return None


def incoherent_version() -> str:
    """The installed version of ``incoherent`` (``unknown`` when it runs from a tree that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("incoherent")
    except PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (no metadata read on every start)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"incoherent {incoherent_version()}\n", sys.stdout)
        parser.exit()


def add_common_arguments(parser: argparse.ArgumentParser, module) -> None:
    """The flags every command shares, after its own: ``--quiet``; ``--dry-run`` for a command that runs a Beam
    pipeline through :func:`pipelines.runtime.run.run_pipeline`, which honours Beam's ``--dry_run=True`` (a
    command with its own ``--dry-run``, ``publish``, keeps it; ``DRY_RUN = False`` declares a command without)."""
    own = {flag for action in parser._actions for flag in action.option_strings}
    dry_run = getattr(module, "DRY_RUN", getattr(module, "TAKES_BEAM_ARGS", True))
    if dry_run and "--dry-run" not in own:
        parser.add_argument("--dry-run", action="store_true", help=DRY_RUN_HELP)
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def with_dry_run(args: argparse.Namespace, module, beam_args: list[str]) -> list[str]:
    """Beam's flags of a run, with ``--dry_run=True`` when ``--dry-run`` was given to a Beam command."""
    if getattr(args, "dry_run", False) and getattr(
        module, "DRY_RUN", getattr(module, "TAKES_BEAM_ARGS", True)
    ):
        return [*beam_args, "--dry_run=True"]
    return list(beam_args)


def build_parser(selected: str | None = None, every_command: bool = False) -> argparse.ArgumentParser:
    """The argument parser; only the selected command's module is imported (fast start, isolated failures),
    or, with ``every_command``, every command's (for shell completion and the flag reference)."""
    parser = argparse.ArgumentParser(
        prog="incoherent",
        description="Build coherence-evaluation corpora with Apache Beam. Unknown flags are passed to Beam "
        "(e.g. --runner DataflowRunner, --direct_running_mode multi_processing --direct_num_workers 2).",
    )
    parser.add_argument("--version", action=_Version, help="print the version of incoherent and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="log Beam's progress")
    # Not required: with no command (or a group without its subcommand) the CLI prints that parser's help.
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.set_defaults(_help_of=parser)
    groups: dict[str, argparse._SubParsersAction] = {}
    for words, module, help_text, _stage in COMMANDS:
        if not _available(module):
            continue
        holder = top
        if len(words) == 2:
            if words[0] not in groups:
                group = top.add_parser(
                    words[0], help=f"{words[0]} commands", description=f"{words[0]} commands"
                )
                group.set_defaults(_help_of=group)
                metavar = "SOURCE" if words[0] == "ingest" else "COMMAND"
                groups[words[0]] = group.add_subparsers(dest="subcommand", metavar=metavar)
            holder = groups[words[0]]
        sub = holder.add_parser(words[-1], help=help_text, description=help_text)
        sub.set_defaults(_module=module, _help_of=None)
        if module == selected:
            command = importlib.import_module(module)
            parser.selected_flags = sub._option_string_actions  # the command's own flags, for did-you-mean
        elif every_command:
            try:  # a command whose optional dependencies are missing is listed, without its flags
                command = importlib.import_module(module)
            except ImportError:
                continue
        else:
            continue
        command.add_arguments(sub)
        add_common_arguments(sub, command)
    return parser


def run_in_process(argv: list[str], beam_args: list[str], quiet: bool = True) -> None:
    """Run one ``incoherent`` command in this process (its InputError propagates; ``quiet``: its report,
    printed on stdout, is dropped)."""
    words = tuple(argv[:2]) if argv[0] in ("ingest", "export") else (argv[0],)
    module = next((c.module for c in COMMANDS if c.words == words), None)
    if module is None or importlib.util.find_spec(module) is None:
        raise InputError(f"build: the `{' '.join(words)}` command is not available in this installation")
    parser = build_parser(selected_module(argv))
    args, extra = parser.parse_known_args(argv + list(beam_args))
    module = importlib.import_module(args._module)
    extra = with_dry_run(args, module, extra)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink) if quiet else contextlib.nullcontext():
            module.run(args, extra)
    finally:
        progress.close_all()
