"""A small fake of the Hugging Face Hub's HTTP API, enough for ``incoherent publish`` and ``load_dataset``.

It serves, on 127.0.0.1, the routes ``huggingface_hub`` 2.4 calls (read from its source): repository creation
(``POST /api/repos/create``), repository info (``GET /api/datasets/{repo}[/revision/{rev}]``), pre-upload
(``POST /api/datasets/{repo}/preupload/{rev}``: every file is a regular upload, and the ``oid`` of an existing
file with the same path is returned so the client can skip unchanged files), YAML validation, commits
(``POST /api/datasets/{repo}/commit/{rev}``, NDJSON with base64 ``file`` and ``deletedFile`` lines), tree
listing and paths-info, and ``resolve`` downloads (``HEAD``/``GET`` with ``ETag``, ``X-Repo-Commit``,
``Content-Length`` and byte ranges). Repositories live in a temporary folder: blobs by git sha1, and commits
with sha1 ids computed from their tree and parent, so an unchanged tree gives no new commit.

Writes need ``Authorization: Bearer <token>`` with the token the fixture chose. ``fail_commits = n`` makes the
next n commit requests fail with a 500 after the upload was received (the repository is left unchanged), which
is how a server failing mid-upload looks to the client. ``requests`` records (method, path) of every request.
``redirect_to = URL`` answers every request with a 307 to the same path there (a Hub redirecting elsewhere); a
token of ``None`` lets anyone write (another host, which needs no token to take an upload).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import yaml


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class Repo:
    def __init__(self, repo_id: str, root: str):
        self.repo_id = repo_id
        self.root = root
        os.makedirs(os.path.join(root, "blobs"), exist_ok=True)
        self.commits: dict[str, dict] = {}
        self.branches: dict[str, str] = {}
        gitattributes = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
        self.branches["main"] = self.commit(
            None, {".gitattributes": self.put(gitattributes)}, "initial commit"
        )

    def put(self, data: bytes) -> str:
        sha = git_blob_sha1(data)
        path = os.path.join(self.root, "blobs", sha)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
        return sha

    def blob(self, sha: str) -> bytes:
        with open(os.path.join(self.root, "blobs", sha), "rb") as f:
            return f.read()

    def commit(self, parent: str | None, tree: dict[str, str], message: str) -> str:
        body = json.dumps({"parent": parent, "tree": sorted(tree.items()), "message": message}).encode()
        sha = hashlib.sha1(body).hexdigest()
        self.commits[sha] = {"parent": parent, "tree": dict(tree), "message": message}
        with open(os.path.join(self.root, f"commit-{sha}.json"), "wb") as f:
            f.write(body)
        return sha

    def resolve(self, revision: str) -> str | None:
        revision = unquote(revision)
        if revision in self.branches:
            return self.branches[revision]
        return revision if revision in self.commits else None

    def tree(self, commit: str) -> dict[str, str]:
        return self.commits[commit]["tree"]

    def history(self, branch: str = "main") -> list[str]:
        out, sha = [], self.branches.get(branch)
        while sha:
            out.append(sha)
            sha = self.commits[sha]["parent"]
        return out


class FakeHub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: str, token: str | None):
        super().__init__(("127.0.0.1", 0), Handler)
        self.root = root
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.fail_commits = 0
        self.redirect_to: str | None = None
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def commits_of(self, repo_id: str) -> list[str]:
        return self.repos[repo_id].history()

    def files_of(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        repo = self.repos[repo_id]
        return {path: repo.blob(sha) for path, sha in repo.tree(repo.resolve(revision)).items()}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeHub

    def log_message(self, format, *args):  # keep the test output clean
        pass

    # ----------------------------------------------------------------------------------------- plumbing

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False) -> None:
        self.send_response(status)
        headers = {"Content-Type": "application/json", **(headers or {})}
        headers.setdefault("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, status: int, value, headers: dict | None = None) -> None:
        self._send(status, json.dumps(value).encode(), headers)

    def _error(self, status: int, message: str, code: str | None = None, head: bool = False) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, b"" if head else json.dumps({"error": message}).encode(), headers, head=head)

    def _body(self) -> bytes:
        return self.body

    def _authorised(self) -> bool:
        return self.server.token is None or self.headers.get("Authorization") == f"Bearer {self.server.token}"

    def _repo(self, kind: str, org: str, name: str) -> Repo | None:
        return self.server.repos.get(f"{org}/{name}") if kind == "datasets" else None

    # ----------------------------------------------------------------------------------------- routes

    def do_HEAD(self):
        self._route("HEAD")

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def _route(self, method: str) -> None:
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        query = parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""  # always read: the connection is kept alive
        self.server.requests.append((method, url.path))
        if self.server.redirect_to:
            self._send(307, b"", {"Location": self.server.redirect_to + self.path})
            return
        with self.server.lock:
            try:
                self._dispatch(method, parts, query)
            except BrokenPipeError:
                pass

    def _dispatch(self, method: str, parts: list[str], query: dict) -> None:
        if method == "POST" and parts == ["api", "repos", "create"]:
            return self._create_repo()
        if method == "POST" and parts == ["api", "validate-yaml"]:
            return self._validate_yaml()
        if parts[:2] == ["api", "datasets"]:
            return self._api_dataset(method, parts[2:], query)
        if len(parts) >= 6 and parts[0] == "datasets" and parts[3] == "resolve":
            return self._resolve(method, parts[1], parts[2], parts[4], "/".join(parts[5:]))
        self._error(404, f"fake hub: no route for {method} /{'/'.join(parts)}")

    def _create_repo(self) -> None:
        if not self._authorised():
            return self._error(401, "Invalid credentials in Authorization header")
        payload = json.loads(self._body())
        repo_id = f"{payload['organization']}/{payload['name']}"
        if payload.get("type") != "dataset":
            return self._error(400, "fake hub: only dataset repositories")
        if repo_id in self.server.repos:
            return self._json(
                409, {"error": "You already created this dataset repo", "url": self._url(repo_id)}
            )
        root = os.path.join(self.server.root, "datasets", repo_id.replace("/", "--"))
        self.server.repos[repo_id] = Repo(repo_id, root)
        self._json(200, {"url": self._url(repo_id), "name": repo_id, "id": repo_id})

    def _url(self, repo_id: str) -> str:
        return f"{self.server.url}/datasets/{repo_id}"

    def _validate_yaml(self) -> None:
        content = json.loads(self._body())["content"]
        errors = []
        if content.startswith("---\n"):
            try:
                meta = yaml.safe_load(content.split("---\n", 2)[1])
                if not isinstance(meta, dict):
                    errors.append({"message": "metadata must be a mapping"})
            except yaml.YAMLError as exc:
                errors.append({"message": f"invalid YAML: {exc}"})
        self._json(400 if errors else 200, {"errors": errors, "warnings": []})

    def _api_dataset(self, method: str, rest: list[str], query: dict) -> None:
        if len(rest) < 2:
            return self._error(404, "fake hub: bad dataset route")
        repo = self._repo("datasets", rest[0], rest[1])
        if repo is None:
            return self._error(404, "Repository not found", "RepoNotFound")
        action = rest[2] if len(rest) > 2 else None
        revision = rest[3] if len(rest) > 3 else "main"
        if action == "branch" and method == "POST":
            if not self._authorised():
                return self._error(401, "Invalid credentials in Authorization header")
            if revision in repo.branches:
                return self._error(409, "Reference already exists")
            repo.branches[revision] = repo.branches["main"]
            return self._json(200, {})
        commit = repo.resolve(revision)
        if commit is None:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        if action is None or action == "revision":
            return self._repo_info(repo, commit)
        if action == "preupload" and method == "POST":
            return self._preupload(repo, commit)
        if action == "commit" and method == "POST":
            return self._commit(repo, revision, commit)
        if action == "tree" and method == "GET":
            path = "/".join(rest[4:])
            return self._tree(repo, commit, path, query.get("recursive", ["False"])[0].lower() == "true")
        if action == "paths-info" and method == "POST":
            form = parse_qs(self._body().decode())
            return self._json(200, self._entries(repo, commit, form.get("paths", [])))
        self._error(404, f"fake hub: no dataset route {method} {action}")

    def _repo_info(self, repo: Repo, commit: str) -> None:
        tree = repo.tree(commit)
        siblings = [{"rfilename": p, "size": len(repo.blob(s)), "blobId": s} for p, s in sorted(tree.items())]
        self._json(
            200,
            {
                "_id": repo.repo_id,
                "id": repo.repo_id,
                "author": repo.repo_id.split("/")[0],
                "sha": commit,
                "private": False,
                "disabled": False,
                "gated": False,
                "tags": [],
                "siblings": siblings,
                "lastModified": "2026-01-01T00:00:00.000Z",
                "createdAt": "2026-01-01T00:00:00.000Z",
            },
        )

    def _preupload(self, repo: Repo, commit: str) -> None:
        if not self._authorised():
            return self._error(401, "Invalid credentials in Authorization header")
        files = json.loads(self._body())["files"]
        tree = repo.tree(commit)
        self._json(
            200,
            {
                "files": [
                    {
                        "path": f["path"],
                        "uploadMode": "regular",
                        "shouldIgnore": False,
                        "oid": tree.get(f["path"]),
                    }
                    for f in files
                ],
                "commitOid": commit,
            },
        )

    def _commit(self, repo: Repo, revision: str, commit: str) -> None:
        if not self._authorised():
            return self._error(401, "Invalid credentials in Authorization header")
        body = self._body()
        if self.server.fail_commits:
            self.server.fail_commits -= 1
            return self._error(500, "Internal Error - We're working hard to fix this as soon as possible!")
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next(item["value"] for item in lines if item["key"] == "header")
        tree = dict(repo.tree(commit))
        for item in lines:
            value = item["value"]
            if item["key"] == "file":
                tree[value["path"]] = repo.put(base64.b64decode(value["content"]))
            elif item["key"] == "deletedFile":
                if value["path"] not in tree:
                    return self._error(404, "A file with this name doesn't exist", "EntryNotFound")
                del tree[value["path"]]
            elif item["key"] == "lfsFile":
                return self._error(400, "fake hub: LFS uploads are not supported (answered regular)")
        new = repo.commit(commit, tree, header["summary"])
        branch = unquote(revision) if unquote(revision) in repo.branches else "main"
        repo.branches[branch] = new
        self._json(
            200,
            {
                "success": True,
                "commitOid": new,
                "commitUrl": f"{self._url(repo.repo_id)}/commit/{new}",
                "pullRequestUrl": None,
            },
        )

    def _entries(self, repo: Repo, commit: str, paths: list[str]) -> list[dict]:
        tree = repo.tree(commit)
        dirs = {"/".join(p.split("/")[:i]) for p in tree for i in range(1, p.count("/") + 1)}
        out = []
        for path in paths:
            path = path.strip("/")
            if path in tree:
                out.append(
                    {"type": "file", "path": path, "oid": tree[path], "size": len(repo.blob(tree[path]))}
                )
            elif path in dirs:
                out.append(
                    {
                        "type": "directory",
                        "path": path,
                        "oid": hashlib.sha1(path.encode()).hexdigest(),
                        "size": 0,
                    }
                )
        return out

    def _tree(self, repo: Repo, commit: str, path: str, recursive: bool) -> None:
        tree = repo.tree(commit)
        prefix = f"{path}/" if path else ""
        children: set[str] = set()
        for file in tree:
            if not file.startswith(prefix):
                continue
            rest = file[len(prefix) :].split("/")
            for depth in range(1, len(rest) + 1 if recursive else 2):
                children.add(prefix + "/".join(rest[:depth]))
        if path and not children and path not in tree:
            return self._error(404, f"{path} does not exist", "EntryNotFound")
        self._json(200, self._entries(repo, commit, sorted(children)))

    def _resolve(self, method: str, org: str, name: str, revision: str, path: str) -> None:
        head = method == "HEAD"
        repo = self._repo("datasets", org, name)
        if repo is None:
            return self._error(404, "Repository not found", "RepoNotFound", head=head)
        commit = repo.resolve(revision)
        if commit is None:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound", head=head)
        sha = repo.tree(commit).get(path)
        if sha is None:
            return self._error(404, "Entry not found", "EntryNotFound", head=head)
        data = repo.blob(sha)
        headers = {
            "Content-Type": "application/octet-stream",
            "ETag": f'"{sha}"',
            "X-Repo-Commit": commit,
            "Accept-Ranges": "bytes",
        }
        status = 200
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes=") and not head:
            start_text, _, end_text = wanted[len("bytes=") :].partition("-")
            start = int(start_text or 0)
            end = min(int(end_text), len(data) - 1) if end_text else len(data) - 1
            if start >= len(data):
                return self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start : end + 1], 206
        headers["Content-Length"] = str(len(data))
        self._send(status, data, headers, head=head)
