"""Publishing a finished build to the Hugging Face Hub: which files, what changed, and the upload itself.

Plain functions over ``huggingface_hub`` (no Beam); ``pipelines/publish.py`` is the command line around them.
What is uploaded: the card (``README.md``), its ``figures/``, the ``<config>/<split>-*.parquet`` tables and the
sanitised run summaries under ``summaries/``, human verification records under ``human_verification/``
(optionally ``rejected/``). :func:`publish` creates the repository
if needed, lists the remote files, compares them with the local ones (git blob sha1 for regular files, sha256
for LFS files, and the size), commits only what differs (remote files the build no longer has are deleted in
the same commit), then lists the remote files again and checks names and sizes. An unchanged build makes no
commit; a commit is atomic, so an interrupted run leaves the repository as it was and a re-run completes it.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re

from incoherent.schemas.records import InputError

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}$")
KEEP_REMOTE = {".gitattributes"}  # files the Hub creates itself; never deleted
TIMEOUT = 60.0  # seconds a Hub request may wait for an answer (connect, read, write)
CONNECT_TIMEOUT = 10.0


def check_repo_id(repo_id: str) -> None:
    """``ORG/NAME`` with the Hub's characters (letters, digits, ``-``, ``_``, ``.``), no ``..`` or ``--``."""
    if not REPO_ID.match(repo_id) or ".." in repo_id or "--" in repo_id or repo_id.endswith((".", "-")):
        raise InputError(f"--repo-id: expected ORG/NAME (letters, digits, '-', '_', '.'), got {repo_id!r}")


def check_build(dataset_dir: str) -> None:
    """Refuse folders that are not a finished build: no card, no tables, an incomplete run or an old schema."""
    from incoherent.corpora.card.inputs import (
        BUILD_SUMMARY,
        check_table_versions,
        find_configs,
        load_summaries,
    )

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
            from incoherent.schemas import SCHEMA_VERSION

            if not summary.get("complete"):
                raise InputError(f"{path}: run did not complete; rebuild before publishing")
            if str(summary["schema_version"]) != SCHEMA_VERSION:
                raise InputError(
                    f"{path}: schema version {summary['schema_version']}, this incoherent writes "
                    f"{SCHEMA_VERSION}; rebuild with this version"
                )


def dataset_files(dataset_dir: str) -> list[str]:
    """Relative (POSIX) paths of the regular files under ``dataset_dir``, sorted. Links are followed only when
    they stay inside the folder (a link that leaves it is refused: it would upload a file from elsewhere on
    the machine); FIFOs, sockets and devices are left out."""
    root = os.path.realpath(dataset_dir)
    files = []
    for folder, dirs, names in os.walk(dataset_dir, followlinks=False):
        for name in sorted(dirs) + sorted(names):
            path = os.path.join(folder, name)
            target = os.path.realpath(path)
            if os.path.islink(path) and os.path.commonpath([root, target]) != root:
                raise InputError(
                    f"{path}: a link to {target}, outside {dataset_dir}; refusing to publish it (replace the "
                    "link by the file, or remove it)"
                )
            if name in names and os.path.isfile(path):
                files.append(os.path.relpath(path, dataset_dir).replace(os.sep, "/"))
        # os.walk does not descend into a linked folder; one inside the dataset is walked under its own name
    return sorted(files)


def files_to_upload(dataset_dir: str, include_rejected: bool) -> list[str]:
    """Relative (POSIX) paths of the files to upload, sorted."""
    check_build(dataset_dir)
    files = []
    for rel in dataset_files(dataset_dir):
        top = rel.split("/", 1)[0]
        if top == "rejected" and not include_rejected:
            continue
        if (
            rel == "README.md"
            or (top == "figures" and rel.endswith(".png"))
            or (top == "summaries" and rel.endswith(".json"))
            or (top == "human_verification" and rel.endswith((".json", ".png")))  # `annotate verify`
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


def publish(
    dataset_dir: str,
    repo_id: str,
    token: str,
    files: list[str],
    private: bool = False,
    revision: str | None = None,
    timeout: float = TIMEOUT,
) -> dict:
    """Create the repository, commit what changed, verify the remote files; returns what was done.

    Every request waits at most ``timeout`` seconds for the server (at most :data:`CONNECT_TIMEOUT` to
    connect): a Hub that accepts connections and never answers ends the run with ``httpx2.TimeoutException``.
    """
    import httpx2
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_session

    use_same_host_client()
    get_session().timeout = httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT))
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


HUB_HOSTS = {"huggingface.co", "hf.co"}  # the Hub's own hosts: a redirect between them stays on the Hub


class CrossHostRedirect(Exception):
    """The Hub answered with a redirect to another host, which :func:`use_same_host_client` does not follow."""

    def __init__(self, target: str):
        super().__init__(f"redirected to {target}, another host (not followed)")
        self.target = target


def same_host(source, target) -> bool:
    """Whether a redirect from URL ``source`` to ``target`` stays on one origin (scheme, host, port), or on the
    Hub's own hosts over https.

    >>> same_host("https://huggingface.co/api/x", "https://huggingface.co/api/y")
    True
    >>> same_host("https://huggingface.co/api/x", "https://hf.co/api/y")
    True
    >>> same_host("http://127.0.0.1:8000/api", "http://127.0.0.1:9000/api"), same_host("https://a/x", "http://a/x")
    (False, False)
    """
    from urllib.parse import urlsplit

    ports = {"http": 80, "https": 443}

    def origin(url):
        parts = urlsplit(str(url))
        return parts.scheme, (parts.hostname or "").lower(), parts.port or ports.get(parts.scheme, 0)

    one, two = origin(source), origin(target)
    return one == two or (one[0] == two[0] == "https" and {one[1], two[1]} <= HUB_HOSTS)


def use_same_host_client() -> None:
    """The Hub client follows redirects on the Hub's own host only: one to another host ends the publish with
    :class:`CrossHostRedirect` (huggingface_hub's client followed it, and the upload went there; the token
    stayed behind, the build's files did not). The client is huggingface_hub's default otherwise (its request
    hook, redirects followed on the same host)."""
    import weakref

    import httpx2
    from huggingface_hub.utils import _http

    class SameHostClient(httpx2.Client):
        crossing: weakref.WeakSet = weakref.WeakSet()

        def _build_redirect_request(self, request, response):
            redirect = super()._build_redirect_request(request, response)
            if not same_host(request.url, redirect.url):
                self.crossing.add(redirect)  # refused when it is sent (a redirect merely reported is fine)
            return redirect

    def refuse_crossing(request) -> None:
        if request in SameHostClient.crossing:
            raise CrossHostRedirect(str(request.url.copy_with(query=None)))

    def factory() -> httpx2.Client:
        return SameHostClient(
            event_hooks={"request": [refuse_crossing, _http.hf_request_event_hook]},
            follow_redirects=True,
            timeout=None,
        )

    _http.set_client_factory(factory)
