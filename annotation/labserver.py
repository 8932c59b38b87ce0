"""The server of ``annotate serve``: waitress, guarded against slow and greedy clients, and a bounded cache.

Waitress reads requests on one thread and serves them on a few; an idle connection costs no worker, but it
holds one of the server's connection slots. Left as waitress has it (100 slots, a connection closed after
120 s without a byte), 150 connections that send a header line now and then lock every annotator out for as
long as they stay. So a lab app's server here:

- gives every request :data:`REQUEST_SECONDS` to arrive in full (request line, headers and body), counted from
  the moment the connection was opened or its previous answer sent; a connection that is neither sending a
  whole request in time nor being answered is closed (a browser opens a new one when it needs it);
- lets one client address hold at most :data:`PER_CLIENT` connections (a browser opens about six, a lab behind
  one NAT address many more); more are closed as they come;
- has :data:`CONNECTION_LIMIT` slots in all.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

REQUEST_SECONDS = 10.0
PER_CLIENT = 100  # a lab behind one NAT address still seats 50 annotators at once (bench_lab.py)
CONNECTION_LIMIT = 500
CACHED_ANNOTATORS = 256  # annotators whose item order is kept in memory (drawn again when needed)


class BoundedCache:
    """A mapping that keeps the ``size`` entries used last: the per-name caches of the app never grow with
    the number of distinct names that log in.

    >>> cache = BoundedCache(2)
    >>> cache["a"], cache["b"] = 1, 2
    >>> _ = cache.get("a"); cache["c"] = 3
    >>> sorted(cache.keys())
    ['a', 'c']
    """

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def __setitem__(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list:
        with self._lock:
            return list(self._items)


def _guarded_channel(base, request_seconds: float, per_client: int):
    """Waitress's channel class with the request deadline and the per-client limit of this module."""
    counts: dict[str, int] = {}
    lock = threading.Lock()

    class GuardedChannel(base):
        def __init__(self, server, sock, addr, adj, map=None):
            self.idle_since = time.monotonic()
            self.client = addr[0] if isinstance(addr, tuple) else str(addr)
            with lock:
                counts[self.client] = counts.get(self.client, 0) + 1
                self.over_limit = counts[self.client] > per_client
            self.counted = True
            super().__init__(server, sock, addr, adj, map)
            if self.over_limit:
                self.will_close = True  # closed on the loop's next turn, before a byte is read

        def readable(self):
            if (
                not self.will_close
                and not self.requests
                and time.monotonic() - self.idle_since > request_seconds
            ):
                self.will_close = True  # no whole request in time: the slot goes back
            return (not self.over_limit) and super().readable()

        def received(self, data):
            if self.over_limit:
                return False
            return super().received(data)

        def service(self):
            try:
                return super().service()
            finally:
                self.idle_since = time.monotonic()  # the next request's time starts with this answer sent

        def del_channel(self, map=None):
            with lock:
                if self.counted:
                    self.counted = False
                    left = counts.get(self.client, 1) - 1
                    if left:
                        counts[self.client] = left
                    else:
                        counts.pop(self.client, None)
            super().del_channel(map)

    return GuardedChannel


def serve(server) -> None:
    """Serve until Ctrl-C or ``kill``, which reach the caller. Waitress's own ``run()`` catches
    ``KeyboardInterrupt`` and returns, so ``annotate serve`` ended with exit status 0 and no word; here its loop
    runs as ``run()`` runs it, and the interrupt goes on to the CLI (one line, 130 or 143)."""
    # one socket: the server's own map; several: MultiSocketServer.map
    loop_map = getattr(server, "_map", None)
    if loop_map is None:
        loop_map = server.map
    server.asyncore.loop(
        timeout=server.adj.asyncore_loop_timeout, map=loop_map, use_poll=server.adj.asyncore_use_poll
    )


def make_server(
    app,
    host: str,
    port: int,
    *,
    max_body: int,
    request_seconds: float = REQUEST_SECONDS,
    per_client: int = PER_CLIENT,
):
    """A waitress server of ``app`` (not yet running; ``.run()`` serves, ``.close()`` stops); port 0 picks a
    free one.

    Waitress refuses a body beyond ``max_body`` before reading it (413), so a large POST never fills memory or
    disk; slow and greedy clients are handled as the module says."""
    from waitress import create_server

    server = create_server(
        app,
        host=host,
        port=port,
        threads=4,
        max_request_body_size=max_body,
        connection_limit=CONNECTION_LIMIT,
        cleanup_interval=max(1, int(request_seconds)),
        channel_timeout=max(1, int(request_seconds)),
    )
    servers = getattr(server, "map", {}).values() if not hasattr(server, "channel_class") else [server]
    for one in servers:
        if hasattr(one, "channel_class"):
            one.channel_class = _guarded_channel(one.channel_class, request_seconds, per_client)
    return server
