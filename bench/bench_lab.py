"""The lab app (`annotate serve`) under a crowd and under slow clients, each beside its baseline, on real sockets.

Run: ``.venv/bin/python bench/bench_lab.py [--annotators 50] [--answers 20] [--slow 150]``; prints one JSON object.

1. **Load**: ``--annotators`` annotators answer ``--answers`` items each, all at once, each in its own thread
   with its own session (log in, then per item: read the page, post the answer, follow the redirect, as a
   browser does). Baseline: one annotator alone. Reported: answers posted and answers stored (lines in the
   answers files), latency per answer (the POST and the next page), p50/p99, and the server's RSS.
2. **Slow clients**: ``--slow`` connections from another loopback address (127.0.0.2) send a partial header
   line and a byte every second while 10 annotators answer; baseline: the same 10 annotators without them.
3. **Keep-alive crowd**: ``--crowd-addresses`` loopback addresses (127.0.0.2, ...) hold ``--crowd-connections``
   connections each, every connection sending a whole request every ``--crowd-every`` seconds (never past the
   10 s request deadline) and reconnecting when closed; once every crowd connection has had an answer and 500
   more were answered (a second round), one annotator answers ``--crowd-answers`` items, each request allowed 10 s. Reported: the
   annotator's answers and latency, the crowd's answers. ``--parts keepalive`` runs this part alone.

The tasks are built from real text (``samples/wsj/wsj.jsonl``, the Penn Treebank sample of NLTK): 20 items per
task, documents of 4-6 sentences. Each part runs a fresh ``incoherent annotate serve`` on 127.0.0.1:0 in its
own process, stopped on every exit path.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def make_tasks(folder: str, items: int) -> None:
    from incoherent.schemas.annotation import TASKS_FORMAT

    with open(os.path.join(ROOT, "samples", "wsj", "wsj.jsonl"), encoding="utf-8") as f:
        sentences = [
            s.strip() + "." for line in f for s in json.loads(line)["text"].split(". ") if len(s.split()) > 3
        ]
    task_items = [
        {"item_id": f"i{n}", "sentences": sentences[n * 5 : n * 5 + 4 + n % 3]} for n in range(items)
    ]
    doc = {
        "format": TASKS_FORMAT,
        "export_id": "bench00000000",
        "kind": "intruder",
        "seed": 0,
        "tasks": [{"task_id": "t0", "items": task_items}],
    }
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tasks.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f)


class Serve:
    def __init__(self, tasks: str):
        env = {**os.environ, "PYTHONPATH": ROOT}
        command = [
            sys.executable,
            "-m",
            "incoherent.pipelines.cli",
            "annotate",
            "serve",
            tasks,
            "--port",
            "0",
        ]
        # its log (waitress warns of a deep task queue under load) goes to a file: an unread pipe fills and
        # would stall the server
        self.log = open(tasks + ".log", "w")  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, env=env, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 120)
        line = self.process.stdout.readline() if ready else ""
        if not line.startswith("annotation study on http://127.0.0.1:"):
            self.stop()
            raise SystemExit(f"the server did not start: {line!r}")
        self.base = line.split()[3].rstrip("/")
        self.port = int(self.base.rsplit(":", 1)[1])

    def rss_mib(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as f:
            kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        return round(kib / 1024, 1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


_FORM = re.compile(r'<form[^>]*action="([^"]+)"')
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)"(?: id="[^"]*")? value="([^"]*)"')


def annotator(base: str, name: str, answers: int, latencies: list, errors: list, timeout: float = 60) -> int:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    headers = {"Origin": base}

    def post(url: str, fields: dict) -> str:
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(base + url, data=data, headers=headers)
        with opener.open(request, timeout=timeout) as response:
            return response.read().decode()

    def form(page: str) -> tuple[str, dict]:
        action = _FORM.search(page)
        if not action:
            raise RuntimeError("no form: " + page[:200])
        return html.unescape(action.group(1)), {k: html.unescape(v) for k, v in _HIDDEN.findall(page)}

    posted = 0
    try:
        with opener.open(base + "/", timeout=timeout) as response:
            page = response.read().decode()
        action, fields = form(page)
        page = post(action, {**fields, "annotator": name})
        for _ in range(answers):
            action, fields = form(page)
            started = time.perf_counter()
            page = post(action, {**fields, "answer": "-1", "seconds": "1.0"})
            latencies.append(time.perf_counter() - started)
            posted += 1
    except Exception as exc:  # noqa: BLE001 - counted and reported
        errors.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
    return posted


def crowd(base: str, count: int, answers: int, prefix: str, timeout: float = 60) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    posted = [0] * count

    def one(n: int) -> None:
        posted[n] = annotator(base, f"{prefix}{n}", answers, latencies, errors, timeout)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ms = sorted(x * 1000 for x in latencies)
    return {
        "annotators": count,
        "answers_posted": sum(posted),
        "errors": len(errors),
        "first_errors": errors[:3],
        "p50_ms": round(statistics.median(ms)) if ms else None,
        "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))]) if ms else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


def stored(answers_dir: str, prefix: str) -> int:
    total = 0
    for name in os.listdir(answers_dir):
        if name.startswith(prefix) and name.endswith(".jsonl"):
            with open(os.path.join(answers_dir, name), encoding="utf-8") as f:
                total += sum(1 for line in f if line.strip())
    return total


class SlowClients:
    """``count`` connections from 127.0.0.2 that send a partial header and then a byte a second."""

    def __init__(self, port: int, count: int):
        self.conns: list[socket.socket] = []
        self.refused = 0
        for _ in range(count):
            conn = socket.socket()
            conn.settimeout(2)
            try:
                conn.bind(("127.0.0.2", 0))
                conn.connect(("127.0.0.1", port))
                conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                self.conns.append(conn)
            except OSError:
                conn.close()
                self.refused += 1
        self.stop = threading.Event()
        self.closed_by_server = 0
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        while not self.stop.wait(1.0):
            for conn in list(self.conns):
                try:
                    conn.sendall(b"a")
                except OSError:
                    self.conns.remove(conn)
                    self.closed_by_server += 1

    def close(self) -> dict:
        self.stop.set()
        self.thread.join(timeout=5)
        still = len(self.conns)
        for conn in self.conns:
            conn.close()
        return {"slow_connections_opened": still + self.closed_by_server, "closed_by_server": self.closed_by_server,
                "still_open_at_end": still}  # fmt: skip


class KeepAliveCrowd:
    """``connections`` keep-alive connections from ``source``, each sending a whole ``GET /`` every ``every``
    seconds and opening a new one when the server closes it."""

    REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    def __init__(self, port: int, source: str, connections: int, every: float):
        self.port, self.source, self.every = port, source, every
        self.stop, self.lock = threading.Event(), threading.Lock()
        self.answered = self.reconnects = 0
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(connections)]
        for thread in self.threads:
            thread.start()

    def _answer(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(h.split(b":", 1)[1])
                for h in head.split(b"\r\n")
                if h.lower().startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            body += chunk

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                with socket.socket() as conn:
                    conn.settimeout(30)
                    conn.bind((self.source, 0))
                    conn.connect(("127.0.0.1", self.port))
                    while not self.stop.is_set():
                        conn.sendall(self.REQUEST)
                        self._answer(conn)
                        with self.lock:
                            self.answered += 1
                        if self.stop.wait(self.every):
                            return
            except (OSError, ConnectionError):
                with self.lock:
                    self.reconnects += 1
            self.stop.wait(0.1)

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=35)


def keepalive_part(tmp: str, args) -> dict:
    make_tasks(os.path.join(tmp, "keepalive"), args.crowd_answers)
    server = Serve(os.path.join(tmp, "keepalive"))
    crowds: list[KeepAliveCrowd] = []
    try:
        baseline = crowd(server.base, 1, args.crowd_answers, "alone", timeout=10)
        crowds = [
            KeepAliveCrowd(server.port, f"127.0.0.{2 + n}", args.crowd_connections, args.crowd_every)
            for n in range(args.crowd_addresses)
        ]
        deadline = time.monotonic() + 120
        wanted = (
            args.crowd_addresses * args.crowd_connections + 500
        )  # every connection in, then a second round
        while sum(c.answered for c in crowds) < wanted and time.monotonic() < deadline:
            time.sleep(0.1)
        filled = round(time.monotonic() - deadline + 120, 1)
        under = crowd(server.base, 1, args.crowd_answers, "under", timeout=10)
        answers_before = sum(c.answered for c in crowds)
        return {
            "crowd": f"{args.crowd_addresses} addresses x {args.crowd_connections} connections, a request every "
            f"{args.crowd_every:g} s",
            "seconds_to_fill": filled,
            "annotator_alone": baseline,
            "annotator_under_crowd": under,
            "crowd_answers": answers_before,
            "crowd_reconnects": sum(c.reconnects for c in crowds),
        }
    finally:
        for c in crowds:
            c.stop.set()
        for c in crowds:
            c.close()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--answers", type=int, default=20)
    parser.add_argument("--slow", type=int, default=150)
    parser.add_argument("--slow-annotators", type=int, default=10)
    parser.add_argument("--crowd-addresses", type=int, default=6)
    parser.add_argument("--crowd-connections", type=int, default=100)
    parser.add_argument("--crowd-every", type=float, default=8.0)
    parser.add_argument("--crowd-answers", type=int, default=8)
    parser.add_argument("--parts", nargs="+", default=["load", "slow", "keepalive"])
    args = parser.parse_args()
    result: dict = {"machine": f"{os.cpu_count()} cores", "python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory(prefix="bench_lab_") as tmp:
        if "keepalive" in args.parts:
            result["keepalive"] = keepalive_part(tmp, args)
        if "load" not in args.parts:
            print(json.dumps(result, indent=1))
            return
        make_tasks(os.path.join(tmp, "load"), args.answers)
        server = Serve(os.path.join(tmp, "load"))
        try:
            rss_start = server.rss_mib()
            result["load_baseline"] = crowd(server.base, 1, args.answers, "solo")
            result["load"] = crowd(server.base, args.annotators, args.answers, "crowd")
            answers_dir = os.path.join(tmp, "load", "answers")
            result["load"]["answers_stored"] = stored(answers_dir, "crowd")
            result["load_baseline"]["answers_stored"] = stored(answers_dir, "solo")
            result["rss_mib"] = {"start": rss_start, "after_load": server.rss_mib()}
        finally:
            server.stop()
        make_tasks(os.path.join(tmp, "slow"), args.answers)
        server = Serve(os.path.join(tmp, "slow"))
        try:
            result["slow_baseline"] = crowd(server.base, args.slow_annotators, args.answers, "base")
            slow = SlowClients(server.port, args.slow)
            time.sleep(1.5)
            try:
                result["slow_clients"] = crowd(server.base, args.slow_annotators, args.answers, "under")
            finally:
                result["slow_clients"].update(slow.close()) if "slow_clients" in result else slow.close()
            result["slow_clients"]["slow_connections_asked"] = args.slow
        finally:
            server.stop()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
