"""``incoherent publish DATASET_DIR --repo-id ORG/NAME``: upload a finished build to the Hugging Face Hub.

Only complete builds with a dataset card are uploaded: every run summary must say ``complete`` and carry this
version's schema, and ``DATASET_DIR/README.md`` must exist (``incoherent card`` and ``build`` write it). What is
uploaded: the card, its ``figures/``, the ``<config>/<split>-*.parquet`` tables and the sanitised run summaries
under ``summaries/`` (``--include-rejected`` adds ``rejected/``).

Steps: create the dataset repository if needed, list the remote files, compare them with the local ones (git
blob sha1 for regular files, sha256 for LFS files, and the size), commit only what differs (remote files the
build no longer has are deleted in the same commit), then list the remote files again and check names and sizes
against the local ones. An unchanged build makes no commit; a commit is atomic, so a run interrupted before it
leaves the repository as it was and a re-run completes it.

The token comes from ``--token``, ``HF_TOKEN`` or the stored login (``hf auth login``) and is never printed.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re

from schemas.records import InputError

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}$")
KEEP_REMOTE = {".gitattributes"}  # files the Hub creates itself; never deleted
LOGIN_HINT = "pass --token, set HF_TOKEN, or log in once with `hf auth login`"


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


def check_repo_id(repo_id: str) -> None:
    """``ORG/NAME`` with the Hub's characters (letters, digits, ``-``, ``_``, ``.``), no ``..`` or ``--``."""
    if not REPO_ID.match(repo_id) or ".." in repo_id or "--" in repo_id or repo_id.endswith((".", "-")):
        raise InputError(f"--repo-id: expected ORG/NAME (letters, digits, '-', '_', '.'), got {repo_id!r}")


def check_build(dataset_dir: str) -> None:
    """Refuse folders that are not a finished build: no card, no tables, an incomplete run or an old schema."""
    from corpora.card import BUILD_SUMMARY, check_table_versions, find_configs, load_summaries

    if not os.path.isdir(dataset_dir):
        raise InputError(f"{dataset_dir}: no such directory")
    if not os.path.isfile(os.path.join(dataset_dir, "README.md")):
        raise InputError(
            f"{dataset_dir}: no README.md dataset card (run `incoherent card {dataset_dir}` first)"
        )
    build_summary = os.path.join(os.path.dirname(os.path.abspath(dataset_dir)), BUILD_SUMMARY)
    if os.path.isfile(build_summary):
        with open(build_summary, encoding="utf-8") as f:
            if not json.load(f).get("complete"):
                raise InputError(f"{build_summary}: the build did not complete; re-run `incoherent build`")
    check_table_versions(find_configs(dataset_dir))
    load_summaries(dataset_dir)
    for path in glob.glob(os.path.join(dataset_dir, "summaries", "**", "*.json"), recursive=True):
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        if "schema_version" in summary:  # run summaries (the build summary has none)
            from schemas import SCHEMA_VERSION

            if not summary.get("complete"):
                raise InputError(f"{path}: run did not complete; rebuild before publishing")
            if str(summary["schema_version"]) != SCHEMA_VERSION:
                raise InputError(
                    f"{path}: schema version {summary['schema_version']}, this incoherent writes "
                    f"{SCHEMA_VERSION}; rebuild with this version"
                )


def files_to_upload(dataset_dir: str, include_rejected: bool) -> list[str]:
    """Relative (POSIX) paths of the files to upload, sorted."""
    check_build(dataset_dir)
    files = []
    for path in sorted(glob.glob(os.path.join(dataset_dir, "**", "*"), recursive=True)):
        if not os.path.isfile(path):
            continue
        rel = os.path.relpath(path, dataset_dir).replace(os.sep, "/")
        top = rel.split("/", 1)[0]
        if top == "rejected" and not include_rejected:
            continue
        if (
            rel == "README.md"
            or (top == "figures" and rel.endswith(".png"))
            or (top == "summaries" and rel.endswith(".json"))
            or (rel.count("/") == 1 and rel.endswith(".parquet"))
            or (top == "rejected" and rel.endswith(".parquet"))
        ):
            files.append(rel)
    return files


def git_blob_sha1(path: str) -> str:
    """The git object id of a file (``sha1("blob <size>\\0" + content)``), what the Hub reports for regular files."""
    digest = hashlib.sha1()
    digest.update(f"blob {os.path.getsize(path)}\0".encode())
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def unchanged(local_path: str, remote) -> bool:
    """True when a remote file (``huggingface_hub``'s ``RepoFile``) holds the local bytes."""
    if remote is None or remote.size != os.path.getsize(local_path):
        return False
    if remote.lfs is not None:
        return remote.lfs.sha256 == sha256(local_path)
    return remote.blob_id == git_blob_sha1(local_path)


def plan(dataset_dir: str, files: list[str], remote: dict) -> tuple[list[str], list[str]]:
    """``(files to upload, remote files to delete)``: what differs between the build and the repository."""
    upload = [rel for rel in files if not unchanged(os.path.join(dataset_dir, rel), remote.get(rel))]
    delete = sorted(set(remote) - set(files) - KEEP_REMOTE)
    return upload, delete


def remote_files(api, repo_id: str, revision: str | None) -> dict:
    """``{path: RepoFile}`` of every file on the branch (empty for a new repository or branch)."""
    from huggingface_hub.errors import RevisionNotFoundError

    try:
        entries = api.list_repo_tree(repo_id, repo_type="dataset", revision=revision, recursive=True)
        return {e.path: e for e in entries if hasattr(e, "blob_id")}
    except RevisionNotFoundError:
        return {}


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


def publish(
    dataset_dir: str,
    repo_id: str,
    token: str,
    files: list[str],
    private: bool = False,
    revision: str | None = None,
) -> dict:
    """Create the repository, commit what changed, verify the remote files; returns what was done."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    if revision:
        api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
    upload, delete = plan(dataset_dir, files, remote_files(api, repo_id, revision))
    commit = None
    if upload or delete:
        operations = [
            CommitOperationAdd(path_in_repo=rel, path_or_fileobj=os.path.join(dataset_dir, rel))
            for rel in upload
        ] + [CommitOperationDelete(path_in_repo=rel) for rel in delete]
        info = api.create_commit(
            repo_id,
            operations,
            repo_type="dataset",
            revision=revision,
            commit_message=f"incoherent: {len(upload)} files changed, {len(delete)} removed",
        )
        commit = info.oid
    after = remote_files(api, repo_id, revision)
    local_sizes = {rel: os.path.getsize(os.path.join(dataset_dir, rel)) for rel in files}
    remote_sizes = {path: f.size for path, f in after.items() if path not in KEEP_REMOTE}
    if remote_sizes != local_sizes:
        differ = sorted(set(local_sizes.items()) ^ set(remote_sizes.items()))
        raise InputError(
            f"--repo-id {repo_id}: after the upload the remote files differ from {dataset_dir} "
            f"({', '.join(path for path, _ in differ[:5])}); re-run `incoherent publish`"
        )
    url = f"{api.endpoint}/datasets/{repo_id}" + (f"/tree/{revision}" if revision else "")
    return {"uploaded": upload, "deleted": delete, "commit": commit, "files": len(files), "url": url}


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    if beam_args:
        raise InputError(f"unrecognized arguments: {' '.join(beam_args)}")
    check_repo_id(args.repo_id)
    files = files_to_upload(args.dataset_dir, args.include_rejected)
    if args.dry_run:
        for rel in files:
            print(rel)
        print(f"{len(files)} files would be uploaded to datasets/{args.repo_id}")
        return 0
    token = _resolve_token(args.token)
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    try:
        done = publish(args.dataset_dir, args.repo_id, token, files, args.private, args.revision)
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
    print(done["url"])
    return 0
