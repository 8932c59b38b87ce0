"""``python -m incoherent``: the same as the ``incoherent`` console script."""

from incoherent.pipelines.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
