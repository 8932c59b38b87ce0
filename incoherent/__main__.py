"""``python -m incoherent`` and the ``incoherent`` console script: the CLI (:func:`incoherent.pipelines.cli.main`)
with Ctrl-C and ``kill`` handled from the first line to the last.

The signal handlers go in before anything heavy is imported (the CLI's modules take a tenth of a second or
more), so a signal at any moment of a command's life, while its modules load, its parser is built, it runs or
it returns, ends it with one line and exit status 130 (Ctrl-C) or 143 (``kill``), never a traceback. A reader
of stdout that goes away ends it quietly with 141 (:mod:`incoherent.pipelines.runtime.stdout`).
"""

import sys


def main(argv: list[str] | None = None, cli=None) -> int:
    """Run the CLI on ``argv`` (``sys.argv[1:]``); ``cli``: its ``main`` where that module is loaded already
    (``python -m incoherent.pipelines.cli`` runs it as ``__main__``)."""
    from incoherent.pipelines.runtime import interrupts

    interrupts.handle_for_whole_life()
    try:
        try:
            interrupts.pause_for_test("start")
            if cli is None:
                from incoherent.pipelines.cli import main as cli

            status = cli(argv)
        finally:
            sys.stdout.flush()  # here, not at the interpreter's end: a reader that left is seen below
    except KeyboardInterrupt as exc:  # before the CLI's own handling began (its imports), or after it ended
        print("interrupted", file=sys.stderr)
        status = interrupts.exit_status(exc)
    except BrokenPipeError:
        from incoherent.pipelines.runtime import stdout

        if not stdout.reader_gone():
            raise
        status = stdout.quiet_exit()  # 141, no word: nobody reads the output any more
    interrupts.ignore_from_now()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
