"""``incoherent publish DATASET_DIR --repo-id ORG/NAME``: upload a finished build to the Hugging Face Hub.

Only complete builds with a dataset card are uploaded: every ``run_summary.json`` must say ``complete`` and
``DATASET_DIR/README.md`` must exist (``incoherent card`` writes it). Authentication is huggingface_hub's
(``HF_TOKEN`` or ``huggingface-cli login``), or ``--token``.
"""

from __future__ import annotations

import argparse
import glob
import os

from schemas.records import InputError

PATTERNS = ["README.md", "*/*.parquet", "**/run_summary.json", "run_summary.json"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset_dir", metavar="DATASET_DIR", help="folder with README.md and <config>/<split>-*.parquet"
    )
    parser.add_argument(
        "--repo-id", required=True, help="dataset repository on the Hub, e.g. my-org/insted-regen"
    )
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to (default: main)")
    parser.add_argument("--token", help="Hub token (default: HF_TOKEN or the stored login)")
    parser.add_argument(
        "--include-rejected", action="store_true", help="also upload the rejected/ dead letters"
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be uploaded, upload nothing")


def files_to_upload(dataset_dir: str, include_rejected: bool) -> tuple[list[str], list[str]]:
    """Relative paths that will be uploaded and the ignore patterns that exclude the rest."""
    from corpora.card import find_configs, load_summaries

    if not os.path.isfile(os.path.join(dataset_dir, "README.md")):
        raise InputError(
            f"{dataset_dir}: no README.md dataset card (run `incoherent card {dataset_dir}` first)"
        )
    find_configs(dataset_dir)
    load_summaries(dataset_dir)
    ignore = [] if include_rejected else ["rejected/**"]
    files = []
    for path in sorted(glob.glob(os.path.join(dataset_dir, "**", "*"), recursive=True)):
        rel = os.path.relpath(path, dataset_dir)
        if not os.path.isfile(path) or (not include_rejected and rel.startswith("rejected" + os.sep)):
            continue
        if rel == "README.md" or rel.endswith((".parquet", "run_summary.json")):
            files.append(rel)
    return files, ignore


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    if beam_args:
        raise InputError(f"unrecognized arguments: {' '.join(beam_args)}")
    if args.repo_id.count("/") != 1:
        raise InputError(f"--repo-id: expected ORG/NAME, got {args.repo_id!r}")
    files, ignore = files_to_upload(args.dataset_dir, args.include_rejected)
    if args.dry_run:
        for rel in files:
            print(rel)
        print(f"{len(files)} files would be uploaded to datasets/{args.repo_id}")
        return 0
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(token=args.token)
    try:
        api.create_repo(args.repo_id, repo_type="dataset", private=args.private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=args.dataset_dir,
            repo_id=args.repo_id,
            repo_type="dataset",
            revision=args.revision,
            allow_patterns=PATTERNS + (["rejected/**"] if args.include_rejected else []),
            ignore_patterns=ignore,
            commit_message=f"incoherent: upload {len(files)} files",
        )
    except (HfHubHTTPError, OSError) as exc:
        raise InputError(f"--repo-id {args.repo_id}: upload failed ({str(exc).splitlines()[0]})") from None
    print(f"uploaded {len(files)} files: {commit.commit_url if hasattr(commit, 'commit_url') else commit}")
    return 0
