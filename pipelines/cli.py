"""The ``incoherent`` command line.

Each command lives in its own module under ``pipelines/`` exposing ``add_arguments(parser)`` and
``run(args, beam_args) -> int``, listed in the one table of commands, :data:`pipelines.commands.COMMANDS`;
this module is the entry point (``main``) and reaches a command's module only through that table. Flags we do not know are Beam's (``--runner``, ``--direct_num_workers``,
Dataflow and Flink options) and are passed to the pipeline untouched; a flag that no registered Beam
``PipelineOptions`` class knows either stops the command before any work (:mod:`pipelines.runtime.options`).

Unusable input or configuration ends with one line, ``error: <what> (<file or option>)``, and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import threading
import warnings

from incoherent.fileio.paths import check_name
from incoherent.pipelines.commands import build_parser, selected_module, with_dry_run
from incoherent.pipelines.runtime import interrupts, progress, safety
from incoherent.pipelines.runtime.errors import disk_full_message
from incoherent.pipelines.runtime.job_servers import check_runner_services, local_paths_problem
from incoherent.pipelines.runtime.options import (
    DryRun,
    StageFailed,
    check_beam_args,
    check_flag_names,
    use_storage_options,
)
from incoherent.schemas.records import InputError
from incoherent.terminal import printable

# Beam's BigQuery module warns on import about an optional client we never use; keep that off the terminal.
logging.getLogger().addFilter(lambda record: "apitools not found" not in record.getMessage())
# Every SDK worker process of --direct_running_mode=multi_processing warns that it has no staging folder, which
# the local runner never gives it (and nothing of ours needs): the driver relays it, once per worker.
logging.getLogger("apache_beam.runners.portability.local_job_service").addFilter(
    lambda record: "No semi_persistent_directory found" not in record.getMessage()
)
# A build started as `python -m incoherent.pipelines.cli` (or `python -m incoherent`) has multiprocessing run this module again in each stage process
# (as `__mp_main__`, as it does for a main module named by -m), where the fork server has already imported it:
# runpy warns about that once per stage. Running it twice does nothing but install these filters again.
warnings.filterwarnings(
    "ignore", message=r"'(incoherent\.)?pipelines\.cli' found in sys\.modules", category=RuntimeWarning
)


def _not_input_error(record: logging.LogRecord) -> bool:
    """False for Beam's log of a step that raised our InputError or found the disk full (with a traceback):
    main prints it as one line."""
    raised = record.exc_info[1] if record.exc_info else None
    if isinstance(record.msg, InputError) or isinstance(raised, InputError):
        return False
    return not (raised is not None and disk_full_message(raised))


logging.getLogger("apache_beam.runners.common").addFilter(_not_input_error)


def _grpc_status(raised: BaseException | None) -> str | None:
    """The gRPC status of an error gRPC raised (``UNAVAILABLE``, ``CANCELLED``; its class name if it has none),
    else None."""
    if raised is None or not type(raised).__module__.startswith("grpc"):
        return None
    code = getattr(raised, "code", None)
    return code().name if callable(code) else type(raised).__name__


def _verbose() -> bool:
    return logging.getLogger().isEnabledFor(logging.INFO)


def _lost_runner_in_one_line(record: logging.LogRecord) -> bool:
    """Beam's SDK worker (in this process with ``LOOPBACK``) logs a gRPC stream that the runner dropped with its
    traceback; on Flink that is a TaskManager going away, which Flink's restart strategy handles. One line instead:
    the message and the gRPC status; none for ``CANCELLED`` (the runner ending the streams of a job that is
    done: every Flink job ends so) unless ``--verbose``."""
    status = _grpc_status(record.exc_info[1] if record.exc_info else None)
    if status == "CANCELLED" and not _verbose():
        return False
    if status is not None:
        record.msg, record.args = (
            f"{record.getMessage()} (gRPC {status}: the runner closed the connection)",
            (),
        )
        record.exc_info = record.exc_text = None
    return True


def _job_server_command_shown(record: logging.LogRecord) -> bool:
    """Beam logs the job server's command line when it starts and stops it: shown without the launcher that makes
    the JVM end with this process (:func:`pipelines.runtime.job_servers.dying_with_this_process`)."""
    args = record.args
    if isinstance(args, tuple) and len(args) == 2 and isinstance(args[1], (tuple, list)):
        command = list(args[1])
        # python [-S -P ...] -c LAUNCHER PID COMMAND...: the interpreter's flags may change, the shape does not
        script = command.index("-c") + 1 if "-c" in command[1:5] else 0
        if script and len(command) > script + 2 and "PR_SET_PDEATHSIG" in str(command[script]):
            record.args = (args[0], tuple(command[script + 2 :]))
    return True


# Beam's chatter around a job server, at WARNING: started, waited for (every second), stopped. What a user of a
# Flink or Spark run sees is the stage lines and the job lines; --verbose shows these too.
BEAM_CHATTER = ("Really starting service at", "Really destroying service at", "Waiting for grpc channel")


def _no_beam_chatter(record: logging.LogRecord) -> bool:
    return _verbose() or not (isinstance(record.msg, str) and record.msg.startswith(BEAM_CHATTER))


logging.getLogger("apache_beam.utils.subprocess_server").addFilter(_job_server_command_shown)
logging.getLogger("apache_beam.utils.subprocess_server").addFilter(_no_beam_chatter)
logging.getLogger().addFilter(_no_beam_chatter)  # "Waiting for grpc channel" is logged on the root logger
for _worker_logger in ("data_plane", "sdk_worker", "sdk_worker_main", "log_handler", "worker_status"):
    logging.getLogger(f"apache_beam.runners.worker.{_worker_logger}").addFilter(_lost_runner_in_one_line)


def _thread_ended_by_lost_runner(args: threading.ExceptHookArgs, default=threading.excepthook) -> None:
    """The same dropped stream also ends the SDK worker's threads (``read_grpc_client_inputs``, ``run_worker_*``)
    with the gRPC error, which Python prints with its traceback at the end of every Flink job; one line instead.
    Any other exception of a thread keeps Python's own report."""
    status = _grpc_status(args.exc_value)
    if status == "CANCELLED" and not _verbose():  # a job that is done (see _lost_runner_in_one_line)
        return
    if status is not None:
        name = args.thread.name if args.thread is not None else "a thread"
        logging.getLogger("apache_beam.runners.worker").warning(
            "%s ended: gRPC %s: the runner closed the connection", name, status
        )
        return
    default(args)


threading.excepthook = _thread_ended_by_lost_runner


# Arguments of some command that name things, not paths (``config``: a dataset config name; build's config
# file is checked by build itself): a folder of that name in the working directory is not an input.
NOT_PATHS = ("out", "block_sizes", "config", "host", "id_field", "license", "name", "repo_id", "revision")
NOT_PATHS += ("sample", "source", "split", "split_name", "text_field", "token")


# Arguments that name a dataset to read: a build folder given there stands for its dataset/ (OUT/dataset).
DATASET_ARGUMENTS = ("dataset_dir", "data_dir", "dir")


def use_dataset_of_build(args: argparse.Namespace) -> None:
    """A build folder where a dataset folder is wanted is read as its ``dataset/``
    (:func:`pipelines.runtime.safety.dataset_of_build`)."""
    for name in DATASET_ARGUMENTS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            setattr(args, name, safety.dataset_of_build(value))


def outputs(args: argparse.Namespace, module) -> dict[str, str]:
    """The paths a command writes, by option: ``--out`` and the options its module lists in ``OUTPUTS``
    (``evaluate``'s ``--predictions``)."""
    names = ("out", *getattr(module, "OUTPUTS", ()))
    found = {"--" + n.replace("_", "-"): getattr(args, n, None) for n in names}
    return {option: path for option, path in found.items() if isinstance(path, str) and path}


def check_out(args: argparse.Namespace, module=None) -> None:
    """Before any work: every path the command writes (``--out``, ``--predictions``, ...) must be apart from
    every input and from each other (:func:`pipelines.runtime.safety.check_outputs`), and ``--source`` a safe
    name. No written path, and no existing input path, may hold a character Beam reads as a wildcard
    (:func:`pipelines.runtime.safety.check_no_wildcards`)."""
    written = outputs(args, module)
    skip = NOT_PATHS + tuple(o[2:].replace("-", "_") for o in written)
    inputs = safety.path_arguments(vars(args), skip=skip)
    for option, path in written.items():
        safety.check_no_wildcards(path, option)
    for path in inputs:  # an existing path (a pattern the user meant, `data/*.jsonl`, exists under no name)
        if not safety.is_remote(path):
            safety.check_no_wildcards(path, "input")
    safety.check_outputs(written, inputs)
    if isinstance(getattr(args, "source", None), str):
        check_name(args.source, "--source")


def check_paths_for_workers(args: argparse.Namespace, module, beam_args: list[str]) -> None:
    """Local paths (outputs and inputs) refused in one line when the SDK workers run on other hosts
    (:func:`pipelines.runtime.job_servers.local_paths_problem`); ``build`` checks its config's own."""
    if getattr(module, "CHECKS_OWN_BEAM_ARGS", False):
        return
    written = outputs(args, module)
    skip = NOT_PATHS + tuple(o[2:].replace("-", "_") for o in written)
    paths = [*written.items(), *(("", path) for path in safety.path_arguments(vars(args), skip=skip))]
    problem = local_paths_problem(beam_args, paths)
    if problem:
        raise InputError(problem)


def out_lock(args: argparse.Namespace, module):
    """The ``--out`` lock of a command that writes a folder there (:func:`pipelines.runtime.safety.command_lock`);
    ``build`` takes its own, and a command whose ``--out`` is a file (``OUT_IS_FILE``) takes none. A command
    that writes into a dataset (``WRITES_DATASET``: the argument naming it) takes the lock of the build the
    dataset belongs to (:func:`pipelines.runtime.safety.dataset_lock_folder`)."""
    dataset = getattr(args, getattr(module, "WRITES_DATASET", "") or "-", None)
    if isinstance(dataset, str) and os.path.isdir(dataset):  # card, annotate verify: the dataset's build
        return safety.command_lock(safety.dataset_lock_folder(dataset), command_name(args))
    out = getattr(args, "out", None)
    if not isinstance(out, str) or not out or getattr(module, "OUT_IS_FILE", False):
        return contextlib.nullcontext()
    if getattr(module, "OWN_LOCK", False):  # build: its lock, after its own checks
        return contextlib.nullcontext()
    return safety.command_lock(out, command_name(args))


def check_printable_arguments(argv: list[str]) -> None:
    """No argument may hold a control or format character (``ESC``, ``BEL``, a newline, a right-to-left
    override): ``card --name $'\\e]0;X\\a'`` wrote them raw into the card's heading, where ``cat README.md``
    retitles the terminal. One line naming the option, the value shown escaped
    (:func:`incoherent.terminal.printable`).

    >>> check_printable_arguments(["card", "ds", "--name", "Corpora \\u00e9t\\u00e9"])
    >>> check_printable_arguments(["card", "ds", "--name", "\\x1b]0;X\\x07"])
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: --name '\\x1b]0;X\\x07': holds control or format characters (shown \
escaped); leave them out
    """
    for number, value in enumerate(argv):
        if printable(value) == value:
            continue
        option, _, given = value.partition("=") if value.startswith("--") else ("", "", value)
        if not option and number and argv[number - 1].startswith("--"):
            option = argv[number - 1]
        raise InputError(
            f"{option or 'argument'} '{printable(given)}': holds control or format characters (shown "
            "escaped); leave them out"
        )


def command_name(args: argparse.Namespace) -> str:
    """``ingest cnn``, ``shuffle``, ... for messages."""
    return " ".join(w for w in (args.command, getattr(args, "subcommand", None)) if w)


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C and `kill` alike: one line, the lock let go; no process it starts imports from the current folder
    with interrupts.signals_as_interrupts(), safety.no_imports_from_cwd():
        try:
            return _main(argv)
        # before the command's own `try` (its parser) or in its last `finally`
        except KeyboardInterrupt as exc:
            print("interrupted", file=sys.stderr)
            return interrupts.exit_status(exc)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    interrupts.pause_for_test("parser")
    parser = build_parser(selected_module(argv))
    args, beam_args = parser.parse_known_args(argv)
    if args._help_of is not None:  # no command, or a group without its subcommand: its help, exit status 0
        if beam_args:
            args._help_of.error(f"unrecognized arguments: {' '.join(beam_args)}")
        args._help_of.print_help()
        return 0
    interrupts.log_to_terminal(logging.INFO if args.verbose else logging.WARNING)
    unknown = [a for a in beam_args if a.startswith("-") and not a.startswith("--")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    progress.configure(quiet=getattr(args, "quiet", False))
    module = None
    try:
        check_printable_arguments(argv)  # a card's --name, a path: text that lands in files people read
        # before the command's module and Beam are imported: a mistyped flag is refused at once
        check_flag_names(beam_args, command_name(args), getattr(parser, "selected_flags", ()))
        module = importlib.import_module(args._module)
        beam_args = with_dry_run(args, module, beam_args)
        if not getattr(module, "CHECKS_OWN_BEAM_ARGS", False):  # build untangles its CONFIG first
            check_beam_args(beam_args, command_name(args))
            check_runner_services(beam_args)  # Flink/Spark: a local job server jar and a master that answers
        use_storage_options(beam_args)
        use_dataset_of_build(args)
        check_out(args, module)
        check_paths_for_workers(args, module, beam_args)
        if beam_args and not getattr(module, "TAKES_BEAM_ARGS", True):
            raise InputError(f"{command_name(args)}: unrecognized arguments: {' '.join(beam_args)}")
        with out_lock(args, module):
            return module.run(args, beam_args) or 0
    except InputError as exc:  # messages quote files and servers: printed with control characters escaped
        print(f"error: {printable(exc)}", file=sys.stderr)
        return 2
    except StageFailed as exc:
        print(f"error: {printable(exc)}", file=sys.stderr)
        return 1
    except DryRun as exc:
        print(printable(exc, lines=True))
        return 0
    except KeyboardInterrupt as exc:
        # build says that running it again resumes (ON_INTERRUPT); other commands start over
        print(getattr(module, "ON_INTERRUPT", "interrupted"), file=sys.stderr)
        return interrupts.exit_status(exc)
    except Exception as exc:
        message = disk_full_message(exc)
        if message is None:
            raise
        print(f"error: {printable(message)}", file=sys.stderr)
        return 2
    finally:
        progress.close_all()


if __name__ == "__main__":  # `python -m incoherent.pipelines.cli`: the same entry as `incoherent`
    from incoherent.__main__ import main as entry

    sys.exit(entry(cli=main))
