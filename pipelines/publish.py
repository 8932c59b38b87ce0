"""``incoherent publish DATASET_DIR --repo-id ORG/NAME``: upload a finished build to the Hugging Face Hub.

Only complete builds with a dataset card are uploaded: every run summary must say ``complete`` and carry this
version's schema, and ``DATASET_DIR/README.md`` must exist (``incoherent card`` and ``build`` write it). The
work is :mod:`corpora.publish`'s: compare with the remote files, commit what differs (nothing when the build is
unchanged), check the remote names and sizes, print the dataset URL. The token comes from ``--token``,
``HF_TOKEN`` or the stored login (``hf auth login``) and is never printed.
"""

from __future__ import annotations

import argparse
import os

from incoherent.corpora.publish import TIMEOUT, CrossHostRedirect, check_repo_id, files_to_upload, publish
from incoherent.deadline import DeadlinePassed, within
from incoherent.schemas.records import InputError
from incoherent.terminal import printable

MAX_TIME_BASE = 900.0  # seconds: the default --max-time, plus one second per MB of the files to upload
LOGIN_HINT = "pass --token, set HF_TOKEN, or log in once with `hf auth login`"


TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset_dir", metavar="DATASET_DIR", help="folder with README.md and <config>/<split>-*.parquet"
    )
    parser.add_argument(
        "--repo-id", required=True, help="dataset repository on the Hub, e.g. my-org/insted-regen"
    )
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to (default: main)")
    parser.add_argument("--token", help="Hub token (default: HF_TOKEN or the stored login); never printed")
    parser.add_argument(
        "--include-rejected", action="store_true", help="also upload the rejected/ dead letters"
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be uploaded, upload nothing")
    parser.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT,
        help=f"seconds to wait for each answer of the Hub ({TIMEOUT:g}; connecting: at most 10)",
    )
    parser.add_argument(
        "--max-time",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"seconds the whole publish may take, every request and upload together (default: {MAX_TIME_BASE:g} "
        f"plus 1 per MB to upload); a Hub that answers slowly but never finishes is cut off",
    )


def _resolve_token(explicit: str | None) -> str:
    from huggingface_hub import get_token

    token = explicit or get_token()
    if not token:
        raise InputError(f"no Hugging Face token: {LOGIN_HINT}")
    return token


def _one_line(exc: BaseException, token: str) -> str:
    """The first line of an error, with the token masked should a server ever echo it."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.replace(token, "***") if token else text


def default_max_time(dataset_dir: str, files: list[str]) -> float:
    """:data:`MAX_TIME_BASE` seconds plus one per MB of ``files`` (the whole build at 1 MB/s).

    >>> default_max_time("/nonexistent", [])
    900.0
    """
    size = sum(os.path.getsize(os.path.join(dataset_dir, rel)) for rel in files)
    return MAX_TIME_BASE + size / 1e6


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    check_repo_id(args.repo_id)
    if not args.timeout > 0:
        raise InputError(f"--timeout: must be > 0 seconds, got {args.timeout}")
    if args.max_time is not None and not args.max_time > 0:
        raise InputError(f"--max-time: must be > 0 seconds, got {args.max_time:g}")
    files = files_to_upload(args.dataset_dir, args.include_rejected)
    if args.dry_run:
        for rel in files:
            print(printable(rel))
        print(f"{len(files)} files would be uploaded to datasets/{args.repo_id}")
        return 0
    token = _resolve_token(args.token)
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError

    max_time = args.max_time if args.max_time is not None else default_max_time(args.dataset_dir, files)
    try:
        done = within(
            max_time,
            publish,
            args.dataset_dir, args.repo_id, token, files, args.private, args.revision, args.timeout,
        )  # fmt: skip
    except CrossHostRedirect as exc:
        raise InputError(
            f"--repo-id {args.repo_id}: the Hub ({constants.ENDPOINT}) {printable(exc)}: nothing was uploaded "
            "there; check HF_ENDPOINT"
        ) from None
    except DeadlinePassed:  # a per-request timeout bounds each read only: a Hub that drips never ends
        raise InputError(
            f"--repo-id {args.repo_id}: the publish did not finish within {max_time:g} s (--max-time); a commit is "
            "all or nothing: re-run `incoherent publish` to complete it (or to find it complete), or raise --max-time"
        ) from None
    except httpx2.TimeoutException:
        raise InputError(
            f"--repo-id {args.repo_id}: the Hub ({constants.ENDPOINT}) did not answer within {args.timeout:g} s; "
            "check the network (or HF_ENDPOINT) and re-run, or raise --timeout"
        ) from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            raise InputError(
                f"--repo-id {args.repo_id}: the Hub refused the token (401); {LOGIN_HINT}"
            ) from None
        raise InputError(
            f"--repo-id {args.repo_id}: upload failed ({_one_line(exc, token)}); a commit is all or nothing: "
            "re-run `incoherent publish` to complete it"
        ) from None
    except (OSError, ValueError, httpx2.HTTPError) as exc:
        raise InputError(
            f"--repo-id {args.repo_id}: upload failed ({_one_line(exc, token)}); re-run `incoherent publish`"
        ) from None
    if done["commit"]:
        print(
            f"committed {len(done['uploaded'])} changed files and {len(done['deleted'])} deletions "
            f"({done['commit'][:12]}); {done['files']} files on the Hub match the build"
        )
    else:
        print(f"unchanged: the {done['files']} files on the Hub already match the build; no commit")
    print(printable(done["url"]))
    return 0
